"""Counts in words, as every message says them: "1 chunk", "2 chunks", "1,200 questions"; and
shares as percentages that never round a part to none or to all.

Why a module of its own: the strategies' reasons, the loaders' warnings, the CLI's notes and the
pages' captions all count things, and each had written the plural again.
"""

from __future__ import annotations

from decimal import Decimal


def plural(n: int, word: str, many: str | None = None) -> str:
    """``n`` and ``word``, with an "s" (or ``many``) unless ``n`` is 1; thousands separated."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def percent(share: float, digits: int = 1) -> str:
    """``share`` (0–1) as a percentage with ``digits`` decimals; a share above 0 that rounds to
    0 reads "<0.1%", one below 1 that rounds to 100 ">99.9%", so a sliver is not told as
    nothing and a near miss not as whole."""
    shown = percent_value(share, digits)
    mark = "" if shown == float(f"{share * 100:.{digits}f}") else ("<" if shown < 50 else ">")
    return f"{mark}{shown:.{digits}f}%"


def percent_value(share: float, digits: int = 1) -> float:
    """``share`` × 100 rounded to ``digits`` decimals, never to 0 when above 0 nor to 100 when
    below 1 (it is then the nearest step inside): for a table whose cells stay numbers."""
    step = 10.0**-digits
    shown = float(f"{share * 100:.{digits}f}")
    if share > 0 and shown <= 0:
        return step
    if share < 1 and shown >= 100:
        return 100 - step
    return shown


def brief_number(value: float) -> str:
    """A number as a message quotes it: in full up to 15 characters, else in three figures with
    its power of ten (``1e+309``). A whole number past a float's range is written from its
    digits: ``f"{value:g}"`` raised OverflowError on a link's 400-digit size."""
    text = str(value)
    if len(text) <= 15:
        return text
    if isinstance(value, int):  # exactly, rounded as .3g rounds a float
        mantissa, exponent = f"{Decimal(value):.3g}".split("e")
        return f"{mantissa.rstrip('0').rstrip('.')}e{exponent}"
    return f"{value:.3g}"


def quoted(value: object, limit: int = 60) -> str:
    """A value as a message quotes it: a whole number in brief (:func:`brief_number`),
    anything else by its repr, cut at ``limit`` characters (a link can carry thousands)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return brief_number(value)
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
