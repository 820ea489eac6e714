"""Strategy configurations: plain dicts in the session, adapted into ``StrategyConfig``.

A configuration records which parameters the user set (``user_set``: a widget they changed,
a link's parameters). Every other parameter follows them (:meth:`Strategy.adapt`): the sidebar
adapts each run (:func:`refresh`) and keeps the last valid values, which the pages show while a
value the user set conflicts (:func:`config_of`). A strategy switch applies the new strategy's
defaults to what the user did not set (:func:`switch_strategy`) and keeps the place in the text
(:func:`anchor_selection`, :func:`follow_anchor`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

from explorer.errors import ExplorerError, ParamError
from explorer.strategies import get_strategy
from explorer.strategies.adapt import Adapted
from explorer.strategies.config import StrategyConfig
from pages.ui.state import ConfigDict, W, session

MAX_CONFIGS = 6
#: The first configurations a new user sees.
DEFAULT_STRATEGIES = ("recursive", "fixed")


def add_config(strategy: str, params: dict, user_set: Collection[str] | None = None) -> ConfigDict:
    """A new configuration of the session; ``user_set`` (default: the parameters that differ
    from the strategy's defaults) are the ones the user set."""
    cfg: ConfigDict = {"id": session.next_cfg_id, "strategy": strategy, "params": plain_values(params)}
    cfg["user_set"] = sorted(_changed(strategy, params) if user_set is None else user_set)
    got = adapted(cfg)
    if got.ok:
        cfg["valid"] = plain_values(got.values)
    session.next_cfg_id += 1
    session.configs.append(cfg)
    return cfg


# -- adapting -----------------------------------------------------------------------------------
def plain_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """Values as the session keeps them (lists, not tuples: a widget's value is a list)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}


def _freeze(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _changed(strategy: str, params: Mapping[str, Any]) -> set[str]:
    """The parameters whose value differs from the strategy's (complete) defaults."""
    try:
        base = get_strategy(strategy).validate({})
    except ExplorerError:
        return set(params)
    return {k for k, v in params.items() if k not in base or _freeze(v) != _freeze(base[k])}


def user_set_of(cfg: ConfigDict) -> set[str]:
    """The parameters of ``cfg`` the user set (inferred from the values if not recorded)."""
    if "user_set" in cfg:
        return set(cfg["user_set"])
    return _changed(cfg["strategy"], cfg.get("params") or {})


def adapted(cfg: ConfigDict, before: Mapping[str, Any] | None = None) -> Adapted:
    """``cfg``'s values adapted to what the user set; a widget's text that is no value
    (``cfg["bad"]``) is a conflict too."""
    got = get_strategy(cfg["strategy"]).adapt(cfg.get("params") or {}, user_set_of(cfg), before=before)
    bad = cfg.get("bad") or {}
    if bad:
        conflicts = {**got.conflicts, **bad}
        return replace(got, values=None, notes=(), conflicts=conflicts, user_set=got.user_set | bad.keys())
    return got


def refresh(cfg: ConfigDict) -> Adapted:
    """The sidebar's adapt of ``cfg``, each run, before its widgets are drawn: when valid, the
    adapted values become what the widgets show and the last valid values; the notes of a
    change are kept (:func:`notes_of`) until the next one."""
    got = adapted(cfg, before=cfg.get("valid"))
    fresh = cfg.pop("fresh", False)
    if got.ok:
        values, old = plain_values(got.values), cfg["params"]
        gen = cfg.setdefault("gen", {})
        for k in [k for k, v in values.items() if k in old and old[k] != v]:  # moved by a rule
            gen[k] = gen.get(k, 0) + 1
        cfg["params"] = values
        cfg["valid"] = plain_values(got.values)
        cfg["user_set"] = sorted(got.user_set)
    if fresh:
        cfg["notes"] = list(got.notes)
    return got


def param_key(cfg: ConfigDict, name: str) -> str:
    """The widget key of parameter ``name``: a new one each time the app, not the user, moves
    its value, so that a value the browser sends from before (a burst of reruns) is never taken
    for the user's change."""
    gen = (cfg.get("gen") or {}).get(name, 0)
    return W.PARAM(cfg["id"], cfg["strategy"], name) + (f".{gen}" if gen else "")


def notes_of(cfg: ConfigDict, got: Adapted) -> list[str]:
    """The notes to show under ``cfg``'s parameters: those of its last change (a strategy
    switch, a mode that reset an amount), then what follows from its values now."""
    if not got.ok:
        return []
    return list(dict.fromkeys([*cfg.get("notes", []), *got.notes]))


def set_param(cfg: ConfigDict, name: str, value: Any) -> None:
    """A widget's change (callback): the user set ``name`` to ``value``."""
    cfg["params"][name] = value
    cfg["user_set"] = sorted(user_set_of(cfg) | {name})
    (cfg.get("bad") or {}).pop(name, None)
    cfg["fresh"] = True


def bad_param(cfg: ConfigDict, name: str, message: str) -> None:
    """A widget's change (callback) that is no value for ``name`` (``message`` says why)."""
    cfg["bad"] = {**(cfg.get("bad") or {}), name: message}
    cfg["user_set"] = sorted(user_set_of(cfg) | {name})
    cfg["fresh"] = True


def config_of(cfg: ConfigDict) -> StrategyConfig:
    """The frozen configuration the pages show: ``cfg`` adapted (:func:`adapted`), or, while a
    value the user set conflicts, its last valid values (ParamError when it never had any)."""
    got = adapted(cfg)
    if got.ok:
        return StrategyConfig.make(cfg["strategy"], got.values)
    if cfg.get("valid") is not None:
        return StrategyConfig.make(cfg["strategy"], cfg["valid"])
    raise ParamError(next(iter(got.conflicts.values())))


def conflicts_of(cfg: ConfigDict) -> dict[str, str]:
    """Parameter name -> why the value the user set conflicts (empty when valid)."""
    try:
        return adapted(cfg).conflicts
    except ExplorerError as err:
        return {"strategy": str(err)}


def valid_configs(cfgs: list[ConfigDict], complain: Callable[[ConfigDict, int, ExplorerError], None]) -> list:
    """``(cfg, StrategyConfig)`` of each configuration that has valid settings (its last valid
    ones while a value conflicts); ``complain(cfg, i, err)`` about each one that has none
    (``i`` is its place in ``cfgs``)."""
    out = []
    for i, cfg in enumerate(cfgs):
        try:
            out.append((cfg, config_of(cfg)))
        except ExplorerError as err:
            complain(cfg, i, err)
    return out


def active_config_dict() -> ConfigDict:
    for c in session.configs:
        if c["id"] == session.active_cfg:
            return c
    session.active_cfg = session.configs[0]["id"]
    return session.configs[0]


def config_label(cfg: ConfigDict, n: int | None = None) -> str:
    """The numbered label of a configuration of the session (:func:`config_labels`); another
    one (e.g. Semantic's own) is labelled alone, numbered ``n`` if given."""
    for c in session.configs:
        if c is cfg or c.get("id") == cfg.get("id"):
            return config_labels()[c["id"]]
    (label,) = distinct_labels([_effective(cfg)])
    return f"{n}. {label}" if n is not None else label


def config_labels() -> dict:
    """Configuration id -> its numbered label, in order, built from the current parameters:
    "1. recursive 410/200", "2. recursive 1010/200" (:func:`distinct_labels`)."""
    labels = distinct_labels([_effective(c) for c in session.configs])
    return {
        c["id"]: f"{i + 1}. {label}" for i, (c, label) in enumerate(zip(session.configs, labels, strict=True))
    }


def labels_for(configs: Sequence[StrategyConfig]) -> dict[StrategyConfig, str]:
    """A label for each configuration a result was made with: the session's numbered label of
    the configuration that has these settings, else (changed since) one that tells them apart."""
    session_labels = config_labels()
    numbered: dict[StrategyConfig, str] = {}
    for c in session.configs:
        try:
            numbered.setdefault(config_of(c), session_labels[c["id"]])
        except ExplorerError:
            continue
    plain = dict(
        zip(configs, distinct_labels([(c.strategy, c.param_dict, True) for c in configs]), strict=True)
    )
    return {c: numbered.get(c, plain[c]) for c in configs}


def _effective(cfg: ConfigDict) -> tuple[str, dict[str, Any], bool]:
    """(strategy, every parameter's value, valid) of a configuration as it is now (as the
    sidebar shows it, marked invalid, while a value conflicts)."""
    try:
        got = adapted(cfg)
    except ExplorerError:
        got = None
    if got is not None and got.ok:
        return cfg["strategy"], got.values, True
    shown = {**_defaults(cfg["strategy"]), **(cfg.get("valid") or {}), **cfg.get("params", {})}
    return cfg["strategy"], shown, False


#: The parameters a label always shows, joined by "/" (size/overlap): per strategy, else these.
HEADLINE = {"sentence": ("sentences_per_chunk", "overlap_sentences"), "semantic": ("breakpoint_mode",)}
DEFAULT_HEADLINE = ("chunk_size", "chunk_overlap")
#: Short names of the other parameters, shown as name=value when they differ.
SHORT_NAMES = {
    "sentences_per_chunk": "sentences",
    "overlap_sentences": "overlap",
    "breakpoint_mode": "mode",
    "breakpoint_amount": "amount",
    "buffer_size": "buffer",
    "window_embedding": "windows",
    "min_chunk_size": "min",
    "max_chunk_size": "max",
    "max_heading_level": "levels",
    "merge_small_sections": "merge",
    "piece_size": "pieces",
    "size_rule": "rule",
    "keep_separator": "keep",
    "is_separator_regex": "regex",
    "chunk_size": "size",
    "chunk_overlap": "overlap",
}
#: A value longer than this is named by a letter (separators A, separators B): never cut short.
MAX_VALUE_CHARS = 16


def distinct_labels(items: Sequence[tuple[str, Mapping[str, Any], bool]]) -> list[str]:
    """Short labels of configurations ``(strategy, parameters, valid)`` seen together: the
    strategy, its size/overlap, its length unit unless the usual one, and each other parameter
    whose value differs from that of another configuration of the same strategy
    (``recursive 410/200`` vs ``recursive 1010/200``; ``recursive 1000/200 tokens``). Values are
    never shortened with "…"; a long one (a separator list) is named by a letter. An invalid
    configuration gets a ⚠."""
    values: dict[tuple[str, str], list[str]] = {}
    for strategy, params, _ in items:
        for k, v in params.items():
            seen = values.setdefault((strategy, k), [])
            if _value(v) not in seen:
                seen.append(_value(v))
    labels = []
    for strategy, params, valid in items:
        head = [k for k in HEADLINE.get(strategy, DEFAULT_HEADLINE) if k in params]
        if head and params[head[0]] in (None, 0):  # e.g. no size limit: say it only if it differs
            head = []
        parts = [strategy, *(["/".join(_value(params[k]) for k in head)] if head else [])]
        for k, v in params.items():
            text, seen = _value(v), values[(strategy, k)]
            if k == "length":  # the unit: said when it is not the strategy's usual one
                if len(seen) > 1 or v != _defaults(strategy).get(k):
                    parts.append(text)
            elif k not in head and len(seen) > 1:
                if len(text) > MAX_VALUE_CHARS or any(c in text for c in "<>&"):  # charts read tags
                    text = chr(ord("A") + seen.index(text) % 26)
                parts.append(f"{SHORT_NAMES.get(k, k)}={'none' if v == 0 and k == 'chunk_size' else text}")
        labels.append(" ".join(parts) + ("" if valid else " ⚠"))
    return labels


def _defaults(strategy: str) -> dict[str, Any]:
    try:
        return get_strategy(strategy).defaults()
    except ExplorerError:
        return {}


def _value(v: Any) -> str:
    if v is None:
        return "auto"
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, list | tuple):
        return json.dumps(list(v), ensure_ascii=False)
    return " ".join(str(v).split())


def duplicate_active() -> None:
    """Callback: add a copy of the selected configuration at the end, and select the copy (put
    after the original, it renumbered the ones after it, whose numbers the labels carry)."""
    cfg = active_config_dict()
    if len(session.configs) >= MAX_CONFIGS:
        return
    new = add_config(cfg["strategy"], cfg["params"], user_set=user_set_of(cfg))
    for key in ("valid", "bad"):
        if cfg.get(key):
            new[key] = dict(cfg[key])
    session.active_cfg = new["id"]


def remove_active() -> None:
    """Callback: remove the selected configuration (never the last one)."""
    if len(session.configs) <= 1:
        return
    cfg = active_config_dict()
    idx = session.configs.index(cfg)
    session.configs.remove(cfg)
    session.forget_params(cfg["id"])
    session.left_strategies.pop(cfg["id"], None)
    session.active_cfg = session.configs[min(idx, len(session.configs) - 1)]["id"]
