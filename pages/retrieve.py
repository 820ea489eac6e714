"""Retrieve: ask a question, see each configuration's top-k chunks side by side."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from explorer import jobs
from explorer.errors import ExplorerError
from explorer.evaluation.questions import Question, questions_to_jsonl
from explorer.render.html import CSS
from explorer.text.wording import plural
from pages.ui import score_tables, search
from pages.ui.background import background, job_bar, job_result, start_job, waiting
from pages.ui.configs import config_label, valid_configs
from pages.ui.frame import WRAP_KEY, page_header
from pages.ui.gold import answer_problem
from pages.ui.model import embedder
from pages.ui.safe import clip, err_text, md, sheet_safe
from pages.ui.settings import retrieval_settings, retriever_choice
from pages.ui.state import W, session
from pages.ui.widgets import documents_or_stop

page_header(
    "Retrieve",
    "Ask a question: every configuration gets its own FAISS index over all loaded documents, "
    "and shows its top-k chunks. Type the expected answer, or select it in the text, to score them.",
)
docs = documents_or_stop()
cfgs, k, options = retrieval_settings()
finder = search.Search(docs, options, k, retriever_choice())
search.seed_boxes()


def _configs() -> list:
    def complain(cfg, _i, err) -> None:
        st.error(f"{md(config_label(cfg))}: {md(err_text(err))}", icon=":material/error:")

    return valid_configs(cfgs, complain)


q = st.text_input(
    "Question",
    session.shown(W.QUESTION),
    placeholder="e.g. How often are the filters backwashed?",
    key=W.QUESTION,
    on_change=search.submit,
    args=(docs,),
)
st.text_area(
    "Expected answer (optional)",
    session.shown(W.ANSWER),
    height=80,
    placeholder="Paste the passage of the document that answers the question (line breaks and "
    "hyphens at line ends do not matter), or select it in the text below.",
    key=W.ANSWER,
    on_change=search.submit,
    args=(docs,),
)
with st.container(horizontal=True):
    asked = st.button(
        "Search", type="primary", icon=":material/search:", on_click=search.submit, args=(docs,), key=W.SEARCH
    )
    kept = st.button(
        "Keep the question",
        icon=":material/bookmark_add:",
        help="Search, and add the question (with its expected answer) to the list below and to Evaluate.",
        on_click=search.keep,
        args=(docs,),
        key=W.KEEP,
    )
mark = search.mark_ref(session.widget(W.ANSWER) or "", docs)
mark_line = st.container()  # always there, so the expander below keeps its place (and state)
if mark:
    marked = next(d for d in docs if d.id == mark[0])
    mark_line.caption(
        f":material/flag: Expected answer: the place you chose, characters {mark[1]:,}–{mark[2]:,} "
        f"of **{md(marked.name)}**."
    )
with st.expander("Select the expected answer in the text", icon=":material/ink_highlighter:"):
    search.answer_picker(docs, mark, lambda: search.submit(docs))
    st.caption(
        "Select the passage that answers the question: it becomes the expected answer with its "
        "exact offsets (a passage that occurs twice is told apart), and the results below are "
        "scored against it."
    )
if (asked or kept) and not q.strip():
    st.warning("Type a question first.", icon=":material/edit:")

query = session.ret_query
if query:
    pairs = _configs()
    ref, ref_error = search.item_ref(query, docs)
    if ref_error:  # with the places to pick from when the answer occurs several times
        answer_problem(query, docs, ref_error)
    configs = list(dict.fromkeys(config for _, config in pairs))
    try:
        emb = embedder()
        phase, found = background(
            "search",
            finder.key("search", configs, [query["question"]]),
            f"Searching {plural(len(configs), 'configuration')}",
            finder.work(configs, [query["question"]], emb, keyword_first=True),
            emb=emb,
            replace=bool(session.take("ret_new")),
        )
    except ExplorerError as err:
        st.error(md(err_text(err)), icon=":material/error:")
        phase, found = jobs.FAILED, None
    found, stand_ins = search.split_found(found)  # keyword hits stand in until a config's own come
    if phase != jobs.DONE:
        what = f"The {finder.retriever} results" if stand_ins else "The results"
        waiting(phase, "The other configurations' results" if found else what)
        pairs = [(cfg, config) for cfg, config in pairs if config in found or config in stand_ins]
    st.html(CSS)
    score_tables.cost_table(pairs, found, ref, k, finder.retriever)
    per_row = 2 if len(pairs) == 4 else max(1, min(3, len(pairs)))
    wrap = st.container(key=WRAP_KEY)  # in a narrow window the columns wrap under each other
    for start in range(0, len(pairs), per_row):
        for col, (cfg, config) in zip(
            wrap.columns(per_row, gap="medium"), pairs[start : start + per_row], strict=False
        ):
            with col:
                res = found.get(config) or stand_ins[config]
                stand_in = config not in found
                search.hits_column(
                    cfg["id"], config, res, ref, docs, finder.retriever, stand_in, query["question"], per_row
                )

# -- kept questions --------------------------------------------------------------------------
st.divider()
st.subheader("Kept questions", anchor=False)
if not session.questions:
    st.caption("Questions you keep are listed here, to re-run after changing parameters (and on Evaluate).")
else:
    for i, item in enumerate(list(session.questions)):
        row = st.columns([0.8, 0.1, 0.1], vertical_alignment="center")
        answer = f"  \n:gray[answer: {md(clip(item['answer'], 100))}]" if item["answer"] else ""
        row[0].markdown(f"{i + 1}. {md(item['question'])}{answer}")
        row[1].button(
            "Ask",
            key=W.ASK_KEPT(i),
            icon=":material/search:",
            type="tertiary",
            on_click=search.ask,
            args=(item,),
        )
        row[2].button(
            "Remove",
            key=W.REMOVE_KEPT(i),
            icon=":material/delete:",
            type="tertiary",
            on_click=lambda i=i: session.questions.pop(i),
        )
    gold, missing = [], 0
    for item in session.questions:
        ref, _ = search.item_ref(item, docs)
        if ref is None:
            missing += 1
        else:
            gold.append(Question(item["question"], (ref,)))
    with st.container(horizontal=True, vertical_alignment="center"):
        run_all = st.button("Run all kept questions", icon=":material/replay:", key=W.Q_RUNALL)
        if gold:
            st.download_button(
                "Download as a question file",
                data=questions_to_jsonl(gold, docs),
                file_name="questions.jsonl",
                mime="application/jsonl",
                icon=":material/download:",
                key=W.Q_DOWNLOAD,
                on_click="ignore",
                help="JSONL with each answer's document, exact offsets and text: "
                "`python -m explorer evaluate --questions questions.jsonl` and Evaluate read it.",
            )
        if missing:
            st.caption(f"{missing} without a usable expected answer (none, or ambiguous): not in the file.")
    if run_all:
        configs = list(dict.fromkeys(config for _, config in _configs()))
        questions = [item["question"] for item in session.questions]
        try:
            emb = embedder()
            work = finder.work(configs, questions, emb)
            start_job(
                "batch",
                finder.key("batch", configs, questions),
                f"Running {plural(len(questions), 'kept question')}",
                lambda job, questions=questions, work=work: (questions, work(job)),
                emb=emb,
            )
        except ExplorerError as err:
            st.error(md(err_text(err)), icon=":material/error:")
    phase, result = job_result("batch")
    if phase == jobs.DONE:
        session.ret_batch = score_tables.batch_records(*result, docs)
    if session.ret_batch:
        st.dataframe(sheet_safe(pd.DataFrame(session.ret_batch)), hide_index=True, column_config=score_tables.batch_columns(), placeholder="—", key=W.Q_TABLE)

job_bar()
