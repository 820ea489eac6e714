"""Layer normalisations of an ONNX graph rewritten as plain operators (ReduceMean, Sub, Mul,
Sqrt, Div, Add), the last step of the int8 build (:mod:`explorer.embedding.onnx_backend`).

Why: ONNX Runtime's CPU kernel for ``SkipLayerNormalization`` and ``LayerNormalization`` is
slow next to its element-wise operators. On one thread, one (256 × 384) input: 0.51 ms for the
fused node against 0.13–0.14 ms for the same arithmetic as plain operators (onnxruntime
1.32.0, AMD EPYC). In all-MiniLM-L6-v2's int8 graph the 12 layer norms took 17 % of a
256-token text's time. Rewritten, 80 French 1,000-character chunks take 1.41 s against 1.66 s
(×0.85), 300 French sentences 0.75 s against 0.84 s; e5's French chunks ×0.91, its sentences
unchanged. Vectors stay within float32 rounding of the fused graph's (max |Δ| ~1e-6 per layer).

The variance is the mean of ``d * d`` (not ``Pow(d, 2)``), so ONNX Runtime's own layer-norm
fusion, which looks for ``Pow``, does not fold it back into the slow node.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

#: Fused nodes this rewrite replaces (their domain: ONNX Runtime's contrib ops or the standard).
REWRITTEN = ("SkipLayerNormalization", "LayerNormalization")


def unfuse_layer_norms_in(path: Path) -> int:
    """:func:`unfuse_layer_norms` on the ONNX file at ``path``, saved in place."""
    import onnx

    model = onnx.load(str(path))
    replaced = unfuse_layer_norms(model)
    onnx.save(model, str(path))
    return replaced


def unfuse_layer_norms(model: Any) -> int:
    """Replace, in place, every ``SkipLayerNormalization`` (input + skip [+ bias], then the
    norm) and every last-axis ``LayerNormalization`` of ``model`` (an ``onnx.ModelProto``) that
    has a single output by plain operators; the number replaced. Nodes with more outputs (the
    mean, the inverse deviation or the sum some graphs read) are left as they are."""
    from onnx import helper, numpy_helper

    graph = model.graph
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 17)
    nodes: list[Any] = []
    replaced = 0
    for n in graph.node:
        parts = _parts(n)
        if parts is None:
            nodes.append(n)
            continue
        summed, gamma, beta, eps = parts
        p = f"{n.name or n.output[0]}/unfused"
        graph.initializer.append(numpy_helper.from_array(np.array(eps, np.float32), f"{p}/eps"))
        if opset >= 18:  # ReduceMean takes its axes as an input from opset 18 on
            graph.initializer.append(numpy_helper.from_array(np.array([-1], np.int64), f"{p}/axes"))
        axes: dict[str, Any] = {} if opset >= 18 else {"axes": [-1]}
        last = [f"{p}/axes"] if opset >= 18 else []
        x = summed[0]
        for i, term in enumerate(summed[1:]):
            nodes.append(helper.make_node("Add", [x, term], [f"{p}/sum{i}"]))
            x = f"{p}/sum{i}"
        nodes += [
            helper.make_node("ReduceMean", [x, *last], [f"{p}/mean"], keepdims=1, **axes),
            helper.make_node("Sub", [x, f"{p}/mean"], [f"{p}/d"]),
            helper.make_node("Mul", [f"{p}/d", f"{p}/d"], [f"{p}/d2"]),
            helper.make_node("ReduceMean", [f"{p}/d2", *last], [f"{p}/var"], keepdims=1, **axes),
            helper.make_node("Add", [f"{p}/var", f"{p}/eps"], [f"{p}/var_eps"]),
            helper.make_node("Sqrt", [f"{p}/var_eps"], [f"{p}/sd"]),
            helper.make_node("Div", [f"{p}/d", f"{p}/sd"], [f"{p}/norm"]),
        ]
        scaled = n.output[0] if not beta else f"{p}/scaled"
        nodes.append(helper.make_node("Mul", [f"{p}/norm", gamma], [scaled]))
        if beta:
            nodes.append(helper.make_node("Add", [scaled, beta], [n.output[0]]))
        replaced += 1
    del graph.node[:]
    graph.node.extend(nodes)
    return replaced


def _parts(node: Any) -> tuple[list[str], str, str, float] | None:
    """``(terms summed before the norm, gamma, beta or "", epsilon)`` of a node to rewrite, or
    None to keep it."""
    if node.op_type not in REWRITTEN or len([o for o in node.output if o]) != 1 or node.output[0] == "":
        return None
    attrs = {a.name: a for a in node.attribute}
    eps = attrs["epsilon"].f if "epsilon" in attrs else 1e-5
    ins = list(node.input) + [""] * 5
    if node.op_type == "SkipLayerNormalization":
        if node.domain != "com.microsoft":
            return None
        x, skip, gamma, beta, bias = ins[:5]
        return [t for t in (x, skip, bias) if t], gamma, beta, eps
    if node.domain not in ("", "ai.onnx") or ("axis" in attrs and attrs["axis"].i != -1):
        return None
    if "stash_type" in attrs and attrs["stash_type"].i != 1:
        return None
    x, gamma, beta = ins[:3]
    return [x], gamma, beta, eps
