"""Retrieve: ask a question, see each configuration's top-k chunks side by side."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from explorer import evaluate
from explorer.errors import ExplorerError
from explorer.render import CSS, render_snippet
from pages import _common as c

S = st.session_state

c.page_header(
    "Retrieve",
    "Ask a question: every configuration gets its own FAISS index over all loaded documents, "
    "and shows its top-k chunks. Paste the expected answer to score them.",
)
docs = c.documents()
if not docs:
    c.doc_picker()
    st.stop()
cfgs, k, options = c.retrieval_settings()
S.setdefault("questions", [])

for _k, _f in (("w.question", "question"), ("w.answer", "answer")):
    if _k not in S:
        S[_k] = (S.get("ret_query") or {}).get(_f, "")


def _ask(item: dict) -> None:
    S.ret_query = dict(item)
    S["w.question"], S["w.answer"] = item["question"], item["answer"]


with st.form("w.ret_form", border=False):
    q = st.text_input(
        "Question",
        placeholder="e.g. How often are the filters backwashed?",
        key="w.question",
    )
    a = st.text_area(
        "Expected answer (optional)",
        height=80,
        placeholder="Paste the exact passage of the document that answers the question.",
        key="w.answer",
    )
    with st.container(horizontal=True):
        search = st.form_submit_button("Search", type="primary", icon=":material/search:")
        keep = st.form_submit_button(
            "Keep the question",
            icon=":material/bookmark_add:",
            help="Search, and add the question (with its expected answer) to the list below and to Evaluate.",
        )
if search or keep:
    if not q.strip():
        st.warning("Type a question first.", icon=":material/edit:")
    else:
        S.ret_query = {"question": q.strip(), "answer": a.strip()}
        if keep and not any(x["question"] == q.strip() for x in S.questions):
            S.questions.append(dict(S.ret_query))

docs_by_id = {d.id: d for d in docs}


def _configs() -> list[tuple[dict, object]]:
    out = []
    for cfg in cfgs:
        try:
            out.append((cfg, c.config_of(cfg)))
        except ExplorerError as err:
            st.error(f"{c.config_label(cfg)}: {err}", icon=":material/error:")
    return out


def _indexes(pairs) -> dict:
    """One index per configuration (the core caches them; embedding shows progress once)."""
    from explorer.retrieval import get_index

    out = {}
    for i, (cfg, config) in enumerate(pairs):
        bar = c.EmbedProgress(f"Indexing {config.display} ({i + 1}/{len(pairs)})")
        try:
            out[cfg["id"]] = get_index(docs, config, c.context(bar, with_embedder=True), options, bar)
        except ExplorerError as err:
            out[cfg["id"]] = str(err)
        finally:
            bar.close()
    return out


def _answer_ref(answer: str):
    if not answer:
        return None, ""
    try:
        return evaluate.locate_answer(answer, docs, "expected answer"), ""
    except ExplorerError as err:
        return None, str(err)


query = S.get("ret_query")
if query:
    from explorer.metrics import retrieval_scores

    pairs = _configs()
    ref, ref_error = _answer_ref(query["answer"])
    if ref_error:
        st.warning(ref_error, icon=":material/help:")
    indexes = _indexes(pairs)
    st.html(CSS)
    per_row = 2 if len(pairs) == 4 else max(1, min(3, len(pairs)))
    for start in range(0, len(pairs), per_row):
        cols = st.columns(per_row, gap="medium")
        for col, (cfg, config) in zip(cols, pairs[start : start + per_row], strict=False):
            with col:
                st.markdown(f"**{c.md(config.display)}**")
                idx = indexes[cfg["id"]]
                if isinstance(idx, str):
                    st.error(idx, icon=":material/error:")
                    continue
                try:
                    hits = idx.search(query["question"], k)
                except ExplorerError as err:
                    st.error(str(err))
                    continue
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
    if st.button("Run all kept questions", icon=":material/replay:", key="w.q.runall"):
        from explorer.metrics import retrieval_scores

        pairs = _configs()
        indexes = _indexes(pairs)
        records = []
        for item in S.questions:
            ref, _ = _answer_ref(item["answer"])
            for cfg, config in pairs:
                idx = indexes[cfg["id"]]
                if isinstance(idx, str):
                    continue
                hits = idx.search(item["question"], k)
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
