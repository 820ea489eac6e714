"""Moving through a document chunk by chunk: the chunk and page numbers, and the text view that
shows the window of text around the selected chunk (Explore and Semantic share them).

A long document is shown :data:`explorer.render.layout.MAX_RENDER_CHARS` characters at a time
(:func:`explorer.render.layout.window_around` the selected chunk); the selection moves with the
chunk or page number, a click on a chunk or on the note of the text before or after the window,
and the view's next/previous keys. Each page keeps its own selection (:class:`Nav`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from explorer.documents.document import Document
from explorer.render.html import render_chunks
from explorer.render.layout import window_around
from explorer.text.chunk import Chunk
from pages.ui.state import W, session
from pages.ui.textview import text_view
from pages.ui.widgets import synced

#: What the caption under the view says about the keys.
KEYS_HELP = (
    "Click the text (or Tab to it), then **j** / **→** for the next chunk, **k** / **←** for the previous."
)


@dataclass(frozen=True)
class Nav:
    """Where a page keeps its selected chunk (an attribute of ``session``) and its widget keys."""

    slot: str
    chunk_key: str
    page_key: str
    text_key: str

    def get(self, n: int) -> int:
        """The selected chunk's position among ``n`` chunks (kept in range, and stored)."""
        sel = min(max(int(getattr(session, self.slot) or 0), 0), max(n - 1, 0))
        setattr(session, self.slot, sel)
        return sel

    def set(self, position: int) -> None:
        setattr(session, self.slot, int(position))


EXPLORE_NAV = Nav("chunk_sel", W.CHUNK, W.PAGE, W.TEXT)
SEMANTIC_NAV = Nav("sem_sel", W.SEM_CHUNK, W.SEM_PAGE, W.SEM_TEXT)


def nav_inputs(nav: Nav, doc: Document, chunks: Sequence[Chunk], sel: int, cols: Sequence[Any]) -> None:
    """The chunk number in ``cols[0]`` and, for a document with pages, the page in ``cols[1]``."""
    n = len(chunks)
    synced(cols[0].number_input, "Chunk", 0, n - 1, step=1, key=nav.chunk_key, value=sel, on_change=nav.set)
    if doc.pages:

        def on_page(number: int) -> None:
            page = next((p for p in doc.pages if p.number == number), None)
            if page is not None:
                nav.set(page_chunk(chunks, page.start, page.end))

        # the page asked for while the chunk shown covers it (a chunk over pages 3-4 asked on
        # page 4 showed 3, and "+" could not get past it), else the chunk's first page
        asked = session.widget(nav.page_key)
        pages = chunks[sel].pages
        here = asked if asked in pages else pages[0] if pages else 1
        synced(
            cols[1].number_input,
            "Page",
            1,
            doc.pages[-1].number,
            step=1,
            key=nav.page_key,
            value=here,
            on_change=on_page,
        )


def page_chunk(chunks: Sequence[Chunk], start: int, end: int) -> int:
    """The chunk to show for the page ``text[start:end]``: the first one that starts on it, else
    the one that runs into it (the first that merely spilled onto it showed the page before)."""
    on = next((i for i, ch in enumerate(chunks) if start <= ch.start < end), None)
    if on is not None:
        return on
    return next((i for i, ch in enumerate(chunks) if ch.end > start), len(chunks) - 1)


def chunk_text(
    nav: Nav,
    doc: Document,
    chunks: Sequence[Chunk],
    sel: int,
    *,
    flags: Mapping[int, Sequence[str]],
    tokens: Sequence[int],
    height: int = 620,
    show_index: bool = True,
    marks: Sequence[tuple[int, int]] = (),
    mark_title: str = "Selected text",
    above: Callable[[], None] | None = None,
    on_select: Callable[[int, int], None] | None = None,
    unread: Mapping[int, int] | None = None,
) -> None:
    """The window of text around chunk ``sel`` in the interactive text view, its legend built
    from what it shows, and a caption on the window and the keys (``above`` draws between the
    caption and the view; ``unread``: the truncation audit's offsets, greyed past)."""
    lo, hi = window_around([(ch.start, ch.end) for ch in chunks], sel, len(doc.text))
    where = (
        f"Showing characters {lo:,}–{hi:,} of {len(doc.text):,} around chunk {sel}: move with the "
        "chunk or page number, or click the note before or after the text. "
        if (lo, hi) != (0, len(doc.text))
        else ""
    )
    st.caption(where + KEYS_HELP)
    if above is not None:
        above()
    text_view(
        render_chunks(
            doc.text,
            chunks,
            lo=lo,
            hi=hi,
            selected=sel,
            flags=flags,
            tokens=tokens,
            marks=marks,
            show_index=show_index,
            height=height,
            interactive=True,
            mark_title=mark_title,
            with_legend=True,
            unread=unread,
        ),
        key=nav.text_key,
        view=f"{doc.id}:{lo}:{hi}",
        selected=sel,
        count=len(chunks),
        text=doc.text,
        on_pick=nav.set,
        on_select=on_select,
    )
