"""One configuration's chunks over the whole corpus, built document by document, and scored as
:func:`explorer.evaluation.evaluate.evaluate` scores its pooled index.

Why a module of its own: this is what a corpus run keeps in memory, and only this: per chunk
its document, offsets and token count (numpy arrays), its vector (inside one exact FAISS
``IndexFlatIP``, appended per document: no other copy), and for BM25 its words as ids into one
vocabulary. No chunk text is kept. At the end :meth:`CorpusIndex.freeze` gives an index with the
interface the rankings of :mod:`explorer.retrieval.ranking` read (chunks without their text,
positions, FAISS search, BM25), so dense, BM25 and hybrid hits, their tie rule and the scores
are computed by the very code ``evaluate`` runs. Unlike ``evaluate``, which switches to an
approximate HNSW graph above 50,000 chunks, search here stays exact at every size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import cached_property
from typing import Any

import numpy as np

from explorer.evaluation.corpus.work import Part
from explorer.evaluation.evaluate import StrategyResult, _result
from explorer.evaluation.questions import Question
from explorer.retrieval.hubs import NeighbourMeans
from explorer.retrieval.lexical import BM25_B, BM25_K1, Aliases, LexicalIndex, merge_aliases
from explorer.retrieval.ranking import Hit, ranked_hits, retrieve
from explorer.strategies.config import StrategyConfig
from explorer.text.chunk import Chunk


class CorpusIndex:
    """Chunks of one configuration, appended one document at a time (:meth:`add`)."""

    def __init__(self, config: StrategyConfig, lexical: bool) -> None:
        self.config = config
        self.lexical = lexical
        self._reset()

    def _reset(self) -> None:
        self._faiss: Any = None
        self._doc: list[np.ndarray] = []
        self._starts: list[np.ndarray] = []
        self._ends: list[np.ndarray] = []
        self._tokens: list[np.ndarray] = []
        self._llm: list[np.ndarray] = []
        self.embed_seconds = 0.0
        self._vocab: dict[str, int] = {}
        self._word_ids: list[np.ndarray] = []
        self._word_lens: list[np.ndarray] = []
        self._languages: set[str] = set()
        self._aliases: Aliases = {}
        self.size = 0

    def add(self, slot: int, part: Part, embed_seconds: float = 0.0) -> None:
        """Append document ``slot``'s chunks (its vectors go straight into FAISS)."""
        n = len(part)
        self.embed_seconds += embed_seconds
        self._doc.append(np.full(n, slot, np.int32))
        self._starts.append(np.asarray(part.starts, np.int64))
        self._ends.append(np.asarray(part.ends, np.int64))
        self._tokens.append(np.asarray(part.tokens, np.int64))
        if part.llm is not None:
            self._llm.append(np.asarray(part.llm, np.int64))
        if part.vectors is not None:
            vectors = np.ascontiguousarray(part.vectors, dtype=np.float32)
            if self._faiss is None:
                import faiss

                self._faiss = faiss.IndexFlatIP(vectors.shape[1])
            if n:
                self._faiss.add(vectors)
        if self.lexical:
            words = part.words or []
            vocab = self._vocab
            self._word_ids.append(
                np.array([vocab.setdefault(w, len(vocab)) for ws in words for w in ws], np.int32)
            )
            self._word_lens.append(np.array([len(ws) for ws in words], np.int32))
            if part.language:
                self._languages.add(part.language)
            merge_aliases(self._aliases, part.aliases)
        self.size += n

    def freeze(self, doc_ids: Sequence[str], names: Sequence[str]) -> FrozenIndex:
        """The finished index (this one is emptied: its arrays move there)."""
        slots = np.concatenate(self._doc) if self._doc else np.zeros(0, np.int32)
        starts = np.concatenate(self._starts) if self._starts else np.zeros(0, np.int64)
        ends = np.concatenate(self._ends) if self._ends else np.zeros(0, np.int64)
        tokens = np.concatenate(self._tokens) if self._tokens else np.zeros(0, np.int64)
        llm = np.concatenate(self._llm) if len(self._llm) == len(self._tokens) and self._llm else None
        chunks = []
        last, within = -1, 0
        for slot, s, e in zip(slots.tolist(), starts.tolist(), ends.tolist(), strict=True):
            within = within + 1 if slot == last else 0
            last = slot
            chunks.append(Chunk(doc_ids[slot], names[slot], within, s, e, "", 0, "", ""))
        corpus = None
        if self.lexical:
            words = list(self._vocab)
            ids = np.concatenate(self._word_ids).tolist() if self._word_ids else []
            lens = np.concatenate(self._word_lens).tolist() if self._word_lens else []
            corpus, at = [], 0
            for n in lens:
                corpus.append([words[i] for i in ids[at : at + n]])
                at += n
        frozen = FrozenIndex(
            self.config, chunks, tokens, self._faiss, corpus, llm, frozenset(self._languages), self._aliases
        )
        frozen.embed_seconds = self.embed_seconds if frozen.has_vectors else None
        self._reset()
        return frozen


class _WordsIndex(LexicalIndex):
    """:class:`LexicalIndex` over words already tokenised (the same BM25, the same scores)."""

    def __init__(
        self, corpus: list[list[str]], languages: frozenset[str] = frozenset(), aliases: Aliases | None = None
    ) -> None:
        self.size = len(corpus)
        self.languages = languages
        self.aliases = aliases or {}
        self._bm25 = None
        if any(corpus):
            import bm25s

            self._bm25 = bm25s.BM25(k1=BM25_K1, b=BM25_B, method="lucene")
            self._bm25.index(corpus, show_progress=False)


