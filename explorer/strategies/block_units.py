"""The sentence strategy's units in code blocks and tables: a code block is one unit, a table
row is one unit, and a table's header row, delimiter row and first row are one; and which units
are headings.

Why: the sentence splitter ends a sentence at ". " inside a table's cell and around every row,
so groups of sentences could end inside a row or leave a table's header at the end of a group,
its rows in the next. Units are whole sentences joined where a cut would fall inside such a
block, so offsets stay the sentences' own.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from explorer.strategies.base import trim

Bounds = tuple[int, int]
#: The longest heading that is one unit: a longer one is a paragraph that a line of "=" under it
#: made a (setext) heading, whose sentences stay units.
HEADING_MAX_CHARS = 300


@dataclass(frozen=True)
class _Region:
    """A code block or table ``[start, end)``; ``cuts``: where a cut may fall inside it (a
    table's line ends from its first row's on; none in code)."""

    start: int
    end: int
    kind: str
    cuts: tuple[int, ...]


def block_units(
    text: str, sents: Sequence[Bounds], blocks: Sequence[tuple[str, int, int]]
) -> tuple[list[Bounds], list[str]]:
    """``sents`` joined wherever a cut between two would fall inside a code block or a table
    ``(kind, start, end)`` of ``blocks`` but not at the end of a table row after its first; and
    each unit's kind ("code" or "table" for a unit inside one, "" for prose)."""
    regions = _regions(text, blocks)
    if not regions or not sents:
        return list(sents), [""] * len(sents)
    starts = [r.start for r in regions]
    units: list[Bounds] = []
    us, ue = sents[0]
    for ns, ne in sents[1:]:
        k = bisect_left(starts, ns) - 1  # the region starting last before the next sentence
        if k >= 0 and _inside(regions[k], ue, ns):
            ue = ne
            continue
        units.append((us, ue))
        us, ue = ns, ne
    units.append((us, ue))
    return units, [_kind_of(regions, starts, u) for u in units]


def _regions(text: str, blocks: Sequence[tuple[str, int, int]]) -> list[_Region]:
    """The blocks as regions that do not overlap (a block inside or across another joins it)."""
    out: list[_Region] = []
    for kind, s, e in sorted(blocks, key=lambda b: (b[1], -b[2])):
        if out and s < out[-1].end:
            if e > out[-1].end:
                last = out.pop()
                out.append(_Region(last.start, e, last.kind, ()))
            continue
        cuts = tuple(_row_ends(text, s, e)) if kind == "table" else ()
        out.append(_Region(s, e, kind, cuts))
    return out


def _row_ends(text: str, s: int, e: int) -> list[int]:
    """The line ends of the table ``text[s:e]`` after its header, delimiter and first row."""
    ends = []
    at = text.find("\n", s, e)
    while at >= 0:
        ends.append(at)
        at = text.find("\n", at + 1, e)
    return ends[2:]


def _inside(r: _Region, end: int, nxt: int) -> bool:
    """Whether a cut between a unit ending at ``end`` and one starting at ``nxt`` falls inside
    region ``r`` where it may not."""
    if not (r.start < end and nxt < r.end):
        return False
    k = bisect_left(r.cuts, end)
    return not (k < len(r.cuts) and r.cuts[k] < nxt)


def _kind_of(regions: list[_Region], starts: list[int], unit: Bounds) -> str:
    k = bisect_left(starts, unit[0] + 1) - 1
    return regions[k].kind if k >= 0 and unit[1] <= regions[k].end else ""


def split_at_headings(text: str, units: Sequence[Bounds], headings: Sequence[Bounds]) -> list[Bounds]:
    """``units`` cut where a heading starts or ends inside one (trimmed), and the units inside one
    heading joined: the sentence splitter runs a PDF's heading line (read from its fonts) into
    the running header above it, cuts "Appendix A. Normal operating ranges" after "A.", and
    joins a heading to the sentence before it when the heading starts in lowercase."""
    bounds = sorted({b for h in headings for b in h})
    starts = [h[0] for h in headings]
    out: list[Bounds] = []
    for us, ue in units:
        k = bisect_right(bounds, us)
        cuts = [us]
        while k < len(bounds) and bounds[k] < ue:
            cuts.append(bounds[k])
            k += 1
        for a, b in zip(cuts, [*cuts[1:], ue], strict=True):
            a, b = trim(text, a, b) if len(cuts) > 1 else (a, b)
            if a >= b:
                continue
            h = bisect_right(starts, a) - 1  # the heading starting last at or before a
            if out and h >= 0 and headings[h][0] <= out[-1][0] and b <= headings[h][1]:
                out[-1] = (out[-1][0], b)  # a second unit of one heading
            else:
                out.append((a, b))
    return out


def heading_units(units: Sequence[Bounds], headings: Sequence[Bounds]) -> list[bool]:
    """Which units lie inside a heading (a Markdown heading, a PDF's read from its fonts)."""
    starts = [s for s, _ in headings]
    out = []
    for us, ue in units:
        k = bisect_left(starts, us + 1) - 1
        out.append(k >= 0 and ue <= headings[k][1])
    return out


def heading_start(heads: Sequence[bool], lo: int, j: int) -> int:
    """``j`` moved back over the heading units before it, not below ``lo``: where the headings
    that a group ending at ``j`` would end on start."""
    while j > lo and heads[j - 1]:
        j -= 1
    return j
