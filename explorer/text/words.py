"""Where a word ends: whether a cut at an offset falls inside a word, or inside a character as
a reader sees it (a letter and its marks).

Why a module of its own: the chunk flags (``mid_word``) and the rendering that says at which
end a chunk was cut both need the same answer, and they sit in layers that cannot import each
other.
"""

from __future__ import annotations

import unicodedata
from bisect import bisect_right

import regex

from explorer import limits
from explorer.lru import per_text, spans_size

#: Characters that belong to the one before them, so a cut before one splits what a reader sees as
#: one character (a grapheme cluster, in a simplified form of Unicode's UAX #29): combining marks
#: (the accents of decomposed text, the vowel signs of Thai and Indic scripts), the zero-width
#: joiner, variation selectors, emoji skin tones, tag characters, and the vowels and final
#: consonants of decomposed Hangul (NFD Korean, as macOS writes it: 한 is ᄒ + ᅡ + ᆫ).
_JOINS = regex.compile(
    r"[\p{M}\u0e33\u0eb3\u200d\ufe00-\ufe0f\U0001f3fb-\U0001f3ff\U000e0020-\U000e007f\U000e0100-\U000e01ef"
    r"\u1160-\u11ff\ud7b0-\ud7ff]"
)
#: Regional indicators: a flag is a pair of them (🇫🇷 is 🇫 + 🇷), and a cut between the two of a
#: pair leaves two letters in boxes (or, in a run of flags, pairs that name other countries).
_REGIONAL = regex.compile(r"[\U0001f1e6-\U0001f1ff]{2,}")
_IS_REGIONAL = regex.compile(r"[\U0001f1e6-\U0001f1ff]")
#: Canonical combining class of a virama: the consonant after one is part of a conjunct (क्ष).
_VIRAMA = 9


def _no_space_script(ch: str) -> bool:
    """Scripts written without spaces between words (CJK, kana, Thai...): a cut between two of
    their letters is not a cut inside a word we could detect."""
    o = ord(ch)
    return (
        0x2E80 <= o <= 0x9FFF  # CJK radicals, kana, CJK unified ideographs (incl. ext. A)
        or 0xF900 <= o <= 0xFAFF
        or 0xFF66 <= o <= 0xFF9F
        or 0x20000 <= o <= 0x3FFFF
        or 0x0E00 <= o <= 0x0EFF  # Thai, Lao
        or 0x1000 <= o <= 0x109F  # Myanmar
        or 0x1780 <= o <= 0x17FF  # Khmer
    )


def is_word_char(ch: str) -> bool:
    """A letter, digit or combining mark (a vowel sign in Hindi, an accent in decomposed text:
    a cut before one splits a character from its mark), outside the scripts without spaces."""
    return (ch.isalnum() or ch == "_" or unicodedata.category(ch)[0] == "M") and not _no_space_script(ch)


def splits_character(text: str, at: int) -> bool:
    """Whether a cut at ``at`` separates a character from its marks, a zero-width-joiner
    sequence (👩‍💻), or a conjunct after a virama."""
    if not 0 < at < len(text):
        return False
    before = text[at - 1]
    if _JOINS.match(text, at) is not None or before == "\u200d":
        return True
    if _IS_REGIONAL.match(text, at) and _IS_REGIONAL.match(text, at - 1):
        return _regionals_before(text, at) % 2 == 1  # inside a pair
    # a virama joins the letter after it into a conjunct; Tamil's pulli also ends many words
    return unicodedata.combining(before) == _VIRAMA and text[at].isalpha()


def joined_at(text: str) -> set[int]:
    """Every offset of ``text`` where :func:`splits_character` is true, found by one scan (a per
    token check cost ~1.5 µs a token: 7 s on 20 MB)."""
    out = set()
    for m in _JOINS.finditer(text):  # viramas and the joiner are among these characters
        i, c = m.start(), m.group()
        out.add(i)
        if c == "\u200d" or unicodedata.combining(c) == _VIRAMA:
            out.add(i + 1)
    for m in _REGIONAL.finditer(text):
        out.update(range(m.start() + 1, m.end(), 2))
    return {i for i in out if splits_character(text, i)}


def _regionals_before(text: str, at: int) -> int:
    """How many regional indicators run right before ``at`` (pairs count from the run's start),
    from the runs found once per text (walking back over a page of flags at every cut was
    quadratic)."""
    starts = _regional_starts(text)
    return at - starts[bisect_right(starts, at - 1) - 1]


@per_text(limits.TEXT_MEMO_BYTES, spans_size)
def _regional_starts(text: str) -> list[int]:
    return [m.start() for m in _REGIONAL.finditer(text)]


def character_start(text: str, at: int, lo: int = 0) -> int:
    """``at`` moved back, not below ``lo``, to the start of the character a reader sees there."""
    while at > lo and splits_character(text, at):
        at -= 1
    return at


@per_text(limits.TEXT_MEMO_BYTES, lambda _: 64)
def has_joining(text: str) -> bool:
    """Whether ``text`` holds any character that joins the one before it (most text does not:
    the cut points need no checking then). Kept per text: a scan of 500 KB took 23 ms, and
    ``fixed`` asks on every re-chunk after a slider move."""
    return not text.isascii() and (_JOINS.search(text) is not None or _REGIONAL.search(text) is not None)


def cut_in_word(text: str, at: int) -> bool:
    """Whether a cut at ``at`` falls between two word characters of ``text``, or inside a character."""
    if not 0 < at < len(text):
        return False
    return (is_word_char(text[at - 1]) and is_word_char(text[at])) or splits_character(text, at)


def mid_word_where(text: str, start: int, end: int) -> str:
    """Which ends of ``text[start:end]`` are cut inside a word: "its start", "its end", "both
    ends" or "" (none)."""
    first, last = cut_in_word(text, start), cut_in_word(text, end)
    return "both ends" if first and last else "its start" if first else "its end" if last else ""
