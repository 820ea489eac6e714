"""Markdown documents for the sentence and paragraph strategies' tests, and the hypothesis draw
the sentence tests share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer import Document, chunk_document
from explorer.documents.markdown_blocks import markdown_blocks
from explorer.strategies.invariants import invariant_errors


def md(text: str) -> Document:
    return Document("t.md", "markdown", text, blocks=markdown_blocks(text))


def chunks_of(d: Document, strategy: str = "sentence", **params: Any) -> list:
    """The chunks of ``strategy``, checked against the invariants."""
    chunks = chunk_document(d, strategy, params)
    assert not invariant_errors(d, chunks, params.get("chunk_size") or None)
    return chunks


def given_documents(parts: st.SearchStrategy[str], max_parts: int) -> Callable:
    """150 draws of ``parts`` (a list, up to ``max_parts``), sentences per group 1-6, a ``data``
    to draw the overlap from, and no cap or one of 20-200 characters."""
    draw = given(
        parts=st.lists(parts, min_size=1, max_size=max_parts),
        per=st.integers(1, 6),
        data=st.data(),
        cap=st.one_of(st.just(0), st.integers(20, 200)),
    )
    keep = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    return lambda test: keep(draw(test))


def drawn_chunks(parts: list[str], per: int, data: Any, cap: int) -> tuple[str, Document, list, int]:
    """The Markdown of the drawn ``parts`` (blank lines between), its document, its chunks with
    an overlap drawn below ``per``, and that overlap."""
    text = "\n\n".join(parts) + "\n"
    d = md(text)
    overlap = data.draw(st.integers(0, per - 1))
    return text, d, chunks_of(d, sentences_per_chunk=per, overlap_sentences=overlap, chunk_size=cap), overlap
