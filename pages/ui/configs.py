"""Strategy configurations: plain dicts in the session, validated into ``StrategyConfig``."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from explorer.errors import ExplorerError, ParamError
from explorer.strategies import get_strategy
from explorer.strategies.config import StrategyConfig
from pages.ui.state import ConfigDict, W, session

MAX_CONFIGS = 6
#: The first configurations a new user sees.
DEFAULT_STRATEGIES = ("recursive", "fixed")


def add_config(strategy: str, params: dict, after: int | None = None) -> ConfigDict:
    cfg: ConfigDict = {"id": session.next_cfg_id, "strategy": strategy, "params": dict(params)}
    session.next_cfg_id += 1
    if after is None:
        session.configs.append(cfg)
    else:
        session.configs.insert(after + 1, cfg)
    return cfg


def config_of(cfg: ConfigDict) -> StrategyConfig:
    """Validated, frozen config (ParamError names the bad value)."""
    if cfg.get("error"):
        raise ParamError(cfg["error"])
    return StrategyConfig.make(cfg["strategy"], cfg["params"])


def valid_configs(cfgs: list[ConfigDict], complain: Callable[[ConfigDict, int, ExplorerError], None]) -> list:
    """``(cfg, StrategyConfig)`` of each configuration that validates; ``complain(cfg, i, err)``
    about each one that does not (``i`` is its place in ``cfgs``)."""
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
    """(strategy, every parameter's value, valid) of a configuration as it is now."""
    try:
        return cfg["strategy"], config_of(cfg).param_dict, True
    except ExplorerError:
        return cfg["strategy"], {**_defaults(cfg["strategy"]), **cfg.get("params", {})}, False


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
    """Callback: add a copy of the selected configuration after it, and select the copy."""
    cfg = active_config_dict()
    if len(session.configs) >= MAX_CONFIGS:
        return
    idx = session.configs.index(cfg)
    new = add_config(cfg["strategy"], cfg["params"], after=idx)
    session.active_cfg = new["id"]


def remove_active() -> None:
    """Callback: remove the selected configuration (never the last one)."""
    if len(session.configs) <= 1:
        return
    cfg = active_config_dict()
    idx = session.configs.index(cfg)
    session.configs.remove(cfg)
    session.forget_params(cfg["id"])
    session.active_cfg = session.configs[min(idx, len(session.configs) - 1)]["id"]


def switch_strategy(cfg: ConfigDict) -> None:
    """Callback of a configuration's strategy select: shared values (chunk_size, overlap,
    length) carry over when they are valid for the new strategy."""
    new = session.widget(W.STRATEGY(cfg["id"]))
    keep = set(get_strategy(new).param_names())
    params = {k: v for k, v in cfg["params"].items() if k in keep}
    try:
        get_strategy(new).validate(params)
    except ExplorerError:
        params = {}
    cfg["strategy"] = new
    cfg["params"] = params
    cfg["error"] = ""
    session.forget_params(cfg["id"])
    session.seed(W.STRATEGY(cfg["id"]), new)
