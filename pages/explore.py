"""Explore: how one strategy cuts one document, chunk by chunk."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from explorer.errors import ExplorerError
from explorer.render.html import FLAG_LABELS, holders, legend, render_chunks, window_around
from pages import _common as c
from pages._textview import text_view

S = st.session_state

c.page_header(
    "Explore",
    "How one strategy cuts your document. Hover a chunk for its details, click it to inspect it; "
    "select text to see which chunks hold it.",
)
doc = c.doc_picker()
if doc is None:
    st.stop()
c.config_editor(multi=False)
c.model_settings()
cfg = c.active_config_dict()
try:
    config = c.config_of(cfg)
except ExplorerError as err:
    st.warning(f"Fix the parameters in the sidebar: {err}", icon=":material/tune:")
    st.stop()

out = c.chunk(doc, config)
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
an = c.analyse(doc, config, out)
n = len(chunks)
st.caption(f"**{c.md(doc.name)}** · {c.md(config.display)} · {len(doc.text):,} characters")

# -- stats strip ---------------------------------------------------------------------------
stats = an.stats
cols = st.columns(7)
cols[0].metric("Chunks", f"{n:,}", help="Number of chunks of this document.")
cols[1].metric(
    "Mean size",
    f"{stats.chars.mean:,.0f}",
    help=f"Characters (mean {stats.tokens.mean:,.0f} model tokens; CV {stats.chars.cv:.2f}).",
)
cols[2].metric("Median", f"{stats.chars.median:,.0f}", help="Characters.")
cols[3].metric("Min – max", f"{stats.chars.min:,} – {stats.chars.max:,}", help="Characters.")
cols[4].metric(
    "Over token limit",
    f"{stats.over_limit:,}",
    help=f"Chunks over the model's {stats.max_tokens}-token input ({c.md(c.model_label())}): the "
    "model would cut them when it embeds them.",
)
cols[5].metric(
    "Cut mid-sentence",
    f"{stats.mid_sentence:,}",
    help=f"Of which cut mid-word: {stats.mid_word:,}.",
)
cols[6].metric("Tiny", f"{stats.tiny:,}", help=f"Shorter than {stats.tiny_chars} characters.")

# -- selection: chunk number, page, or a table row -------------------------------------------
table_sel = (S.get("w.table") or {}).get("selection", {}).get("rows") or []
if table_sel and table_sel != S.get("table_last"):
    S.chunk_sel = table_sel[0]
S.table_last = table_sel
sel = min(max(int(S.get("chunk_sel", 0) or 0), 0), n - 1)
S.chunk_sel = sel
bounds = [(ch.start, ch.end) for ch in chunks]


def _on_chunk() -> None:
    S.chunk_sel = int(S["w.chunk"])


def _on_page() -> None:
    page = next((p for p in doc.pages if p.number == S["w.page"]), None)
    if page is not None:
        S.chunk_sel = next((i for i, ch in enumerate(chunks) if ch.end > page.start), n - 1)


nav = st.columns([1.2, 1.2, 1.4, 3.2], vertical_alignment="bottom")
S["w.chunk"] = sel
nav[0].number_input("Chunk", 0, n - 1, step=1, key="w.chunk", on_change=_on_chunk)
if doc.pages:
    here = chunks[sel].pages[0] if chunks[sel].pages else 1
    S["w.page"] = here
    nav[1].number_input("Page", 1, doc.pages[-1].number, step=1, key="w.page", on_change=_on_page)
show_index = nav[2].toggle("Chunk numbers", value=True, key="w.show_index")

flags = {i: f for i, f in enumerate(an.flags) if f}
lo, hi = window_around(bounds, sel, len(doc.text))
mark = S.get("explore_mark")
mark = mark if mark and mark[0] == doc.id and mark[2] <= len(doc.text) else None


def _on_pick(position: int) -> None:
    S.chunk_sel = position


def _on_select(start: int, end: int) -> None:
    S.explore_mark = [doc.id, start, end]


def _use_mark() -> None:
    _, ms, me = S.explore_mark
    c.use_as_answer(doc, ms, me)
    S.goto = c.PAGES["retrieve"]


left, right = st.columns([0.62, 0.38], gap="medium")
with left:
    c.html(legend())
    if (lo, hi) != (0, len(doc.text)):
        st.caption(
            f"Showing characters {lo:,}–{hi:,} of {len(doc.text):,} around chunk {sel}: "
            "move with the chunk or page number."
        )
    if mark:
        _, ms, me = mark
        whole, part = holders(bounds, ms, me)
        where = (
            f"whole in chunk{'s' if len(whole) > 1 else ''} {', '.join(str(chunks[i].index) for i in whole)}"
            if whole
            else f"spread over chunks {', '.join(str(chunks[i].index) for i in part)}"
            if part
            else "in no chunk"
        )
        with st.container(horizontal=True, vertical_alignment="center"):
            st.caption(f"**Selected** characters {ms:,}–{me:,} ({me - ms:,} chars) · {where}")
            st.button(
                "Use as expected answer",
                key="w.mark.use",
                icon=":material/flag:",
                type="tertiary",
                help="Open Retrieve with this exact span as the expected answer.",
                on_click=_use_mark,
            )
            st.button(
                "Clear",
                key="w.mark.clear",
                icon=":material/close:",
                type="tertiary",
                on_click=lambda: S.pop("explore_mark", None),
            )
    text_view(
        render_chunks(
            doc.text,
            chunks,
            lo=lo,
            hi=hi,
            selected=sel,
            flags=flags,
            tokens=an.tokens,
            marks=[(mark[1], mark[2])] if mark else (),
            show_index=show_index,
            height=620,
            interactive=True,
            mark_title="Selected text",
        ),
        key="w.text",
        view=f"{doc.id}:{lo}:{hi}",
        selected=sel,
        text=doc.text,
        on_pick=_on_pick,
        on_select=_on_select,
    )

# -- inspector ---------------------------------------------------------------------------
with right:
    ch = chunks[sel]
    tok = an.tokens[sel]
    st.subheader(f"Chunk {ch.index} of {n}", anchor=False)
    pages = (
        f" · page {ch.pages[0]}"
        if len(ch.pages) == 1
        else (f" · pages {ch.pages[0]}–{ch.pages[-1]}" if ch.pages else "")
    )
    st.caption(f"Characters {ch.start:,}–{ch.end:,} · {ch.chars:,} chars · {tok:,} tokens{pages}")
    if ch.headings:
        st.markdown("**Section** " + " › ".join(c.md(h) for h in ch.headings))
    st.markdown(f"**Ends because** {c.md(ch.reason)}")
    if an.flags[sel]:
        st.markdown(
            " ".join(f":red-badge[:material/warning: {FLAG_LABELS.get(f, f)}]" for f in an.flags[sel])
        )
    st.code(ch.text, language=None, wrap_lines=True, height=240)
    with st.expander("Neighbours", icon=":material/swap_horiz:"):
        for label, j in (("Previous", sel - 1), ("Next", sel + 1)):
            if 0 <= j < n:
                nb = chunks[j]
                shared = max(0, min(ch.end, nb.end) - max(ch.start, nb.start))
                gap = "" if shared else f" · gap of {max(nb.start - ch.end, ch.start - nb.end):,} chars"
                st.markdown(
                    f"**{label}: chunk {nb.index}** · {nb.chars:,} chars"
                    + (f" · shares {shared:,} chars" if shared else gap)
                )
                edge = nb.text[-300:] if j < sel else nb.text[:300]
                st.code(
                    ("…" if j < sel and nb.chars > 300 else "")
                    + edge
                    + ("…" if j > sel and nb.chars > 300 else ""),
                    language=None,
                    wrap_lines=True,
                )
            else:
                st.caption(f"{label}: none")
    with st.expander("What would be embedded", icon=":material/memory:"):
        from explorer.retrieval.search import EmbedOptions, embedded_text

        opts = S.get("embed_opts") or {}
        try:
            text = embedded_text(ch, doc, EmbedOptions(**opts))
        except ExplorerError as err:
            st.error(str(err))
            text = ch.text
        limit = stats.max_tokens
        st.caption(
            f"{tok:,} tokens of the model's {limit}-token input"
            + (" · **the model cuts the rest**" if tok > limit else "")
            + (" · with the retrieval options of the Retrieve page" if any(opts.values()) else "")
        )
        st.code(text, language=None, wrap_lines=True, height=200)

# -- chunk table ----------------------------------------------------------------------------
st.subheader("All chunks", anchor=False)
table = pd.DataFrame(
    {
        "chunk": [ch.index for ch in chunks],
        "start": [ch.start for ch in chunks],
        "end": [ch.end for ch in chunks],
        "chars": [ch.chars for ch in chunks],
        "tokens": list(an.tokens),
        f"length ({config.param_dict.get('length', 'chars')})": [ch.length for ch in chunks],
        "pages": [", ".join(map(str, ch.pages)) for ch in chunks],
        "section": [" › ".join(ch.headings) for ch in chunks],
        "ends because": [ch.reason for ch in chunks],
        "flags": [", ".join(f.replace("_", "-") for f in fl) for fl in an.flags],
    }
)
st.dataframe(
    table,
    hide_index=True,
    on_select="rerun",
    selection_mode="single-row",
    key="w.table",
    height=320,
    column_config={"chunk": st.column_config.NumberColumn(width="small")},
)
st.caption("Select a row to inspect that chunk.")
