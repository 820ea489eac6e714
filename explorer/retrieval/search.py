"""Retrieval per strategy: chunk every document, then search the chunks densely (FAISS), with
BM25, or with both fused (``RETRIEVERS``).

One :class:`StrategyIndex` per :class:`~explorer.strategies.config.StrategyConfig` holds the chunks of all
documents, so a hit knows its document and offsets. What is embedded can be enriched
(:class:`EmbedOptions`: heading path prepended, neighbouring characters added) without ever
changing a chunk's offsets; BM25 indexes the same texts. Texts go through the embedder's
content-hash cache, so a chunk text shared by several strategies is embedded once. Vectors are
made only when a dense or hybrid search needs them: BM25 alone never loads the model.

``mode="preview"`` pools the chunk vectors from each document's token vectors, read once by the
model (:mod:`explorer.embedding.late`): approximate, offered only for models whose measured gap
to exact embedding is small (:func:`explorer.embedding.late.check_preview`); questions are
always embedded exactly.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from explorer.documents.document import Document
from explorer.errors import ParamError
from explorer.retrieval.lexical import RRF_K, LexicalIndex, reciprocal_rank_fusion
from explorer.strategies import get_strategy
from explorer.strategies.config import StrategyConfig
from explorer.strategies.context import Context
from explorer.text.chunk import Chunk

#: Most neighbouring characters ``context_chars`` may add on each side.
MAX_CONTEXT_CHARS = 10_000

#: How chunks are ranked: "dense" = cosine of the model's vectors (FAISS), "bm25" = BM25 over
#: lexical tokens (:mod:`explorer.retrieval.lexical`, no model), "hybrid" = reciprocal-rank fusion of both.
RETRIEVERS = ("dense", "bm25", "hybrid")
#: Candidates each ranking gives to hybrid fusion: max(4 k, this), or every chunk if fewer.
HYBRID_CANDIDATES = 50


#: How chunk vectors are made: "exact" = each chunk's text embedded on its own (the reference);
#: "preview" = pooled from the document's token vectors, read once (approximate, see
#: :mod:`explorer.embedding.late`).
MODES = ("exact", "preview")


def check_mode(mode: str) -> str:
    """``mode`` if it is one of :data:`MODES`, else ParamError naming it."""
    if not isinstance(mode, str) or mode not in MODES:
        raise ParamError(f"mode {mode!r} is not one of {', '.join(MODES)}")
    return mode


def check_preview_mode(ctx: Context, options: EmbedOptions, force: bool = False) -> float | None:
    """ParamError (or ModelError) unless preview may run with this context's model and these
    options (see :func:`explorer.embedding.late.check_preview`); the model's measured gap."""
    from explorer.embedding.late import check_preview

    if options.prepend_headings:
        raise ParamError("preview pools the document's own tokens: it cannot prepend headings (use exact mode)")
    return check_preview(ctx.get_embedder(), force)


