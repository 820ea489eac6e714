"""Where a word ends: whether a cut at an offset falls inside a word.

Why a module of its own: the chunk flags (``mid_word``) and the rendering that says at which
end a chunk was cut both need the same answer, and they sit in layers that cannot import each
other.
"""

from __future__ import annotations

import unicodedata


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


def cut_in_word(text: str, at: int) -> bool:
    """Whether a cut at ``at`` falls between two word characters of ``text``."""
    return 0 < at < len(text) and is_word_char(text[at - 1]) and is_word_char(text[at])


def mid_word_where(text: str, start: int, end: int) -> str:
    """Which ends of ``text[start:end]`` are cut inside a word: "its start", "its end", "both
    ends" or "" (none)."""
    first, last = cut_in_word(text, start), cut_in_word(text, end)
    return "both ends" if first and last else "its start" if first else "its end" if last else ""
