"""Documents: upload files or open samples, see what each one is, switch clean-up steps."""

from __future__ import annotations

import streamlit as st

from explorer.documents import samples
from explorer.documents.document import Document
from explorer.documents.profile import profile
from explorer.errors import ExplorerError
from explorer.limits import MAX_FILE_BYTES
from explorer.render.html import facts as render_facts
from pages import _common as c

S = st.session_state

c.page_header(
    "Documents",
    "Upload PDF, Markdown or text files, or open a bundled sample. Files stay in your browser "
    "session only; nothing is sent anywhere.",
)

left, right = st.columns([0.62, 0.38], gap="large")
with left:
    files = st.file_uploader(
        "Upload files",
        type=["pdf", "md", "markdown", "txt"],
        accept_multiple_files=True,
        key=f"w.upload{S.uploader_gen}",
        help=f"PDF, Markdown or plain text, up to {MAX_FILE_BYTES // 2**20} MB each. "
        "Several files at once are fine.",
    )
    st.caption(
        f"Up to {MAX_FILE_BYTES // 2**20} MB per file: a file marked red in the box above is larger "
        "and was not uploaded (split it, or use the CLI)."
    )
    if files:
        for f in files:
            S.doc_key = c.add_upload(f.name, f.getvalue())
        S.pop("chunk_sel", None)
        S.uploader_gen += 1  # a fresh, empty uploader: the list below is the source of truth
        st.rerun()
    names = list(samples.SAMPLES)
    S["w.samples"] = [s["sample"] for s in S.sources if s["kind"] == "sample"]

    def _on_samples() -> None:
        chosen = S["w.samples"]
        for s in [s for s in S.sources if s["kind"] == "sample" and s["sample"] not in chosen]:
            c.remove_source(s["key"])
        for name in chosen:
            c.add_sample(name)
        if chosen and not c.current_source():
            S.doc_key = f"sample:{chosen[-1]}"

    st.multiselect(
        "Bundled samples",
        names,
        key="w.samples",
        on_change=_on_samples,
        help="Original texts written for Chunk Explorer: a French report, a Markdown guide "
        "and a multi-page PDF.",
    )

with right:
    st.markdown("**Clean-up** (applies to every document)")
    for short, (field, label, help_) in c.CLEANUP_FLAGS.items():
        key = f"w.clean.{short}"
        S[key] = bool(S.cleanup.get(field))
        st.toggle(
            label,
            key=key,
            help=help_ + " Offsets always index the cleaned text you see.",
            on_change=lambda f=field, k=key: S.cleanup.__setitem__(f, bool(S[k])),
        )

st.divider()
if not S.sources:
    st.info("No documents yet: upload a file or pick a sample above.")
    st.stop()


@st.cache_data(max_entries=64, show_spinner=False)
def _summary(doc_id: str, model: str, _doc: Document):
    """The document's profile, tokens in the picked model's word pieces (cached by id and model:
    counting tokens of a long text takes a moment)."""
    try:
        return profile(_doc, model or None)
    except ExplorerError:  # a local model without a fast tokenizer: count with the default one
        return profile(_doc)


def _open(key: str, page: str) -> None:
    S.doc_key = key
    S.pop("chunk_sel", None)


for src in list(S.sources):
    doc, error = c.load(src)
    with st.container(border=True):
        head = st.columns([0.64, 0.18, 0.18], vertical_alignment="center")
        kind = "sample" if src["kind"] == "sample" else "upload"
        n = len(src["data"] or b"")
        size = "" if not n else f" · {n:,} bytes" if n < 1024 else f" · {n / 1024:,.0f} KB"
        title = doc.name if doc is not None else src["name"]
        head[0].markdown(f"**{c.md(title)}**  \n:gray[{kind}{size}]")
        if doc is not None and head[1].button(
            "Explore",
            key=f"w.open.{src['key']}",
            icon=":material/view_agenda:",
            width="stretch",
            on_click=_open,
            args=(src["key"], "explore"),
        ):
            st.switch_page(c.PAGES["explore"])
        head[2].button(
            "Remove",
            key=f"w.rm.{src['key']}",
            icon=":material/delete:",
            width="stretch",
            on_click=c.remove_source,
            args=(src["key"],),
        )
        if doc is None:
            st.error(error, icon=":material/error:")
            continue
        p = _summary(doc.id, c.model_arg() or "", doc)
        lang = {
            "en": "English",
            "fr": "French",
            "de": "German",
            "es": "Spanish",
            "zh": "Chinese",
            "ja": "Japanese",
            "ko": "Korean",
        }.get(p.language, p.language)
        facts = [
            ("Characters", f"{p.chars:,}"),
            ("Tokens", f"{p.tokens:,}"),
            ("Pages", f"{p.pages:,}" if p.pages else "—"),
            ("Headings", f"{p.n_headings:,}"),
            ("Code blocks", f"{p.n_code_blocks:,}"),
            ("Tables", f"{p.n_tables:,}"),
            ("Script · language", f"{p.script} · {lang}"),
        ]
        c.html(render_facts(facts))
        if p.hybrid_choice:
            st.markdown(
                f":material/alt_route: **hybrid** would use **{c.md(p.hybrid_choice)}**: {c.md(p.hybrid_reason)}"
            )
        if doc.cleanup:
            st.caption("Clean-up: " + " · ".join(doc.cleanup))
        for w in doc.warnings:
            st.warning(w, icon=":material/warning:")
