"""Pieces: each chunk's dense score mixed with the best score of the small pieces of its
document that lie inside it ("small-to-big" retrieval: small texts matched, the chunk returned).

Why: one mean-pooled vector of a 1,000-character chunk of a manual page averages the three to
five options it holds, so a question about one of them matches it weakly. Each document is cut
once into pieces of about ``size`` characters (the same pieces for every configuration, so they
are embedded once per document and model, through the embedder's cache), and a chunk scores
``(1 - PIECE_WEIGHT) * its cosine + PIECE_WEIGHT * the best cosine of its pieces``. Measured with
hybrid retrieval (``bench/bench_fusion.py``, 14 settings, 1,224 questions): +17 questions net with
multilingual-e5-small int8, +19 bfloat16, +12 MiniLM int8. The pieces never change a chunk's
offsets: they only score it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from explorer.documents.document import Document
from explorer.errors import ParamError
from explorer.text.chunk import Chunk
from explorer.text.wording import quoted

#: Smallest and largest piece size (characters) ``piece_chars`` accepts (0 turns pieces off).
MIN_PIECE_CHARS = 100
MAX_PIECE_CHARS = 2_000
#: The size measured best on the question sets here (200 and 400 within a question or two).
SUGGESTED_PIECE_CHARS = 300
#: The sizes the app offers.
PIECE_CHOICES = (200, SUGGESTED_PIECE_CHARS, 400, 600)
#: Share of the best piece's cosine in a chunk's dense score (half and half measured best of
#: 0.3-0.7).
PIECE_WEIGHT = 0.5
#: Separators a piece prefers to end after, best first (in the last two thirds of its window).
_SEPARATORS = ("\n\n", "\n", " ")


def check_piece_chars(size: int) -> int:
    """``size`` if it is 0 (off) or from :data:`MIN_PIECE_CHARS` to :data:`MAX_PIECE_CHARS`."""
    ok = isinstance(size, int) and not isinstance(size, bool)
    if not ok or not (size == 0 or MIN_PIECE_CHARS <= size <= MAX_PIECE_CHARS):
        raise ParamError(
            f"piece_chars={quoted(size)} must be 0 (off) or a whole number from {MIN_PIECE_CHARS} to {MAX_PIECE_CHARS:,}"
        )
    return size


def piece_spans(text: str, size: int) -> list[tuple[int, int]]:
    """Consecutive ``(start, end)`` pieces of ``text`` of at most ``size`` characters, each ending
    after a blank line, else a line end, else a space found in the last two thirds of its window
    (a hard cut where there is none); pieces of only whitespace are left out. Offsets by
    construction: every piece is ``text[start:end]``."""
    out: list[tuple[int, int]] = []
    start, n = 0, len(text)
    while start < n:
        end = min(n, start + size)
        if end < n:
            window = text[start:end]
            cuts = (window.rfind(sep) + len(sep) for sep in _SEPARATORS)
            end = start + next((c for c in cuts if c > size // 3), size)
        if not text[start:end].isspace():
            out.append((start, end))
        start = end
    return out


@dataclass(frozen=True, slots=True)
class PieceLayout:
    """Where the pieces of some documents are, and which of them each chunk holds: chunk ``i``
    holds pieces ``lo[i]:hi[i]`` (none when equal), those that lie at least half inside it."""

    starts: np.ndarray
    ends: np.ndarray
    doc_ids: tuple[str, ...]
    lo: np.ndarray
    hi: np.ndarray

    @classmethod
    def of(cls, docs: Sequence[Document], chunks: Sequence[Chunk], size: int) -> PieceLayout:
        check_piece_chars(size)
        spans: dict[str, list[tuple[int, int]]] = {}
        for doc in docs:
            if doc.id not in spans:
                spans[doc.id] = piece_spans(doc.text, size)
        flat = [(d, s, e) for d, doc_spans in spans.items() for s, e in doc_spans]
        starts = np.array([s for _, s, _ in flat], np.int64)
        ends = np.array([e for _, _, e in flat], np.int64)
        lo = np.zeros(len(chunks), np.int64)
        hi = np.zeros(len(chunks), np.int64)
        rows_of: dict[str, list[int]] = {}
        for i, c in enumerate(chunks):
            if c.doc_id not in spans:
                raise ParamError(f"a chunk's document ({c.doc_id}) is not among the documents given")
            rows_of.setdefault(c.doc_id, []).append(i)
        first = 0
        for doc_id, doc_spans in spans.items():
            a, b = first, first + len(doc_spans)
            first = b
            rows = np.array(rows_of.get(doc_id, []), np.int64)
            if len(rows):
                lo[rows], hi[rows] = _held(starts[a:b], ends[a:b], chunks, rows)
                lo[rows] += a
                hi[rows] += a
        return cls(starts, ends, tuple(d for d, _, _ in flat), lo, hi)

    def __len__(self) -> int:
        return len(self.starts)

    def texts(self, docs: Sequence[Document]) -> list[str]:
        by_id = {d.id: d.text for d in docs}
        return [
            by_id[d][s:e]
            for d, s, e in zip(self.doc_ids, self.starts.tolist(), self.ends.tolist(), strict=True)
        ]


def _held(
    starts: np.ndarray, ends: np.ndarray, chunks: Sequence[Chunk], rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For the chunks at ``rows`` (of one document), the range of its sorted, disjoint pieces
    that lie at least half inside each: the pieces it overlaps, less the one at either end
    when less than half of it is inside (only those two can be partly outside)."""
    c_start = np.array([chunks[i].start for i in rows], np.int64)
    c_end = np.array([chunks[i].end for i in rows], np.int64)
    lo = np.searchsorted(ends, c_start, "right")  # the first piece that ends after the start
    hi = np.searchsorted(starts, c_end, "left")  # past the last piece that starts before the end
    for at_end in (False, True):
        j = np.clip(hi - 1 if at_end else lo, 0, max(len(starts) - 1, 0))
        if not len(starts):
            break
        inside = np.minimum(ends[j], c_end) - np.maximum(starts[j], c_start)
        drop = (lo < hi) & (2 * inside < ends[j] - starts[j])
        if at_end:
            hi = hi - drop
        else:
            lo = lo + drop
    return lo, hi


