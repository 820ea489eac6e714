"""Where chunks lie in a window of text, from their offsets alone: the text tiled into
segments covered by a constant set of chunks, the window to render around a selection, and the
chunks that hold a position or a passage.

Why a module of its own: this is arithmetic on ``(start, end)`` pairs, shared by the HTML of
:mod:`explorer.render.html` and the app's click and selection handling; no markup here.
"""

from __future__ import annotations

import itertools
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: Most characters rendered at once: a 500-page PDF is shown as a window, not in full.
MAX_RENDER_CHARS = 30_000


@dataclass(frozen=True, slots=True)
class Segment:
    """``text[start:end]`` is covered by exactly the chunks at positions ``chunks``.

    ``marked`` is True inside one of the extra marks (e.g. an expected answer span);
    ``unread`` names the chunks (positions) whose model input ends before this text.
    """

    start: int
    end: int
    chunks: tuple[int, ...]
    marked: bool = False
    unread: tuple[int, ...] = ()

    @property
    def is_overlap(self) -> bool:
        return len(self.chunks) > 1


def segments(
    bounds: Sequence[tuple[int, int]],
    lo: int,
    hi: int,
    marks: Sequence[tuple[int, int]] = (),
    unread: Mapping[int, int] | None = None,
) -> list[Segment]:
    """Tile ``[lo, hi)`` into segments with a constant set of covering chunks.

    ``unread`` maps a chunk's position to the offset where the model stops reading it (the
    truncation audit): segments are also cut there, and name the chunks they lie past the end of.

    ``bounds`` are the chunks' ``(start, end)`` offsets (positions in this list identify the
    chunks). Uncovered stretches (whitespace between chunks) come out with ``chunks == ()``.
    """
    if hi <= lo:
        return []
    starts: dict[int, list[int]] = {}
    ends: dict[int, list[int]] = {}
    for i, (s, e) in enumerate(bounds):
        if s < hi and e > lo and e > s:
            starts.setdefault(max(s, lo), []).append(i)
            ends.setdefault(min(e, hi), []).append(i)
    mark_starts: dict[int, int] = {}
    mark_ends: dict[int, int] = {}
    for s, e in marks:
        s, e = max(s, lo), min(e, hi)
        if e > s:
            mark_starts[s] = mark_starts.get(s, 0) + 1
            mark_ends[e] = mark_ends.get(e, 0) + 1
    cuts = unread or {}
    points = sorted({lo, hi, *starts, *ends, *mark_starts, *mark_ends, *(x for x in cuts.values() if lo < x < hi)})
    active: set[int] = set()
    in_marks = 0
    out: list[Segment] = []
    for a, b in itertools.pairwise(points):
        active.difference_update(ends.get(a, ()))
        active.update(starts.get(a, ()))
        in_marks += mark_starts.get(a, 0) - mark_ends.get(a, 0)
        chunks = tuple(sorted(active))
        past = tuple(p for p in chunks if p in cuts and cuts[p] <= a)
        out.append(Segment(a, b, chunks, in_marks > 0, past))
    return out


def window_around(
    bounds: Sequence[tuple[int, int]],
    selected: int | None,
    text_len: int,
    max_chars: int = MAX_RENDER_CHARS,
) -> tuple[int, int]:
    """The ``[lo, hi)`` range to render: the whole text if it fits, else ``max_chars``
    starting at the chunk before ``selected`` (so the selection sits near the top), or the last
    ``max_chars`` of the text when that start is nearer the end (a full window, not a sliver)."""
    if text_len <= max_chars:
        return 0, text_len
    if selected is None or not bounds:
        return 0, max_chars
    selected = min(max(selected, 0), len(bounds) - 1)
    lo = bounds[max(selected - 1, 0)][0]
    if bounds[selected][0] - lo > max_chars // 2:  # a huge previous chunk: start nearer
        lo = max(0, bounds[selected][0] - max_chars // 4)
    if lo == bounds[0][0]:  # from the text's start: what precedes the first chunk is blank, else cut
        lo = 0
    lo = min(lo, text_len - max_chars)
    return lo, lo + max_chars


def chunks_in(bounds: Sequence[tuple[int, int]], lo: int, hi: int) -> list[int]:
    """Positions of the chunks that intersect ``[lo, hi)`` (starts must increase)."""
    starts = [b[0] for b in bounds]
    stop = bisect_left(starts, hi)
    return [i for i in range(stop) if bounds[i][1] > lo]


def holders(bounds: Sequence[tuple[int, int]], start: int, end: int) -> tuple[list[int], list[int]]:
    """Positions of the chunks that hold ``[start, end)`` whole, and of those that hold part of
    it (starts must increase): where a selected passage would be retrieved from."""
    inside = chunks_in(bounds, start, end)
    whole = [i for i in inside if bounds[i][0] <= start and bounds[i][1] >= end]
    return whole, [i for i in inside if i not in whole]


def chunk_at(bounds: Sequence[tuple[int, int]], pos: int) -> int | None:
    """Position of the last chunk starting at or before ``pos`` that contains it, else the next one."""
    if not bounds:
        return None
    starts = [b[0] for b in bounds]
    i = bisect_left(starts, pos + 1) - 1
    if i >= 0 and bounds[i][1] > pos:
        return i
    return min(max(i + 1, 0), len(bounds) - 1)
