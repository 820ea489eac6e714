"""Evaluate: score every configuration on a set of questions with gold answers, and sweep a parameter."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from explorer import jobs
from explorer.errors import ExplorerError
from explorer.evaluation import evaluate as evaluate_mod
from pages import _common as c

S = st.session_state
CHART_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00")
METRICS = {
    "recall": "Recall",
    "precision": "Precision",
    "iou": "IoU",
    "precision_omega": "Precision Ω",
    "hit_rate": "Hit rate",
    "mrr": "MRR",
}

c.page_header(
    "Evaluate",
    "Score every configuration against questions with known answers, as in Chroma's chunking "
    "report: recall, precision and IoU in characters, for the top-k chunks.",
)
docs = c.documents()
if not docs:
    c.doc_picker()
    st.stop()
cfgs, k, options = c.retrieval_settings()
retriever = c.retriever_choice()

# -- questions ---------------------------------------------------------------------------------
kept = S.get("questions", [])
source = st.segmented_control(
    "Questions",
    ["Question file", f"Kept questions ({len(kept)})"],
    default="Question file" if not kept else f"Kept questions ({len(kept)})",
    key="w.eval_src",
    required=True,
)
questions: list = []
if source == "Question file":
    up = st.file_uploader(
        "Question file",
        type=["jsonl", "json", "csv"],
        key=f"w.qfile{S.get('qfile_gen', 0)}",
        help="JSONL of {question, references: [{document, start, end}]} or {question, answer}, "
        "or Chroma's questions_df.csv.",
    )
    if up is not None:
        S.qfile = (up.name, up.getvalue())
        S.qfile_gen = S.get("qfile_gen", 0) + 1
        st.rerun()
    if not S.get("qfile"):
        from explorer.documents.samples import sample_questions

        _sample = sample_questions({d.name for d in docs})
        _n = _sample.count(b"\n")
        if _n and st.button(
            f"Use the sample questions ({_n})",
            icon=":material/quiz:",
            key="w.qsample",
            help="Questions about the bundled samples, each with its answer quoted from the text.",
        ):
            S.qfile = ("sample-questions.jsonl", _sample)
            st.rerun()
    if S.get("qfile"):
        name, data = S.qfile
        try:
            questions = evaluate_mod.load_questions(data, docs, name)
            st.caption(f"**{c.md(name)}**: {len(questions):,} questions")
        except ExplorerError as err:
            st.error(c.err_text(err), icon=":material/error:")
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
else:
    skipped = []
    for item in kept:
        if not item["answer"]:
            skipped.append(item["question"])
            continue
        try:
            ref = c.answer_ref(item, docs, f"question {c.clip(item['question'], 40)!r}")
        except ExplorerError as err:
            st.warning(str(err), icon=":material/help:")
            continue
        questions.append(evaluate_mod.Question(item["question"], (ref,)))
    if skipped:
        st.caption(f"{len(skipped)} kept question(s) have no expected answer and are left out.")
    if not kept:
        st.info("Keep questions (with their expected answers) on the **Retrieve** page, or load a file.")

pairs = []
for cfg in cfgs:
    try:
        pairs.append(c.config_of(cfg))
    except ExplorerError as err:
        st.error(f"{c.config_label(cfg)}: {err}", icon=":material/error:")


def _embedder():
    try:
        return c.embedder()
    except ExplorerError as err:
        st.error(c.err_text(err), icon=":material/error:")
        return None


run = st.button(
    "Run evaluation",
    type="primary",
    icon=":material/play_arrow:",
    disabled=not questions or not pairs,
    key="w.eval_run",
    help="Runs in the background: the progress and a Stop button show at the top of the page.",
)
if run and (emb := _embedder()) is not None:
    make = c.context_maker(emb)
    _qs, _configs, _k, _retriever = tuple(questions), list(dict.fromkeys(pairs)), k, retriever

    def _evaluate(job):
        results = evaluate_mod.evaluate(
            docs,
            _configs,
            list(_qs),
            _k,
            make(job.progress),
            options,
            job.progress,
            job.step,
            retriever=_retriever,
        )
        return results, {"questions": len(_qs), "k": _k, "retriever": _retriever}

    c.start_job(
        "eval",
        ("eval", *c.index_key(docs, _configs, options), _qs, _k, _retriever),
        f"Evaluating {len(_configs)} configuration{'s' if len(_configs) != 1 else ''} on {len(_qs)} questions",
        _evaluate,
        emb=emb,
    )
_phase, _result = c.job_result("eval")
if _phase == jobs.DONE:
    S.eval_results, S.eval_meta = _result

results = S.get("eval_results")
if results:
    meta = S.get("eval_meta", {})
    st.subheader("Results", anchor=False)
    nq = meta.get("questions", 0)
    st.caption(
        f"{nq} question{'s' if nq != 1 else ''} · top {meta.get('k', '?')} · "
        f"{c.RETRIEVER_LABELS.get(meta.get('retriever', 'dense'), 'dense')} retrieval · "
        "mean ± standard deviation, in %"
    )
    rows = []
    for r in results:
        row = {"configuration": r.name}
        for m, label in METRICS.items():
            stat = getattr(r.scores, m)
            row[label] = stat.pct()
        row.update(
            chunks=r.chunk_count, **{"mean chars": round(r.mean_chars), "mean tokens": round(r.mean_tokens)}
        )
        rows.append(row)
    st.dataframe(pd.DataFrame(rows), hide_index=True, key="w.eval_table")
    metric = st.segmented_control(
        "Chart", list(METRICS), default="recall", format_func=METRICS.get, key="w.eval_metric", required=True
    )
    fig = go.Figure()
    for i, r in enumerate(results):
        stat = getattr(r.scores, metric)
        fig.add_trace(
            go.Bar(
                x=[r.name],
                y=[100 * stat.mean],
                error_y={"type": "data", "array": [100 * stat.std], "visible": True},
                marker_color=CHART_COLORS[i % len(CHART_COLORS)],
                name=r.name,
                text=[f"{100 * stat.mean:.1f}"],
                textposition="outside",
            )
        )
    fig.update_layout(
        yaxis_title=f"{METRICS[metric]} (%)",
        showlegend=False,
        height=380,
        margin={"t": 30, "b": 10, "l": 10, "r": 10},
    )
    st.plotly_chart(fig, key="w.eval_chart")

# -- sweep -----------------------------------------------------------------------------------
st.divider()
st.subheader("Sweep one parameter", anchor=False)
st.caption("Re-run the evaluation over a range of values: one line per configuration.")
from explorer.strategies import get_strategy  # noqa: E402

numeric = []
for config in pairs:
    for p in get_strategy(config.strategy).params:
        if p.type in ("int", "float") and p.name not in numeric:
            numeric.append(p.name)
if not numeric or not pairs:
    st.caption("The selected configurations have no numeric parameter to sweep.")
else:
    sc = st.columns([1, 1.4, 1], vertical_alignment="bottom")
    param = sc[0].selectbox(
        "Parameter",
        numeric,
        index=numeric.index("chunk_size") if "chunk_size" in numeric else 0,
        key="w.sweep_param",
    )
    spec = sc[1].text_input(
        "Values",
        value="200:1000:200",
        key="w.sweep_values",
        help="START:STOP:STEP (inclusive) or a list: 200,400,800.",
    )
    go_sweep = sc[2].button(
        "Run sweep",
        icon=":material/show_chart:",
        disabled=not questions,
        key="w.sweep_run",
        help="Runs in the background: the progress and a Stop button show at the top of the page.",
    )
    plans = []
    if go_sweep:
        for config in dict.fromkeys(pairs):
            if param not in get_strategy(config.strategy).param_names():
                continue
            try:
                plans.append((config, *evaluate_mod.parse_values(f"{param}={spec}", config.strategy)))
            except ExplorerError as err:
                st.error(c.err_text(err), icon=":material/error:")
                plans = []
                break
    if plans and (emb := _embedder()) is not None:
        make = c.context_maker(emb)
        _qs, _k, _retriever = tuple(questions), k, retriever

        def _sweep(job):
            """One value at a time, so that Stop keeps the values already scored (``job.partial``)."""
            lines: dict = {}
            job.partial = {"param": param, "lines": lines, "retriever": _retriever}
            total, n = sum(len(values) for _, _, values in plans), 0
            for config, name, values in plans:
                rows = lines.setdefault(config.display, [])
                for value in values:
                    n += 1
                    job.step(f"{config.display}: {name} = {value} ({n}/{total})")
                    rows.extend(
                        evaluate_mod.sweep(
                            docs,
                            config,
                            name,
                            [value],
                            list(_qs),
                            _k,
                            make(job.progress),
                            options,
                            job.progress,
                            retriever=_retriever,
                        )
                    )
            return job.partial

        n_values = sum(len(values) for _, _, values in plans)
        c.start_job(
            "sweep",
            ("sweep", *c.index_key(docs, [p[0] for p in plans], options), param, spec, _qs, _k, _retriever),
            f"Sweep of {param} ({n_values} runs)",
            _sweep,
            emb=emb,
        )
    _phase, _result = c.job_result("sweep")
    if _phase == jobs.DONE or (_phase == jobs.STOPPED and _result and any(_result["lines"].values())):
        S.sweep_results = dict(_result, stopped=_phase == jobs.STOPPED)
    sw = S.get("sweep_results")
    if sw and sw["lines"]:
        charts = st.columns(2)
        for col, metric in zip(charts, ("recall", "iou"), strict=True):
            fig = go.Figure()
            for i, (label, rows) in enumerate(sw["lines"].items()):
                ok = [r for r in rows if r.result is not None]
                fig.add_trace(
                    go.Scatter(
                        x=[r.value for r in ok],
                        y=[100 * getattr(r.result.scores, metric).mean for r in ok],
                        mode="lines+markers",
                        name=label,
                        line={"color": CHART_COLORS[i % len(CHART_COLORS)]},
                    )
                )
            fig.update_layout(
                xaxis_title=sw["param"],
                yaxis_title=f"{METRICS[metric]} (%)",
                height=360,
                margin={"t": 30, "b": 10, "l": 10, "r": 10},
                legend={"orientation": "h", "y": -0.3},
            )
            col.plotly_chart(fig, key=f"w.sweep_{metric}")
        st.caption(f"{c.RETRIEVER_LABELS.get(sw.get('retriever', 'dense'), 'Dense')} retrieval, top {k}.")
        errors = [
            f"{label}: {r.param}={r.value}: {r.error}"
            for label, rows in sw["lines"].items()
            for r in rows
            if r.error
        ]
        for e in errors[:5]:
            st.caption(f":material/warning: {c.md(e)}")
        if sw.get("stopped"):
            st.caption(
                ":material/pause_circle: The sweep was stopped: the lines show the values scored before."
            )

c.job_bar()
