"""Retrieve's tables: one row per configuration with its scores and what it costs, and the
kept questions' batch run (one row per question and configuration).

Why a module of its own: the hit cards (:mod:`pages.ui.search`) and these tables change for
different reasons; Evaluate shows the same cost help.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from explorer.documents.document import Document
from explorer.strategies.config import StrategyConfig
from explorer.text.wording import percent_value
from pages.ui.configs import config_labels, labels_for
from pages.ui.safe import clip, md
from pages.ui.search import item_ref, scores_of
from pages.ui.state import session

COST_HELP = (
    "Cost beside quality. **vectors**: one per chunk embedded (and per piece, with pieces); **index "
    "size**: bytes of the FAISS index (vectors × dimensions × 4); **embedding**: time to embed the chunks when the index was "
    "built (0 s when every vector came from the cache; \"cached\" when it was built before this visit, by "
    "another tab or user); **LLM tokens @k**: cl100k tokens of the "
    "top-k chunks' text, what a RAG prompt would carry."
)

#: What the table's top score is, by retriever: the fusions' are relative to each configuration's
#: own candidates (a user read hybrid's 1.000 against another row's 0.93).
TOP_SCORE_HELP = {
    "dense": "**top score**: the first hit's cosine.",
    "bm25": "**top score**: the first hit's BM25 score (it grows with the question's length and rare words).",
    "hybrid": "**top score**: the first hit's fused score, each ranking scaled between its own candidates' "
    "lowest and highest (1.000: the chunk tops both), so it does not compare across rows: recall and "
    "first hit do.",
    "rrf": "**top score**: the first hit's RRF score, from its ranks alone (1/61 + 1/61 = 0.033 tops both "
    "rankings), so it does not compare across rows: recall and first hit do.",
}


def cost_table(
    pairs: Sequence[tuple[dict, StrategyConfig]], found: dict, ref: Any, k: int, retriever: str
) -> None:
    """One row per configuration: its scores against ``ref`` (when there is one) and its cost
    with ``retriever``."""
    from explorer.evaluation.cost import cost_of

    rows = []
    labels = config_labels()
    for cfg, config in pairs:
        res = (found or {}).get(config)
        if res is None or isinstance(res, str):
            continue
        idx, (hits,) = res
        row: dict[str, Any] = {"configuration": md(labels.get(cfg["id"]) or labels_for([config])[config])}
        if ref is not None:
            sc = scores_of(ref, hits)
            row.update({"recall %": percent_value(sc.recall), "IoU %": percent_value(sc.iou)})
            row["first hit"] = round(1 / sc.rr) if sc.rr else None
        row["top score"] = round(hits[0].score, 3) if hits else None
        cost = cost_of(idx, [hits], k, retriever=retriever, since=session.began)
        rows.append(row | cost.cells() | {"vectors": cost.vectors})
    if rows:  # a static table: a few rows, every figure readable at once (and in the page's text)
        shown = {"recall %": "{:.1f}", "IoU %": "{:.1f}", "first hit": "{:.0f}", "top score": "{:.3f}", "vectors": "{:,}"}
        table = pd.DataFrame(rows)
        st.table(table.style.format({c: f for c, f in shown.items() if c in table}, na_rep="—"), hide_index=True)
        st.caption(f"{TOP_SCORE_HELP.get(retriever, '')} {COST_HELP}".strip())


def batch_columns() -> dict[str, Any]:
    """The batch table's figures as the cost table shows them ("1.000" beside "0.909", "18,671")."""
    number = st.column_config.NumberColumn
    return {
        "top score": number(format="%.3f"),
        "LLM tokens": number(format="localized"),
        "recall %": number(format="%.1f"),
        "IoU %": number(format="%.1f"),
        "first hit": number(format="#%d"),
    }


def batch_records(asked: list[str], found: dict, docs: Sequence[Document]) -> list[dict]:
    """One row per kept question and configuration of a batch run: top score, and the scores
    against the question's expected answer when it has one."""
    from explorer.evaluation.cost import llm_tokens

    records = []
    names = labels_for(list(found))
    for item in session.questions:
        if item["question"] not in asked:
            continue
        qi = asked.index(item["question"])
        ref, _ = item_ref(item, docs)
        for config, res in found.items():
            if isinstance(res, str):
                continue
            hits = res[1][qi]
            rec = {
                "question": clip(item["question"], 70),
                "configuration": names[config],
                "top score": round(hits[0].score, 3) if hits else None,
                "LLM tokens": round(llm_tokens([hits])),
            }
            if ref is not None:
                sc = scores_of(ref, hits)
                rec.update(
                    {
                        "recall %": percent_value(sc.recall),
                        "IoU %": percent_value(sc.iou),
                        "first hit": round(1 / sc.rr) if sc.rr else None,
                    }
                )
            records.append(rec)
    return records
