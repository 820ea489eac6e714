"""The truncation audit in the app: what the picked model never reads of each chunk.

Explore greys each cut chunk's unread tail in the text and its inspector says how much is lost;
Compare sums it per configuration. The offsets come from :mod:`explorer.evaluation.truncation`
with the picked model's own tokenizer, limit and passage prefix (e5's ``passage: ``), whatever
embedder runs (the fake one of the tests included), and only for the chunks that the analysis'
token counts say may be cut. Audits are shared by sessions in a byte-bounded cache.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from explorer import limits
from explorer.documents.document import Document
from explorer.errors import ExplorerError
from explorer.evaluation.truncation import ModelReading, Reading, TruncationSummary, model_setup
from explorer.lru import ByteLRU
from explorer.strategies.config import StrategyConfig
from explorer.text.chunk import Chunk
from explorer.text.wording import percent, percent_value
from pages.ui.model import model_arg, model_id
from pages.ui.safe import md


@dataclass(frozen=True)
class Audit:
    """One document's chunks under one configuration, as the picked model reads them."""

    summary: TruncationSummary
    #: Chunk position → offset in the document where the model stops reading it (cut chunks).
    unread: dict[int, int] = field(default_factory=dict)
    #: Chunk position → its :class:`Reading`, for every chunk that may be cut.
    reads: dict[int, Reading] = field(default_factory=dict)

    @property
    def nbytes(self) -> int:
        return 160 * len(self.reads) + 1024


_AUDITS: ByteLRU[Audit] = ByteLRU(limits.CHUNKS_BYTES // 16, lambda a: a.nbytes)


def reader() -> ModelReading | None:
    """The picked model's tokenizer, limit and prefix; None for a model without a fast tokenizer."""
    try:
        return model_setup(model_arg())
    except ExplorerError:
        return None


def audit(doc: Document, config: StrategyConfig, chunks: tuple[Chunk, ...], an: Any) -> Audit | None:
    """The audit of ``chunks`` (``an``: their :class:`pages.ui.compute.Analysis`), cached by
    document, configuration and model; None where the model's tokenizer cannot be read."""
    model = reader()
    if model is None or not chunks:
        return None

    def make() -> Audit:
        reads = model.audit(chunks, an.tokens)
        cut = {p: chunks[p].start + r.read_chars for p, r in reads.items() if r.truncated}
        return Audit(model.summary(chunks, reads, len(doc.text)), cut, reads)

    return _AUDITS.get_or_make((doc.id, config, model_arg() or "", model.limit, model_id()), make)


def chunk_reading(chunk: Chunk) -> Reading | None:
    """How much of one chunk the model reads (exact, one tokenisation)."""
    model = reader()
    return model.readings([chunk.text])[0] if model is not None else None


def audit_line(a: Audit | None) -> None:
    """Under Explore's figures: how many chunks the model cuts and what it never reads."""
    if a is None:
        return
    s = a.summary
    if not s.truncated:
        st.caption(":material/content_cut: The model reads every chunk whole: none is over its token limit.")
        return
    st.caption(
        f":material/content_cut: **Truncation:** the model cuts **{s.truncated:,}** of {s.chunks:,} chunks: "
        f"**{s.unread_chars:,}** characters are never embedded (greyed and struck through in the "
        f"text); {percent(s.share_never_read)} of the document is read by no chunk's vector."
    )


def reading_note(r: Reading | None) -> None:
    """The inspector's line: the model reads N of M tokens; the last K characters are never embedded."""
    if r is None:
        return
    model = reader()
    counted = "its special tokens" + (f" and the “{model.prefix.strip()}” prefix" if model and model.prefix else "")
    counted = f"Counted with {counted}, which the chunk's own token count leaves out."
    if r.truncated:
        st.markdown(f":orange-badge[:material/content_cut: truncated] {md(r.sentence())} :gray[{md(counted)}]")
    else:
        st.caption(f"{md(r.sentence())} {md(counted)}")


def summary_columns(a: Audit | None) -> dict[str, Any]:
    """Compare's columns: chunks truncated, characters unread, share of the document unread."""
    if a is None:
        return {"truncated": None, "unread chars": None, "never read %": None}
    s = a.summary
    return {
        "truncated": s.truncated,
        "unread chars": s.unread_chars,
        "never read %": percent_value(s.share_never_read, 2),
    }
