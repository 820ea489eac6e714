"""Gold spans: the expected answer of a question, as exact offsets when the user selected it.

Shared by Explore ("Use as expected answer"), Retrieve (scores, kept questions, the choice
between the places a typed answer occurs) and Evaluate. A typed answer is matched like a person
reads it (:mod:`explorer.evaluation.matching`: whitespace, line breaks and hyphens at line ends
do not matter).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import streamlit as st

from explorer.documents.document import Document
from explorer.errors import LoadError
from explorer.evaluation.answers import AmbiguousAnswer, find_answer, locate_answer
from explorer.evaluation.matching import same_text
from pages.ui.nav import go_to
from pages.ui.safe import WORD_JOINER, clip, md
from pages.ui.sources import source_key_of
from pages.ui.state import W, session

#: What the app suggests when a typed answer is not in the documents.
APP_HINT = "select the passage in the text instead"
#: Characters of context shown on each side of an occurrence to pick from.
CONTEXT_CHARS = 50


def answer_ref(item: dict, docs: Sequence[Document], where: str = "expected answer") -> tuple[str, int, int]:
    """The gold span of a question: the span the user selected (or picked) when it still holds
    that answer (exact offsets, even for text that occurs twice), else the one place the typed
    answer occurs (:func:`explorer.evaluation.answers.locate_answer`), else, typed without its
    case ("utiliser" for "Utiliser"), the one place it occurs case aside."""
    ref = item.get("ref")
    if holds(ref, item.get("answer"), docs):
        return (ref[0], int(ref[1]), int(ref[2]))
    answer = item.get("answer", "")
    try:
        return locate_answer(answer, docs, where, hint=APP_HINT)
    except AmbiguousAnswer as err:
        raise _twice(where, answer, err.occurrences) from None
    except LoadError:
        folded = find_answer(answer, docs, fold_case=True) if isinstance(answer, str) and answer.strip() else []
        if not folded:
            raise
        if len(folded) > 1:
            raise _twice(where, answer, folded) from None
        return folded[0]


#: Where the places to pick from are: said everywhere but on Retrieve, which lists them below.
PLACES_LISTED = " (Retrieve lists its places)"


def _twice(where: str, answer: str, places: Sequence[Any]) -> AmbiguousAnswer:
    n = len(places)
    return AmbiguousAnswer(
        f"{where}: {clip(' '.join(answer.split()), 60)!r} occurs more than once "
        f"({n}{'+' if n >= 20 else ''} places): pick the one you mean{PLACES_LISTED}, or select it in the text",
        list(places),
    )


def holds(ref: Sequence | None, answer: str | None, docs: Sequence[Document]) -> bool:
    """Whether ``ref`` (document id, start, end) is a span of a loaded document whose text reads
    as ``answer`` (the same but for whitespace, line breaks and hyphens at line ends: a
    selection stops counting once the answer is edited)."""
    if not ref or answer is None or len(ref) != 3:
        return False
    doc = next((d for d in docs if d.id == ref[0]), None)
    if doc is None or not (0 <= int(ref[1]) < int(ref[2]) <= len(doc.text)):
        return False
    return same_text(doc.text[int(ref[1]) : int(ref[2])], answer)


def answer_problem(query: dict, docs: Sequence[Document], message: str) -> None:
    """Why the expected answer cannot score the results; when it occurs in several places, those
    places with their context, to pick the one meant (it then scores like a selection)."""
    st.warning(md(message.replace(PLACES_LISTED, "")), icon=":material/help:")
    answer = query.get("answer", "")
    places = (find_answer(answer, docs) or find_answer(answer, docs, fold_case=True)) if answer.strip() else []
    if len(places) < 2:
        return
    by_id = {d.id: d for d in docs}

    def label(i: int) -> str:
        doc_id, start, end = places[i]
        text = by_id[doc_id].text
        before, after = text[max(0, start - CONTEXT_CHARS) : start], text[end : end + CONTEXT_CHARS]
        where = (
            f"{clip(by_id[doc_id].name, 40)}, characters {start:,}–{end:,}"
            if len(by_id) > 1
            else (f"characters {start:,}–{end:,}")
        )
        gap_before = " " if before[-1:].isspace() else ""  # a space only where the text has one: "--nocheck ,"
        gap_after = " " if after[:1].isspace() else ""
        bold = f"**{WORD_JOINER}{md(clip(text[start:end], 80))}{WORD_JOINER}**"  # bold beside any character
        return f"{md(where)}: …{md(before)}{gap_before}{bold}{gap_after}{md(after)}…"

    st.radio(
        "Which one do you mean?",
        range(len(places)),
        index=None,
        format_func=label,
        key=W.ANSWER_PICK,
        on_change=_pick,
        args=(places,),
    )


def _pick(places: Sequence[tuple[str, int, int]]) -> None:
    """Callback: the chosen place becomes the expected answer's span (as if selected)."""
    i = session.widget(W.ANSWER_PICK)
    if i is None or not 0 <= i < len(places):
        return
    ref = list(places[i])
    session.ret_mark = ref
    if session.ret_query:
        session.ret_query = {**session.ret_query, "ref": ref}


def use_as_answer(doc: Document, start: int, end: int) -> None:
    """Callback: open Retrieve with ``doc.text[start:end]`` as the expected answer, with its exact
    offsets (applied by that page when it runs next: its widgets do not exist on this one)."""
    session.ret_pending = {"answer": doc.text[start:end], "ref": [doc.id, start, end]}
    go_to("retrieve")


def show_in_explore(doc_id: str, cfg_id: Any, position: int) -> None:
    """Callback: open Explore on this document, configuration and chunk."""
    key = source_key_of(doc_id)
    if key:
        session.doc_key = key
    session.active_cfg = cfg_id
    session.chunk_sel = position
    go_to("explore")