def check_retriever(retriever: str) -> str:
    """``retriever`` if it is one of :data:`RETRIEVERS`, else ParamError naming it."""
    if not isinstance(retriever, str) or retriever not in RETRIEVERS:
        raise ParamError(f"retriever {retriever!r} is not one of {', '.join(RETRIEVERS)}")
    return retriever


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
    """One retrieved chunk: 1-based ``rank`` and the retriever's ``score``: cosine similarity for
    dense, the BM25 score for bm25 (0 when no question word occurs in the chunk), the
    reciprocal-rank-fusion score for hybrid (sum of ``1 / (RRF_K + rank)``, at most 2/61)."""

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
    """Chunks of every document for one config, their vectors and a FAISS index over them, and a
    BM25 index over the same texts.

    ``vectors=None`` defers embedding (and FAISS) to the first dense or hybrid search, so a
    BM25-only index never loads the model; the BM25 index is built on its first use.
    """

    def __init__(
        self,
        config: StrategyConfig,
        chunks: list[Chunk],
        texts: list[str],
        vectors: np.ndarray | None,
        ctx: Context,
        options: EmbedOptions,
        exact: bool | None = None,
        mode: str = "exact",
        docs: Sequence[Document] = (),
        force_preview: bool = False,
    ) -> None:
        self.config = config
        #: "exact" or "preview" (vectors pooled from token states: approximate).
        self.mode = mode
        self._docs = tuple(docs) if mode == "preview" else ()
        self._force_preview = force_preview
        self.chunks = chunks
        self.texts = texts  # what was embedded, parallel to chunks
        self.options = options
        self._ctx = ctx
        self._exact = exact
        self.model_id = ctx.get_embedder().model_id  # a name only: the model is not loaded
        self._dense_lock = threading.RLock()
        self._lexical_lock = threading.Lock()
        self._vectors: np.ndarray | None = None
        self._index: Any = None
        self._lexical: LexicalIndex | None = None
        if vectors is not None:
            self._set_vectors(vectors)

    def __len__(self) -> int:
        return len(self.chunks)

    def _set_vectors(self, vectors: np.ndarray) -> None:
        from explorer.retrieval.faiss_index import VectorIndex

        self._index = VectorIndex(vectors, exact=self._exact)
        self._vectors = vectors

    @property
    def has_vectors(self) -> bool:
        """Whether the chunks are embedded yet (False after a BM25-only build)."""
        return self._vectors is not None

    def ensure_vectors(self, progress: Callable[[int, int], Any] | None = None) -> np.ndarray:
        """The chunk vectors, embedding the texts now (through the cache) if not done yet."""
        with self._dense_lock:
            if self._vectors is None:
                if self.mode == "preview":
                    check_preview_mode(self._ctx, self.options, self._force_preview)
                    self._set_vectors(preview_vectors(self._ctx, self._docs, [self.chunks], self.options, progress)[0])
                else:
                    self._set_vectors(_embed_texts(self._ctx, self.texts, progress))
            assert self._vectors is not None
            return self._vectors

    @property
    def vectors(self) -> np.ndarray:
        return self.ensure_vectors()

    @property
    def index(self) -> Any:
        """The :class:`~explorer.retrieval.faiss_index.VectorIndex` over :attr:`vectors`."""
        with self._dense_lock:
            self.ensure_vectors()
            return self._index

    @property
    def lexical(self) -> LexicalIndex:
        """BM25 over :attr:`texts` (what is embedded, so enrichment options apply to both)."""
        with self._lexical_lock:
            if self._lexical is None:
                self._lexical = LexicalIndex(self.texts)
            return self._lexical

    @cached_property
    def positions(self) -> dict[tuple[str, int], int]:
        """Chunk (document id, start) → place in document order, for the tie rule."""
        return {(c.doc_id, c.start): i for i, c in enumerate(self.chunks)}

    @cached_property
    def truncated(self) -> list[bool]:
        """Per chunk: would the model cut what is embedded (over ``max_seq_length`` word pieces)?
        Never in preview mode: every token of a chunk is pooled."""
        if self.mode == "preview":
            return [False] * len(self.texts)
        return self._ctx.get_embedder().truncated(self.texts)

    def search(self, question: str, k: int = 5, retriever: str = "dense") -> list[Hit]:
        return self.search_many([question], k, retriever=retriever)[0]

    def search_many(
        self, questions: Sequence[str], k: int = 5, progress=None, retriever: str = "dense"
    ) -> list[list[Hit]]:
        """Top-``k`` hits for each question with ``retriever`` (see :func:`retrieve`)."""
        return retrieve(self, questions, k, retriever, progress=progress)

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
    retriever: str = "dense",
    mode: str = "exact",
    force_preview: bool = False,
) -> StrategyIndex:
    """Chunk ``docs`` with ``config``, embed what :func:`embedded_text` gives, index it.

    For ``retriever="bm25"`` nothing is embedded (vectors come later if a dense search asks).
    ``mode="preview"`` pools the vectors from the documents' token states instead (refused for
    a model outside the measured gap unless ``force_preview``; see :data:`MODES`)."""
    check_retriever(retriever)
    check_mode(mode)
    ctx = ctx or Context.default()
    if mode == "preview" and retriever != "bm25":
        check_preview_mode(ctx, options, force_preview)
    strategy = get_strategy(config.strategy)
    chunks: list[Chunk] = []
    texts: list[str] = []
    for doc in docs:
        doc_chunks = strategy.chunk(doc, config.param_dict, ctx)
        chunks.extend(doc_chunks)
        texts.extend(embedded_text(c, doc, options) for c in doc_chunks)
    if retriever == "bm25":
        vectors = None
    elif mode == "preview":
        vectors = preview_vectors(ctx, docs, [chunks], options, progress)[0]
    else:
        vectors = _embed_texts(ctx, texts, progress)
    return StrategyIndex(
        config, chunks, texts, vectors, ctx, options, exact=exact, mode=mode, docs=docs, force_preview=force_preview
    )


def preview_spans(chunk: Chunk, doc: Document, options: EmbedOptions) -> tuple[int, int]:
    """The characters pooled for ``chunk`` in preview mode: its own, widened by
    ``context_chars`` on each side (the characters exact mode would add)."""
    c = options.context_chars
    return max(0, chunk.start - c), min(len(doc.text), chunk.end + c)


