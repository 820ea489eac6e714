"""Exports: chunks as JSONL / CSV / JSON, a configuration as JSON, and the same
configuration as code that runs (our CLI and API, and each strategy's own peer equivalents).

It may import the core below it; code for a strategy comes from the strategy's own declaration,
so adding a strategy never means editing this package.
"""
