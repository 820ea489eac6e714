"""Gold spans: the expected answer of a question, as exact offsets when the user selected it.

Shared by Explore ("Use as expected answer"), Retrieve (scores, kept questions) and Evaluate.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from explorer.documents.document import Document
from pages.ui.nav import go_to
from pages.ui.sources import source_key_of
from pages.ui.state import session


def answer_ref(item: dict, docs: Sequence[Document], where: str = "expected answer") -> tuple[str, int, int]:
    """The gold span of a question: the span the user selected in the text when it still holds
    that answer (exact offsets, even for text that occurs twice), else the one place the typed
    answer occurs (:func:`explorer.evaluation.evaluate.locate_answer`)."""
    from explorer.evaluation.questions import locate_answer

    ref = item.get("ref")
    if holds(ref, item.get("answer"), docs):
        return (ref[0], int(ref[1]), int(ref[2]))
    return locate_answer(item.get("answer", ""), docs, where)


def holds(ref: Sequence | None, answer: str | None, docs: Sequence[Document]) -> bool:
    """Whether ``ref`` (document id, start, end) is a span of a loaded document whose text is
    exactly ``answer`` (a selection stops counting once the answer is edited)."""
    if not ref or answer is None:
        return False
    doc = next((d for d in docs if d.id == ref[0]), None)
    return doc is not None and doc.text[ref[1] : ref[2]] == answer


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
