"""Evaluate's per-question table, and one of its questions taken to Retrieve: a score says
which questions a configuration misses; Retrieve shows what it found instead."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st

from explorer.documents.document import Document
from explorer.evaluation.questions import Question
from explorer.text.wording import percent_value, plural
from pages.ui.nav import go_to
from pages.ui.safe import clip, md, sheet_safe
from pages.ui.search import ask
from pages.ui.state import W

#: References a picked question lists; Chroma's questions hold up to a dozen.
SHOWN_REFERENCES = 3
#: What a table shows for a missing value: a question's first hit where no chunk in the top k
#: overlaps its answer (the number column stays a number column, sortable).
MISSED = "—"


def per_question(results: list, questions: Sequence[Question], names: list[str], docs: Sequence[Document]) -> None:
    """Each question's first hit and recall under every configuration: which questions a
    configuration misses, and where the configurations disagree (sortable, downloadable). A
    picked row reads whole (the column cuts long questions) and can be asked on Retrieve."""
    st.markdown("**Per question**")
    rows = per_question_rows(results, [q.text for q in questions], names)
    missed = " · ".join(f"{md(n)}: {sum(r[f'{n} · first hit'] is None for r in rows)} of {len(rows)}" for n in names)
    st.caption(
        "**first hit**: the rank of the first chunk in the top k that overlaps the expected "
        f"answer ({MISSED}: no chunk in the top k does). Questions missed: {missed}. Select a row to "
        "read its question whole and ask it on Retrieve."
    )
    columns: dict[str, Any] = {f"{n} · first hit": st.column_config.NumberColumn(format="#%d") for n in names}
    # the question narrow and pinned: its full width hid every configuration's columns at 800 pixels
    columns["question"] = st.column_config.TextColumn(width="medium", pinned=True)
    event = st.dataframe(
        sheet_safe(pd.DataFrame(rows)),
        hide_index=True,
        column_config=columns,
        placeholder=MISSED,  # a miss's rank: the cell read "None"
        key=W.EVAL_QUESTIONS,
        on_select="rerun",
        selection_mode="single-row",
    )
    picked = [i for i in event.selection.rows if 0 <= i < len(rows)]
    if picked:
        picked_question(questions[picked[0]], rows[picked[0]], names, docs)


def per_question_rows(results: list, asked: list[str], names: list[str]) -> list[dict[str, Any]]:
    """One row per question: its text, then each configuration's first-hit rank (None for a
    miss) and recall in %."""
    rows: list[dict[str, Any]] = [{"question": q} for q in asked]
    for r, name in zip(results, names, strict=True):
        for row, q in zip(rows, r.scores.questions, strict=True):
            row[f"{name} · first hit"] = round(1 / q.rr) if q.rr else None
            row[f"{name} · recall %"] = percent_value(q.recall)
    return rows


def picked_question(q: Question, row: dict[str, Any], names: list[str], docs: Sequence[Document]) -> None:
    """The picked question whole, where its answer is, how each configuration did, and a
    button that asks it on Retrieve."""
    by_id = {d.id: d for d in docs}
    with st.container(border=True, key=W.EVAL_PICKED):
        st.markdown(f"**{md(q.text)}**")
        for doc_id, start, end in q.references[:SHOWN_REFERENCES]:
            doc = by_id.get(doc_id)
            where = f"{md(doc.name)}, characters {start:,}–{end:,}" if doc else f"{md(doc_id)} (not loaded now)"
            quote = f": “{md(clip(doc.text[start:end], 200))}”" if doc else ""
            st.caption(f":material/flag: Answer in {where}{quote}")
        if len(q.references) > SHOWN_REFERENCES:
            st.caption(f"… and {plural(len(q.references) - SHOWN_REFERENCES, 'more place')}.")
        st.caption(" · ".join(f"{md(n)}: {_first_hit(row[f'{n} · first hit'])}" for n in names))
        item, why = retrieve_item(q, by_id)
        st.button(
            "Ask on Retrieve",
            icon=":material/search:",
            key=W.EVAL_ASK,
            on_click=ask_on_retrieve,
            args=(item,),
            help="Retrieve shows every configuration's top chunks for this question, side by side.",
        )
        if why:
            st.caption(f":material/info: {why}")


def _first_hit(rank: int | None) -> str:
    return "missed" if rank is None else f"first hit #{rank}"


def retrieve_item(q: Question, by_id: dict[str, Document]) -> tuple[dict[str, Any], str]:
    """What Retrieve asks for ``q`` (as a kept question: question, answer, its place), and why
    it goes without its expected answer when it must (Retrieve scores one loaded place)."""
    item: dict[str, Any] = {"question": q.text, "answer": "", "ref": None}
    if len(q.references) != 1:
        return item, (
            f"Retrieve scores one expected answer; this question has {len(q.references)}, "
            "so it is asked there without them."
        )
    doc_id, start, end = q.references[0]
    doc = by_id.get(doc_id)
    if doc is None:
        return item, "Its answer's document is not loaded now, so it is asked without its answer."
    return item | {"answer": doc.text[start:end], "ref": [doc_id, start, end]}, ""


def ask_on_retrieve(item: dict[str, Any]) -> None:
    """Callback: search the question on Retrieve, its expected answer marked there."""
    ask(item)
    go_to("retrieve")
