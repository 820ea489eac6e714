"""Explore: how one strategy cuts one document, chunk by chunk."""

from __future__ import annotations

import streamlit as st

from explorer.errors import ExplorerError
from explorer.text.wording import plural
from pages.ui.audit import audit, audit_line
from pages.ui.chunknav import EXPLORE_NAV, chunk_text, nav_inputs
from pages.ui.compute import analyse, chunk
from pages.ui.configs import active_config_dict, config_label, config_of
from pages.ui.flow import end_page
from pages.ui.frame import page_header
from pages.ui.inspector import chunk_table, inspector, mark_line, stats_strip, table_selection
from pages.ui.pdfview import pdf_page_view
from pages.ui.safe import err_text, md
from pages.ui.settings import model_settings
from pages.ui.state import W, session
from pages.ui.widgets import config_editor, doc_picker, own_documents_hint

page_header(
    "Explore",
    "How one strategy cuts your document. Hover a chunk for its details, click it to inspect it; "
    "select text to see which chunks hold it. A PDF shows the chunk's page beside the text.",
)
doc = doc_picker()
if doc is None:
    end_page()
own_documents_hint()
config_editor(multi=False)
model_settings()
cfg = active_config_dict()
try:
    config = config_of(cfg)
except ExplorerError as err:
    st.warning(f"Fix the parameters in the sidebar: {md(err_text(err))}", icon=":material/tune:")
    end_page()

out = chunk(doc, config)
if out.pending:  # an embedding strategy whose vectors are being made: progress at the top
    st.info(out.pending, icon=":material/hourglass_top:")
    end_page()
if not out.ok:
    st.error(md(out.error), icon=":material/error:")
    end_page()
chunks = out.chunks
if not chunks:
    st.info(f"{md(config_label(cfg))} made no chunks: {md(repr(doc.name))} has no text to chunk.")
    end_page()
an = analyse(doc, config, out)
n = len(chunks)
st.caption(f"**{md(doc.name)}** · {md(config_label(cfg))} · {plural(len(doc.text), 'character')}")
stats_strip(an.stats, n)
trunc = audit(doc, config, chunks, an)
audit_line(trunc)

# -- selection: chunk number, page, a click or a key in the text, or a table row ---------------
table_sel = table_selection()
if table_sel and table_sel != session.table_last:
    session.chunk_sel = table_sel[0]
session.table_last = table_sel
sel = EXPLORE_NAV.get(n)


def _on_select(start: int, end: int) -> None:
    session.explore_mark = [doc.id, start, end]


# a row that wraps, not fixed columns: in an 800 px window the toggle's column cut its label to "Chu…"
row = st.container(horizontal=True, vertical_alignment="bottom", gap="medium")
nav_inputs(EXPLORE_NAV, doc, chunks, sel, [row.container(width=170) for _ in range(2 if doc.pages else 1)])
show_index = row.toggle("Chunk numbers", value=True, key=W.SHOW_INDEX)

mark = session.explore_mark
mark = mark if mark and mark[0] == doc.id and mark[2] <= len(doc.text) else None

left, right = st.columns([0.58, 0.42] if doc.kind == "pdf" else [0.62, 0.38], gap="medium")
with left:
    chunk_text(
        EXPLORE_NAV,
        doc,
        chunks,
        sel,
        flags={i: f for i, f in enumerate(an.flags) if f},
        tokens=an.tokens,
        marks=[(mark[1], mark[2])] if mark else (),
        show_index=show_index,
        above=(lambda: mark_line(doc, chunks, mark)) if mark else None,
        on_select=_on_select,
        unread=trunc.unread if trunc is not None else None,
    )
with right:
    inspector(doc, chunks, an, sel, beside=lambda: pdf_page_view(doc, chunks[sel]))
chunk_table(chunks, an, config, trunc)
