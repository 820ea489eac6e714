"""Retrieval per strategy: chunk every document, embed the chunks, search them with FAISS.

One :class:`StrategyIndex` per :class:`~explorer.config.StrategyConfig` holds the chunks of all
documents, so a hit knows its document and offsets. What is embedded can be enriched
(:class:`EmbedOptions`: heading path prepended, neighbouring characters added) without ever
changing a chunk's offsets. Texts go through the embedder's content-hash cache, so a chunk
text shared by several strategies is embedded once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from .chunk import Chunk
from .config import StrategyConfig
from .context import Context
from .document import Document
from .errors import ParamError
from .strategies import get_strategy

#: Most neighbouring characters ``context_chars`` may add on each side.
MAX_CONTEXT_CHARS = 10_000


@dataclass(frozen=True, slots=True)
class EmbedOptions:
    """What is embedded for a chunk (never where it is): ``prepend_headings`` puts the heading
    path first ("A > B\\n\\n..."); ``context_chars`` adds that many characters of the document on
    each side of the chunk ("context enrichment")."""

    prepend_headings: bool = False
    context_chars: int = 0

    def __post_init__(self) -> None:
        c = self.context_chars
        if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c <= MAX_CONTEXT_CHARS:
            raise ParamError(f"context_chars={c!r} must be a whole number from 0 to {MAX_CONTEXT_CHARS:,}")


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieved chunk: 1-based ``rank`` and cosine ``score``."""

    rank: int
    score: float
    chunk: Chunk

    def to_dict(self) -> dict[str, Any]:
        c = self.chunk
        return {
            "rank": self.rank,
            "score": round(self.score, 6),
            "document": c.doc_name,
            "start": c.start,
            "end": c.end,
            "text": c.text,
        }


def embedded_text(chunk: Chunk, doc: Document, options: EmbedOptions = EmbedOptions()) -> str:
    """The text the model sees for ``chunk`` under ``options``."""
    text = chunk.text
    c = options.context_chars
    if c:
        text = doc.text[max(0, chunk.start - c) : chunk.start] + text + doc.text[chunk.end : chunk.end + c]
    if options.prepend_headings and chunk.headings:
        text = " > ".join(chunk.headings) + "\n\n" + text
    return text


class StrategyIndex:
    """Chunks of every document for one config, their vectors, and a FAISS index over them."""

    def __init__(
        self,
        config: StrategyConfig,
        chunks: list[Chunk],
        texts: list[str],
        vectors: np.ndarray,
        ctx: Context,
        options: EmbedOptions,
        exact: bool | None = None,
    ) -> None:
        from .index import VectorIndex

        self.config = config
        self.chunks = chunks
        self.texts = texts  # what was embedded, parallel to chunks
        self.vectors = vectors
        self.options = options
        self._ctx = ctx
        self.model_id = ctx.get_embedder().model_id
        self.index = VectorIndex(vectors, exact=exact)

    def __len__(self) -> int:
        return len(self.chunks)

    @cached_property
    def truncated(self) -> list[bool]:
        """Per chunk: would the model cut what is embedded (over ``max_seq_length`` word pieces)?"""
        return self._ctx.get_embedder().truncated(self.texts)

    def search(self, question: str, k: int = 5) -> list[Hit]:
        return self.search_many([question], k)[0]

    def search_many(self, questions: Sequence[str], k: int = 5, progress=None) -> list[list[Hit]]:
        """Top-``k`` hits for each question (questions are embedded through the cache too)."""
        _check_k(k)
        for q in questions:
            if not isinstance(q, str) or not q.strip():
                raise ParamError(f"question {q!r} is empty: type a question")
        qv = self._ctx.get_embedder().encode_queries(list(questions), progress=progress)
        return self.search_vectors(qv, k)

    def search_vectors(self, query_vectors: np.ndarray, k: int = 5) -> list[list[Hit]]:
        """Top-``k`` per query vector; equal scores ordered by position (see :func:`ranked_hits`)."""
        _check_k(k)
        return ranked_hits(self, query_vectors, k)

    def faiss_search(self, query_vectors: np.ndarray, k: int) -> list[list[Hit]]:
        """Raw FAISS order (ties in whatever order the index returns them)."""
        scores, ids = self.index.search(query_vectors, k)
        out = []
        for row_s, row_i in zip(scores, ids, strict=True):
            hits = [
                Hit(rank=r + 1, score=float(s), chunk=self.chunks[int(i)])
                for r, (s, i) in enumerate((s, i) for s, i in zip(row_s, row_i, strict=True) if i >= 0)
            ]
            out.append(hits)
        return out


def _check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ParamError(f"k={k!r} must be a whole number of at least 1")


def chunk_documents(docs: Sequence[Document], config: StrategyConfig, ctx: Context) -> list[Chunk]:
    """Chunks of every document, in document order."""
    strategy = get_strategy(config.strategy)
    chunks: list[Chunk] = []
    for doc in docs:
        chunks.extend(strategy.chunk(doc, config.param_dict, ctx))
    return chunks


