"""Groups of N sentences, with sentence overlap and an optional size cap.

Sentences come from :func:`explorer.text.sentences.sentence_spans` (offsets by construction). The
helpers :func:`unit_lengths`, :func:`pack` and :func:`split_long` are shared with the
``paragraph`` strategy: they pack consecutive units (sentences, paragraphs, words) under a
size in any length unit and guarantee the size, because token counts are not additive (two
sentences tokenised together can count one more or one less than apart): every packed piece
is measured whole and shrunk if it came out over.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Sequence
from typing import Any

from explorer.errors import ParamError
from explorer.strategies.base import LENGTH_PARAM, Param, Strategy
from explorer.strategies.registry import register
from explorer.text.chunk import END_OF_TEXT, SENTENCE_END, SIZE_LIMIT, UNBREAKABLE, Span
from explorer.text.length import Length
from explorer.text.sentences import sentence_spans

_WORD = re.compile(r"\S+")
Bounds = tuple[int, int]


def unit_lengths(text: str, spans: Sequence[Bounds], length: Length) -> list[int]:
    """``length`` of each span's text (one batch call where the length function has one)."""
    if length.name == "chars":
        return [e - s for s, e in spans]
    strings = [text[s:e] for s, e in spans]
    batch = getattr(length, "count_batch", None)
    return list(batch(strings)) if batch and strings else [length(t) for t in strings]


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
        self.special = getattr(length, "special", 0)
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


def split_long(text: str, start: int, end: int, length: Length, size: int) -> list[tuple[int, int, bool]]:
    """Split ``text[start:end]`` (a sentence or paragraph over ``size``) at words, and a word
    over ``size`` at the unit's own boundaries (characters or tokens).

    Returns ``(s, e, unbreakable)`` pieces, each <= ``size`` unless ``unbreakable`` (a single
    character or token span that measures over size on its own, e.g. an emoji of 3 cl100k tokens
    with ``chunk_size=1``).
    """
    words = [m.span() for m in _WORD.finditer(text, start, end)]
    out: list[tuple[int, int, bool]] = []
    packer = Packer(text, words, length, size, *_word_token_estimates(text, start, end, words, length))
    for i, j in pack(packer):
        s, e = words[i][0], words[j - 1][1]
        if j - i > 1 or packer.measure(i, j) <= size:
            out.append((s, e, False))
            continue
        out.extend(_split_word(text, s, e, length, size))
    return out


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
    special = getattr(length, "special", 0)
    lens, lo = [], 0
    for b in bounds:
        hi = bisect_left(starts, b, lo)
        lens.append(hi - lo + special)
        lo = hi
    return lens, False


def _split_word(text: str, s: int, e: int, length: Length, size: int) -> list[tuple[int, int, bool]]:
    """A single word over size: windows of ``size`` characters, or packed token spans."""
    if length.name == "chars":
        return [(a, min(a + size, e), False) for a in range(s, e, size)]
    if length.name == "words":  # cannot happen (a word is one word), kept for safety
        return [(s, e, length(text[s:e]) > size)]
    rel = length.spans(text[s:e])
    if not rel:
        return [(s, e, length(text[s:e]) > size)]
    # contiguous units from token starts, so characters the tokenizer skips stay covered
    starts = [s] + [s + a for a, _ in rel[1:]]
    units = [(a, b) for a, b in zip(starts, [*starts[1:], e], strict=True) if b > a]
    out = []
    for i, j in pack(Packer(text, units, length, size)):
        a, b = units[i][0], units[j - 1][1]
        out.append((a, b, j - i == 1 and length(text[a:b]) > size))
    return out


def long_unit_spans(
    text: str, start: int, end: int, length: Length, size: int, unit: str, what: str, last: str
) -> list[Span]:
    """Spans for one over-size ``what`` (sentence, paragraph) split by :func:`split_long`.

    Every piece but the last ends at a size limit; the last ends where the unit ends (``last``).
    """
    pieces = split_long(text, start, end, length, size)
    spans = []
    for k, (s, e, unbreakable) in enumerate(pieces):
        if unbreakable:
            reason = f"{UNBREAKABLE}: one {unit} unit of a {what} is longer than chunk_size"
        elif k < len(pieces) - 1:
            reason = f"{SIZE_LIMIT}: {what} longer than chunk_size, split at words"
        else:
            reason = last
        spans.append(Span(s, e, reason))
    return spans


def check_token_size(p: dict[str, Any], size: int) -> None:
    if p["length"] == "tokens" and 0 < size <= 2:
        raise ParamError(f"chunk_size={size} tokens leaves no room beside [CLS] and [SEP]; use 3 or more")


@register
class SentenceStrategy(Strategy):
    name = "sentence"
    description = (
        "Groups of sentences_per_chunk whole sentences, the next group repeating the last "
        "overlap_sentences; an optional chunk_size cap closes a group early, and a single sentence "
        "over the cap is split at words."
    )
    params = (
        Param("sentences_per_chunk", "int", 5, "Sentences per chunk.", min=1, max=200, step=1),
        Param(
            "overlap_sentences",
            "int",
            1,
            "Sentences the next chunk repeats from the end of the previous one (< sentences_per_chunk).",
            min=0,
            max=199,
            step=1,
        ),
        Param(
            "chunk_size",
            "int",
            0,
            "Optional cap in the length unit (0 = no cap): a group over it is closed early.",
            min=0,
            max=100_000,
            step=10,
        ),
        LENGTH_PARAM,
    )

    def check(self, p: dict[str, Any]) -> None:
        if p["overlap_sentences"] >= p["sentences_per_chunk"]:
            raise ParamError(
                f"overlap_sentences={p['overlap_sentences']} must be smaller than "
                f"sentences_per_chunk={p['sentences_per_chunk']}"
            )
        check_token_size(p, p["chunk_size"])

    def split(self, doc, p, ctx) -> list[Span]:
        text = doc.text
        sents = sentence_spans(text)
        n = len(sents)
        if n == 0:
            return []
        per, overlap, size = p["sentences_per_chunk"], p["overlap_sentences"], p["chunk_size"]
        length = ctx.length(p["length"])
        packer = Packer(text, sents, length, size) if size else None
        spans: list[Span] = []
        covered = 0  # sentences [0, covered) are in a chunk already
        prev_first = -1  # first sentence of the previous group
        while covered < n:
            if packer and packer.lens[covered] > size:  # one sentence over the cap
                last = END_OF_TEXT if covered == n - 1 else f"{SENTENCE_END}: 1 sentence (split at words)"
                s, e = sents[covered]
                spans += long_unit_spans(text, s, e, length, size, p["length"], "sentence", last)
                covered += 1
                prev_first = covered - 1
                continue
            first = max(covered - overlap, prev_first + 1, 0)
            limit = min(first + per, n)
            if packer:
                while first < covered and not packer.fits(first, covered + 1):
                    first += 1  # drop overlap sentences until the new one fits
                limit = min(first + per, n)
                j = packer.extend(first, covered + 1, limit)
            else:
                j = limit
            count = j - first
            if j == n:
                reason = f"{END_OF_TEXT}: {count} sentence{'s' if count > 1 else ''}"
            elif count == per:
                reason = f"{SENTENCE_END}: {count} sentence{'s' if count > 1 else ''}"
            else:
                reason = f"{SIZE_LIMIT}: {count} sentence{'s' if count > 1 else ''}, the next would exceed chunk_size"
            spans.append(Span(sents[first][0], sents[j - 1][1], reason))
            prev_first, covered = first, j
        return spans
