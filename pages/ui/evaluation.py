"""The pieces of Evaluate: where the questions come from, and the results (the jobs that make them:
:mod:`pages.ui.eval_jobs`)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from explorer.documents import uploads
from explorer.documents.document import Document
from explorer.errors import ExplorerError
from explorer.evaluation.questions import Question, left_out_note, read_questions
from explorer.evaluation.sweep_values import adjustments_said
from explorer.strategies.config import StrategyConfig
from explorer.text.wording import plural
from pages.ui.background import changed_inputs
from pages.ui.charts import line_units, score_bars, sweep_lines
from pages.ui.configs import labels_for
from pages.ui.gold import answer_ref
from pages.ui.per_question import per_question
from pages.ui.safe import clip, err_text, md, sheet_safe
from pages.ui.score_tables import COST_HELP
from pages.ui.settings import RETRIEVER_LABELS
from pages.ui.sources import keep_upload
from pages.ui.state import SAMPLE_FILE, SAMPLE_REF, W, session

METRICS = {
    "recall": "Recall",
    "precision": "Precision",
    "iou": "IoU",
    "precision_omega": "Precision Ω",
    "hit_rate": "Hit rate",
    "mrr": "MRR",
}


# -- questions ----------------------------------------------------------------------------------
def take_question_file(name: str, data: bytes) -> None:
    """Use an uploaded question file, kept on the server when the store is on, so that a reload
    or a copied link opens Evaluate with it (``qf=``)."""
    digest = keep_upload(name, data)
    session.qfile = (uploads.clean_name(name), data)
    session.qfile_ref = digest[: uploads.REF_CHARS] if digest else ""


def file_questions(docs: Sequence[Document]) -> list:
    """The questions of the uploaded file (or the bundled sample questions)."""
    up = st.file_uploader(
        "Question file",
        type=["jsonl", "json", "csv"],
        key=W.QFILE(session.qfile_gen),
        help="JSONL of {question, references: [{document, start, end}]} or {question, answer}, "
        "or Chroma's questions_df.csv.",
    )
    if up is not None:
        take_question_file(up.name, up.getvalue())
        session.qfile_gen += 1
        st.rerun()
    from explorer.documents.samples import sample_questions

    sample = sample_questions({d.name for d in docs})
    if session.qfile_ref == SAMPLE_REF:  # the questions about the samples loaded now (none: no file)
        session.qfile, session.qfile_ref = ((SAMPLE_FILE, sample), SAMPLE_REF) if sample else (None, "")
    if not session.qfile:
        n = sample.count(b"\n")
        if n and st.button(
            f"Use the sample questions ({n})",
            icon=":material/quiz:",
            key=W.QSAMPLE,
            help="Questions about the bundled samples, each with its answer quoted from the text.",
        ):
            session.qfile, session.qfile_ref = (SAMPLE_FILE, sample), SAMPLE_REF
            st.rerun()
    questions: list = []
    if session.qfile:
        name, data = session.qfile
        try:
            got, problem = read_questions(data, docs, name, skip_unloaded=True), None
            questions = list(got.questions)
            n = len(questions)
            st.caption(f"**{md(name)}**: {plural(n, 'question')}")
        except ExplorerError as err:
            got, problem = None, err
        if st.button("Use no question file", icon=":material/close:", key=W.QCLEAR, type="tertiary"):
            session.qfile, session.qfile_ref = None, ""
            st.rerun()
        if problem is not None:
            st.error(md(err_text(problem)), icon=":material/error:")
        elif got is not None and got.left_out:
            st.info(
                md(left_out_note(got.unloaded, then="Load them on Documents to score those too.")),
                icon=":material/info:",
            )
    _formats_help()
    return questions


def _formats_help() -> None:
    with st.expander("File formats", icon=":material/help:"):
        st.code(
            '{"question": "How often are filters backwashed?", "answer": "every 72 hours"}\n'
            '{"question": "...", "references": [{"document": "handbook.pdf", "start": 1200, "end": 1350}]}',
            language="json",
        )
        st.caption(
            "One JSON object per line (or a JSON list). An answer must occur exactly once in the "
            "loaded documents. Chroma's questions_df.csv (question, references, corpus_id) works as is."
        )


def kept_questions(docs: Sequence[Document]) -> list:
    """The questions kept on Retrieve that have a usable expected answer."""
    questions, skipped = [], []
    for item in session.questions:
        if not item["answer"]:
            skipped.append(item["question"])
            continue
        try:
            ref = answer_ref(item, docs, f"question {clip(item['question'], 40)!r}")
        except ExplorerError as err:
            st.warning(md(err_text(err)), icon=":material/help:")
            continue
        questions.append(Question(item["question"], (ref,)))
    if skipped:
        st.caption(f"{len(skipped)} kept question(s) have no expected answer and are left out.")
    if not session.questions:
        st.info("Keep questions (with their expected answers) on the **Retrieve** page, or load a file.")
    return questions


# -- the results --------------------------------------------------------------------------------
def stale_note(then: dict | None, now: dict, again: str) -> None:
    """Say so when results on the page were computed on other inputs than the page's now (the
    question file put away, a configuration added, top k moved…): they stay, marked."""
    changed = changed_inputs(then, now)
    if changed:
        st.warning(
            f"Computed before the {changed} changed: these results are for the earlier ones. {again}",
            icon=":material/history:",
        )


def results(results: list, meta: dict, now: dict, docs: Sequence[Document]) -> None:
    st.subheader("Results", anchor=False)
    stale_note(meta.get("inputs"), now, "Run the evaluation again to score the current ones.")
    nq = meta.get("questions", 0)
    st.caption(
        f"{plural(nq, 'question')} · top {meta.get('k', '?')} · "
        f"{RETRIEVER_LABELS.get(meta.get('retriever', 'dense'), 'dense')} retrieval · "
        + (f"{md(meta['embedded'])} · " if meta.get("embedded") else "")
        + "mean ± standard deviation, in %"
    )
    names = labels_for([r.config for r in results])
    quality, cost = [], []  # two tables: as one, its 14 columns needed a scroll at 1,500 pixels
    for r in results:
        name = {"configuration": names[r.config]}
        quality.append(name | {label: getattr(r.scores, m).pct() for m, label in METRICS.items()})
        sizes = {"chunks": r.chunk_count, "mean chars": round(r.mean_chars), "mean tokens": round(r.mean_tokens)}
        cost.append(name | sizes | (r.cost.cells() if getattr(r, "cost", None) is not None else {}))
    st.dataframe(sheet_safe(pd.DataFrame(quality)), hide_index=True, key=W.EVAL_TABLE)
    st.dataframe(sheet_safe(pd.DataFrame(cost)), hide_index=True, key=W.EVAL_COST)
    st.caption(COST_HELP.replace("top-k", f"top {meta.get('k', 'k')}") + " LLM tokens are averaged over the questions.")
    metric = st.segmented_control(
        "Chart", list(METRICS), default="recall", format_func=METRICS.get, key=W.EVAL_METRIC, required=True
    )
    st.plotly_chart(
        score_bars(results, metric, METRICS[metric], [names[r.config] for r in results]), key=W.EVAL_CHART
    )
    questions = (meta.get("inputs") or {}).get("questions") or ()
    if questions and all(len(r.scores.questions) == len(questions) for r in results):
        per_question(results, questions, [names[r.config] for r in results], docs)


def sweep_results(sw: dict, now: dict, not_swept: Sequence[StrategyConfig] = ()) -> None:
    """The sweep's curves, what they were run with, and the configurations without its parameter."""
    stale_note(sw.get("inputs"), now, "Run the sweep again for the current ones.")
    if not_swept:
        names = labels_for(list(not_swept))
        st.caption(
            f":material/block: Not swept: {md(', '.join(names[c] for c in not_swept))} (no {md(sw['param'])} "
            f"in {'its strategy' if len(not_swept) == 1 else 'their strategies'})."
        )
    charts = st.columns(2)
    units = line_units(sw["lines"], sw["param"])
    for col, metric in zip(charts, ("recall", "iou"), strict=True):
        col.plotly_chart(
            sweep_lines(sw["lines"], sw["param"], metric, METRICS[metric], units), key=W.SWEEP_CHART(metric)
        )
    embedded = f", {md(sw['embedded'])}" if sw.get("embedded") else ""
    k = sw.get("k", "k")  # the sweep's own: the sidebar's may have moved since
    st.caption(f"{RETRIEVER_LABELS.get(sw.get('retriever', 'dense'), 'Dense')} retrieval, top {k}{embedded}.")
    errors = [
        f"{label}: {r.param}={r.value}: {r.error}"
        for label, rows in sw["lines"].items()
        for r in rows
        if r.error
    ]
    for e in errors[:5]:
        st.caption(f":material/warning: {md(e)}")
    moved = [f"{label}: {said}" for label, rows in sw["lines"].items() for said in adjustments_said(rows)]
    for m in moved[:5]:  # a curve over one parameter that moved another is not that parameter's alone
        st.caption(f":material/tune: {md(m)}")
    if sw.get("stopped"):
        st.caption(":material/pause_circle: The sweep was stopped: the lines show the values scored before.")

