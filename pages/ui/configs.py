"""Strategy configurations: plain dicts in the session, validated into ``StrategyConfig``."""

from __future__ import annotations

from collections.abc import Callable

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
    try:
        name = config_of(cfg).display
    except ExplorerError:
        name = f"{cfg['strategy']} (invalid)"
    return f"{n}. {name}" if n is not None else name


def config_labels() -> dict:
    """Configuration id -> its numbered label, in order."""
    return {c["id"]: config_label(c, i + 1) for i, c in enumerate(session.configs)}


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
