"""Shared helpers for the benchmarks: the ~1 MB Chroma text, median timing, and tables.

Benchmarks print medians and ratios against peers measured in the same process; nothing here
asserts a time (performance is reported, never tested).
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as `python bench/x.py` from anywhere
    sys.path.insert(0, str(ROOT))

CHROMA = ROOT.parent / "shared" / "benchmarks" / "chroma"
CORPORA = CHROMA / "corpora"


def chroma_text(chars: int = 1_000_000) -> str:
    """About ``chars`` characters of English prose: the Chroma corpora concatenated (sorted by
    name, blank line between), repeated if they are shorter. Fails clearly if the data is missing."""
    files = sorted(CORPORA.glob("*.md"))
    if not files:
        raise SystemExit(f"Chroma corpora not found in {CORPORA}")
    text = "\n\n".join(f.read_text(encoding="utf-8") for f in files)
    while len(text) < chars:
        text = text + "\n\n" + text
    return text[:chars]


def megabytes(text: str) -> float:
    """Size of ``text`` in MB (10^6 bytes of UTF-8), the unit of every MB/s printed."""
    return len(text.encode("utf-8")) / 1e6


def median_time(fn: Callable[[], Any], repeat: int = 5, warmup: int = 1) -> tuple[float, Any]:
    """Median wall time of ``fn()`` over ``repeat`` runs (after ``warmup`` untimed runs), and
    the last result. The garbage collector runs between runs, not inside them."""
    result = None
    for _ in range(warmup):
        result = fn()
    times = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            t0 = time.perf_counter()
            result = fn()
            times.append(time.perf_counter() - t0)
        finally:
            gc.enable()
    return statistics.median(times), result


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table (numbers formatted, columns aligned) for terminals and the README."""

    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:,.2f}" if abs(v) < 100 else f"{v:,.0f}"
        if isinstance(v, int):
            return f"{v:,}"
        return str(v)

    cells = [[fmt(v) for v in r] for r in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    right = [all(isinstance(r[i], (int, float)) for r in rows) for i in range(len(headers))]

    def line(vals: Sequence[str]) -> str:
        out = [v.rjust(w) if r else v.ljust(w) for v, w, r in zip(vals, widths, right, strict=True)]
        return "| " + " | ".join(out) + " |"

    sep = ["-" * (w - 1) + (":" if r else "-") for w, r in zip(widths, right, strict=True)]
    return "\n".join([line(list(map(str, headers))), line(sep), *(line(r) for r in cells)])
