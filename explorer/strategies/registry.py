"""Name → strategy registry. A new strategy is one module with ``@register`` plus its test."""

from __future__ import annotations

import importlib
import threading
from typing import Any, TypeVar

from explorer.errors import ParamError
from explorer.strategies.base import Strategy

_REGISTRY: dict[str, Strategy[Any]] = {}
#: Modules imported on first look-up; each registers its strategy. Order = display order.
BUILTIN_MODULES = (
    "fixed",
    "sentence",
    "paragraph",
    "recursive",
    "markdown",
    "semantic",
    "cluster",
    "hybrid",
)
_loaded = False
_load_lock = threading.Lock()
_loading = threading.local()

S = TypeVar("S", bound=type[Strategy[Any]])


def register(cls: S) -> S:
    """Class decorator: instantiate and register a strategy under ``cls.name``."""
    if cls.name in _REGISTRY:
        raise RuntimeError(f"strategy {cls.name!r} registered twice")
    _REGISTRY[cls.name] = cls()
    return cls


def _load_builtins() -> None:
    """Import the built-in strategies once. Thread-safe: the app's sessions run in threads, and
    a second thread must wait for the whole registry, not see a half-filled one (it would offer
    ``fixed`` alone, or fail on ``recursive``). A strategy module that looks a strategy up while
    being imported (same thread) sees the registry as it is, as before."""
    global _loaded
    if _loaded or getattr(_loading, "active", False):
        return
    with _load_lock:
        if _loaded:
            return
        _loading.active = True
        try:
            for mod in BUILTIN_MODULES:
                importlib.import_module(f"{__package__}.{mod}")
        finally:
            _loading.active = False
        _loaded = True


def get_strategy(name: str) -> Strategy[Any]:
    _load_builtins()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ParamError(f"unknown strategy {_clipped(name)!r}; choose one of {', '.join(strategy_names())}") from None


def all_strategies() -> list[Strategy[Any]]:
    """Every strategy, built-ins in display order (BUILTIN_MODULES) whatever imported them
    first, then any others in the order they registered."""
    _load_builtins()
    rank = {name: i for i, name in enumerate(BUILTIN_MODULES)}
    order = sorted(enumerate(_REGISTRY.values()), key=lambda p: (rank.get(p[1].name, len(rank)), p[0]))
    return [s for _, s in order]


def strategy_names() -> list[str]:
    return [s.name for s in all_strategies()]


def reference_markdown() -> str:
    """Every strategy with its parameters as Markdown (the README's "Strategies" reference is
    this text, and a test keeps the two equal)."""
    import json

    def default(v: object) -> str:
        if isinstance(v, list | tuple):
            return json.dumps(list(v), ensure_ascii=False)
        return str(v)

    def bounds(p) -> str:
        if p.choices:
            return ", ".join(map(str, p.choices))
        if p.min is not None and p.max is not None:
            return f"{p.min:g}–{p.max:g}"
        return ""

    out = []
    for s in all_strategies():
        rows = [
            f"| `{p.name}` | {p.kind.name} | `{default(p.default)}` | {bounds(p)} | {p.help} |"
            for p in s.params
        ]
        out.append(
            f"### `{s.name}`\n\n{s.description}\n\n"
            "| parameter | type | default | range / choices | what it does |\n|---|---|---|---|---|\n"
            + "\n".join(rows)
            + "\n"
        )
    return "\n".join(out)


def _clipped(name: Any) -> str:
    """A name as a message quotes it: at most 40 characters (a link can carry thousands)."""
    text = str(name)
    return text if len(text) <= 40 else text[:39] + "…"
