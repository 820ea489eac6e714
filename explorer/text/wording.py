"""Counts in words, as every message says them: "1 chunk", "2 chunks", "1,200 questions"; and
shares as percentages that never round a part to none or to all.

Why a module of its own: the strategies' reasons, the loaders' warnings, the CLI's notes and the
pages' captions all count things, and each had written the plural again.
"""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None) -> str:
    """``n`` and ``word``, with an "s" (or ``many``) unless ``n`` is 1; thousands separated."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def percent(share: float, digits: int = 1) -> str:
    """``share`` (0–1) as a percentage with ``digits`` decimals; a share above 0 that rounds to
    0 reads "<0.1%", one below 1 that rounds to 100 ">99.9%", so a sliver is not told as
    nothing and a near miss not as whole."""
    step = 10.0**-digits
    if 0 < share * 100 < step / 2:
        return f"<{step:.{digits}f}%"
    if share < 1 and share * 100 >= 100 - step / 2:
        return f">{100 - step:.{digits}f}%"
    return f"{share * 100:.{digits}f}%"


def brief_number(value: float) -> str:
    """A number as a message quotes it: in full up to 15 characters, else in three figures with
    its power of ten (``1e+309``). A whole number past a float's range is written from its
    digits: ``f"{value:g}"`` raised OverflowError on a link's 400-digit size."""
    text = str(value)
    if len(text) <= 15:
        return text
    if isinstance(value, int):
        digits = text.lstrip("-")
        mantissa = f"{digits[0]}.{digits[1:3]}".rstrip("0").rstrip(".")
        return f"{text[: len(text) - len(digits)]}{mantissa}e+{len(digits) - 1}"
    return f"{value:.3g}"
