"""Parameters that adapt: what the user set is kept or flagged, everything else follows it.

:meth:`Strategy.parse` refuses any conflict. The app and the CLI call :func:`adapt` instead,
with the names of the parameters the user set (``user_set``: widgets they touched, ``--set``
names, a link's parameters). A parameter the user did not set takes its default, adjusted by the
strategy's :class:`~explorer.strategies.params.Rule` objects (``Strategy.rules``, declared beside
each strategy) to the ones they did set, with a one-line note (``chunk_overlap 200 → 26 to stay
below chunk_size 130``); its value in ``values`` is ignored, so it goes back to its default as
soon as that fits again. A value the user set is kept exactly, or named in ``conflicts`` with the
message ``parse`` would raise, keyed by the parameter to flag beside its widget: a bad single
value (not of its kind, out of bounds, unknown name), or, for a conflict between parameters, the
dependent one of a rule (``chunk_overlap`` rather than ``chunk_size``), else the first the
message names whose default removes the conflict. With conflicts ``values`` is None: the caller
keeps its last valid view. ``lenient=True`` drops conflicting values to what they would be
unset, with a note, instead (a link to honour, a strategy switch: :func:`switch`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Mapping
from contextlib import suppress
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from explorer.errors import ParamError
from explorer.strategies.params import values_of
from explorer.text.wording import brief_number

if TYPE_CHECKING:
    from explorer.strategies.base import Strategy


@dataclass(frozen=True)
class Adapted:
    """What :func:`adapt` or :func:`switch` made of the user's values.

    ``values``: complete, coerced, valid (``parse`` accepts them), or None when ``conflicts``.
    ``user_set``: the names still set by the user, to keep for the next call (a value released
    by its rule, dropped by ``lenient`` or left empty (None for an optional value) is no longer set;
    a conflicting one still is).
    ``notes``: one line per parameter that is not what the user or the default said, old → new
    and why (for a caption or stderr); empty when ``values`` is None.
    ``conflicts``: parameter name → the message to show beside its widget (the CLI refuses).
    """

    values: dict[str, Any] | None
    user_set: frozenset[str]
    notes: tuple[str, ...] = ()
    conflicts: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.values is not None


def show(value: Any) -> str:
    """A value as a note shows it: ``26``, ``3``, ``0.5``, ``'chars'``, ``["\\n", " "]``."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, int):
        return brief_number(value)
    if isinstance(value, tuple | list):
        return json.dumps(list(value), ensure_ascii=False)
    if isinstance(value, str):
        return repr(value)
    return str(value)


def _coerced(strategy: Strategy[Any], values: Mapping[str, Any], names: Collection[str]) -> dict[str, Any]:
    """The values of ``names`` that are parameters and coerce (others left out)."""
    out = {}
    for name in names:
        if name in values and name in strategy.param_names():
            with suppress(ParamError):
                out[name] = strategy.param(name).coerce(values[name])
    return out


