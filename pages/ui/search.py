"""The pieces of Retrieve: the question boxes, the search job, each configuration's hits.

A search is a background job's work: every configuration's index (cached) and each question's top k.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from explorer.documents.document import Document
from explorer.errors import Cancelled, ExplorerError
from explorer.evaluation.cost import preload_llm_counter
from explorer.render.html import render_chunks
from explorer.render.layout import MAX_RENDER_CHARS
from explorer.render.snippet import fold_start, render_snippet, shown_span
from explorer.retrieval.lexical import matched_spans
from explorer.strategies.config import StrategyConfig
from explorer.text.wording import percent, plural
from pages.ui.compute import index_all, index_key
from pages.ui.configs import config_labels, labels_for
from pages.ui.evidence import HUB_HELP, answer_note, best_pieces, evidence_line
from pages.ui.gold import answer_ref, holds, show_in_explore
from pages.ui.model import context_maker
from pages.ui.safe import clip, err_text, md
from pages.ui.state import W, session
from pages.ui.textview import text_view


# -- the question and its expected answer ---------------------------------------------------
def seed_boxes() -> None:
    """The question boxes show the last search (once), or the answer selected on Explore, which
    then scores the question shown (its hits were shown for another answer)."""
    for key, field in ((W.QUESTION, "question"), (W.ANSWER, "answer")):
        if not session.has_widget(key):
            session.seed(key, (session.ret_query or {}).get(field, ""))
    pending = session.take("ret_pending")  # an answer selected on Explore or in the text below
    if pending:
        session.seed(W.ANSWER, pending["answer"])
        session.ret_mark = pending["ref"]
        if session.ret_query:  # the hits shown are scored against it at once (no new search)
            session.ret_query = {**session.ret_query, "answer": pending["answer"], "ref": list(pending["ref"])}


def mark_ref(answer: str, docs: Sequence[Document]) -> list | None:
    """The selected span, if the answer box still holds its text."""
    mark = session.ret_mark
    return list(mark) if holds(mark, answer, docs) else None


def submit(docs: Sequence[Document]) -> None:
    """Search with what the boxes hold now (no form: a form would send back what was typed
    before an answer was selected in the text)."""
    question = (session.widget(W.QUESTION) or "").strip()
    if question:
        answer = session.widget(W.ANSWER) or ""
        session.ret_query = {"question": question, "answer": answer.strip(), "ref": mark_ref(answer, docs)}
        session.ret_new = True


def keep(docs: Sequence[Document]) -> None:
    """Search, and keep the question (with its expected answer) unless it is kept already."""
    submit(docs)
    query, question = session.ret_query, (session.widget(W.QUESTION) or "").strip()
    if query and query["question"] == question and all(x["question"] != question for x in session.questions):
        session.questions.append(dict(query))


def ask(item: dict) -> None:
    """Callback: search a kept question again."""
    session.ret_query = dict(item)
    session.ret_new = True  # the user asked: this search may replace the session's running job
    session.seed(W.QUESTION, item["question"])
    session.seed(W.ANSWER, item["answer"])
    session.ret_mark = item.get("ref")


def answer_picker(docs: Sequence[Document], mark: list | None, on_submit: Callable[[], None]) -> None:
    """A document's text in which selecting a passage makes it the expected answer."""
    by_id = {d.id: d for d in docs}
    default = mark[0] if mark else docs[0].id
    doc_id = docs[0].id
    if len(docs) > 1:
        doc_id = st.selectbox(
            "Document",
            list(by_id),
            index=list(by_id).index(default),
            format_func=lambda i: by_id[i].name,
            key=W.MARK_DOC,
        )
    doc = by_id[doc_id]
    lo = 0
    if len(doc.text) > MAX_RENDER_CHARS:
        around = mark[1] if mark and mark[0] == doc_id else 0
        lo = st.slider(
            "From character",
            0,
            max(0, len(doc.text) - MAX_RENDER_CHARS // 2),
            max(0, around - 2_000),
            step=1_000,
            key=W.MARK_LO(doc_id),
            help=f"The text is shown {MAX_RENDER_CHARS:,} characters at a time.",
        )

    def on_select(start: int, end: int) -> None:
        session.ret_mark = [doc_id, start, end]
        session.seed(W.ANSWER, doc.text[start:end])
        on_submit()

    marks = [(mark[1], mark[2])] if mark and mark[0] == doc_id else []
    text_view(
        render_chunks(doc.text, [], lo=lo, marks=marks, height=360, interactive=True, show_index=False),
        key=W.MARK_TEXT,
        view=f"{doc_id}:{lo}",
        text=doc.text,
        on_select=on_select,
    )


def item_ref(item: dict, docs: Sequence[Document]) -> tuple[Any, str]:
    """A question's gold span, or None and why not (none when it has no expected answer)."""
    if not item.get("answer"):
        return None, ""
    try:
        return answer_ref(item, docs), ""
    except ExplorerError as err:
        return None, str(err)


# -- the search ---------------------------------------------------------------------------------
class Search:
    """What every search of this run shares: documents, what is embedded, top k, the retriever."""

    def __init__(self, docs: Sequence[Document], options: Any, k: int, retriever: str) -> None:
        self.docs, self.options, self.k, self.retriever = list(docs), options, k, retriever
        preload_llm_counter()  # Retrieve is open: the cost table will need it once a question is asked

    def key(self, kind: str, configs: list[StrategyConfig], questions: list[str]) -> tuple:
        return (kind, *index_key(self.docs, configs, self.options), tuple(questions), self.k, self.retriever)

    def work(
        self, configs: list[StrategyConfig], questions: list[str], emb: Any, keyword_first: bool = False
    ) -> Callable:
        """Work for the background job (or its inline try): ``{config: (index, hits per question)
        or the error message}``. Runs off the script thread: no ``st`` and no session state here.

        ``keyword_first`` (a dense or hybrid search): every configuration's BM25 hits are
        published first under :data:`KEYWORD` in ``job.partial`` (they need no model: about a
        second), so the page shows something while the chunks are embedded; each
        configuration's real hits replace them as they come. The result holds only real hits.
        A job that starts from the page's try (:func:`pages.ui.background.background`) finds
        them whole in its ``partial`` and does not make them again."""
        make, labels = context_maker(emb), labels_for(configs)
        docs, options, k, retriever = self.docs, self.options, self.k, self.retriever
        keyword_first = keyword_first and retriever != "bm25"

        def work(job: Any) -> dict:
            preload_llm_counter()  # loaded beside the embedding: the page's cost table needs it
            out: dict = {}
            keyword: dict = {}
            if isinstance(job.partial, dict) and job.partial.get(KEYWORD_WHOLE):
                keyword = job.partial[KEYWORD]  # made by the page's try
            elif keyword_first:
                keyword = _keyword_hits(job, docs, configs, questions, options, make, k)

            def answer(config: StrategyConfig, idx: Any) -> None:  # each configuration's hits when ready
                if isinstance(idx, str):
                    out[config] = idx
                else:
                    try:
                        out[config] = (
                            idx,
                            idx.search_many(questions, k, progress=job.progress, retriever=retriever),
                        )
                    except Cancelled:
                        raise
                    except ExplorerError as err:
                        out[config] = err_text(err)
                job.partial = {KEYWORD: keyword, **out} if keyword else dict(out)

            index_all(job, docs, configs, options, make, retriever, on_index=answer, labels=labels)
            return out

        return work


#: The key of a search job's ``partial`` that holds the keyword (BM25) hits shown until each
#: configuration's own retriever answers (a string: configurations are StrategyConfig keys).
KEYWORD = "keyword"
#: Present (True) in ``partial`` once the keyword hits of every configuration are in.
KEYWORD_WHOLE = "keyword whole"


def _keyword_hits(
    job: Any,
    docs: Sequence[Document],
    configs: Sequence[StrategyConfig],
    questions: list[str],
    options: Any,
    make: Callable,
    k: int,
) -> dict:
    """``{config: (index, BM25 hits per question)}``, published in ``job.partial`` one
    configuration at a time. A configuration that fails here is left to the real pass, which
    reports it; one whose chunking embeds (semantic, cluster) waits for it too, rather than hold
    back the stand-ins of the others."""
    from explorer.retrieval.search import get_index
    from explorer.strategies.registry import get_strategy

    keyword: dict = {}
    job.step("keyword results")
    for config in configs:
        if get_strategy(config.strategy).needs_embedder:
            continue
        try:
            idx = get_index(docs, config, make(job.progress), options, None, "bm25")
            keyword[config] = (idx, idx.search_many(questions, k, retriever="bm25"))
        except Cancelled:
            raise
        except ExplorerError:
            continue
        job.partial = {KEYWORD: dict(keyword)}
    job.partial = {KEYWORD: dict(keyword), KEYWORD_WHOLE: True}
    return keyword


def split_found(found: dict | None) -> tuple[dict, dict]:
    """A search's results so far, split: ``(real, stand_ins)``, where ``stand_ins`` holds the
    keyword hits of the configurations whose own retriever has not answered yet."""
    real = dict(found or {})
    real.pop(KEYWORD_WHOLE, None)
    keyword = real.pop(KEYWORD, None) or {}
    return real, {c: r for c, r in keyword.items() if c not in real}


def scores_of(ref: Any, hits: Sequence[Any]) -> Any:
    from explorer.evaluation.retrieval_metrics import retrieval_scores

    return retrieval_scores([ref], [(h.chunk.doc_id, h.chunk.start, h.chunk.end) for h in hits])


# -- the results --------------------------------------------------------------------------------
#: Characters of a hit shown on its card (a scrolling box; Show in Explore has the rest).
HIT_CHARS = 1200
#: A hit card's box, in pixels: eight lines of text before the rest is folded (it scrolls once opened).
CARD_PX = 180
#: Characters a card's line holds at least with 1, 2 or 3 cards side by side (measured: 79 with 2
#: and about 45 with 3 in a 1,500-pixel window, about 35 with 3 at 1,280); the cards wrap under
#: each other below 240 pixels each (pages.ui.frame.WRAP_KEY), so 3 never get narrower. Reckoned
#: short, a card shows a line or two less than it could; reckoned long, it grows taller.
CARD_LINE_CHARS = {1: 100, 2: 50, 3: 32}
#: What a hit's score is, by retriever.
SCORE_NAMES = {"dense": "cosine", "bm25": "BM25", "hybrid": "fused score", "rrf": "RRF score"}
#: Decimals a hit's score is shown with (an RRF score is about 0.016 to 0.033).
SCORE_DIGITS = {"hybrid": 4, "rrf": 5}


#: What stands in for a configuration's results while its chunks are embedded.
STAND_IN_NOTE = "Keyword (BM25) results until this configuration's chunks are embedded: {retriever} results then replace them."


def hits_column(
    cfg_id: Any,
    config: StrategyConfig,
    res: Any,
    ref: Any,
    docs: Sequence[Document],
    retriever: str,
    stand_in: bool = False,
    question: str = "",
    per_row: int = 3,
) -> None:
    """One configuration's top k (or its error), scored against ``ref`` when there is one;
    ``stand_in``: keyword hits shown until ``retriever`` answers, and said to be; the words of
    ``question`` that keyword search matches are underlined in each hit; ``per_row``: columns
    side by side (how wide a card is)."""
    st.markdown(f"**{md(config_labels().get(cfg_id) or labels_for([config])[config])}**")
    if isinstance(res, str):
        st.error(md(res), icon=":material/error:")
        return
    if stand_in:
        st.info(STAND_IN_NOTE.format(retriever=retriever), icon=":material/hourglass_top:")
        retriever = "bm25"
    idx, (hits,) = res
    if ref is not None:
        sc = scores_of(ref, hits)
        first = f"rank {round(1 / sc.rr)}" if sc.rr else "not retrieved"
        st.caption(f"Recall **{percent(sc.recall, 0)}** · IoU **{percent(sc.iou)}** · first hit: **{first}**" + answer_note(idx, question, ref, retriever != "bm25"))
    st.caption(f"{plural(len(idx), 'chunk')} indexed" + (" · the question's words **underlined**" if question else ""))
    languages = idx.stemmed_languages()
    by_id = {d.id: d for d in docs}
    piece_of = best_pieces(idx, question, hits) if retriever != "bm25" else {}
    dense_name = "dense score" if piece_of else "cosine"  # with pieces: half the chunk's, half its best piece's
    score_name = dense_name if retriever == "dense" else SCORE_NAMES.get(retriever, "score")
    for h in hits:
        ch = h.chunk
        with st.container(border=True):
            page = f" · p. {ch.pages[0]}" if ch.pages else ""
            st.markdown(
                f"**#{h.rank}** · {score_name} **{h.score:.{SCORE_DIGITS.get(retriever, 3)}f}**  \n"
                + (f":gray[{evidence_line(h.evidence, dense_name)}]  \n" if h.evidence is not None else "")
                + (f":gray[{piece_of[h.rank][0]}]  \n" if h.rank in piece_of else "")
                + f":gray[{md(clip(ch.doc_name, 40))} · chunk {ch.index} · {ch.start:,}–{ch.end:,}{page}]",
                help=HUB_HELP if h.evidence is not None and h.evidence.neighbours is not None else None,
            )
            best = piece_of[h.rank][1] if h.rank in piece_of else None
            st.html(_card_text(by_id[ch.doc_id], ch, ref, best, question, languages, CARD_LINE_CHARS.get(per_row, 40)))
            st.button(
                "Show in Explore",
                key=W.SHOW_HIT(cfg_id, h.rank),
                icon=":material/open_in_new:",
                type="tertiary",
                on_click=show_in_explore,
                args=(ch.doc_id, cfg_id, ch.index),
            )


def _card_text(
    doc: Document, ch: Any, ref: Any, best: tuple[int, int] | None, question: str, languages: Any, line_chars: int
) -> str:
    """A hit card's text: the expected answer marked, the question's words underlined, the best
    piece tinted, the box opened on the first of them when it lies deep in the chunk."""
    s, e = (max(ref[1], ch.start), min(ref[2], ch.end)) if ref is not None and ref[0] == ch.doc_id else (0, 0)
    marks = [(s, e)] if e > s else []
    text = doc.text
    soft = doc.kind == "pdf"  # page lines, wrapped again in the card's box
    focus = min((a for a, _ in [*marks, *([best] if best else [])]), default=None)
    fold = fold_start(text, ch.start, focus, CARD_PX, soft, line_chars)
    terms = matched_spans(text, *shown_span(ch.start, ch.end, fold, HIT_CHARS), question, languages)
    return render_snippet(
        text, ch.start, ch.end, marks, HIT_CHARS, CARD_PX, terms=terms, best_piece=best, fold=fold,
        soft_breaks=soft, fold_below=True, line_chars=line_chars,
    )
