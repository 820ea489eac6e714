"""Fixed-size windows of N units advancing by N - overlap (characters, words or tokens)."""

from __future__ import annotations

from typing import Any

from ..chunk import END_OF_TEXT, SIZE_LIMIT, Span
from ..errors import ParamError
from .base import LENGTH_PARAM, Param, Strategy, trim
from .registry import register


@register
class FixedStrategy(Strategy):
    name = "fixed"
    description = (
        "Windows of exactly chunk_size units (characters, words or tokens), each starting "
        "chunk_size - chunk_overlap units after the previous one. Ignores structure: the baseline."
    )
    params = (
        Param("chunk_size", "int", 500, "Units per chunk.", min=1, max=100_000, step=10),
        Param(
            "chunk_overlap",
            "int",
            0,
            "Units shared by consecutive chunks (< chunk_size).",
            min=0,
            max=100_000,
            step=10,
        ),
        LENGTH_PARAM,
    )

    def check(self, p: dict[str, Any]) -> None:
        if p["chunk_overlap"] >= p["chunk_size"]:
            raise ParamError(
                f"chunk_overlap={p['chunk_overlap']} must be smaller than chunk_size={p['chunk_size']}"
            )
        if p["length"] == "tokens" and p["chunk_size"] <= 2:
            raise ParamError(
                f"chunk_size={p['chunk_size']} tokens leaves no room beside [CLS] and [SEP]; use 3 or more"
            )

    def split(self, doc, p, ctx) -> list[Span]:
        text = doc.text
        size, overlap = p["chunk_size"], p["chunk_overlap"]
        length = ctx.length(p["length"])
        if p["length"] == "chars":
            bounds = [(i, min(i + size, len(text))) for i in _window_starts(len(text), size, size - overlap)]
        else:
            size -= getattr(length, "special", 0)  # room for [CLS]/[SEP] in model tokens
            overlap = min(overlap, size - 1)
            units = length.spans(text)
            # A window runs from its first unit's start (0 for the first) to the next unit's
            # start, so characters the tokenizer skips (control characters) stay covered.
            starts = [0] + [u[0] for u in units[1:]] + [len(text)]
            bounds = [
                (starts[i], starts[min(i + size, len(units))])
                for i in _window_starts(len(units), size, size - overlap)
            ] or [(0, len(text))]
        spans: list[Span] = []
        last_end = -1
        for a, b in bounds:
            s, e = trim(text, a, b)
            if e <= s or e <= last_end or (spans and s <= spans[-1].start):
                continue  # whitespace-only window, or nothing new beyond the previous chunk
            spans.append(Span(s, e, SIZE_LIMIT))
            last_end = e
        if spans:
            spans[-1] = Span(spans[-1].start, spans[-1].end, END_OF_TEXT)
        return spans


def _window_starts(n: int, size: int, step: int) -> range:
    """Starts of windows over n units; the last window is the first that reaches the end,
    so no final window is a redundant tail of the previous one."""
    if n == 0:
        return range(0)
    last = max(0, -(-(n - size) // step)) * step  # first start whose window reaches n
    return range(0, last + 1, step)