def _given(
    strategy: Strategy[Any], values: Mapping[str, Any], user_set: Collection[str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """The user-set values, coerced, and the conflicts of those that are bad on their own."""
    given: dict[str, Any] = {}
    bad: dict[str, str] = {}
    order = {name: i for i, name in enumerate(strategy.param_names())}
    for name in sorted(user_set, key=lambda n: (order.get(n, len(order)), n)):
        if name not in values:
            continue
        try:
            param = strategy.param(name)
            if values[name] is None and param.default is None:
                continue  # an optional value left empty: the default applies
            given[name] = param.coerce(values[name])
        except ParamError as err:
            bad[name] = str(err)
    return given, bad


def _solve(strategy: Strategy[Any], given: Mapping[str, Any]) -> tuple[Any, dict[str, tuple[Any, str]], str]:
    """The parameter object from ``given`` with the rules applied to every other parameter,
    what each rule changed (name → (old, why)), and the check's message ('' when valid)."""
    p = strategy.complete(strategy.Params(**given))
    defaults = strategy.defaults()
    follows = {}
    for rule in strategy.rules:
        if rule.param in given:
            continue
        got = rule.follow(p, defaults)
        if got is not None:
            follows[rule.param] = (getattr(p, rule.param), got[1])
            p = replace(p, **{rule.param: got[0]})
    try:
        strategy.check(p)
    except ParamError as err:
        return p, follows, str(err)
    return p, follows, ""


def _culprit(strategy: Strategy[Any], given: Mapping[str, Any], message: str) -> str:
    """The user-set parameter to flag for ``message``: the first, in order of preference (a rule's
    dependent named in the message, another named one, the rest in declaration order), whose
    default removes the conflict; the first in that order if none does alone."""
    dependents = {rule.param for rule in strategy.rules}
    order = {name: i for i, name in enumerate(strategy.param_names())}

    def rank(name: str) -> tuple[int, int]:
        found = re.search(rf"(?<!\w){re.escape(name)}(?!\w)", message)
        if found is None:
            return 2, order.get(name, len(order))
        return (0 if name in dependents else 1), found.start()

    candidates = sorted(given, key=rank)
    if not candidates:  # the defaults with the rules applied must always be valid
        raise AssertionError(f"{strategy.name}: the default parameters conflict: {message}")
    for name in candidates:
        if not _solve(strategy, {k: v for k, v in given.items() if k != name})[2]:
            return name
    return candidates[0]


def adapt(
    strategy: Strategy[Any],
    values: Mapping[str, Any],
    user_set: Collection[str],
    *,
    before: Mapping[str, Any] | None = None,
    lenient: bool = False,
) -> Adapted:
    """The values ``strategy`` runs with when the user set ``user_set`` of ``values`` (module
    docstring). ``before``: the values this change was made from (the previous call's values),
    so that a value set for another mode is released (semantic's breakpoint_amount); without
    it nothing is released. Never raises ParamError."""
    given, conflicts = _given(strategy, values, user_set)
    released: dict[str, tuple[Any, str]] = {}
    if before is not None:  # what a rule compares: the values in effect, defaults filled
        now = {**strategy.defaults(), **given}
        was = {**strategy.defaults(), **_coerced(strategy, before, before.keys())}
        for rule in strategy.rules:
            why = rule.release(now, was) if rule.param in given else None
            if why:
                released[rule.param] = (given.pop(rule.param), why)
    p, follows, message = _solve(strategy, given)
    while message:
        name = _culprit(strategy, given, message)
        conflicts[name] = message
        given.pop(name)
        p, follows, message = _solve(strategy, given)
    kept = frozenset(given) | conflicts.keys()  # an optional value left empty is not set
    if conflicts and not lenient:
        return Adapted(None, kept, (), conflicts)
    out = values_of(p)
    notes = {}
    for name, (old, why) in follows.items():
        notes[name] = f"{name} {show(old)} → {show(out[name])} {why}"
    for name, (old, why) in released.items():
        notes[name] = f"{name} {show(old)} → {show(out[name])} {why}"
    for name, why in conflicts.items():
        old = show(values[name])
        notes[name] = (
            f"{name} {old} → {show(out[name])} (dropped: {why})" if name in out else f"{name} dropped: {why}"
        )
    order = {name: i for i, name in enumerate(strategy.param_names())}
    ranked = sorted(notes, key=lambda n: order.get(n, -1))
    return Adapted(out, kept - conflicts.keys(), tuple(notes[n] for n in ranked))


def unit_of(strategy: Strategy[Any], values: Mapping[str, Any]) -> str:
    """The length unit ``values`` count in for ``strategy`` (its default if not given or bad)."""
    return _coerced(strategy, values, ["length"]).get("length", strategy.defaults().get("length", ""))


def switch(
    old: Strategy[Any],
    values: Mapping[str, Any],
    user_set: Collection[str],
    new: Strategy[Any],
    set_under: Mapping[str, str] | None = None,
) -> Adapted:
    """The values of ``new`` when the user switches to it from ``old`` with ``values``: the new
    strategy's defaults, except what the user set, ``new`` has, and still holds there. A size
    counted in another unit than before (recursive's characters, cluster's cl100k tokens) is not
    carried, a carried value that conflicts is dropped: each with a note, never a conflict.
    ``set_under`` names, by parameter, the strategy a carried value was set on when that was not
    ``old`` (it came through ``old``): the notes name it."""
    names = set(new.param_names())
    carried = {n: values[n] for n in user_set if n in values and n in names}
    was, now = unit_of(old, values), unit_of(new, carried)
    notes = []
    for name in sorted(carried, key=new.param_names().index):
        if new.param(name).measured and was != now:
            notes.append(
                f"{name} {show(carried.pop(name))} not carried: it counted {was}, {new.name} counts {now}"
            )
    got = adapt(new, carried, carried.keys(), lenient=True)
    assert got.values is not None
    defaults = values_of(new.complete(new.Params()))
    for name in new.param_names():
        if name in got.user_set and got.values[name] != defaults[name]:
            origin = (set_under or {}).get(name, old.name)
            source = "as this configuration had it" if origin == new.name else f"kept from {origin}"
            notes.append(f"{name} {show(got.values[name])} {source} (default {show(defaults[name])})")
    return replace(got, notes=(*notes, *got.notes))
