"""What a sweep of one parameter runs, before anything is embedded: the values typed
(``"chunk_size=100:800:100"``), and each value's configuration or why that value cannot run.

Why apart from :mod:`.evaluate`: the CLI and the app read the values, and check that some of them
can run, before they load a model or start a job. A value out of the parameter's bounds is a
skipped step, as one that conflicts with another setting is: ``max_heading_level=0:3:1`` stopped
the whole sweep on its 0 while ``chunk_overlap`` at or over ``chunk_size`` only skipped that step.
Values that are not numbers at all are still refused whole.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

from explorer.errors import LimitError, ParamError
from explorer.evaluation.sweep_values import overlap_share
from explorer.strategies import get_strategy
from explorer.strategies.config import StrategyConfig
from explorer.strategies.params import FLOAT, INT, Param
from explorer.text.wording import brief_number, quoted

#: Most values one sweep may try (each one chunks and embeds the whole corpus).
MAX_SWEEP_VALUES = 50
#: Skipped values a refusal of the whole sweep names (the rest are counted).
NAMED_SKIPS = 3


@dataclass(frozen=True)
class SweepStep:
    """One value of a sweep before it runs: its configuration, or why it cannot run, and what
    else the value changed."""

    value: Any
    config: StrategyConfig | None
    error: str = ""
    adjusted: tuple[str, ...] = ()


def sweep_steps(base: StrategyConfig, param: str, values: Sequence[Any], user_set: Collection[str] | None) -> list[SweepStep]:
    """Each value's configuration: ``base`` with ``param`` set to it, the parameters the user did
    not set (``user_set``; None: all of ``base``'s) following as :meth:`Strategy.adapt` has them,
    and the notes of what they became (a curve over one parameter that quietly moved another
    read as that parameter's effect). A value out of bounds or in conflict is a step with its
    error."""
    strategy = get_strategy(base.strategy)
    spec = strategy.param(param)  # unknown parameter -> ParamError now
    if len(values) > MAX_SWEEP_VALUES:
        raise LimitError(f"a sweep of {len(values)} values is over the limit of {MAX_SWEEP_VALUES}")
    chosen = set(base.param_dict if user_set is None else user_set) | {param}
    steps = []
    for v in values:
        outside = out_of_range(spec, v)
        if outside:
            steps.append(SweepStep(v, None, outside))
            continue
        share, said = overlap_share(base, param, v, chosen)
        got = strategy.adapt({**base.param_dict, param: v, **share}, chosen | share.keys())
        if got.ok:
            others = tuple(n for n in got.notes if not n.startswith(f"{param} ")) + said
            steps.append(SweepStep(v, StrategyConfig.make(base.strategy, got.values), "", others))
        else:
            steps.append(SweepStep(v, None, next(iter(got.conflicts.values()))))
    return steps


def out_of_range(param: Param, value: Any) -> str:
    """Why number ``value`` is outside ``param``'s bounds, naming the range allowed ('' within)."""
    if param.kind not in (INT, FLOAT) or isinstance(value, bool) or not isinstance(value, int | float):
        return ""
    low, high = param.min, param.max
    if (low is None or value >= low) and (high is None or value <= high):
        return ""
    if low is not None and high is not None:
        allowed = f"{low:g} to {high:g}"
    else:
        allowed = f"at least {low:g}" if low is not None else f"at most {high:g}"
    return f"{param.name}={brief_number(value)} is out of range (allowed: {allowed})"


def check_runnable(steps: Sequence[SweepStep], said_spec: str) -> None:
    """ParamError when there are steps and none of them can run: a sweep that would score
    nothing is a mistake in its values, not a table of skipped rows."""
    if not steps or any(s.config is not None for s in steps):
        return
    why = [s.error for s in steps[:NAMED_SKIPS]]
    more = len(steps) - len(why)
    rest = f"; and {more} more" if more else ""
    raise ParamError(f"{said_spec}: no value can run: {'; '.join(why)}{rest}")


def parse_values(spec: str, strategy: str, label: str = "") -> tuple[str, list[Any]]:
    """``"chunk_size=100:800:100"`` (inclusive range) or ``"threshold=0.2,0.4,0.6"`` → name, values.

    Values are checked against the parameter's type (ParamError naming the value); a number out
    of its bounds is kept, for :func:`sweep_steps` to skip with its reason. Messages name the
    values as ``label`` says (the app's "Values '…'"), else as the CLI's ``--vary 'spec'``.
    """
    said_spec = label or f"--vary {spec!r}"
    name, sep, rest = spec.partition("=")
    name = name.strip()
    if not sep or not name or not rest.strip():
        raise ParamError(f"{said_spec}: expected PARAM=START:STOP:STEP or PARAM=V1,V2,...")
    param = get_strategy(strategy).param(name)
    rest = rest.strip()
    if ":" in rest:
        raw = _range(rest, param, said_spec)
    else:
        raw = [p.strip() for p in rest.split(",") if p.strip()]
        if len(raw) > MAX_SWEEP_VALUES:
            raise LimitError(f"{said_spec} gives {len(raw)} values; at most {MAX_SWEEP_VALUES}")
    unbounded = replace(param, min=None, max=None)  # the kind checked here, the bounds per step
    values: list[Any] = []
    for v in map(unbounded.coerce, raw):
        if v not in values:  # an integer range with a fractional step rounds twice to one value
            values.append(v)
    if not values:
        raise ParamError(f"{said_spec}: no values")
    return name, values


def _range(rest: str, param: Param, said_spec: str) -> list[float]:
    """The values of ``START:STOP:STEP`` (inclusive), rounded to the step's digits."""
    if param.kind not in (INT, FLOAT):
        raise ParamError(f"{said_spec}: a range needs a number parameter; {param.name} is {param.kind.name}")
    parts = rest.split(":")
    if len(parts) != 3:
        raise ParamError(f"{said_spec}: a range is START:STOP:STEP")
    try:
        start, stop, step = (float(p) for p in parts)
    except ValueError:
        raise ParamError(f"{said_spec}: START, STOP and STEP must be numbers") from None
    endless = [p.strip() for p, x in zip(parts, (start, stop, step), strict=True) if not math.isfinite(x)]
    if endless:  # "1e999" is a number to float(), but an infinite one
        raise ParamError(f"{said_spec}: {quoted(endless[0])} is not a finite number")
    if step <= 0 or stop < start:
        raise ParamError(f"{said_spec}: need START <= STOP and STEP > 0")
    steps = (stop - start) / step  # infinite for 0:1:1e-320 (and 1e308 over a tiny step)
    count = math.floor(steps + 1e-9) + 1 if steps < 10**9 else 0
    if not count or count > MAX_SWEEP_VALUES:  # 1e308 as a stop gave a 300-digit count
        said = f"{count:,}" if count else "over a billion"
        raise LimitError(f"{said_spec} gives {said} values; at most {MAX_SWEEP_VALUES}")
    digits = max(0, -math.floor(math.log10(step))) + 3 if param.kind is FLOAT else 0
    return [round(start + i * step, digits) for i in range(count)]
