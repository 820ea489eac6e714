"""The int8 build's layer-norm rewrite (explorer.embedding.onnx_layernorm): plain operators that
compute what ONNX Runtime's fused nodes compute."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from explorer.embedding.onnx_layernorm import unfuse_layer_norms

DIM = 48
RNG = np.random.default_rng(7)


def _model(
    node: onnx.NodeProto, inputs: list[str], opset: int, extra_outputs: tuple[str, ...] = ()
) -> onnx.ModelProto:
    weights = {
        "gamma": RNG.normal(1, 0.2, DIM),
        "beta": RNG.normal(0, 0.2, DIM),
        "bias": RNG.normal(0, 0.2, DIM),
    }
    inits = [numpy_helper.from_array(v.astype(np.float32), k) for k, v in weights.items()]
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 7, DIM]) for n in inputs]
    outs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 7, DIM])]
    outs += [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 7, 1]) for n in extra_outputs]
    graph = helper.make_graph([node], "g", ins, outs, inits)
    opsets = [helper.make_opsetid("", opset), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, opset_imports=opsets)


def _run(model: onnx.ModelProto, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"]).run(
        None, feed
    )


def _feed(*names: str) -> dict[str, np.ndarray]:
    # a large common offset: a variance computed carelessly (E[x²] - E[x]²) would lose it
    return {n: (RNG.normal(0, 1, (1, 7, DIM)) + 40).astype(np.float32) for n in names}


@pytest.mark.parametrize("opset", [17, 18])
@pytest.mark.parametrize("with_bias", [True, False])
def test_skip_layer_norm_becomes_plain_operators_with_the_same_output(opset, with_bias):
    inputs = ["x", "skip", "gamma", "beta", "bias"] if with_bias else ["x", "skip", "gamma", "beta"]
    node = helper.make_node("SkipLayerNormalization", inputs, ["y"], domain="com.microsoft", epsilon=1e-12)
    model = _model(node, ["x", "skip"], opset)
    feed = _feed("x", "skip")
    want = _run(model, feed)[0]
    assert unfuse_layer_norms(model) == 1
    ops = [n.op_type for n in model.graph.node]
    assert "SkipLayerNormalization" not in ops and "Pow" not in ops  # Pow would be fused back
    onnx.checker.check_model(model)
    np.testing.assert_allclose(
        _run(model, feed)[0], want, atol=1e-4
    )  # float32 sums; the fused kernel sums in double


@pytest.mark.parametrize("opset", [17, 18])
def test_layer_norm_on_the_last_axis_becomes_plain_operators(opset):
    node = helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["y"], axis=-1, epsilon=1e-5)
    model = _model(node, ["x"], opset)
    feed = _feed("x")
    want = _run(model, feed)[0]
    assert unfuse_layer_norms(model) == 1
    assert [n.op_type for n in model.graph.node].count("LayerNormalization") == 0
    np.testing.assert_allclose(
        _run(model, feed)[0], want, atol=1e-4
    )  # float32 sums; the fused kernel sums in double


def test_nodes_it_cannot_rewrite_are_kept():
    other_axis = helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["y"], axis=1)
    more_outputs = helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["y", "mean"], axis=-1)
    for node, extra in ((other_axis, ()), (more_outputs, ("mean",))):
        model = _model(node, ["x"], 17, extra)
        assert unfuse_layer_norms(model) == 0
        assert [n.op_type for n in model.graph.node] == ["LayerNormalization"]
