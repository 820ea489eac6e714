"""Sentence and paragraph segmentation with character offsets.

PLACEHOLDER: a simple regex until the measured choice lands (see README, "Sentence segmentation").
"""

from __future__ import annotations

import re

_PARA = re.compile(r"\n[ \t]*\n\s*")
_SENT_END = re.compile(r"(?<=[.!?。！？])\s+")


def paragraph_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Blank-line separated paragraphs of ``text[start:end]``, trimmed, as absolute spans."""
    end = len(text) if end is None else end
    out = []
    pos = start
    for m in _PARA.finditer(text, start, end):
        _add_trimmed(text, pos, m.start(), out)
        pos = m.end()
    _add_trimmed(text, pos, end, out)
    return out


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentences of ``text[start:end]`` as absolute, whitespace-trimmed, increasing spans.

    Paragraph breaks always end a sentence. Every non-space character is in exactly one span.
    """
    out: list[tuple[int, int]] = []
    for ps, pe in paragraph_spans(text, start, end):
        pos = ps
        for m in _SENT_END.finditer(text, ps, pe):
            _add_trimmed(text, pos, m.start(), out)
            pos = m.end()
        _add_trimmed(text, pos, pe, out)
    return out


def _add_trimmed(text: str, s: int, e: int, out: list[tuple[int, int]]) -> None:
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    if e > s:
        out.append((s, e))
