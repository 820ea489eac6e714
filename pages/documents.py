"""Documents: upload files or open samples, see what each one is, switch clean-up steps."""

from __future__ import annotations

import streamlit as st

from explorer.documents import samples, uploads
from explorer.limits import MAX_FILE_BYTES, MAX_MARKDOWN_CHARS, MB
from explorer.render.html import facts as render_facts
from explorer.text.measures import LANGUAGE_NAMES
from pages.ui.compute import summary
from pages.ui.flow import end_page
from pages.ui.frame import page_header
from pages.ui.model import model_arg
from pages.ui.nav import PAGES
from pages.ui.safe import md
from pages.ui.sources import (
    CLEANUP_FLAGS,
    cleanup_steps,
    duplicates,
    load,
    loaded,
    open_source,
    remove_source,
    sample_names,
    set_samples,
    take_uploads,
)
from pages.ui.state import W, session
from pages.ui.widgets import synced

store = uploads.default_store()


#: What a PDF's heading count counts (shown on hover).
PDF_HEADINGS = (
    "Read from the PDF's fonts: short lines set larger than the body text or in bold (at the body size, "
    "only when numbered); a line in doubt is left out. They give chunks their heading paths, and markdown "
    "and hybrid cut at them."
)


def _structure_count(n: int, read: bool, kind: str) -> tuple[str, str]:
    """A count of structure, or "—" where none is read: "Headings 0" on a text whose lines read
    "1. Introduction" said there were none, when nothing had looked for them. A PDF's headings
    are read from its fonts, its code blocks and tables are not, and the hover says so."""
    if read:
        return f"{n:,}", PDF_HEADINGS if kind == "pdf" else ""
    if kind == "pdf":
        return "—", (
            "Only headings are read from a PDF (from its font sizes); its code blocks and tables are not: "
            "the strategies see none, and cut through them as through any text."
        )
    return "—", (
        f"Headings, code blocks and tables are read from Markdown (up to {MAX_MARKDOWN_CHARS:,} characters) "
        "and headings from PDFs: here the strategies see none, and chunks carry no heading path."
    )


page_header(
    "Documents",
    "Upload PDF, Markdown or text files, or open a bundled sample. "
    + (
        f"Uploads are kept on this server (up to {store.max_bytes // 2**20:,} MB in all, the least "
        "recently used dropped first), so a reload or this page's link reopens them; nothing is sent "
        "anywhere else."
        if store is not None
        else "Uploads stay in this browser session only; nothing is sent anywhere."
    ),
)

left, right = st.columns([0.58, 0.42], gap="large")  # room for "headers/footers" at 800 px
with left:
    upload_key = W.UPLOAD(session.uploader_gen)
    files = st.file_uploader(
        "Upload files",
        type=["pdf", "md", "markdown", "txt"],
        accept_multiple_files=True,
        key=upload_key,
        on_change=take_uploads,
        args=(upload_key,),
        help=f"PDF, Markdown or plain text, up to {MAX_FILE_BYTES // MB} MB each. "
        "Several files at once are fine.",
    )
    st.caption(
        f"Up to {MAX_FILE_BYTES // MB} MB per file: a file marked red in the box above is larger "
        "and was not uploaded (split it, or use the CLI)."
    )
    if files:  # the callback has taken them; a value set without it (a script) is taken here
        take_uploads(upload_key)
        st.rerun()
    session.seed(W.SAMPLES, sample_names())
    st.multiselect(
        "Bundled samples",
        list(samples.SAMPLES),
        key=W.SAMPLES,
        on_change=set_samples,
        help="Original texts written for Chunk Explorer: a French report, a Markdown guide "
        "and a multi-page PDF.",
    )

with right:
    st.markdown("**Clean-up** (applies to every document)")
    for short, (field, label, help_) in CLEANUP_FLAGS.items():
        synced(
            st.toggle,
            label,
            key=W.CLEAN(short),
            value=bool(session.cleanup.get(field)),
            help=help_ + " Offsets always index the cleaned text you see.",
            on_change=lambda on, f=field: session.cleanup.__setitem__(f, bool(on)),
            wrap=True,  # in a column Streamlit cut the label to "Collapse bl…" in an 800 px window
        )

st.divider()
if not session.sources:
    st.info("No documents yet: upload a file or pick a sample above.")
    end_page()

loaded()  # a new set of documents starts embedding in the background now, not on the next page
twins = duplicates()
# the user's own files first: an upload's card landed below the samples, out of view
for src in sorted(session.sources, key=lambda s: s["kind"] == "sample"):
    doc, error = load(src)
    with st.container(border=True):
        head = st.container(horizontal=True, vertical_alignment="center")  # buttons wrap when narrow
        kind = "sample" if src["kind"] == "sample" else "upload"
        n = len(src["data"] or b"")
        size = "" if not n else f" · {n:,} bytes" if n < 1024 else f" · {n / 1024:,.0f} KB"
        title = doc.name if doc is not None else src["name"]
        head.markdown(f"**{md(title)}**  \n:gray[{kind}{size}]", width="stretch")
        if doc is not None and head.button(
            "Explore",
            key=W.OPEN_SOURCE(src["key"]),
            icon=":material/view_agenda:",
            on_click=open_source,
            args=(src["key"],),
        ):
            st.switch_page(PAGES["explore"])
        head.button(
            "Remove",
            key=W.REMOVE_SOURCE(src["key"]),
            icon=":material/delete:",
            on_click=remove_source,
            args=(src["key"],),
        )
        if doc is None:
            st.error(md(error), icon=":material/error:")  # it quotes the file name
            continue
        if src["key"] in twins:
            st.warning(
                md(f"The same text as {twins[src['key']]}, loaded above: the chunks and indexes count it once."),
                icon=":material/content_copy:",
            )
            continue
        p = summary(doc.id, model_arg() or "", doc)
        facts = [
            ("Characters", f"{p.chars:,}"),
            ("Tokens", f"{p.tokens:,}"),
            ("Pages", f"{p.pages:,}" if p.pages else "—"),
            ("Headings", *_structure_count(p.n_headings, p.headings_read, p.kind)),
            ("Code blocks", *_structure_count(p.n_code_blocks, p.structure_read, p.kind)),
            ("Tables", *_structure_count(p.n_tables, p.structure_read, p.kind)),
            ("Script · language", f"{p.script} · {LANGUAGE_NAMES.get(p.language, p.language)}"),
        ]
        st.html(render_facts(facts))
        if p.hybrid_choice:
            st.markdown(
                f":material/alt_route: **hybrid** would use **{md(p.hybrid_choice)}**: {md(p.hybrid_reason)}"
            )
        if steps := cleanup_steps(doc.cleanup):
            st.caption("Clean-up: " + " · ".join(md(step) for step in steps))
        for w in doc.warnings:
            st.warning(md(w), icon=":material/warning:")  # warnings quote the file name
