"""Summary statistics: mean ± population standard deviation of per-item values (as Chroma's
report), and the distribution of chunk sizes.

Why a module of its own: structural metrics (sizes) and retrieval metrics (scores over
questions) report the same way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields


@dataclass(frozen=True, slots=True)
class Stat:
    """Mean and population standard deviation (ddof=0, as Chroma's report) of per-item values."""

    mean: float
    std: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Stat:
        if not values:
            return cls(math.nan, math.nan)
        n = len(values)
        mean = math.fsum(values) / n
        var = math.fsum((v - mean) ** 2 for v in values) / n
        return cls(mean, math.sqrt(var))

    def pct(self, digits: int = 1) -> str:
        """``"78.5 ± 30.1"``: the fraction shown in percent."""
        return f"{100 * self.mean:.{digits}f} ± {100 * self.std:.{digits}f}"


@dataclass(frozen=True, slots=True)
class SizeStats:
    """Distribution of chunk sizes in one unit. ``cv`` = std / mean (0 when empty)."""

    mean: float
    median: float
    min: int
    max: int
    std: float
    cv: float

    @classmethod
    def of(cls, sizes: Sequence[int]) -> SizeStats:
        if not sizes:
            return cls(0.0, 0.0, 0, 0, 0.0, 0.0)
        st = Stat.of(sizes)
        ordered = sorted(sizes)
        n = len(ordered)
        median = ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
        return cls(
            st.mean, float(median), ordered[0], ordered[-1], st.std, st.std / st.mean if st.mean else 0.0
        )

    def to_dict(self) -> dict[str, float]:
        return {f.name: getattr(self, f.name) for f in fields(self)}
