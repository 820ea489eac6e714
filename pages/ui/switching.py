"""A configuration's strategy switch: the new strategy's values from what the user set on every
strategy the configuration used, and the place in the text kept across it.

Apart from :mod:`pages.ui.configs` (the configurations themselves): a switch reads the
configuration's history and moves Explore's selection, which nothing else there does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from explorer.errors import ExplorerError
from explorer.strategies import get_strategy
from explorer.strategies.adapt import Adapted, show
from pages.ui.configs import plain_values, user_set_of
from pages.ui.state import ConfigDict, W, session


def switch_strategy(cfg: ConfigDict) -> None:
    """Callback of a configuration's strategy select: the new strategy's defaults for what the
    user did not set, what they set carried where it means the same (:meth:`Strategy.switched_from`),
    and what they had set on the strategies this configuration used before, with notes."""
    new = session.widget(W.STRATEGY(cfg["id"]))
    left = session.left_strategies.setdefault(cfg["id"], {})
    left.pop(cfg["strategy"], None)  # most recent last
    left[cfg["strategy"]] = (dict(cfg["params"]), sorted(user_set_of(cfg)))
    try:
        got = get_strategy(new).switched_from(
            get_strategy(cfg["strategy"]), cfg["params"], user_set_of(cfg), set_under(left)
        )
    except ExplorerError:  # the old strategy is unknown: nothing to carry
        got = get_strategy(new).adapt({}, ())
    if len(left) > 1:
        got = _with_history(get_strategy(new), got, cfg["strategy"], left)
    assert got.values is not None
    cfg["strategy"] = new
    cfg["params"] = plain_values(got.values)
    cfg["valid"] = plain_values(got.values)
    cfg["user_set"] = sorted(got.user_set)
    cfg["notes"] = list(got.notes)
    for key in ("bad", "fresh", "gen"):
        cfg.pop(key, None)  # type: ignore[misc]
    session.forget_params(cfg["id"])
    session.seed(W.STRATEGY(cfg["id"]), new)


def set_under(left: Mapping[str, tuple[dict, list]]) -> dict[str, str]:
    """The strategy each value the user set on the last strategy of ``left`` (the history, oldest
    first) was set on: back through the strategies that held the same value as set, past those
    without that parameter (recursive 500/50 → paragraph → fixed: fixed's overlap 50 is
    recursive's, carried through)."""
    names = list(left)
    if not names:
        return {}
    params, user_set = left[names[-1]]
    out = {}
    for n in user_set:
        out[n] = names[-1]
        for name in reversed(names[:-1]):
            before, set_there = left[name]
            if n not in before:
                continue
            if n not in set_there or before[n] != params.get(n):
                break
            out[n] = name
    return out


def _with_history(strategy: Any, got: Adapted, just_left: str, left: Mapping[str, tuple[dict, list]]) -> Adapted:
    """``got`` (the switch from ``just_left``) with what the user set on the strategies this
    configuration used before, oldest first, the more recent winning: on ``strategy`` itself,
    taken back; on another, carried as a switch from it would carry it (recursive 500/50, then
    sentence and hybrid: hybrid's overlap was its default, and back on recursive so was its)."""
    assert got.values is not None
    values: dict[str, Any] = {}
    source: dict[str, str] = {}
    for name, (params, user_set) in left.items():
        if name == just_left:
            given = {n: got.values[n] for n in got.user_set}
        elif name == strategy.name:
            given = {n: params[n] for n in user_set if n in params}
        else:
            try:
                carried = strategy.switched_from(get_strategy(name), params, user_set)
            except ExplorerError:
                continue
            given = {n: carried.values[n] for n in carried.user_set}
        values.update(given)
        source.update(dict.fromkeys(given, name))
    again = strategy.adapt(values, values.keys(), lenient=True)
    if again.values is None:
        return got
    said = tuple(
        f"{n} {show(again.values[n])} as "
        + ("this configuration had it under" if name == strategy.name else "set under")
        + f" {name}"
        for n, name in source.items()
        if name != just_left and n in again.user_set
    )
    return replace(again, notes=(*got.notes, *again.notes, *said))


# -- the place in the text across a strategy switch ------------------------------------------------
def place_of(spans: Sequence[tuple[int, int]], offset: int) -> int:
    """The position of the chunk ``(start, end)`` that holds ``offset`` (of those, the one that
    starts last: the nearest beginning), else the first after it, else the last."""
    holding = [i for i, (start, end) in enumerate(spans) if start <= offset < end]
    if holding:
        return max(holding, key=lambda i: spans[i][0])
    return next((i for i, (start, _) in enumerate(spans) if start > offset), max(len(spans) - 1, 0))


def anchor_selection(doc_id: str, cfg_id: Any, offset: int) -> None:
    """Keep the place ``offset`` of document ``doc_id``: once configuration ``cfg_id``'s chunks
    are made, :func:`follow_anchor` selects the one that holds it (Explore's selection)."""
    session.chunk_anchor = [doc_id, cfg_id, int(offset)]


def pending_anchor(doc_id: str, cfg_id: Any) -> int | None:
    """The offset kept for ``cfg_id`` on ``doc_id`` (None if none; one kept for another
    document is dropped)."""
    anchor = session.chunk_anchor
    if not anchor:
        return None
    if anchor[0] != doc_id:
        del session.chunk_anchor
        return None
    return int(anchor[2]) if anchor[1] == cfg_id else None


def follow_anchor(doc_id: str, cfg_id: Any, spans: Sequence[tuple[int, int]]) -> None:
    """Select (Explore's ``chunk_sel``) the chunk of ``spans`` that holds the kept place."""
    offset = pending_anchor(doc_id, cfg_id)
    if offset is None:
        return
    del session.chunk_anchor
    if spans:
        session.chunk_sel = place_of(spans, offset)
