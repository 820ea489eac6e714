"""Packing consecutive units (sentences, paragraphs, words) under a size, in any length unit.

Shared by ``sentence`` and ``paragraph``. Token counts are not additive (two sentences
tokenised together can count one more or one less than apart), so the size is guaranteed by
measuring every packed piece whole and shrinking it if it came out over; estimates only decide
how far to look.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence

from explorer.text.chunk import SIZE_LIMIT, UNBREAKABLE, Span
from explorer.text.length import Length
from explorer.text.words import character_start, splits_character

#: Where a sentence over the size may be cut: between runs of non-space characters, but not at a
#: no-break space (U+00A0, the narrow U+202F, the figure space U+2007), which says "no break
#: here": "10\u202f%", "«\u00a0mot\u00a0»", "Debian\u00a0?" stay whole.
_WORD = re.compile(r"\S+(?:[\u00a0\u202f\u2007]+\S+)*")
_RUN = re.compile(r"\S+")
#: A word of closing marks only (French " ?", " !", " :", " »", a dash), which goes with the word
#: before it, and one of opening marks only (" « "), which goes with the word after it: a piece
#: of a long sentence never ends on "«" nor is only "!" while its neighbour could hold the mark.
_CLOSING_ONLY = re.compile(r"[^\w\s«‹¿¡(\[{“„‚\"']+")
_OPENING_ONLY = re.compile(r"[«‹¿¡(\[{“„‚]+")
Bounds = tuple[int, int]


def unit_lengths(text: str, spans: Sequence[Bounds], length: Length) -> list[int]:
    """``length`` of each span's text (one batch call for tokens)."""
    if length.name == "chars":
        return [e - s for s, e in spans]
    strings = [text[s:e] for s, e in spans]
    return length.count_batch(strings) if strings else []


class Packer:
    """Measures runs of consecutive units ``spans[i:j]`` as ``text[spans[i][0]:spans[j-1][1]]``.

    ``estimate`` is exact for chars (offset difference), an upper bound for words (joining
    cannot add a word), and the sum of the units' token counts for tokens (close, not exact);
    ``fits`` measures the whole run, which is the truth every chunk is checked against.
    """

    def __init__(
        self,
        text: str,
        spans: Sequence[Bounds],
        length: Length,
        size: int,
        lens: Sequence[int] | None = None,
        lens_exact: bool = True,
    ) -> None:
        self.text, self.spans, self.length, self.size = text, spans, length, size
        self.chars = length.name == "chars"
        self.special = length.special
        self.lens = lens = list(lens) if lens is not None else unit_lengths(text, spans, length)
        # cumulative inner lengths (without [CLS]/[SEP]) for O(1) estimates
        cum = [0]
        for n in lens:
            cum.append(cum[-1] + n - self.special)
        self.cum = cum
        #: False when ``lens`` are estimates (then even a single unit is measured whole)
        self.exact = lens_exact

    def estimate(self, i: int, j: int) -> int:
        if self.chars:
            return self.spans[j - 1][1] - self.spans[i][0]
        return self.cum[j] - self.cum[i] + self.special

    def measure(self, i: int, j: int) -> int:
        if self.chars:
            return self.spans[j - 1][1] - self.spans[i][0]
        if j - i == 1 and self.exact:
            return self.lens[i]
        return self.length(self.text[self.spans[i][0] : self.spans[j - 1][1]])

    def fits(self, i: int, j: int) -> bool:
        return self.measure(i, j) <= self.size

    def extend(self, i: int, j: int, limit: int) -> int:
        """Largest ``k`` in ``[j, limit]`` such that ``spans[i:k]`` fits (``j`` if none further).

        Grows by the estimate, then measures the run and shrinks it while it is over size.
        """
        k = j
        while k < limit and self.estimate(i, k + 1) <= self.size:
            k += 1
        while k > j and not self.fits(i, k):
            k -= 1
        return k


def pack(packer: Packer) -> list[tuple[int, int]]:
    """Greedy runs ``(i, j)`` of consecutive spans, each measuring <= ``size`` as a whole,
    except a single span that is over size on its own."""
    out = []
    i, n = 0, len(packer.spans)
    while i < n:
        j = packer.extend(i, i + 1, n)
        out.append((i, j))
        i = j
    return out


def split_long(
    text: str, start: int, end: int, length: Length, size: int, joined: bool = True
) -> list[tuple[int, int, bool]]:
    """Split ``text[start:end]`` (a sentence or paragraph over ``size``) at words, and a word
    over ``size`` at the unit's own boundaries (characters or tokens).

    Returns ``(s, e, unbreakable)`` pieces, each <= ``size`` unless ``unbreakable`` (a single
    character or token span that measures over size on its own, e.g. an emoji of 3 cl100k tokens
    with ``chunk_size=1``). Words joined by a no-break space (``joined``) that are over the size
    together are split at that space first: cut into windows, a window could be only the space.
    """
    words = _words(text, start, end, length, size) if joined else [m.span() for m in _RUN.finditer(text, start, end)]
    out: list[tuple[int, int, bool]] = []
    packer = Packer(text, words, length, size, *_word_token_estimates(text, start, end, words, length))
    for i, j in pack(packer):
        s, e = words[i][0], words[j - 1][1]
        if j - i > 1 or packer.measure(i, j) <= size:
            out.append((s, e, False))
        elif joined and _RUN.fullmatch(text, s, e) is None:
            out.extend(split_long(text, s, e, length, size, joined=False))
        else:
            out.extend(_split_word(text, s, e, length, size))
    return out


