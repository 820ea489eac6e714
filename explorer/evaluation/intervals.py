"""Interval arithmetic over character spans: every metric counts characters of the documents'
text with sorted, merged ``[start, end)`` intervals rather than per-character sets, so scoring
hundreds of questions over megabytes of text stays fast.

Why a module of its own: structural and retrieval metrics both stand on it.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Hashable, Iterable, Sequence

from explorer.text.chunk import Chunk

Interval = tuple[int, int]
#: A character span of one document: (document key, start, end). The key is usually ``doc.id``.
Ref = tuple[Hashable, int, int]


def merge(intervals: Iterable[Interval]) -> list[Interval]:
    """Sort and merge ``[start, end)`` intervals; empty ones are dropped, touching ones joined."""
    out: list[Interval] = []
    for s, e in sorted(iv for iv in intervals if iv[1] > iv[0]):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def total(merged: Iterable[Interval]) -> int:
    """Characters covered by already merged (disjoint) intervals."""
    return sum(e - s for s, e in merged)


def intersect(a: Sequence[Interval], b: Sequence[Interval]) -> list[Interval]:
    """Intersection of two merged interval lists (two-pointer walk, O(len a + len b))."""
    out: list[Interval] = []
    i = j = 0
    while i < len(a) and j < len(b):
        s = max(a[i][0], b[j][0])
        e = min(a[i][1], b[j][1])
        if s < e:
            out.append((s, e))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def subtract(a: Sequence[Interval], b: Sequence[Interval]) -> list[Interval]:
    """``a`` minus ``b``, both merged."""
    out: list[Interval] = []
    j = 0
    for s, e in a:
        cur = s
        while j < len(b) and b[j][1] <= cur:
            j += 1
        k = j
        while k < len(b) and b[k][0] < e:
            if b[k][0] > cur:
                out.append((cur, b[k][0]))
            cur = max(cur, b[k][1])
            k += 1
        if cur < e:
            out.append((cur, e))
    return out


def by_doc(spans: Iterable[Ref]) -> dict[Hashable, list[Interval]]:
    out: dict[Hashable, list[Interval]] = {}
    for doc, s, e in spans:
        out.setdefault(doc, []).append((s, e))
    return out


class ChunkSpans:
    """All chunks of a strategy, per document, for finding the chunks that touch a span fast."""

    def __init__(self, spans: Iterable[Ref]) -> None:
        self._docs: dict[Hashable, tuple[list[int], list[int], int]] = {}
        for d, ivs in by_doc(spans).items():
            ivs.sort()
            starts = [s for s, _ in ivs]
            ends = [e for _, e in ivs]
            longest = max(e - s for s, e in ivs)
            self._docs[d] = (starts, ends, longest)

    @classmethod
    def of_chunks(cls, chunks: Iterable[Chunk]) -> ChunkSpans:
        return cls((c.doc_id, c.start, c.end) for c in chunks)

    def touching(self, doc: Hashable, start: int, end: int, *, adjacent: bool = False) -> list[Interval]:
        """Chunks of ``doc`` sharing at least one character with ``[start, end)``; with
        ``adjacent``, also those that end where it starts or start where it ends."""
        entry = self._docs.get(doc)
        if entry is None:
            return []
        starts, ends, longest = entry
        lo = bisect_left(starts, start - longest)
        if adjacent:
            hi = bisect_right(starts, end)
            return [(starts[i], ends[i]) for i in range(lo, hi) if ends[i] >= start]
        hi = bisect_left(starts, end)
        return [(starts[i], ends[i]) for i in range(lo, hi) if ends[i] > start]
