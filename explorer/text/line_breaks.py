"""Line structure for sentence splitting: whether a single newline ends a sentence, and the
fenced code blocks that are one unit.

Kept apart from :mod:`explorer.text.sentences`, which handles end marks: these rules look at
whole lines (list items, headings, table rows, short heading-like lines, code fences). The fences
are the Markdown parse's (:func:`explorer.text.markdown_parse.fenced_code`), the blocks the
markdown strategy keeps whole: a regex of its own missed those nested in a list item or a quote.
"""

from __future__ import annotations

import bisect
import re

from explorer.text.chunk import inside_any
from explorer.text.markdown_parse import fenced_code

_BLOCK_START = re.compile(r"[^\S\n]*(?:[-*+•–—][ \t]|\d{1,3}[.)][ \t]|#{1,6}[ \t]|\||>|```|~~~)")
_LINE_START_CAPITAL = re.compile(r"[^\S\n]*[\"'“‘«(\[]?(?:\d|[^\W\d_])")
#: A line this short (characters, trimmed) that does not end in punctuation is a heading or a
#: field ("Abstract", "Retracted: no") when the next line starts with a capital or digit.
SHORT_LINE = 35
#: A table's delimiter row: "|---|:---:|", "--- | ---".
_DELIMITER_ROW = re.compile(r"[^\S\n]*\|?[^\S\n]*:?-{3,}:?[^\S\n]*(?:\|[^\S\n]*:?-{3,}:?[^\S\n]*)+\|?[^\S\n]*\Z")


def line_ends_sentence(text: str, i: int, ps: int, pe: int) -> bool:
    """Whether the single newline at ``i`` (inside the paragraph ``text[ps:pe]``) ends a sentence."""
    if _BLOCK_START.match(text, i + 1, pe):
        return True  # list item, heading, table row, quote or fence follows
    line_start = max(text.rfind("\n", ps, i) + 1, ps)
    next_end = _line_stop(text, i + 1, pe)
    if _table_row(text, line_start, i, ps, pe) or _table_row(text, i + 1, next_end, ps, pe):
        return True  # table rows (also Markdown tables without a leading pipe)
    prev = text[line_start:i].strip()
    if not prev or len(prev) > SHORT_LINE or prev[-1] in ",;:-–—([{/&+=":
        return False  # wrapped prose: the sentence goes on
    c = _LINE_START_CAPITAL.match(text, i + 1, next_end)
    return c is not None and (c.group()[-1].isdigit() or c.group()[-1].isupper())


def _line_stop(text: str, start: int, pe: int) -> int:
    nl = text.find("\n", start, pe)
    return pe if nl < 0 else nl


def _table_row(text: str, s: int, e: int, ps: int, pe: int) -> bool:
    """Whether the line ``text[s:e]`` is a table row: it has a ``|`` and is bordered
    (``| a | b |``), or is a delimiter row, or a line next to it in the paragraph is a
    delimiter row or has as many ``|``. Wrapped lines that merely contain bars (a manual
    page's synopsis, ``{update | upgrade |``) rarely agree with their neighbours."""
    line = text[s:e]
    bars = line.count("|")
    if not bars:
        return False
    trimmed = line.strip()
    if (len(trimmed) > 1 and trimmed[0] == "|" and trimmed[-1] == "|") or _DELIMITER_ROW.match(line):
        return True
    neighbours = []
    if s > ps:
        neighbours.append(text[max(text.rfind("\n", ps, s - 1) + 1, ps) : s - 1])
    if e < pe:
        neighbours.append(text[e + 1 : _line_stop(text, e + 1, pe)])
    return any(n.count("|") == bars or _DELIMITER_ROW.match(n) for n in neighbours)


def fence_cuts(text: str, ps: int, pe: int, cuts: list[int]) -> list[int]:
    """``cuts`` of the paragraph ``text[ps:pe]`` with the fenced code blocks made whole: no
    cut inside one, a cut before and after it. A block that spans paragraphs (blank lines in
    the code) is still cut at the paragraph breaks, like every sentence."""
    blocks = fenced_code(text)
    if not blocks:
        return cuts
    first = bisect.bisect_right(blocks, (pe,)) - 1
    inside: list[tuple[int, int]] = []
    while first >= 0 and blocks[first][1] > ps:
        inside.append((max(blocks[first][0], ps), min(blocks[first][1], pe)))
        first -= 1
    if not inside:
        return cuts
    inside.reverse()  # by start
    within = inside_any(inside)
    kept = {c for c in cuts if not within(c)}
    kept.update(c for s, e in inside for c in (s, e) if ps < c < pe)
    return sorted(kept)
