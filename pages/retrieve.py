"""Retrieve: ask a question, see each configuration's top-k chunks side by side."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from explorer import jobs
from explorer.errors import Cancelled, ExplorerError
from explorer.evaluation.evaluate import Question, questions_to_jsonl
from explorer.render.html import CSS, MAX_RENDER_CHARS, render_chunks, render_snippet
from pages import _common as c
from pages._textview import text_view

S = st.session_state

c.page_header(
    "Retrieve",
    "Ask a question: every configuration gets its own FAISS index over all loaded documents, "
    "and shows its top-k chunks. Type the expected answer, or select it in the text, to score them.",
)
docs = c.documents()
if not docs:
    c.doc_picker()
    st.stop()
cfgs, k, options = c.retrieval_settings()
retriever = c.retriever_choice()
S.setdefault("questions", [])
docs_by_id = {d.id: d for d in docs}

for _k, _f in (("w.question", "question"), ("w.answer", "answer")):
    if _k not in S:
        S[_k] = (S.get("ret_query") or {}).get(_f, "")
_pending = S.pop("ret_pending", None)  # an answer selected on Explore
if _pending:
    S["w.answer"], S.ret_mark = _pending["answer"], _pending["ref"]


def _ask(item: dict) -> None:
    S.ret_query = dict(item)
    S.ret_new = True  # the user asked: this search may replace the session's running job
    S["w.question"], S["w.answer"] = item["question"], item["answer"]
    S.ret_mark = item.get("ref")


def _mark_ref(answer: str) -> list | None:
    """The selected span, if the answer box still holds its text."""
    mark = S.get("ret_mark")
    return list(mark) if c.holds(mark, answer, docs) else None


def _submit() -> None:
    """Search with what the boxes hold now (no form: a form would send back what was typed
    before an answer was selected in the text)."""
    question = (S.get("w.question") or "").strip()
    if question:
        answer = S.get("w.answer") or ""
        S.ret_query = {"question": question, "answer": answer.strip(), "ref": _mark_ref(answer)}
        S.ret_new = True


def _keep() -> None:
    _submit()
    query, question = S.get("ret_query"), (S.get("w.question") or "").strip()
    if query and query["question"] == question and all(x["question"] != question for x in S.questions):
        S.questions.append(dict(query))


q = st.text_input(
    "Question",
    placeholder="e.g. How often are the filters backwashed?",
    key="w.question",
    on_change=_submit,
)
a = st.text_area(
    "Expected answer (optional)",
    height=80,
    placeholder="Paste the exact passage of the document that answers the question, or select it "
    "in the text below.",
    key="w.answer",
    on_change=_submit,
)
with st.container(horizontal=True):
    search = st.button("Search", type="primary", icon=":material/search:", on_click=_submit, key="w.search")
    keep = st.button(
        "Keep the question",
        icon=":material/bookmark_add:",
        help="Search, and add the question (with its expected answer) to the list below and to Evaluate.",
        on_click=_keep,
        key="w.keep",
    )
_mark = _mark_ref(S.get("w.answer", ""))
_mark_line = st.container()  # always there, so the expander below keeps its place (and state)
if _mark:
    _md = docs_by_id[_mark[0]]
    _mark_line.caption(
        f":material/flag: Expected answer: the span you selected, characters {_mark[1]:,}–{_mark[2]:,} "
        f"of **{c.md(_md.name)}**."
    )
with st.expander("Select the expected answer in the text", icon=":material/ink_highlighter:"):
    _names = {d.id: d.name for d in docs}
    _default = _mark[0] if _mark else docs[0].id
    if len(docs) > 1:
        _doc_id = st.selectbox(
            "Document",
            list(_names),
            index=list(_names).index(_default),
            format_func=lambda i: _names[i],
            key="w.mark_doc",
        )
    else:
        _doc_id = docs[0].id
    _doc = docs_by_id[_doc_id]
    _lo = 0
    if len(_doc.text) > MAX_RENDER_CHARS:
        _around = _mark[1] if _mark and _mark[0] == _doc_id else 0
        _lo = st.slider(
            "From character",
            0,
            max(0, len(_doc.text) - MAX_RENDER_CHARS // 2),
            max(0, _around - 2_000),
            step=1_000,
            key=f"w.mark_lo.{_doc_id}",
            help=f"The text is shown {MAX_RENDER_CHARS:,} characters at a time.",
        )

    def _on_select(start: int, end: int, doc_id: str = _doc_id) -> None:
        S.ret_mark = [doc_id, start, end]
        S["w.answer"] = docs_by_id[doc_id].text[start:end]
        _submit()

    _marks = [(_mark[1], _mark[2])] if _mark and _mark[0] == _doc_id else []
    text_view(
        render_chunks(_doc.text, [], lo=_lo, marks=_marks, height=360, interactive=True, show_index=False),
        key="w.mark_text",
        view=f"{_doc_id}:{_lo}",
        text=_doc.text,
        on_select=_on_select,
    )
    st.caption(
        "Select the passage that answers the question: it becomes the expected answer with its "
        "exact offsets (a passage that occurs twice is told apart), and the results below are "
        "scored against it."
    )

if (search or keep) and not q.strip():
    st.warning("Type a question first.", icon=":material/edit:")


def _configs() -> list[tuple[dict, object]]:
    out = []
    for cfg in cfgs:
        try:
            out.append((cfg, c.config_of(cfg)))
        except ExplorerError as err:
            st.error(f"{c.config_label(cfg)}: {err}", icon=":material/error:")
    return out


def _search_work(configs: list, questions: list[str], emb):
    """Work for the background job (or its inline try): every configuration's index (the core
    caches them), and each question's top k in it. ``{config: (index, hits per question) or
    the error message}``. Runs off the script thread: no ``st`` and no session state here."""
    make = c.context_maker(emb)
    k_, retriever_ = k, retriever

    def work(job) -> dict:
        out: dict = {}

        def answer(config, idx) -> None:  # each configuration's hits as soon as its index is ready
            if isinstance(idx, str):
                out[config] = idx
            else:
                try:
                    out[config] = (idx, idx.search_many(questions, k_, progress=job.progress, retriever=retriever_))
                except Cancelled:
                    raise
                except ExplorerError as err:
                    out[config] = c.err_text(err)
            job.partial = dict(out)

        c.index_all(job, docs, configs, options, make, retriever_, on_index=answer)
        return out

    return work


def _search_key(kind: str, configs: list, questions: list[str]) -> tuple:
    return (kind, *c.index_key(docs, configs, options), tuple(questions), k, retriever)


def _answer_ref(item: dict):
    if not item.get("answer"):
        return None, ""
    try:
        return c.answer_ref(item, docs), ""
    except ExplorerError as err:
        return None, str(err)


query = S.get("ret_query")
if query:
    from explorer.evaluation.metrics import retrieval_scores

    pairs = _configs()
    ref, ref_error = _answer_ref(query)
    if ref_error:
        st.warning(ref_error, icon=":material/help:")
    configs = list(dict.fromkeys(config for _, config in pairs))
    try:
        emb = c.embedder()
        phase, found = c.background(
            "search",
            _search_key("search", configs, [query["question"]]),
            f"Searching {len(configs)} configuration{'s' if len(configs) != 1 else ''}",
            _search_work(configs, [query["question"]], emb),
            emb=emb,
            replace=bool(S.pop("ret_new", False)),
        )
    except ExplorerError as err:
        st.error(c.err_text(err), icon=":material/error:")
        phase, found = jobs.FAILED, None
    if phase != jobs.DONE:
        c.waiting(phase, "The results" if not found else "The other configurations' results")
        pairs = [(cfg, config) for cfg, config in pairs if found and config in found]
    st.html(CSS)
    per_row = 2 if len(pairs) == 4 else max(1, min(3, len(pairs)))
    for start in range(0, len(pairs), per_row):
        cols = st.columns(per_row, gap="medium")
        for col, (cfg, config) in zip(cols, pairs[start : start + per_row], strict=False):
            with col:
                st.markdown(f"**{c.md(config.display)}**")
                res = found[config]
                if isinstance(res, str):
                    st.error(res, icon=":material/error:")
                    continue
                idx, (hits,) = res
                if ref is not None:
                    sc = retrieval_scores([ref], [(h.chunk.doc_id, h.chunk.start, h.chunk.end) for h in hits])
                    first = f"rank {round(1 / sc.rr)}" if sc.rr else "not retrieved"
                    st.caption(f"Recall **{sc.recall:.0%}** · IoU **{sc.iou:.1%}** · first hit: **{first}**")
                st.caption(f"{len(idx):,} chunks indexed")
                for h in hits:
                    ch = h.chunk
                    doc = docs_by_id.get(ch.doc_id)
                    with st.container(border=True):
                        page = f" · p. {ch.pages[0]}" if ch.pages else ""
                        st.markdown(
                            f"**#{h.rank}** · score **{h.score:.3f}**  \n"
                            f":gray[{c.md(c.clip(ch.doc_name, 40))} · chunk {ch.index} · {ch.start:,}–{ch.end:,}{page}]"
                        )
                        marks = []
                        if ref is not None and ref[0] == ch.doc_id:
                            s, e = max(ref[1], ch.start), min(ref[2], ch.end)
                            if e > s:
                                marks.append((s, e))
                        c.html(
                            render_snippet(
                                doc.text, ch.start, ch.end, marks=marks, max_chars=1200, height=180
                            )
                        )
                        st.button(
                            "Show in Explore",
                            key=f"w.goto.{cfg['id']}.{h.rank}",
                            icon=":material/open_in_new:",
                            type="tertiary",
                            on_click=c.show_in_explore,
                            args=(ch.doc_id, cfg["id"], ch.index),
                        )

# -- kept questions --------------------------------------------------------------------------
st.divider()
st.subheader("Kept questions", anchor=False)
if not S.questions:
    st.caption("Questions you keep are listed here, to re-run after changing parameters (and on Evaluate).")
else:
    for i, item in enumerate(list(S.questions)):
        row = st.columns([0.8, 0.1, 0.1], vertical_alignment="center")
        answer = f"  \n:gray[answer: {c.md(c.clip(item['answer'], 100))}]" if item["answer"] else ""
        row[0].markdown(f"{i + 1}. {c.md(item['question'])}{answer}")
        row[1].button(
            "Ask", key=f"w.q.ask.{i}", icon=":material/search:", type="tertiary", on_click=_ask, args=(item,)
        )
        row[2].button(
            "Remove",
            key=f"w.q.rm.{i}",
            icon=":material/delete:",
            type="tertiary",
            on_click=lambda i=i: S.questions.pop(i),
        )
    _gold, _missing = [], 0
    for item in S.questions:
        ref, _ = _answer_ref(item)
        if ref is None:
            _missing += 1
        else:
            _gold.append(Question(item["question"], (ref,)))
    with st.container(horizontal=True, vertical_alignment="center"):
        run_all = st.button("Run all kept questions", icon=":material/replay:", key="w.q.runall")
        if _gold:
            st.download_button(
                "Download as a question file",
                data=questions_to_jsonl(_gold, docs),
                file_name="questions.jsonl",
                mime="application/jsonl",
                icon=":material/download:",
                key="w.q.download",
                on_click="ignore",
                help="JSONL with each answer's document, exact offsets and text: "
                "`python -m explorer evaluate --questions questions.jsonl` and Evaluate read it.",
            )
        if _missing:
            st.caption(f"{_missing} without a usable expected answer (none, or ambiguous): not in the file.")
    if run_all:
        pairs = _configs()
        configs = list(dict.fromkeys(config for _, config in pairs))
        asked = [item["question"] for item in S.questions]
        try:
            emb = c.embedder()
            _work = _search_work(configs, asked, emb)
            c.start_job(
                "batch",
                _search_key("batch", configs, asked),
                f"Running {len(asked)} kept question{'s' if len(asked) != 1 else ''}",
                lambda job, asked=asked, work=_work: (asked, work(job)),
                emb=emb,
            )
        except ExplorerError as err:
            st.error(c.err_text(err), icon=":material/error:")
    phase, result = c.job_result("batch")
    if phase == jobs.DONE:
        from explorer.evaluation.metrics import retrieval_scores

        asked, found = result
        records = []
        for item in S.questions:
            if item["question"] not in asked:
                continue
            qi = asked.index(item["question"])
            ref, _ = _answer_ref(item)
            for config, res in found.items():
                if isinstance(res, str):
                    continue
                hits = res[1][qi]
                rec = {
                    "question": c.clip(item["question"], 70),
                    "configuration": config.display,
                    "top score": round(hits[0].score, 3) if hits else None,
                }
                if ref is not None:
                    sc = retrieval_scores([ref], [(h.chunk.doc_id, h.chunk.start, h.chunk.end) for h in hits])
                    rec.update(
                        {
                            "recall %": round(100 * sc.recall, 1),
                            "IoU %": round(100 * sc.iou, 1),
                            "first hit": round(1 / sc.rr) if sc.rr else None,
                        }
                    )
                records.append(rec)
        S.ret_batch = records
    if S.get("ret_batch"):
        st.dataframe(pd.DataFrame(S.ret_batch), hide_index=True, key="w.q.table")

c.job_bar()
