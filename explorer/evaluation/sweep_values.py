"""The values a parameter sweep offers before the user types any: a few around the
configurations' own value, each valid for every configuration swept.

Why: one fixed range ("200:1000:200") fits chunk_size only, and even there its first value
fails beside the default overlap of 200 ("chunk_overlap=200 must be smaller than
chunk_size=200"); for chunk_overlap or a semantic percentile it is meaningless.

Also the overlap that goes with each value of a chunk_size sweep (:func:`overlap_share`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Sequence
from typing import Any

from explorer.errors import ExplorerError
from explorer.strategies.adapt import unit_of
from explorer.strategies.config import StrategyConfig
from explorer.strategies.params import FLOAT, INT
from explorer.strategies.registry import get_strategy

#: Factors of the current value tried for a whole-number parameter (sizes, overlaps, counts).
WIDE_FACTORS = (0.25, 0.5, 1.0, 1.5, 2.0)
#: Factors tried for a real-valued one (a breakpoint percentile, a threshold): a finer look.
FINE_FACTORS = (0.9, 0.95, 1.0, 1.05, 1.1)
#: Distinct own values added to the suggestions (more configurations: the median's five only).
MAX_OWN_VALUES = 3


def suggested_values(configs: Sequence[StrategyConfig], param: str) -> list[Any]:
    """A few values of ``param`` (five, and up to three more): the median of the configurations' values (those whose
    strategy has it, counted as :func:`_own_values` says) times :data:`WIDE_FACTORS` (whole
    numbers) or :data:`FINE_FACTORS`, in its bounds, rounded to two significant digits (the
    median itself kept exact), plus each configuration's own value when they hold at most
    :data:`MAX_OWN_VALUES` (a curve without a point at recursive's 300 could not say where its
    setting stands), each valid for every one of those configurations (cross-parameter checks
    included). Empty when no configuration has a numeric ``param``."""
    strategies = [(c, get_strategy(c.strategy)) for c in dict.fromkeys(configs)]
    having = [(c, s) for c, s in strategies if param in s.param_names()]
    if not having:
        return []
    spec = having[0][1].param(param)
    if spec.kind not in (INT, FLOAT):
        return []
    current = _own_values(having, param)
    counted = [v for v in current if v or not spec.measured]  # a size of 0: no cap, not a size
    value = counted[len(counted) // 2] if counted else 0.0
    base = value or float(spec.default or 0) or 100.0  # 0 (no overlap): around the default
    factors = WIDE_FACTORS if spec.kind is INT else FINE_FACTORS
    low = -math.inf if spec.min is None else spec.min
    high = math.inf if spec.max is None else spec.max
    raw = [min(high, max(low, 0.0 if not value and f == factors[0] else base * f)) for f in factors]
    own = [v for v in dict.fromkeys(current) if low <= v <= high] if len(set(current)) <= MAX_OWN_VALUES else []
    out: list[Any] = []
    for x in raw + own:  # each configuration's own value too: where it stands on the curve
        v = spec.coerce(x if x == value or x in own else _two_digits(x, spec.kind is INT))
        if v not in out and _valid_everywhere(having, param, v):
            out.append(v)
    return sorted(out)


def _own_values(having: Sequence[tuple[StrategyConfig, Any]], param: str) -> list[float]:
    """The configurations' values of ``param``, sorted; for a size or an overlap (counted in a
    length unit) only those of the configurations in the first one's unit, the unit of the
    sweep's first line. Why: a 1000-character size beside 120-token ones made a median of
    120 and offered 30–240 characters; every configuration is swept with the same values."""
    first, strategy = having[0]
    if strategy.param(param).measured:
        unit = unit_of(strategy, first.param_dict)
        having = [(c, s) for c, s in having if unit_of(s, c.param_dict) == unit]
    return sorted(float(s.validate(c.param_dict)[param]) for c, s in having)


def format_values(values: Sequence[Any]) -> str:
    """``[250, 500, 1000]`` → ``"250,500,1000"`` (what the sweep's Values box takes)."""
    return ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values)


def _two_digits(x: float, integer: bool) -> float:
    """``x`` rounded to two significant digits (375 → 380, 0.4375 → 0.44); whole for ints."""
    if x == 0 or not math.isfinite(x):
        return 0.0
    digits = 1 - math.floor(math.log10(abs(x)))
    rounded = round(x, digits)
    return float(round(rounded)) if integer else rounded


def _valid_everywhere(having: Sequence[tuple[StrategyConfig, Any]], param: str, value: Any) -> bool:
    for config, strategy in having:
        try:
            strategy.validate({**config.param_dict, param: value})
        except ExplorerError:
            return False
    return True


def overlap_share(base: StrategyConfig, param: str, value: Any, chosen: Collection[str]) -> tuple[dict, tuple[str, ...]]:
    """The overlap of a chunk_size sweep's step when the user did not set it: the same share of
    the size as ``base`` has (1000/200: 20 % at every size), with a note. Why: the default's
    fixed 200 was shrunk below sizes of 200 and kept above, so recursive 1000/200 swept over
    110–330 compared 20 % overlaps at one end with 95 % at the other."""
    overlap, size = base.param_dict.get("chunk_overlap"), base.param_dict.get("chunk_size")
    if param != "chunk_size" or "chunk_overlap" in chosen or not overlap or not size:
        return {}, ()
    if not isinstance(value, int) or isinstance(overlap, bool) or not isinstance(overlap, int):
        return {}, ()
    share = min(round(overlap * value / size), max(value - 1, 0))
    said = f"chunk_overlap {share} ({100 * overlap / size:.3g} % of chunk_size, as the configuration's {overlap} of {size})"
    return {"chunk_overlap": share}, (said,)


_NOTE_NUMBER = re.compile(r"(\w+) (-?\d+(?:\.\d+)?)((?: .*)?)\Z", re.S)


def adjustments_said(rows: Sequence[Any]) -> list[str]:
    """What a sweep's steps (``SweepRow``: ``param``, ``value``, ``adjusted``) moved besides the
    swept value, one line per kind of move: "chunk_size=250, 500, 1000: chunk_overlap 50, 100,
    200 (20 % of chunk_size…)". Why: a line per step repeated the same sentence five times
    under the curves, with only its numbers changed."""
    groups: dict[tuple[str, str], list[tuple[Any, str]]] = {}
    for r in rows:
        for note in r.adjusted:
            m = _NOTE_NUMBER.match(note)
            key, number = ((m[1], m[3]), m[2]) if m else ((note, ""), "")
            groups.setdefault(key, []).append((r, number))
    out = []
    for (head, tail), members in groups.items():
        param = members[0][0].param
        if len(members) == 1 or not members[0][1]:
            out += [f"{r.param}={r.value}: {head}{f' {n}' if n else ''}{tail}" for r, n in members]
            continue
        values = ", ".join(str(r.value) for r, _ in members)
        out.append(f"{param}={values}: {head} {', '.join(n for _, n in members)}{tail}")
    return out
