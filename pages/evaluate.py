"""Evaluate: score every configuration on a set of questions with gold answers, and sweep a parameter."""

from __future__ import annotations

import streamlit as st

from explorer import jobs
from explorer.errors import ExplorerError
from explorer.strategies import get_strategy
from pages.ui import eval_jobs, evaluation
from pages.ui.background import job_bar, job_result, running, waiting
from pages.ui.configs import config_label, user_set_of, valid_configs
from pages.ui.frame import page_header
from pages.ui.model import embedder
from pages.ui.safe import err_text, md
from pages.ui.settings import retrieval_settings, retriever_choice
from pages.ui.state import W, session
from pages.ui.widgets import documents_or_stop

page_header(
    "Evaluate",
    "Score every configuration against questions with known answers, as in Chroma's chunking "
    "report: recall, precision and IoU in characters, for the top-k chunks.",
)
docs = documents_or_stop()
cfgs, k, options = retrieval_settings()

kept = session.questions
source = st.segmented_control(
    "Questions",
    ["Question file", f"Kept questions ({len(kept)})"],
    default="Question file" if not kept or session.eval_source == "file" else f"Kept questions ({len(kept)})",
    key=W.EVAL_SRC,
    required=True,
)
if source == "Question file":
    questions = evaluation.file_questions(docs)
else:
    questions = evaluation.kept_questions(docs)
valid = valid_configs(
    cfgs, lambda cfg, _i, err: st.error(f"{md(config_label(cfg))}: {md(err_text(err))}", icon=":material/error:")
)
pairs = [config for _, config in valid]
user_sets = {config: frozenset(user_set_of(cfg)) for cfg, config in valid}
run = eval_jobs.Run(docs, questions, k, options, retriever_choice(), user_sets)


def _embedder():
    try:
        return embedder()
    except ExplorerError as err:
        st.error(md(err_text(err)), icon=":material/error:")
        return None


eval_jobs.run_linked(run, pairs, questions, _embedder)
if (
    st.button(
        "Run evaluation",
        type="primary",
        icon=":material/play_arrow:",
        disabled=not questions or not pairs,
        key=W.EVAL_RUN,
        help="Runs in the background: the progress and a Stop button show at the top of the page.",
    )
    and (emb := _embedder()) is not None
):
    session.eval_source = "file" if source == "Question file" else "kept"
    run.start_evaluation(list(dict.fromkeys(pairs)), emb)
phase, result = job_result("eval")
if busy := running("eval"):
    waiting(busy, "The scores")
if phase == jobs.DONE:
    session.eval_results, session.eval_meta = result
if session.eval_results:
    evaluation.results(session.eval_results, session.eval_meta, run.inputs(pairs), docs)

# -- sweep -----------------------------------------------------------------------------------
st.divider()
st.subheader("Sweep one parameter", anchor=False)
st.caption("Re-run the evaluation over a range of values: one line per configuration.")
numeric = eval_jobs.numeric_params(pairs)
if not numeric or not pairs:
    st.caption("The selected configurations have no numeric parameter to sweep.")
else:
    sc = st.columns([1, 1.4, 1], vertical_alignment="bottom")
    param = sc[0].selectbox(
        "Parameter",
        numeric,
        index=numeric.index("chunk_size") if "chunk_size" in numeric else 0,
        key=W.SWEEP_PARAM,
        on_change=lambda: eval_jobs.suggest_sweep_values(pairs, session.widget(W.SWEEP_PARAM), force=True),
    )
    eval_jobs.suggest_sweep_values(pairs, param)
    spec = sc[1].text_input(
        "Values",
        session.shown(W.SWEEP_VALUES),
        key=W.SWEEP_VALUES,
        help="START:STOP:STEP (inclusive) or a list: 200,400,800. Filled in with values around the "
        "configurations' own, valid for each of them.",
    )
    go_sweep = sc[2].button(
        "Run sweep",
        icon=":material/show_chart:",
        disabled=not questions,
        key=W.SWEEP_RUN,
        help="Runs in the background: the progress and a Stop button show at the top of the page.",
    )
    plans = eval_jobs.sweep_plans(pairs, param, spec, user_sets=run.user_sets) if go_sweep else []
    if plans and (emb := _embedder()) is not None:
        session.eval_source = "file" if source == "Question file" else "kept"
        run.start_sweep(plans, param, spec, emb)
    phase, result = job_result("sweep")
    if busy := running("sweep"):
        waiting(busy, "The sweep's curves")
    if phase == jobs.DONE or (phase == jobs.STOPPED and result and any(result["lines"].values())):
        session.sweep_results = dict(result, stopped=phase == jobs.STOPPED)
    sw = session.sweep_results
    if sw and sw["lines"]:
        swept = [c for c in pairs if sw["param"] in get_strategy(c.strategy).param_names()]
        evaluation.sweep_results(sw, run.inputs(swept, parameter=sw["param"]), [c for c in pairs if c not in swept])

eval_jobs.rerun_for_linked()
now = {"eval": run.inputs(pairs)}  # a stopped job on other inputs is not offered to resume
if numeric and pairs:
    now["sweep"] = run.inputs([c for c in pairs if param in get_strategy(c.strategy).param_names()], parameter=param)
job_bar(now=now)
