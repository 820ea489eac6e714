"""A strategy plus its parameters, frozen and hashable: the unit the app, CLI and caches share."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from explorer.errors import ExplorerError
from explorer.strategies import get_strategy


def _freeze(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


@dataclass(frozen=True)
class StrategyConfig:
    """``strategy`` with validated ``params`` (complete, defaults filled, lists as tuples).

    Build with :meth:`make`, which validates; two configs with the same effective settings
    are equal and hash the same, so they share cache entries.
    """

    strategy: str
    params: tuple[tuple[str, Any], ...]
    label: str = ""

    @classmethod
    def make(cls, strategy: str, params: Mapping[str, Any] | None = None, label: str = "") -> StrategyConfig:
        valid = get_strategy(strategy).validate(params or {})
        return cls(strategy, tuple(sorted((k, _freeze(v)) for k, v in valid.items())), label)

    @property
    def param_dict(self) -> dict[str, Any]:
        return dict(self.params)

    def changed_params(self) -> dict[str, Any]:
        """Only the parameters that differ from the strategy's defaults (for labels, URLs, code).
        A default that follows the others (semantic's breakpoint_amount is its mode's) is the
        value the strategy fills in from them: it was labelled as set ("breakpoint_amount=95.0")."""
        strategy = get_strategy(self.strategy)
        defaults = strategy.defaults()
        given = self.param_dict
        changed = {}
        for k, v in self.params:
            if _freeze(defaults.get(k)) == v:
                continue
            if defaults.get(k) is None:  # filled from the others: is v what they fill in?
                try:
                    if _freeze(strategy.validate({n: x for n, x in given.items() if n != k}).get(k)) == v:
                        continue
                except ExplorerError:
                    pass
            changed[k] = v
        return changed

    @property
    def display(self) -> str:
        """Short label for charts and tables, e.g. ``recursive(chunk_size=300)``."""
        if self.label:
            return self.label
        changed = self.changed_params()
        inner = ", ".join(f"{k}={_short(v)}" for k, v in changed.items())
        return f"{self.strategy}({inner})" if inner else self.strategy

    def to_dict(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy,
            "params": {k: list(v) if isinstance(v, tuple) else v for k, v in self.params},
            **({"label": self.label} if self.label else {}),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> StrategyConfig:
        return cls.make(str(d["strategy"]), d.get("params") or {}, str(d.get("label", "")))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True)


def _short(v: Any) -> str:
    if isinstance(v, tuple):
        return json.dumps(list(v), ensure_ascii=False)
    return str(v)