def preview_vectors(
    ctx: Context,
    docs: Sequence[Document],
    chunk_lists: Sequence[Sequence[Chunk]],
    options: EmbedOptions = EmbedOptions(),
    progress: Callable[[int, int], Any] | None = None,
) -> list[np.ndarray]:
    """Preview vectors of several chunk lists (one per configuration) over ``docs``, document by
    document: each document's token states are read (or found in the store) once and every
    list's chunks of it pooled, so a corpus larger than the store's bound is still read once."""
    from explorer.embedding.late import get_store

    progress = progress if progress is not None else ctx.progress
    embedder = ctx.get_embedder()
    store = get_store()
    out = [np.zeros((len(chunks), embedder.dim), np.float32) for chunks in chunk_lists]
    where: dict[str, list[tuple[int, list[int]]]] = {}
    for li, chunks in enumerate(chunk_lists):
        rows: dict[str, list[int]] = {}
        for i, c in enumerate(chunks):
            rows.setdefault(c.doc_id, []).append(i)
        for doc_id, idx in rows.items():
            where.setdefault(doc_id, []).append((li, idx))
    by_id = {d.id: d for d in docs}
    for doc_id, lists in where.items():
        doc = by_id.get(doc_id)
        if doc is None:
            raise ParamError(f"a chunk's document ({doc_id}) is not among the documents given")
        states = store.get(embedder, doc.text, ctx.preview_window, progress=progress)
        for li, idx in lists:
            spans = [preview_spans(chunk_lists[li][i], doc, options) for i in idx]
            out[li][idx] = states.pool(spans)
    return out


def _embed_texts(ctx: Context, texts: list[str], progress: Callable[[int, int], Any] | None) -> np.ndarray:
    progress = progress if progress is not None else ctx.progress
    embedder = ctx.get_embedder()
    return embedder.encode(texts, progress=progress) if texts else np.zeros((0, embedder.dim), np.float32)


_LRU_SIZE = 16
_indexes: OrderedDict[tuple, StrategyIndex] = OrderedDict()
_indexes_lock = threading.Lock()


def get_index(
    docs: Sequence[Document],
    config: StrategyConfig,
    ctx: Context | None = None,
    options: EmbedOptions = EmbedOptions(),
    progress: Callable[[int, int], Any] | None = None,
    retriever: str = "dense",
    mode: str = "exact",
    force_preview: bool = False,
) -> StrategyIndex:
    """:func:`build_index` with a small in-process LRU keyed by documents, config, options, model
    and mode.

    One entry serves every retriever: its vectors are made when a dense or hybrid search first
    needs them, its BM25 index on the first BM25 or hybrid search."""
    check_retriever(retriever)
    check_mode(mode)
    ctx = ctx or Context.default()
    if mode == "preview" and retriever != "bm25":
        check_preview_mode(ctx, options, force_preview)
    window = ctx.preview_window if mode == "preview" else None
    key = (tuple((d.id, d.name) for d in docs), config, options, ctx.get_embedder().model_id, mode, window)
    with _indexes_lock:
        idx = _indexes.get(key)
        if idx is not None:
            _indexes.move_to_end(key)
    if idx is not None:
        if retriever != "bm25":
            idx.ensure_vectors(progress)
        return idx
    idx = build_index(
        docs, config, ctx, options, progress, retriever=retriever, mode=mode, force_preview=force_preview
    )
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
    retriever: str = "dense",
    mode: str = "exact",
    force_preview: bool = False,
) -> dict[StrategyConfig, list[Hit]]:
    """Top-``k`` hits of ``question`` for each config (each with its own index; ``mode`` as in
    :func:`build_index`)."""
    check_retriever(retriever)
    check_mode(mode)
    _check_k(k)
    _check_questions([question])
    ctx = ctx or Context.default()
    if mode == "preview" and retriever != "bm25":
        check_preview_mode(ctx, options, force_preview)
    qv = None if retriever == "bm25" else ctx.get_embedder().encode_queries([question])
    out: dict[StrategyConfig, list[Hit]] = {}
    for config in configs:
        idx = get_index(docs, config, ctx, options, progress, retriever, mode, force_preview)
        out[config] = retrieve(idx, [question], k, retriever, qv, progress)[0]
    return out


def _check_questions(questions: Sequence[str]) -> None:
    for q in questions:
        if not isinstance(q, str) or not q.strip():
            raise ParamError(f"question {q!r} is empty: type a question")


