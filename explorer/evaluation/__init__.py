"""Evaluation against gold answers: question files and answer spans, structural and
retrieval metrics (:mod:`.metrics`), pooled retrieval per strategy and parameter sweeps
(:mod:`.evaluate`).

It may import everything below it, retrieval included; only the CLI, export and the app import it.
"""
