"""Ranking chunks for a question: dense (cosine of the model's vectors, through FAISS), BM25,
or both fused (their normalised scores combined, or their ranks: reciprocal-rank fusion), with one
deterministic order among equal scores.

Why a module of its own: every ranking takes an index (:class:`~explorer.retrieval.search.StrategyIndex`)
and gives :class:`Hit` lists; building and caching indexes is :mod:`explorer.retrieval.search`.
Equal scores go to the chunk that comes first in the documents, for every retriever.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from explorer import limits
from explorer.errors import ParamError
from explorer.retrieval.hubs import HUB_WEIGHT
from explorer.retrieval.ties import first_k_by_ties
from explorer.text.chunk import Chunk
from explorer.text.wording import quoted

if TYPE_CHECKING:
    from explorer.retrieval.search import StrategyIndex

#: How chunks are ranked: "dense" = cosine of the model's vectors (FAISS), "bm25" = BM25 over
#: lexical tokens (:mod:`explorer.retrieval.lexical`, no model), "hybrid" = both, their scores
#: fused (:func:`hybrid_hits`), "rrf" = both, their ranks fused (:func:`rrf_hits`: what many RAG
#: stacks do, e.g. LangChain's EnsembleRetriever and Elasticsearch's RRF, so users can see theirs).
RETRIEVERS = ("dense", "bm25", "hybrid", "rrf")
#: The retriever used unless another is asked for: hybrid ranked best on both sets measured
#: (bench/bench_french.py, bench/chroma_eval.py: hit@5 +7 and +5.5 points over dense with e5).
DEFAULT_RETRIEVER = "hybrid"
#: Candidates each ranking gives to hybrid fusion: this many (k if larger), or every chunk if
#: fewer. Not a multiple of k: min-max normalisation over another set of candidates reorders the
#: top hits, so moving Top k from 5 to 20 reshuffled the first five (4 k did). Measured (e5 int8
#: hybrid, hit@5): 80 or 100 candidates gain a French question at 1000/200 and at 500/0 but lose
#: 0.6-0.8 points of recall on Chroma's set; every chunk loses on both, so 50 stays.
HYBRID_CANDIDATES = 50
#: Hybrid keeps BM25's first hit among its first this many hits (the default Top k). Why: the
#: chunk that holds the question's rarest words most often can have a low cosine (a table row, an
#: option name), and the average of the two scores then sinks it below chunks that are middling
#: in both. Moved up to a fixed place, not to the k-th, so a top k stays the first k of any larger
#: top k. Measured (questions hit in the top 5, 19 settings: e5 int8 and float32, MiniLM int8 and
#: float32; French set 1000/200 and 500/0, Chroma's set, Vim's tutorial in four languages): 9
#: gained (MiniLM), none lost; e5's results are unchanged. Keeping dense's first hit too: 8 lost
#: net (dense's alone), or 6 gained net with both but lost in 4 settings (e5 float32, Chroma's).
HYBRID_FIRST_SLOTS = 5
#: Scores this close are ties (the same text embedded twice scores the same, up to BLAS rounding).
TIE_EPSILON = 1e-6


def check_retriever(retriever: str) -> str:
    """``retriever`` if it is one of :data:`RETRIEVERS`, else ParamError naming it."""
    if not isinstance(retriever, str) or retriever not in RETRIEVERS:
        raise ParamError(f"retriever {retriever!r} is not one of {', '.join(RETRIEVERS)}")
    return retriever


@dataclass(frozen=True, slots=True)
class Evidence:
    """Where a fused retriever's hit stood in each of the rankings it fused: its dense score (the
    cosine, mixed with its best piece's where the index has pieces: :mod:`explorer.retrieval.pieces`)
    and BM25 score, and its 1-based place in the dense and the BM25 ranking (``None``: not among that
    ranking's candidates, or no question word in it for BM25). Why: a fused rank says nothing of
    its parts; with them a reader sees that a chunk dense ranked first fell for want of the
    question's words."""

    cosine: float
    dense_rank: int | None
    bm25: float
    bm25_rank: int | None
    #: Moved up by hybrid into its first :data:`HYBRID_FIRST_SLOTS` as BM25's first hit, above
    #: hits with a higher fused score.
    raised: bool = False
    #: Hybrid: the chunk's mean cosine to its nearest chunks, of which :data:`HUB_WEIGHT` was
    #: taken off its dense score before fusing (:mod:`explorer.retrieval.hubs`); None for rrf.
    neighbours: float | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {
            "cosine": round(self.cosine, 6),
            "dense_rank": self.dense_rank,
            "bm25": round(self.bm25, 6),
            "bm25_rank": self.bm25_rank,
            "raised": self.raised,
        }
        return d if self.neighbours is None else d | {"neighbours": round(self.neighbours, 6)}


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieved chunk: 1-based ``rank`` and the retriever's ``score``: cosine similarity for
    dense, the BM25 score for bm25 (0 when no question word occurs in the chunk), the fused
    score for hybrid (0 to 1: half the cosine's and half the BM25 score's place between the
    lowest and the highest among the candidates, see :func:`hybrid_hits`), the sum of
    ``1 / (60 + rank)`` over the two rankings for rrf (:func:`rrf_hits`); those two also carry
    their :class:`Evidence`."""

    rank: int
    score: float
    chunk: Chunk
    evidence: Evidence | None = None

    def to_dict(self) -> dict[str, Any]:
        c = self.chunk
        d = {
            "rank": self.rank,
            "score": round(self.score, 6),
            "document": c.doc_name,
            "start": c.start,
            "end": c.end,
            "text": c.text,
        }
        return d if self.evidence is None else d | {"evidence": self.evidence.to_dict()}


def check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= limits.MAX_TOP_K:
        raise ParamError(f"k={quoted(k)} must be a whole number from 1 to {limits.MAX_TOP_K:,}")


def check_question_texts(questions: Sequence[str]) -> None:
    for q in questions:
        if not isinstance(q, str) or not q.strip():
            raise ParamError(f"question {q!r} is empty: type a question")


def retrieve(
    index: StrategyIndex,
    questions: Sequence[str],
    k: int = 5,
    retriever: str = DEFAULT_RETRIEVER,
    query_vectors: np.ndarray | None = None,
    progress: Callable[[int, int], Any] | None = None,
) -> list[list[Hit]]:
    """Top-``k`` hits per question with ``retriever`` (one of :data:`RETRIEVERS`).

    ``query_vectors`` (from ``encode_queries``, one row per question) may be given to embed the
    questions once for several indexes; bm25 never embeds anything. Equal scores go to the
    chunk that comes first in the documents, for every retriever.
    """
    check_retriever(retriever)
    check_k(k)
    questions = list(questions)
    check_question_texts(questions)
    if retriever == "bm25":
        return bm25_hits(index, questions, k)
    if query_vectors is None:
        query_vectors = index.ctx.get_embedder().encode_queries(questions, progress=progress)
    if len(query_vectors) != len(questions):
        raise ValueError(f"{len(query_vectors)} query vectors for {len(questions)} questions")
    index.ensure_vectors(progress)
    if retriever == "dense":
        return ranked_hits(index, query_vectors, k)
    if retriever == "rrf":
        return rrf_hits(index, questions, query_vectors, k)
    return hybrid_hits(index, questions, query_vectors, k)


def _top_by_scores(index: StrategyIndex, scores: np.ndarray, k: int) -> list[Hit]:
    """Top-``k`` of per-chunk ``scores`` (chunk order), ties by :func:`_break_ties`."""
    n = len(scores)
    if n > k:
        kth = float(np.partition(scores, n - k)[n - k])  # the k-th best score
        candidates = np.flatnonzero(scores >= kth - TIE_EPSILON)  # with all that tie with it
    else:
        candidates = np.arange(n)
    chunks, position = index.chunks, index.positions
    top = first_k_by_ties(scores, candidates, lambda c: position[(chunks[c].doc_id, chunks[c].start)], k, TIE_EPSILON)
    return [Hit(r, float(scores[i]), chunks[i]) for r, i in enumerate(top, 1)]


def bm25_hits(index: StrategyIndex, questions: Sequence[str], k: int) -> list[list[Hit]]:
    """Top-``k`` chunks by BM25 score per question. Always ``min(k, chunks)`` hits: when fewer
    chunks contain a question word (or the question has only stop words), the rest score 0 and
    follow in document order."""
    lexical = index.lexical
    return [_top_by_scores(index, lexical.scores(q), k) for q in questions]


#: Weight of the BM25 score in hybrid's fused score; the dense cosine gets the rest.
HYBRID_BM25_WEIGHT = 0.5


def hybrid_hits(
    index: StrategyIndex, questions: Sequence[str], query_vectors: np.ndarray, k: int
) -> list[list[Hit]]:
    """Top-``k`` by a convex combination of the dense and BM25 scores: the candidates are the
    top ``max(k, HYBRID_CANDIDATES)`` of each ranking; the dense score of each loses
    :data:`HUB_WEIGHT` of its chunk's mean cosine to its nearest chunks (how much of a hub it is,
    :mod:`explorer.retrieval.hubs`); over the candidates each score is min-max normalised to
    [0, 1] and the fused score is ``(1 - w) * dense' + w * bm25'`` with ``w`` =
    :data:`HYBRID_BM25_WEIGHT`. A score that is equal over every candidate (no question word in
    any chunk: a question of only stop words) adds nothing, so such a question ranks as dense
    does. Equal fused scores: earlier chunk first. Then BM25's first hit, where the fused order
    puts it lower, moves up to the last of the first :data:`HYBRID_FIRST_SLOTS` places, marked
    ``raised``.

    Why not reciprocal-rank fusion (:func:`rrf_hits`), the usual default: it throws the scores'
    gaps away. Measured (hit@5, e5 / MiniLM): French set 1000/200 0.867 / 0.833 against RRF's
    0.833 / 0.667, 500/0 0.817 / 0.683 against 0.783 / 0.633, Chroma's 472 questions 0.930 /
    0.898 against 0.922 / 0.883; the same conclusion as Bruch, Gai & Ingber, *An Analysis of
    Fusion Functions for Hybrid Retrieval* (ACM TOIS, 2023)."""

    def fuse(rows: np.ndarray, cosines: np.ndarray, bm25: np.ndarray, _places: Any) -> np.ndarray:
        fused = (1 - HYBRID_BM25_WEIGHT) * _unit_range(cosines)
        return fused + HYBRID_BM25_WEIGHT * _unit_range(bm25)

    return _fused_hits(index, questions, query_vectors, k, fuse, first_slots=HYBRID_FIRST_SLOTS, hubs=True)


#: Reciprocal-rank fusion constant: rank r in a ranking adds ``1 / (RRF_K + r)``. 60 is the value of
#: Cormack, Clarke & Büttcher (SIGIR 2009) and the default of the stacks that offer RRF.
RRF_K = 60
#: Fused RRF scores this close are ties (sums of a few reciprocals: float rounding only).
RRF_TIE_EPSILON = 1e-12


def rrf_hits(
    index: StrategyIndex, questions: Sequence[str], query_vectors: np.ndarray, k: int
) -> list[list[Hit]]:
    """Top-``k`` by reciprocal-rank fusion of the dense and BM25 rankings, each cut to ``max(k,
    HYBRID_CANDIDATES)`` candidates: a chunk's score is the sum over the rankings it is in of
    ``1 / (RRF_K + rank)``. Chunks with BM25 score 0 are not in the BM25 ranking (no question
    word), so a question of only stop words ranks as dense does. Equal fused scores: earlier
    chunk first."""

    def fuse(rows: np.ndarray, _cosines: np.ndarray, _bm25: np.ndarray, places: Any) -> np.ndarray:
        fused = np.zeros(len(rows))
        for place in places:
            fused += [1.0 / (RRF_K + place[row]) if row in place else 0.0 for row in rows.tolist()]
        return fused

    return _fused_hits(index, questions, query_vectors, k, fuse, RRF_TIE_EPSILON)


def _fused_hits(
    index: StrategyIndex,
    questions: Sequence[str],
    query_vectors: np.ndarray,
    k: int,
    fuse: Callable[[np.ndarray, np.ndarray, np.ndarray, Any], np.ndarray],
    epsilon: float = TIE_EPSILON,
    first_slots: int = 0,
    hubs: bool = False,
) -> list[list[Hit]]:
    """Top-``k`` of ``fuse(rows, their cosines, their BM25 scores, (dense, BM25) places)`` over
    the union of each ranking's top ``max(k, HYBRID_CANDIDATES)`` candidates (BM25's with a
    score above 0; a place maps a row to its 1-based rank in that ranking); equal fused scores
    (within ``epsilon``): earlier chunk first; BM25's first hit within the first ``first_slots``
    (:func:`_raise_bm25_first`; 0: where the fusion puts it); ``hubs``: the cosines given to
    ``fuse`` less :data:`HUB_WEIGHT` of their chunks' neighbour means. Each hit carries its
    :class:`Evidence`."""
    n = len(index)
    if n == 0:
        return [[] for _ in questions]
    fetch = min(n, max(k, HYBRID_CANDIDATES))
    dense = ranked_hits(index, query_vectors, fetch)
    lexical = index.lexical
    position = index.positions
    out = []
    for question, vector, dense_hits in zip(questions, query_vectors, dense, strict=True):
        bm25 = lexical.scores(question)
        lexical_hits = [h for h in _top_by_scores(index, bm25, fetch) if h.score > 0]
        places = tuple(
            {position[(h.chunk.doc_id, h.chunk.start)]: h.rank for h in hs} for hs in (dense_hits, lexical_hits)
        )
        chunks = {position[(h.chunk.doc_id, h.chunk.start)]: h.chunk for h in (*dense_hits, *lexical_hits)}
        rows = np.fromiter(chunks, dtype=np.int64, count=len(chunks))
        cosines = index.dense_scores(vector, rows)
        near = index.hubs(rows) if hubs else np.full(len(rows), np.nan)
        fused = fuse(rows, cosines - HUB_WEIGHT * near if hubs else cosines, bm25[rows], places)
        hits = [
            Hit(0, float(f), chunks[row], Evidence(
                float(c), places[0].get(row), float(bm25[row]), places[1].get(row), neighbours=float(h) if hubs else None
            ))
            for row, f, c, h in zip(rows.tolist(), fused, cosines, near, strict=True)
        ]  # fmt: skip
        top = _raise_bm25_first(_break_ties(hits, position, epsilon), first_slots)[:k]
        out.append([Hit(r, h.score, h.chunk, h.evidence) for r, h in enumerate(top, 1)])
    return out


def _raise_bm25_first(ordered: list[Hit], slots: int) -> list[Hit]:
    """``ordered`` with BM25's first hit, if it is placed at ``slots`` or below, moved up to be
    the ``slots``-th (marked raised); the hits it passes go one place down."""
    late = next((i for i, h in enumerate(ordered) if h.evidence and h.evidence.bm25_rank == 1), -1)
    if slots <= 0 or late < slots:
        return ordered
    hit = ordered[late]
    raised = replace(hit, evidence=replace(hit.evidence, raised=True)) if hit.evidence else hit
    return [*ordered[: slots - 1], raised, *ordered[slots - 1 : late], *ordered[late + 1 :]]


def _unit_range(scores: np.ndarray) -> np.ndarray:
    """``scores`` min-max normalised to [0, 1]. When they are all equal (one candidate), each is
    as good as the best: 1 if above 0, else 0 (no question word, for BM25): a lone hit read
    "fused score 0.0000"."""
    scores = np.asarray(scores, np.float64)
    low, span = scores.min(), np.ptp(scores)
    return (scores - low) / span if span > 0 else (scores > 0).astype(np.float64)


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


@dataclass(frozen=True, slots=True)
class AnswerPlaces:
    """Where the best chunk overlapping an expected answer stands in the dense and in the BM25
    ranking of every chunk (1-based, the tie rule of the retrievers; ``None``: that ranking was
    not built, or, for BM25, no overlapping chunk holds a question word). Why: "not retrieved"
    says nothing of how far the answer was, nor which of the two rankings lost it."""

    dense_rank: int | None
    bm25_rank: int | None
    #: Which chunk (its index in the index) holds each place: two chunks that share the answer
    #: (an overlap) can each be the better placed in one ranking.
    dense_chunk: int | None = None
    bm25_chunk: int | None = None


def answer_places(
    index: StrategyIndex, question: str, ref: tuple[str, int, int], query_vector: np.ndarray | None = None
) -> AnswerPlaces | None:
    """:class:`AnswerPlaces` of the answer ``ref`` = (document id, start, end) in ``index`` (None
    when no chunk overlaps it). The
    dense rank needs ``query_vector`` and the index's vectors; the BM25 rank an index whose BM25
    was built (neither is built here: a dense search does not pay for BM25, nor BM25 for vectors)."""
    doc_id, start, end = ref
    rows = np.array([i for i, c in enumerate(index.chunks) if c.doc_id == doc_id and c.start < end and c.end > start])
    if not len(rows):
        return None
    dense = bm25 = (None, None)
    if query_vector is not None and index.has_vectors:
        dense = _place(index.dense_scores(np.asarray(query_vector, np.float32), np.arange(len(index))), rows)
    if index.has_lexical:
        scores = index.lexical.scores(question)
        bm25 = _place(scores, rows) if scores[rows].max() > 0 else (None, None)
    return AnswerPlaces(dense[0], bm25[0], dense[1], bm25[1])


def _place(scores: np.ndarray, rows: np.ndarray) -> tuple[int, int]:
    """(1-based rank, row) of the best placed of ``rows`` among all ``scores``: every higher
    score, and every equal one (within :data:`TIE_EPSILON`) of a chunk that comes earlier, goes first."""

    def place(row: int) -> int:
        s = scores[row]
        return int((scores > s + TIE_EPSILON).sum() + (np.abs(scores[:row] - s) <= TIE_EPSILON).sum() + 1)

    return min((place(int(r)), int(r)) for r in rows)
