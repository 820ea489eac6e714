"""The PDF page beside the text: the selected chunk's pages as images, its text outlined.

The pages come from the document's own bytes (a bundled sample's file, or the upload kept in the
session), rendered by :mod:`explorer.render.pdf_page` (cached by content, page and scale, bounded
in bytes). Nothing is shown for a document that is not a PDF, or whose bytes are not at hand.
"""

from __future__ import annotations

import streamlit as st

from explorer.documents.document import Document
from explorer.documents.samples import sample_bytes
from explorer.errors import ExplorerError
from explorer.render.pdf_page import chunk_boxes, page_html, page_refusal, render_page
from explorer.text.chunk import Chunk
from pages.ui.safe import md
from pages.ui.sources import current_source, load

#: Most pages of one chunk shown (a chunk over more pages shows its first ones).
MAX_PAGES = 3
#: Height of the scrolling box that holds the pages (one page fits a ~450 px column).
HEIGHT = 640


def pdf_source(doc: Document) -> tuple[str, bytes] | None:
    """(cache key, bytes) of the PDF ``doc`` was loaded from, when it is the current document."""
    src = current_source()
    if doc.kind != "pdf" or src is None:
        return None
    loaded, _ = load(src)
    if loaded is None or loaded.id != doc.id:
        return None
    if src["kind"] == "sample":
        try:
            return f"sample:{src['sample']}", sample_bytes(src["sample"])[1]
        except ExplorerError:
            return None
    data = src.get("data")
    return (f"upload:{src['digest']}", data) if isinstance(data, bytes) and data else None


def pdf_page_view(doc: Document, ch: Chunk) -> bool:
    """The pages of chunk ``ch`` with its text outlined; False (nothing drawn) for a document
    that is not a PDF or whose bytes are not at hand."""
    found = pdf_source(doc)
    if found is None:
        return False
    key, data = found
    numbers = ch.pages[:MAX_PAGES] or ((doc.pages[0].number,) if doc.pages else ())
    placed = drawn = 0
    with st.container(height=HEIGHT if len(numbers) > 1 else "content", border=False):
        for number in numbers:
            why = page_refusal(data, number, key=key)
            if why:
                st.caption(f"Page {number} is not drawn: {why}. Its text is whole in the view beside.")
                continue
            image = render_page(data, number, key=key)
            if image is None:
                st.caption(f"Page {number} could not be rendered.")
                continue
            boxes = chunk_boxes(data, doc, number, ch.start, ch.end, key=key)
            placed, drawn = placed + bool(boxes), drawn + 1
            title = f"Page {number} of {doc.name}: chunk {ch.index} outlined" if boxes else f"Page {number}"
            st.html(page_html(image, boxes, title=title))
    if not drawn:
        return True  # each page said why it is not shown: there is no outline to speak of
    pages = f"page {numbers[0]}" if len(numbers) == 1 else f"pages {numbers[0]}–{numbers[-1]}"
    more = f" (and {len(ch.pages) - MAX_PAGES} more)" if len(ch.pages) > MAX_PAGES else ""
    st.caption(
        f"**{md(doc.name)}**, {pages}{more}: "
        + (
            f"chunk {ch.index}'s text is outlined."
            if placed
            else f"chunk {ch.index}'s text could not be placed on the page (not found in its text layer)."
        )
    )
    return True