def _words(text: str, start: int, end: int, length: Length, size: int) -> list[Bounds]:
    """The words of ``text[start:end]`` to pack (see ``_WORD``), a word of marks only joined to
    its neighbour on the same line when the two fit in ``size`` together."""
    out: list[Bounds] = []
    for s, e in (m.span() for m in _WORD.finditer(text, start, end)):
        if out:
            ps, pe = out[-1]
            marks = _CLOSING_ONLY.fullmatch(text, s, e) or _OPENING_ONLY.fullmatch(text, ps, pe)
            if marks and "\n" not in text[pe:s] and _fits(text, ps, e, length, size):
                out[-1] = (ps, e)
                continue
        out.append((s, e))
    return out


def _fits(text: str, s: int, e: int, length: Length, size: int) -> bool:
    return (e - s if length.name == "chars" else length(text[s:e])) <= size


def _word_token_estimates(
    text: str, start: int, end: int, words: list[Bounds], length: Length
) -> tuple[list[int] | None, bool]:
    """Token units: per-word counts from ONE tokenisation of the whole range (the tokens that
    start inside a word or the gap after it), instead of tokenising every word apart (slow).
    They are estimates: :class:`Packer` then measures every run whole."""
    if length.name in ("chars", "words") or not words:
        return None, True
    starts = [start + a for a, _ in length.spans(text[start:end])]
    bounds = [w[0] for w in words[1:]] + [end]
    lens, lo = [], 0
    for b in bounds:
        hi = bisect_left(starts, b, lo)
        lens.append(hi - lo + length.special)
        lo = hi
    return lens, False


def _split_word(text: str, s: int, e: int, length: Length, size: int) -> list[tuple[int, int, bool]]:
    """A single word over size: windows of ``size`` characters, or packed token spans."""
    if length.name == "chars":
        return [(s + a, s + b, b - a > size) for a, b in character_windows(text[s:e], size, size)]
    if length.name == "words":  # cannot happen (a word is one word), kept for safety
        return [(s, e, length(text[s:e]) > size)]
    rel = length.spans(text[s:e])
    if not rel:
        return [(s, e, length(text[s:e]) > size)]
    # contiguous units from token starts, so characters the tokenizer skips stay covered
    starts = [s] + [s + a for a, _ in rel[1:] if not splits_character(text, s + a)]  # marks stay with their letter
    units = [(a, b) for a, b in zip(starts, [*starts[1:], e], strict=True) if b > a]
    out = []
    for i, j in pack(Packer(text, units, length, size)):
        a, b = units[i][0], units[j - 1][1]
        out.append((a, b, j - i == 1 and length(text[a:b]) > size))
    return out


def long_unit_spans(
    text: str, start: int, end: int, length: Length, size: int, what: str, last: str
) -> list[Span]:
    """Spans for one over-size ``what`` (sentence, paragraph) split by :func:`split_long`.

    Every piece but the last ends at a size limit; the last ends where the unit ends (``last``).
    """
    pieces = split_long(text, start, end, length, size)
    spans = []
    for k, (s, e, unbreakable) in enumerate(pieces):
        if unbreakable:
            reason = f"{UNBREAKABLE}: one {length.name} unit of a {what} is longer than chunk_size"
        elif k < len(pieces) - 1:
            reason = f"{SIZE_LIMIT}: {what} longer than chunk_size, {_split_where(text, e, length)}"
        else:
            reason = last
        spans.append(Span(s, e, reason))
    return spans


def _split_where(text: str, at: int, length: Length) -> str:
    """How a piece of an over-size unit was cut at ``at``: at words (a space on either side), or,
    in a run with no space within the size (a URL, base64, CJK text), between characters or
    tokens: "split at words" there contradicted the piece's own "cut mid-word" flag."""
    if text[at - 1].isspace() or (at < len(text) and text[at].isspace()):
        return "split at words"
    unit = "characters" if length.name == "chars" else "tokens"
    return f"split between {unit} (no space to split at within chunk_size)"


def character_windows(text: str, size: int, step: int) -> list[tuple[int, int]]:
    """Windows of at most ``size`` characters, each starting ``step`` after the previous one,
    every cut moved back to where a character as a reader sees it starts (a Thai vowel sign or
    the accent of decomposed text stays with its letter). A character longer than ``size`` (a
    letter with more marks) is kept whole."""
    n, out, i = len(text), [], 0
    while True:
        e = min(i + size, n)
        back = character_start(text, e, i)
        e = back if back > i else character_end(text, e)
        out.append((i, e))
        if e >= n:
            return out
        nxt = character_start(text, min(i + step, e), i)
        i = nxt if nxt > i else character_end(text, i + 1)


def character_end(text: str, at: int) -> int:
    """``at`` moved forward to where the next character as a reader sees it starts."""
    while splits_character(text, at):
        at += 1
    return at
