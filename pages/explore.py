"""Explore: how one strategy cuts one document, chunk by chunk."""

from __future__ import annotations

import streamlit as st

from explorer.errors import ExplorerError
from explorer.render.html import legend, render_chunks
from explorer.render.layout import window_around
from pages.ui.compute import analyse, chunk
from pages.ui.configs import active_config_dict, config_of
from pages.ui.frame import page_header
from pages.ui.inspector import chunk_table, inspector, mark_line, stats_strip, table_selection
from pages.ui.safe import md
from pages.ui.settings import model_settings
from pages.ui.state import W, session
from pages.ui.textview import text_view
from pages.ui.widgets import config_editor, doc_picker, synced

page_header(
    "Explore",
    "How one strategy cuts your document. Hover a chunk for its details, click it to inspect it; "
    "select text to see which chunks hold it.",
)
doc = doc_picker()
if doc is None:
    st.stop()
config_editor(multi=False)
model_settings()
try:
    config = config_of(active_config_dict())
except ExplorerError as err:
    st.warning(f"Fix the parameters in the sidebar: {err}", icon=":material/tune:")
    st.stop()

out = chunk(doc, config)
if out.pending:  # an embedding strategy whose vectors are being made: progress at the top
    st.info(out.pending, icon=":material/hourglass_top:")
    st.stop()
if not out.ok:
    st.error(out.error, icon=":material/error:")
    st.stop()
chunks = out.chunks
if not chunks:
    st.info(f"{config.display} made no chunks: {doc.name!r} has no text to chunk.")
    st.stop()
an = analyse(doc, config, out)
n = len(chunks)
st.caption(f"**{md(doc.name)}** · {md(config.display)} · {len(doc.text):,} characters")
stats_strip(an.stats, n)

# -- selection: chunk number, page, or a table row -------------------------------------------
table_sel = table_selection()
if table_sel and table_sel != session.table_last:
    session.chunk_sel = table_sel[0]
session.table_last = table_sel
sel = min(max(int(session.chunk_sel or 0), 0), n - 1)
session.chunk_sel = sel


def _on_page(number: int) -> None:
    page = next((p for p in doc.pages if p.number == number), None)
    if page is not None:
        session.chunk_sel = next((i for i, ch in enumerate(chunks) if ch.end > page.start), n - 1)


def _on_select(start: int, end: int) -> None:
    session.explore_mark = [doc.id, start, end]


nav = st.columns([1.2, 1.2, 1.4, 3.2], vertical_alignment="bottom")
synced(
    nav[0].number_input,
    "Chunk",
    0,
    n - 1,
    step=1,
    key=W.CHUNK,
    value=sel,
    on_change=lambda i: setattr(session, "chunk_sel", int(i)),
)
if doc.pages:
    here = chunks[sel].pages[0] if chunks[sel].pages else 1
    synced(
        nav[1].number_input,
        "Page",
        1,
        doc.pages[-1].number,
        step=1,
        key=W.PAGE,
        value=here,
        on_change=_on_page,
    )
show_index = nav[2].toggle("Chunk numbers", value=True, key=W.SHOW_INDEX)

lo, hi = window_around([(ch.start, ch.end) for ch in chunks], sel, len(doc.text))
mark = session.explore_mark
mark = mark if mark and mark[0] == doc.id and mark[2] <= len(doc.text) else None

left, right = st.columns([0.62, 0.38], gap="medium")
with left:
    st.html(legend())
    if (lo, hi) != (0, len(doc.text)):
        st.caption(
            f"Showing characters {lo:,}–{hi:,} of {len(doc.text):,} around chunk {sel}: "
            "move with the chunk or page number."
        )
    if mark:
        mark_line(doc, chunks, mark)
    text_view(
        render_chunks(
            doc.text,
            chunks,
            lo=lo,
            hi=hi,
            selected=sel,
            flags={i: f for i, f in enumerate(an.flags) if f},
            tokens=an.tokens,
            marks=[(mark[1], mark[2])] if mark else (),
            show_index=show_index,
            height=620,
            interactive=True,
            mark_title="Selected text",
        ),
        key=W.TEXT,
        view=f"{doc.id}:{lo}:{hi}",
        selected=sel,
        text=doc.text,
        on_pick=lambda position: setattr(session, "chunk_sel", position),
        on_select=_on_select,
    )
with right:
    inspector(doc, chunks, an, sel)
chunk_table(chunks, an, config)