def build_index(
    docs: Sequence[Document],
    config: StrategyConfig,
    ctx: Context | None = None,
    options: EmbedOptions = EmbedOptions(),
    progress: Callable[[int, int], Any] | None = None,
    *,
    exact: bool | None = None,
) -> StrategyIndex:
    """Chunk ``docs`` with ``config``, embed what :func:`embedded_text` gives, index it."""
    ctx = ctx or Context.default()
    progress = progress if progress is not None else ctx.progress
    strategy = get_strategy(config.strategy)
    chunks: list[Chunk] = []
    texts: list[str] = []
    for doc in docs:
        doc_chunks = strategy.chunk(doc, config.param_dict, ctx)
        chunks.extend(doc_chunks)
        texts.extend(embedded_text(c, doc, options) for c in doc_chunks)
    embedder = ctx.get_embedder()
    vectors = embedder.encode(texts, progress=progress) if texts else np.zeros((0, embedder.dim), np.float32)
    return StrategyIndex(config, chunks, texts, vectors, ctx, options, exact=exact)


_LRU_SIZE = 16
_indexes: OrderedDict[tuple, StrategyIndex] = OrderedDict()
_indexes_lock = threading.Lock()


def get_index(
    docs: Sequence[Document],
    config: StrategyConfig,
    ctx: Context | None = None,
    options: EmbedOptions = EmbedOptions(),
    progress: Callable[[int, int], Any] | None = None,
) -> StrategyIndex:
    """:func:`build_index` with a small in-process LRU keyed by documents, config, options and model."""
    ctx = ctx or Context.default()
    key = (tuple((d.id, d.name) for d in docs), config, options, ctx.get_embedder().model_id)
    with _indexes_lock:
        idx = _indexes.get(key)
        if idx is not None:
            _indexes.move_to_end(key)
            return idx
    idx = build_index(docs, config, ctx, options, progress)
    with _indexes_lock:
        _indexes[key] = idx
        while len(_indexes) > _LRU_SIZE:
            _indexes.popitem(last=False)
    return idx


def compare(
    docs: Sequence[Document],
    configs: Sequence[StrategyConfig],
    question: str,
    k: int = 5,
    ctx: Context | None = None,
    options: EmbedOptions = EmbedOptions(),
    progress: Callable[[int, int], Any] | None = None,
) -> dict[StrategyConfig, list[Hit]]:
    """Top-``k`` hits of ``question`` for each config (each with its own index)."""
    _check_k(k)
    if not isinstance(question, str) or not question.strip():
        raise ParamError(f"question {question!r} is empty: type a question")
    ctx = ctx or Context.default()
    qv = ctx.get_embedder().encode_queries([question])
    out: dict[StrategyConfig, list[Hit]] = {}
    for config in configs:
        idx = get_index(docs, config, ctx, options, progress)
        out[config] = idx.search_vectors(qv, k)[0]
    return out


#: Scores this close are ties (the same text embedded twice scores the same, up to BLAS rounding).
TIE_EPSILON = 1e-6


def _break_ties(hits: list[Any], position: Mapping[tuple[str, int], int]) -> list[Any]:
    """Best score first; among tied scores, the chunk that comes first in the documents first."""
    hits = sorted(hits, key=lambda h: -h.score)
    out: list[Any] = []
    i = 0
    while i < len(hits):
        j = i + 1
        while j < len(hits) and hits[i].score - hits[j].score <= TIE_EPSILON:
            j += 1
        out.extend(sorted(hits[i:j], key=lambda h: position[(h.chunk.doc_id, h.chunk.start)]))
        i = j
    return out


def ranked_hits(index: StrategyIndex, query_vectors: Any, k: int) -> list[list[Hit]]:
    """Top-``k`` hits per query with a deterministic order among equal scores.

    Identical chunk texts (repeated boilerplate: 604 of the 1,980 chunks of Chroma's corpora
    at 250 tokens) get identical vectors, so which copy is retrieved is arbitrary in FAISS and
    moves recall by about a point there. Here ties go to the copy that comes first (documents
    in the order given, then by offset), whatever the index's internals; enough candidates are
    fetched to see every chunk tied with the k-th.
    """
    from dataclasses import replace

    position = {(c.doc_id, c.start): i for i, c in enumerate(index.chunks)}
    n = len(index.chunks)
    fetch = min(n, k + 16)
    results = index.faiss_search(query_vectors, fetch) if fetch else [[] for _ in range(len(query_vectors))]
    out = []
    for qi, hits in enumerate(results):
        m = fetch
        # the last candidate still ties with the k-th: fetch more until the tie group is whole
        while (
            len(hits) == m and m < n and len(hits) > k and hits[k - 1].score - hits[-1].score <= TIE_EPSILON
        ):
            m = min(n, m * 2)
            hits = index.faiss_search(query_vectors[qi : qi + 1], m)[0]
        top = _break_ties(list(hits), position)[:k]
        out.append([replace(h, rank=r) for r, h in enumerate(top, 1)])
    return out
