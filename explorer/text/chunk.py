"""Chunks: immutable slices of a document's text, with metadata computed from offsets."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

# Boundary reasons (the first words of ``Chunk.reason``); details may follow after ": ".
END_OF_TEXT = "end of text"
SIZE_LIMIT = "size limit"
SENTENCE_END = "sentence end"
PARAGRAPH_END = "paragraph end"
SEPARATOR = "separator"
HEADING = "next heading"
UNBREAKABLE = "unbreakable unit over size"
SEMANTIC = "semantic breakpoint"


@dataclass(frozen=True, slots=True)
class Span:
    """What a strategy returns: ``text[start:end]`` and why it ends there.

    ``meta`` holds strategy-specific facts as (key, value) pairs, e.g. the semantic
    distance at the breakpoint or the sub-strategy hybrid chose.
    """

    start: int
    end: int
    reason: str
    meta: tuple[tuple[str, Any], ...] = ()
    #: The span's length in the strategy's unit when the strategy already measured it whole
    #: (token units: saves counting every chunk a second time); -1 = not measured.
    length: int = field(default=-1, compare=False)


@dataclass(frozen=True, slots=True)
class Chunk:
    """One chunk. ``text == document.text[start:end]`` always holds."""

    doc_id: str
    doc_name: str
    index: int
    start: int
    end: int
    text: str
    length: int  # in ``unit``
    unit: str
    reason: str
    pages: tuple[int, ...] = ()
    headings: tuple[str, ...] = ()
    meta: tuple[tuple[str, Any], ...] = ()

    @property
    def chars(self) -> int:
        return self.end - self.start

    def meta_dict(self) -> dict[str, Any]:
        return dict(self.meta)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form used by the CLI and the exports."""
        d = {
            "document": self.doc_name,
            "doc_id": self.doc_id,
            "index": self.index,
            "start": self.start,
            "end": self.end,
            "chars": self.chars,
            "length": self.length,
            "unit": self.unit,
            "pages": list(self.pages),
            "headings": list(self.headings),
            "reason": self.reason,
            "text": self.text,
        }
        if self.meta:
            d["meta"] = {k: v for k, v in self.meta}
        return d


def inside_any(spans: Sequence[tuple[int, int]]) -> Callable[[int], bool]:
    """Is an offset strictly inside one of ``spans`` (sorted by start)? By bisection: checked
    pair by pair, 20,000 Markdown code blocks took 47 s, and 25,000 fences in one paragraph 65 s."""
    starts, reach = [a for a, _ in spans], list(accumulate((b for _, b in spans), max))
    return lambda c: (i := bisect_left(starts, c) - 1) >= 0 and reach[i] > c

