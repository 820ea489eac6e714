"""Evaluation against gold answers: question files and answer spans (:mod:`.questions`),
interval arithmetic over characters (:mod:`.intervals`) and summary statistics (:mod:`.stats`),
chunk flags (:mod:`.flags`) and structural metrics (:mod:`.chunk_metrics`), retrieval metrics
with Chroma's definitions (:mod:`.retrieval_metrics`), and pooled retrieval per strategy and
parameter sweeps (:mod:`.evaluate`); what the model never reads of each chunk (:mod:`.truncation`)
and what a configuration costs beside what it scores (:mod:`.cost`).

It may import everything below it, retrieval included; only the CLI, export and the app import it.
"""
