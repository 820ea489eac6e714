"""Chunking strategies: one module each, registered by name."""

from .base import LENGTH_PARAM, Param, Strategy, trim
from .registry import all_strategies, get_strategy, register, strategy_names

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