@dataclass(frozen=True, slots=True)
class BestPiece:
    """Where a chunk's best piece for a question is in its document, and its cosine."""

    start: int
    end: int
    cosine: float


@dataclass(frozen=True, slots=True)
class ChunkPieces:
    """The pieces' vectors with their layout: what a chunk's dense score is mixed with."""

    layout: PieceLayout
    vectors: np.ndarray

    @property
    def nbytes(self) -> int:
        layout = self.layout
        return int(self.vectors.nbytes + sum(x.nbytes for x in (layout.starts, layout.ends, layout.lo, layout.hi)))

    def best(self, query_vectors: np.ndarray) -> np.ndarray:
        """Per query (rows) and chunk (columns): the best cosine of the chunk's pieces, NaN for a
        chunk that holds none."""
        q = np.atleast_2d(np.asarray(query_vectors, np.float32))
        lo, hi = self.layout.lo, self.layout.hi
        if not len(lo):
            return np.zeros((len(q), 0), np.float32)
        cos = self.vectors @ q.T  # pieces x queries
        past_end = np.full((1, cos.shape[1]), -np.inf, np.float32)  # reduceat may read one row past the last
        bounds = np.ravel(np.column_stack([lo, hi]))  # max over lo:hi at even places; odd ones are dropped
        best = np.maximum.reduceat(np.vstack([cos, past_end]), bounds, axis=0)[::2].T
        best[:, lo == hi] = np.nan
        return best

    def best_piece(self, query_vector: np.ndarray, row: int) -> BestPiece | None:
        """The piece of chunk ``row`` that scores best for ``query_vector`` (None: it holds none)."""
        lo, hi = int(self.layout.lo[row]), int(self.layout.hi[row])
        if lo == hi:
            return None
        cos = self.vectors[lo:hi] @ np.asarray(query_vector, np.float32)
        at = lo + int(np.argmax(cos))
        return BestPiece(int(self.layout.starts[at]), int(self.layout.ends[at]), float(cos.max()))

    def search(
        self, query_vectors: np.ndarray, chunk_vectors: np.ndarray, k: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` chunks by mixed score for each query, as FAISS answers (scores, ids): every
        chunk is scored (FAISS knows only the chunks' own vectors)."""
        q = np.atleast_2d(np.asarray(query_vectors, np.float32))
        mixed = self.mix(q, q @ chunk_vectors.T)
        ids = np.argsort(-mixed, axis=1, kind="stable")[:, : max(0, min(int(k), mixed.shape[1]))]
        return np.take_along_axis(mixed, ids, axis=1), ids

    def mix(
        self, query_vectors: np.ndarray, cosines: np.ndarray, rows: np.ndarray | None = None
    ) -> np.ndarray:
        """``cosines`` (queries x chunks, or x ``rows``) mixed with the best piece's cosine
        (:data:`PIECE_WEIGHT`); a chunk without a piece keeps its own cosine."""
        best = self.best(query_vectors)
        if rows is not None:
            best = best[:, rows]
        mixed = (1 - PIECE_WEIGHT) * cosines + PIECE_WEIGHT * best
        return np.where(np.isnan(best), cosines, mixed).astype(np.float32)
