"""Chunking strategies: one module each, registered by name, with offsets by construction.

The contract and shared parameters live in :mod:`.base`, the registry in :mod:`.registry`, a
strategy plus its parameters in :mod:`.config`, and what a strategy may need besides the
document (length functions, an embedder) in :mod:`.context`. A strategy module imports these
and the layers below (``explorer.text``, ``explorer.documents``, ``explorer.embedding``), never
another strategy module.
"""

from explorer.strategies.base import LENGTH_PARAM, Param, Strategy, trim
from explorer.strategies.registry import all_strategies, get_strategy, register, strategy_names

__all__ = [
    "LENGTH_PARAM",
    "Param",
    "Strategy",
    "all_strategies",
    "get_strategy",
    "register",
    "strategy_names",
    "trim",
]
