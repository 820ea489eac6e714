"""Counts in words, as every message says them: "1 chunk", "2 chunks", "1,200 questions".

Why a module of its own: the strategies' reasons, the loaders' warnings, the CLI's notes and the
pages' captions all count things, and each had written the plural again.
"""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None) -> str:
    """``n`` and ``word``, with an "s" (or ``many``) unless ``n`` is 1; thousands separated."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"
