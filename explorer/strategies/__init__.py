"""Chunking strategies: one module each, registered by name, with offsets by construction.

The contract lives in :mod:`.base`, typed parameters and the shared declarations in
:mod:`.params`, the registry in :mod:`.registry`, a strategy plus its parameters in
:mod:`.config`, and what a strategy may need besides the document (length functions, an
embedder) in :mod:`.context`. Shared helpers: :mod:`.splitting` (LangChain's recursive
splitting on offsets), :mod:`.packing` (units packed under a size), :mod:`.curve` (the
semantic distance curve); beside them :mod:`.invariants` (what every strategy must hold) and
:mod:`.profile` (a document's profile with hybrid's routing); :mod:`.adapt` (the values a
strategy runs with when the user set only some: the others follow them by the strategy's
``rules``). A strategy module imports these and the layers below (``explorer.text``,
``explorer.documents``, ``explorer.embedding``), never another strategy module: ``hybrid``
reaches the others through the registry.
"""

from explorer.strategies.base import Strategy, trim
from explorer.strategies.registry import all_strategies, get_strategy, register, strategy_names

__all__ = [
    "Strategy",
    "all_strategies",
    "get_strategy",
    "register",
    "strategy_names",
    "trim",
]