def retrieve(
    index: StrategyIndex,
    questions: Sequence[str],
    k: int = 5,
    retriever: str = "dense",
    query_vectors: np.ndarray | None = None,
    progress: Callable[[int, int], Any] | None = None,
) -> list[list[Hit]]:
    """Top-``k`` hits per question with ``retriever`` (one of :data:`RETRIEVERS`).

    ``query_vectors`` (from ``encode_queries``, one row per question) may be given to embed the
    questions once for several indexes; bm25 never embeds anything. Equal scores go to the
    chunk that comes first in the documents, for every retriever.
    """
    check_retriever(retriever)
    _check_k(k)
    questions = list(questions)
    _check_questions(questions)
    if retriever == "bm25":
        return bm25_hits(index, questions, k)
    if query_vectors is None:
        query_vectors = index._ctx.get_embedder().encode_queries(questions, progress=progress)
    if len(query_vectors) != len(questions):
        raise ValueError(f"{len(query_vectors)} query vectors for {len(questions)} questions")
    index.ensure_vectors(progress)
    if retriever == "dense":
        return ranked_hits(index, query_vectors, k)
    return hybrid_hits(index, questions, query_vectors, k)


def _top_by_scores(index: StrategyIndex, scores: np.ndarray, k: int) -> list[Hit]:
    """Top-``k`` of per-chunk ``scores`` (chunk order), ties by :func:`_break_ties`."""
    n = len(scores)
    if n > k:
        kth = float(np.partition(scores, n - k)[n - k])  # the k-th best score
        candidates = np.flatnonzero(scores >= kth - TIE_EPSILON)  # with all that tie with it
    else:
        candidates = np.arange(n)
    hits = [Hit(0, float(scores[i]), index.chunks[i]) for i in candidates]
    top = _break_ties(hits, index.positions)[:k]
    return [Hit(r, h.score, h.chunk) for r, h in enumerate(top, 1)]


def bm25_hits(index: StrategyIndex, questions: Sequence[str], k: int) -> list[list[Hit]]:
    """Top-``k`` chunks by BM25 score per question. Always ``min(k, chunks)`` hits: when fewer
    chunks contain a question word (or the question has only stop words), the rest score 0 and
    follow in document order."""
    lexical = index.lexical
    return [_top_by_scores(index, lexical.scores(q), k) for q in questions]


#: Fused scores this close are ties: RRF sums of the same ranks may differ only by float rounding.
RRF_TIE_EPSILON = 1e-12


def hybrid_hits(
    index: StrategyIndex, questions: Sequence[str], query_vectors: np.ndarray, k: int
) -> list[list[Hit]]:
    """Top-``k`` by reciprocal-rank fusion (constant ``RRF_K`` = 60) of the dense ranking and the
    BM25 ranking, each cut to ``max(4 k, HYBRID_CANDIDATES)`` candidates. Chunks with BM25 score
    0 are not in the BM25 ranking (no question word: no lexical evidence), so a question of only
    stop words ranks as dense does. Equal fused scores: earlier chunk first."""
    n = len(index)
    if n == 0:
        return [[] for _ in questions]
    fetch = min(n, max(4 * k, HYBRID_CANDIDATES))
    dense = ranked_hits(index, query_vectors, fetch)
    lexical = index.lexical
    out = []
    for question, dense_hits in zip(questions, dense, strict=True):
        lexical_hits = [h for h in _top_by_scores(index, lexical.scores(question), fetch) if h.score > 0]
        chunks = {id(h.chunk): h.chunk for h in (*dense_hits, *lexical_hits)}
        fused = reciprocal_rank_fusion(
            [[id(h.chunk) for h in dense_hits], [id(h.chunk) for h in lexical_hits]], RRF_K
        )
        hits = [Hit(0, score, chunks[key]) for key, score in fused.items()]
        top = _break_ties(hits, index.positions, RRF_TIE_EPSILON)[:k]
        out.append([Hit(r, h.score, h.chunk) for r, h in enumerate(top, 1)])
    return out


#: Scores this close are ties (the same text embedded twice scores the same, up to BLAS rounding).
TIE_EPSILON = 1e-6


def _break_ties(
    hits: list[Any], position: Mapping[tuple[str, int], int], epsilon: float = TIE_EPSILON
) -> list[Any]:
    """Best score first; among tied scores (within ``epsilon``), the chunk that comes first in
    the documents first."""
    hits = sorted(hits, key=lambda h: -h.score)
    out: list[Any] = []
    i = 0
    while i < len(hits):
        j = i + 1
        while j < len(hits) and hits[i].score - hits[j].score <= epsilon:
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

    position = index.positions
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
