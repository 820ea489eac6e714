"""Lead-ins: a short paragraph, list item or sentence ending in ":" ("Run the installer:") goes
with the code block or table right after it.

One rule for the markdown packer and the sentence strategy, so that both call the same text a
lead-in: a reader (or a retriever) should not get the instruction without its command.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence

#: The longest lead-in ("Run the installer:") that moves on to the code block or table after it.
LEAD_IN_MAX_CHARS = 200
_LEAD_IN_KINDS = ("paragraph", "list", "blockquote")
_ITEM = re.compile(r"[ \t>]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")


def lead_in_start(text: str, s: int, e: int, kind: str) -> int | None:
    """Where the lead-in that ends ``text[s:e]`` (trimmed) starts: the last paragraph, list item or
    quoted paragraph, if it ends in ":" (" :" in French, "**Example:**") within
    ``LEAD_IN_MAX_CHARS``; None when the piece ends otherwise."""
    if kind not in _LEAD_IN_KINDS or not text[max(s, e - 3) : e].rstrip("*_").endswith((":", "：")):
        return None
    start = pos = e
    while True:
        nl = text.rfind("\n", s, pos)
        ls = nl + 1 if nl >= 0 else s
        line = text[ls:pos]
        if not line.strip(" \t>"):
            return start  # a blank line (in a quote too): the lead-in is the paragraph below it
        start = ls + len(line) - len(line.lstrip())
        if e - start > LEAD_IN_MAX_CHARS:
            return None
        if nl < 0 or (kind != "paragraph" and _ITEM.match(line)):
            return start
        pos = nl


def unit_lead_ins(
    text: str, units: Sequence[tuple[int, int]], blocks: Sequence[tuple[str, int, int]]
) -> dict[int, tuple[int, str]]:
    """The units (sentences, trimmed, in order) that are lead-ins, as ``{i: (m, kind)}``: unit i
    ends in ":" within ``LEAD_IN_MAX_CHARS`` and the code block or table ``(kind, start, end)``
    of ``blocks`` that starts where unit i + 1 starts is made of units i + 1 to m - 1."""
    at = {s: (e, kind) for kind, s, e in blocks}
    starts = [s for s, _ in units]
    out: dict[int, tuple[int, str]] = {}
    for i in range(len(units) - 1):
        block = at.get(starts[i + 1])
        if block is not None and lead_in_start(text, *units[i], "paragraph") is not None:
            out[i] = (bisect_left(starts, block[0], i + 2), block[1])
    return out
