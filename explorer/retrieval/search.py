"""Retrieval per strategy: chunk every document, index the chunks, and search them densely
(FAISS), with BM25, or with both fused (:data:`~explorer.retrieval.ranking.RETRIEVERS`; the
rankings themselves are :mod:`explorer.retrieval.ranking`).

One :class:`StrategyIndex` per :class:`~explorer.strategies.config.StrategyConfig` holds the chunks of all
documents, so a hit knows its document and offsets. What is embedded can be enriched (heading
path prepended, neighbouring characters added: :class:`~explorer.retrieval.vectors.EmbedOptions`)
without ever changing a chunk's offsets; BM25 indexes the same texts. Texts go through the
embedder's content-hash cache, so a chunk text shared by several strategies is embedded once.
Vectors are made only when a dense or hybrid search needs them: BM25 never loads the model.

``mode="preview"`` pools the chunk vectors from each document's token vectors, read once by the
model (:mod:`explorer.embedding.late`): approximate, offered only for models whose measured gap
to exact embedding is small (:func:`explorer.embedding.late.check_preview`); questions are
always embedded exactly.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any

import numpy as np

from explorer import limits
from explorer.documents.document import Document
from explorer.lru import ByteLRU
from explorer.retrieval.hubs import NeighbourMeans
from explorer.retrieval.lexical import LexicalIndex, group_languages
from explorer.retrieval.pieces import ChunkPieces
from explorer.retrieval.ranking import (
    DEFAULT_RETRIEVER,
    Hit,
    check_k,
    check_question_texts,
    check_retriever,
    ranked_hits,
    retrieve,
)
from explorer.retrieval.vectors import (
    DEFAULT_EMBED_OPTIONS,
    EmbedOptions,
    check_mode,
    check_preview_mode,
    embed_texts,
    embedded_text,
    piece_vectors,
    preview_vectors,
)
from explorer.strategies import get_strategy
from explorer.strategies.config import StrategyConfig
from explorer.strategies.context import Context
from explorer.text.chunk import Chunk


def _checked_context(
    ctx: Context | None, options: EmbedOptions, retriever: str, mode: str, force_preview: bool
) -> Context:
    """``ctx`` (or the default one) once ``retriever`` and ``mode`` are checked, and preview is
    allowed for its model where vectors will be pooled."""
    check_retriever(retriever)
    check_mode(mode)
    ctx = ctx or Context.default()
    if mode == "preview" and retriever != "bm25":
        check_preview_mode(ctx, options, force_preview)
    return ctx


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
        self._docs = tuple(docs) if mode == "preview" or options.piece_chars else ()
        self._force_preview = force_preview
        self.chunks = chunks
        self.texts = texts  # what was embedded, parallel to chunks
        self.options = options
        self.ctx = ctx
        self._exact = exact
        self._dense_lock, self._lexical_lock = threading.RLock(), threading.Lock()
        self._vectors: np.ndarray | None = None
        self._pieces: ChunkPieces | None = None
        self._index: Any = None
        self._lexical: LexicalIndex | None = None
        self._languages: frozenset[str] | None = None
        #: Seconds the vectors took when made here (None: given, or not yet), texts the model embedded
        #: then (0: all cached), whether that includes loading the model, and when (a time.time()).
        self.embed_seconds: float | None = None
        self.embedded_new: int | None = None
        self.embed_cold, self.embedded_at = False, None
        if vectors is not None:
            self.set_vectors(vectors)

    def __len__(self) -> int:
        return len(self.chunks)

    @property
    def nbytes(self) -> int:
        """About what this index holds in memory: texts (embedded and chunk), vectors twice
        (ours and FAISS's copy), BM25's matrix (~ 12 bytes a token) once built, 200 a chunk else."""
        chars = sum(map(len, self.texts)) + sum(len(c.text) for c in self.chunks)
        vectors = 0 if self._vectors is None else 2 * self._vectors.nbytes
        vectors += 0 if self._pieces is None else self._pieces.nbytes
        lexical = 0 if self._lexical is None else 2 * chars
        return chars + vectors + lexical + 200 * len(self.chunks)

    def set_vectors(self, vectors: np.ndarray) -> None:
        from explorer.retrieval.faiss_index import VectorIndex

        self._index = VectorIndex(vectors, exact=self._exact)
        self._vectors = vectors
        self.hubs = NeighbourMeans(len(vectors), lambda rows: vectors[rows], self._index.search)

    @property
    def has_lexical(self) -> bool:
        """Whether the BM25 index is built (by a bm25, hybrid or rrf search)."""
        return self._lexical is not None

    @property
    def has_vectors(self) -> bool:
        """Whether the chunks are embedded yet (False after a BM25-only build)."""
        return self._vectors is not None

    def ensure_vectors(self, progress: Callable[[int, int], Any] | None = None) -> np.ndarray:
        """The chunk vectors, embedding the texts now (through the cache) if not done yet; the
        time it takes and the texts the model embedded are kept (:attr:`embed_seconds`)."""
        with self._dense_lock:
            if self._vectors is None:
                cold = not self.ctx.get_embedder().loaded
                t0 = time.perf_counter()
                if self.mode == "preview":
                    check_preview_mode(self.ctx, self.options, self._force_preview)
                    vectors = preview_vectors(self.ctx, self._docs, [self.chunks], self.options, progress)[0]
                    new = None
                else:
                    heard = _NewTexts(progress if progress is not None else self.ctx.progress)
                    vectors = embed_texts(self.ctx, self.texts, heard)
                    new = heard.total
                self.set_vectors(vectors)
                self.embed_seconds, self.embedded_new, self.embedded_at = time.perf_counter() - t0, new, time.time()
                self.embed_cold = cold and self.ctx.get_embedder().loaded and new != 0
            if self.options.piece_chars and self._pieces is None:
                self._embed_pieces(progress)
            assert self._vectors is not None
            return self._vectors

    def _embed_pieces(self, progress: Callable[[int, int], Any] | None) -> None:
        """The documents' pieces and their vectors (``options.piece_chars``), their time and
        texts added to the chunks' (:attr:`embed_seconds`, :attr:`embedded_new`)."""
        t0 = time.perf_counter()
        heard = _NewTexts(progress if progress is not None else self.ctx.progress)
        self._pieces = piece_vectors(self.ctx, self._docs, self.chunks, self.options, self.mode, heard)
        if self.embed_seconds is not None:
            self.embed_seconds += time.perf_counter() - t0
        if self.embedded_new is not None and self.mode != "preview":
            self.embedded_new += heard.total
        self.embedded_at = time.time()

    @property
    def dim(self) -> int:
        """Numbers per vector (the embedder's, known before anything is embedded)."""
        return int(self._vectors.shape[1]) if self._vectors is not None else int(self.ctx.get_embedder().dim)

    @property
    def index_bytes(self) -> int:
        """Bytes the vector index holds (FAISS's vectors and, for HNSW, its graph, and the
        pieces' vectors); 0 before the vectors are made."""
        pieces = 0 if self._pieces is None else int(self._pieces.vectors.nbytes)
        return 0 if self._index is None else self._index.nbytes + pieces

    @property
    def vector_count(self) -> int:
        """Vectors searched: one per chunk, and one per piece where pieces score the chunks."""
        return len(self.chunks) + (0 if self._pieces is None else len(self._pieces.layout))

    @property
    def vectors(self) -> np.ndarray:
        return self.ensure_vectors()

    @property
    def index(self) -> Any:
        """The :class:`~explorer.retrieval.faiss_index.VectorIndex` over :attr:`vectors`."""
        with self._dense_lock:
            self.ensure_vectors()
            return self._index

    def stemmed_languages(self) -> frozenset[str]:
        """The languages BM25 stems these documents in (read from its index when built, else
        found without building it: a dense search marks a German hit's words by their stems too)."""
        if self._lexical is not None:
            return self._lexical.languages
        if self._languages is None:
            self._languages = group_languages(self.texts, [c.doc_id for c in self.chunks])
        return self._languages

    @property
    def lexical(self) -> LexicalIndex:
        """BM25 over :attr:`texts` (what is embedded, so enrichment options apply to both)."""
        with self._lexical_lock:
            if self._lexical is None:
                self._lexical = LexicalIndex(self.texts, [c.doc_id for c in self.chunks])
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
        return self.ctx.get_embedder().truncated(self.texts)

    def search(self, question: str, k: int = 5, retriever: str = DEFAULT_RETRIEVER) -> list[Hit]:
        return self.search_many([question], k, retriever=retriever)[0]

    def search_many(
        self, questions: Sequence[str], k: int = 5, progress=None, retriever: str = DEFAULT_RETRIEVER
    ) -> list[list[Hit]]:
        """Top-``k`` hits for each question with ``retriever`` (see :func:`retrieve`)."""
        return retrieve(self, questions, k, retriever, progress=progress)

    def search_vectors(self, query_vectors: np.ndarray, k: int = 5) -> list[list[Hit]]:
        """Top-``k`` per query vector; equal scores ordered by position (see :func:`ranked_hits`)."""
        check_k(k)
        return ranked_hits(self, query_vectors, k)

    @property
    def pieces(self) -> ChunkPieces | None:
        """The pieces each chunk's dense score is mixed with (None: ``piece_chars`` is 0)."""
        self.ensure_vectors()
        return self._pieces

    def dense_scores(self, query_vector: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Dense score of the chunks at ``rows`` for one (unit) query vector, for any chunk, not
        only the top k (hybrid fusion scores BM25's candidates too): the cosine FAISS gives, mixed
        with the best piece's where ``piece_chars`` is set."""
        query_vector = np.asarray(query_vector, np.float32)
        cosines = self.vectors[rows] @ query_vector
        pieces = self.pieces
        return cosines if pieces is None else pieces.mix(query_vector, cosines[None], rows)[0]

    def faiss_search(self, query_vectors: np.ndarray, k: int) -> list[list[Hit]]:
        """Raw FAISS order (ties in whatever order the index returns them); with pieces, every
        chunk's mixed score computed and the top ``k`` taken (FAISS only knows the chunks' own)."""
        pieces = self.pieces
        if pieces is None:
            scores, ids = self.index.search(query_vectors, k)
        else:
            scores, ids = pieces.search(query_vectors, self.vectors, k)
        out = []
        for row_s, row_i in zip(scores, ids, strict=True):
            hits = [
                Hit(rank=r + 1, score=float(s), chunk=self.chunks[int(i)])
                for r, (s, i) in enumerate((s, i) for s, i in zip(row_s, row_i, strict=True) if i >= 0)
            ]
            out.append(hits)
        return out


class _NewTexts:
    """A progress callback that also hears how many texts the model embeds: the embedder calls
    it with ``total`` = the distinct texts not in its cache (never when all were)."""

    def __init__(self, inner: Callable[[int, int], Any] | None) -> None:
        self.inner, self.total = inner, 0

    def __call__(self, done: int, total: int) -> Any:
        self.total = max(self.total, int(total))
        return self.inner(done, total) if self.inner is not None else None


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
    options: EmbedOptions = DEFAULT_EMBED_OPTIONS,
    progress: Callable[[int, int], Any] | None = None,
    *,
    exact: bool | None = None,
    retriever: str = DEFAULT_RETRIEVER,
    mode: str = "exact",
    force_preview: bool = False,
) -> StrategyIndex:
    """Chunk ``docs`` with ``config``, embed what :func:`embedded_text` gives, index it.

    For ``retriever="bm25"`` nothing is embedded (vectors come later if a dense search asks).
    ``mode="preview"`` pools the vectors from the documents' token states instead (refused for
    a model outside the measured gap unless ``force_preview``; see :data:`MODES`)."""
    ctx = _checked_context(ctx, options, retriever, mode, force_preview)
    strategy = get_strategy(config.strategy)
    chunks: list[Chunk] = []
    texts: list[str] = []
    for doc in docs:
        doc_chunks = strategy.chunk(doc, config.param_dict, ctx)
        chunks.extend(doc_chunks)
        texts.extend(embedded_text(c, doc, options) for c in doc_chunks)
    index = StrategyIndex(
        config, chunks, texts, None, ctx, options, exact=exact, mode=mode, docs=docs, force_preview=force_preview
    )
    if retriever != "bm25":
        index.ensure_vectors(progress)  # timed: the index keeps what embedding cost
    return index


#: Indexes kept between questions, bounded by bytes (see explorer.limits).
_indexes: ByteLRU[StrategyIndex] = ByteLRU(limits.RETRIEVAL_INDEX_BYTES, lambda idx: idx.nbytes)


def get_index(
    docs: Sequence[Document],
    config: StrategyConfig,
    ctx: Context | None = None,
    options: EmbedOptions = DEFAULT_EMBED_OPTIONS,
    progress: Callable[[int, int], Any] | None = None,
    retriever: str = DEFAULT_RETRIEVER,
    mode: str = "exact",
    force_preview: bool = False,
) -> StrategyIndex:
    """:func:`build_index` with a small in-process LRU keyed by documents, config, options, model
    and mode.

    One entry serves every retriever: its vectors are made when a dense or hybrid search first
    needs them, its BM25 index on the first BM25 or hybrid search."""
    ctx = _checked_context(ctx, options, retriever, mode, force_preview)
    window = ctx.preview_window if mode == "preview" else None
    model = ctx.model_key() if retriever == "bm25" else ctx.get_embedder().model_id  # BM25 builds none
    key = (tuple((d.id, d.name) for d in docs), config, options, model, mode, window)
    idx = _indexes.get(key)
    if idx is None:
        idx = build_index(
            docs, config, ctx, options, progress, retriever=retriever, mode=mode, force_preview=force_preview
        )
    elif retriever != "bm25":
        idx.ensure_vectors(progress)
    return _indexes.put(key, idx)  # measured again: vectors or BM25 may have come since


def compare(
    docs: Sequence[Document],
    configs: Sequence[StrategyConfig],
    question: str,
    k: int = 5,
    ctx: Context | None = None,
    options: EmbedOptions = DEFAULT_EMBED_OPTIONS,
    progress: Callable[[int, int], Any] | None = None,
    retriever: str = DEFAULT_RETRIEVER,
    mode: str = "exact",
    force_preview: bool = False,
) -> dict[StrategyConfig, list[Hit]]:
    """Top-``k`` hits of ``question`` for each config (each with its own index; ``mode`` as in
    :func:`build_index`)."""
    check_retriever(retriever)
    check_mode(mode)
    check_k(k)
    check_question_texts([question])
    ctx = ctx or Context.default()
    if mode == "preview" and retriever != "bm25":
        check_preview_mode(ctx, options, force_preview)
    qv = None if retriever == "bm25" else ctx.get_embedder().encode_queries([question])
    out: dict[StrategyConfig, list[Hit]] = {}
    for config in configs:
        idx = get_index(docs, config, ctx, options, progress, retriever, mode, force_preview)
        out[config] = retrieve(idx, [question], k, retriever, qv, progress)[0]
    return out