class FrozenIndex:
    """A finished corpus index with what :mod:`explorer.retrieval.ranking` reads of a
    :class:`~explorer.retrieval.search.StrategyIndex` (chunks carry offsets, no text)."""

    def __init__(
        self,
        config: StrategyConfig,
        chunks: list[Chunk],
        tokens: np.ndarray,
        faiss_index: Any,
        corpus: list[list[str]] | None,
        llm: np.ndarray | None = None,
        languages: frozenset[str] = frozenset(),
        aliases: Aliases | None = None,
    ) -> None:
        self.config = config
        self.languages = languages  # the documents' stemmers: a query is stemmed in each
        self.aliases = aliases or {}
        self.chunks = chunks
        self.tokens = tokens
        self.llm = llm
        self._faiss = faiss_index
        self._corpus = corpus
        self.ctx = None  # queries always come embedded
        #: what :func:`explorer.evaluation.cost.cost_of` reads: the embedding time (summed over
        #: the documents), texts newly embedded (not counted here: None)
        self.embed_seconds: float | None = None
        self.embedded_new: int | None = None
        self.embed_cold = False

    def __getattr__(self, name: str) -> Any:
        """Other embedding figures a cost report may ask for are not measured here: None."""
        if name.startswith("embed"):
            return None
        raise AttributeError(name)

    def __len__(self) -> int:
        return len(self.chunks)

    @cached_property
    def positions(self) -> dict[tuple[str, int], int]:
        return {(c.doc_id, c.start): i for i, c in enumerate(self.chunks)}

    @cached_property
    def lexical(self) -> LexicalIndex:
        corpus, self._corpus = self._corpus or [], None
        return _WordsIndex(corpus, self.languages, self.aliases)

    def ensure_vectors(self, progress: Any = None) -> None:
        """Vectors came with the documents."""

    @property
    def has_vectors(self) -> bool:
        return self._faiss is not None

    @property
    def dim(self) -> int:
        return 0 if self._faiss is None else int(self._faiss.d)

    @property
    def vector_count(self) -> int:
        """One vector per chunk (a streamed run has no pieces)."""
        return len(self.chunks)

    @property
    def index_bytes(self) -> int:
        """Bytes of the flat index's vectors (it holds nothing else)."""
        return 0 if self._faiss is None else int(self._faiss.ntotal) * self.dim * 4

    def llm_tokens(self, hits: Sequence[Sequence[Hit]]) -> float | None:
        """Mean over questions of the LLM tokens of each question's hits (as
        :func:`explorer.evaluation.cost.llm_tokens` counts them from the texts)."""
        if self.llm is None:
            return None
        if not hits:
            return 0.0
        row = {id(c): i for i, c in enumerate(self.chunks)}
        llm = self.llm
        return sum(sum(int(llm[row[id(h.chunk)]]) for h in q) for q in hits) / len(hits)

    @cached_property
    def hubs(self) -> NeighbourMeans:
        """Each chunk's mean cosine to its nearest chunks, as hybrid reads it of a StrategyIndex."""
        return NeighbourMeans(len(self.chunks), self._faiss.reconstruct_batch, self._faiss.search)

    def dense_scores(self, query_vector: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """As :meth:`StrategyIndex.dense_scores`, from the flat index's own copy of the vectors."""
        vectors = self._faiss.reconstruct_batch(np.asarray(rows, np.int64))
        return vectors @ np.asarray(query_vector, np.float32)

    def faiss_search(self, query_vectors: np.ndarray, k: int) -> list[list[Hit]]:
        """Raw FAISS order, as :meth:`StrategyIndex.faiss_search` (exact inner product)."""
        queries = np.ascontiguousarray(np.atleast_2d(query_vectors), dtype=np.float32)
        size = 0 if self._faiss is None else self._faiss.ntotal
        k = min(int(k), size)
        if k <= 0 or queries.shape[0] == 0:
            return [[] for _ in range(queries.shape[0])]
        scores, ids = self._faiss.search(queries, k)
        return [
            [Hit(rank=r + 1, score=float(s), chunk=self.chunks[int(i)]) for r, (s, i) in enumerate(
                (s, i) for s, i in zip(row_s, row_i, strict=True) if i >= 0
            )]
            for row_s, row_i in zip(scores, ids, strict=True)
        ]  # fmt: skip


def score(
    index: FrozenIndex,
    questions: Sequence[Question],
    query_vectors: Any,
    k: int,
    retriever: str,
    mode: str,
    t0: float,
) -> StrategyResult:
    """The result of one configuration: hits as ``evaluate`` ranks them, scored by its code."""
    texts = [q.text for q in questions]
    hits = (
        ranked_hits(index, query_vectors, k)
        if retriever == "dense"
        else retrieve(index, texts, k, retriever, query_vectors)  # type: ignore[arg-type]
    )
    tokens = index.tokens.tolist()
    count = lambda _texts: tokens  # noqa: E731  # the chunks have no text: their counts were kept
    result = _result(index.config, index, questions, hits, count, k, retriever, mode, t0)  # type: ignore[arg-type]
    cost = getattr(result, "cost", None)
    llm = index.llm_tokens(hits)
    if cost is not None and llm is not None:  # the chunks here have no text: counted per chunk instead
        result = replace(result, cost=replace(cost, llm_tokens=llm))
    return result
