"""The pieces of Explore: the stats strip, the selected span's line, the chunk inspector, the table."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from explorer.documents.document import Document
from explorer.errors import ExplorerError
from explorer.render.html import flag_text
from explorer.render.inert import BIDI_CONTROLS, BIDI_SIGN
from explorer.render.layout import holders
from explorer.strategies.config import StrategyConfig
from explorer.text.chunk import Chunk
from explorer.text.wording import plural
from explorer.text.words import mid_word_where
from pages.ui.audit import chunk_reading, reading_note
from pages.ui.compute import Analysis, embed_options
from pages.ui.gold import use_as_answer
from pages.ui.model import limit_words, model_label, passage_room
from pages.ui.safe import err_text, md, sheet_safe
from pages.ui.state import W, session
from pages.ui.textbox import text_box


def metric_row() -> Any:
    """A row of metrics that wraps on a narrow window (in fixed columns their labels were cut
    to "Ch…" at 800 pixels)."""
    return st.container(horizontal=True, gap="medium")


def stats_strip(stats: Any, n: int) -> None:
    """Seven metrics of the chunks (``stats``: ``explorer.evaluation.metrics.ChunkStats``)."""
    row = metric_row()
    row.metric("Chunks", f"{n:,}", help="Number of chunks of this document.")
    row.metric(
        "Mean size",
        f"{stats.chars.mean:,.0f}",
        help=f"Characters (mean {stats.tokens.mean:,.0f} model tokens; CV {stats.chars.cv:.2f}).",
    )
    row.metric("Median", f"{stats.chars.median:,.0f}", help="Characters.")
    row.metric("Min – max", f"{stats.chars.min:,} – {stats.chars.max:,}", help="Characters.")
    row.metric(
        "Over token limit",
        f"{stats.over_limit:,}",
        help=f"Chunks over {limit_words(*passage_room())} ({md(model_label())}): the model would cut "
        "them when it embeds them.",
    )
    row.metric(
        "Cut mid-sentence",
        f"{stats.mid_sentence:,}",
        help=f"Of which cut mid-word: {stats.mid_word:,}.",
    )
    row.metric("Tiny", f"{stats.tiny:,}", help=f"Shorter than {stats.tiny_chars} characters.")


def mark_line(doc: Document, chunks: Sequence[Chunk], mark: list) -> None:
    """The text the user selected: where it is, which chunks hold it, and what to do with it."""
    _, ms, me = mark
    whole, part = holders([(ch.start, ch.end) for ch in chunks], ms, me)
    where = (
        f"whole in chunk{'s' if len(whole) > 1 else ''} {', '.join(str(chunks[i].index) for i in whole)}"
        if whole
        else f"spread over chunks {', '.join(str(chunks[i].index) for i in part)}"
        if part
        else "in no chunk"
    )
    with st.container(horizontal=True, vertical_alignment="center"):
        st.caption(f"**Selected** characters {ms:,}–{me:,} ({plural(me - ms, 'char')}) · {where}")
        with st.container(horizontal=True, width="content", wrap=False):  # the buttons wrap together
            st.button(
                "Use as expected answer",
                key=W.MARK_USE,
                icon=":material/flag:",
                type="tertiary",
                help="Open Retrieve with this exact span as the expected answer.",
                on_click=use_as_answer,
                args=(doc, ms, me),
            )
            st.button(
                "Clear",
                key=W.MARK_CLEAR,
                icon=":material/close:",
                type="tertiary",
                on_click=lambda: delattr(session, "explore_mark"),
            )


def inspector(
    doc: Document, chunks: Sequence[Chunk], an: Analysis, sel: int, beside: Callable[[], Any] | None = None
) -> None:
    """The selected chunk: where it is, why it ends, its flags, then what ``beside`` draws (the
    PDF page), its text and its neighbours."""
    ch, n, tok = chunks[sel], len(chunks), an.tokens[sel]
    st.subheader(f"Chunk {ch.index:,} of {n:,}", anchor=False)
    pages = (
        f" · page {ch.pages[0]}"
        if len(ch.pages) == 1
        else (f" · pages {ch.pages[0]}–{ch.pages[-1]}" if ch.pages else "")
    )
    st.caption(f"Characters {ch.start:,}–{ch.end:,} · {plural(ch.chars, 'char')} · {plural(tok, 'token')}{pages}")
    if ch.headings:
        st.markdown("**Section** " + " › ".join(md(h) for h in ch.headings))
    st.markdown(f"**Ends because** {md(ch.reason)}")
    if an.flags[sel]:
        st.markdown(
            " ".join(
                f":red-badge[:material/warning: {flag_text([f], mid_word_where(doc.text, ch.start, ch.end))}]"
                for f in an.flags[sel]
            )
        )
    reading = chunk_reading(ch)
    reading_note(reading)
    if beside is not None:
        beside()
    text_box(ch.text, key=W.BOX_CHUNK, label=f"Chunk {ch.index}'s text", height=240)
    controls = sorted(set(BIDI_CONTROLS.findall(ch.text)))
    if controls:
        st.caption(
            f"This chunk holds bidirectional controls ({', '.join(f'U+{ord(c):04X}' for c in controls)}): the box "
            f"above, the chunk's exact text, obeys them and may show words reordered; the text view marks each as {BIDI_SIGN}."
        )
    with st.expander("Neighbours", icon=":material/swap_horiz:"):
        for label, j in (("Previous", sel - 1), ("Next", sel + 1)):
            if 0 <= j < n:
                _neighbour(label, ch, chunks[j], before=j < sel)
            else:
                st.caption(f"{label}: none")
    with st.expander("What would be embedded", icon=":material/memory:"):
        _embedded(doc, ch, tok, an.stats.max_tokens)
        if reading is not None and reading.truncated:
            st.caption(f"Never embedded: the last {reading.unread_chars:,} characters of the chunk")
            text_box(ch.text[reading.read_chars :], key=W.BOX_UNREAD, label="Never embedded", height=160)


def _neighbour(label: str, ch: Chunk, nb: Chunk, *, before: bool) -> None:
    shared = max(0, min(ch.end, nb.end) - max(ch.start, nb.start))
    gap = "" if shared else f" · gap of {plural(max(nb.start - ch.end, ch.start - nb.end), 'char')}"
    st.markdown(
        f"**{label}: chunk {nb.index}** · {plural(nb.chars, 'char')}"
        + (f" · shares {plural(shared, 'char')}" if shared else gap)
    )
    edge = nb.text[-300:] if before else nb.text[:300]
    text_box(
        ("…" if before and nb.chars > 300 else "") + edge + ("…" if not before and nb.chars > 300 else ""),
        key=W.BOX_NEIGHBOUR(label.lower()),
        label=f"{label} chunk's edge",
    )


def _embedded(doc: Document, ch: Chunk, tok: int, limit: int) -> None:
    from explorer.retrieval.vectors import embedded_text

    opts = session.embed_opts
    try:
        text = embedded_text(ch, doc, embed_options())
    except ExplorerError as err:
        st.error(md(err_text(err)))
        text = ch.text
    room, cost = passage_room()
    st.caption(
        f"{plural(tok, 'token')} of {limit_words(room, cost)}"
        + (" · **the model cuts the rest**" if tok > limit else "")
        + (" · with the retrieval options of the Retrieve page" if opts["prepend_headings"] or opts["context_chars"] else "")
        + (f" · scored with its best {opts['piece_chars']:,}-character piece too" if opts.get("piece_chars") else "")
    )
    text_box(text, key=W.BOX_EMBEDDED, label="What would be embedded", height=200)


def chunk_table(chunks: Sequence[Chunk], an: Analysis, config: StrategyConfig, audit: Any = None) -> None:
    """Every chunk, one row each (``audit``: the truncation audit, for the characters the model
    never reads of each); selecting a row inspects that chunk.

    Shown only once the user turns it on (the choice stays for the session): the grid's 1.4 MB
    of JavaScript (Streamlit's dataframe) was a third of the script a new visitor's browser
    loaded before Explore's first view settled, for a table below the fold."""
    st.subheader("All chunks", anchor=False)
    shown = st.toggle(
        "Show the table of all chunks",
        value=session.show_table,
        key=W.TABLE_SHOW,
        on_change=lambda: setattr(session, "show_table", bool(session.widget(W.TABLE_SHOW))),
        help="One row per chunk: sort it, download it as CSV, or select a row to inspect that chunk.",
    )
    if not shown:
        st.caption(
            f"{plural(len(chunks), 'row')}: offsets, sizes, tokens, pages, section, why each chunk ends, its flags "
            "and what the model never reads of it."
        )
        return
    st.dataframe(
        sheet_safe(_table(chunks, an, config, audit)),
        hide_index=True,
        on_select="rerun",
        selection_mode="single-row",
        key=W.TABLE,
        height=320,
        column_config={"chunk": st.column_config.NumberColumn(width="small")},
    )
    st.caption("Select a row to inspect that chunk.")


def _table(chunks: Sequence[Chunk], an: Analysis, config: StrategyConfig, audit: Any) -> pd.DataFrame:
    reads = audit.reads if audit is not None else {}
    unit = config.param_dict.get("length", "chars")
    return pd.DataFrame(
        {
            "chunk": [ch.index for ch in chunks],
            "start": [ch.start for ch in chunks],
            "end": [ch.end for ch in chunks],
            "chars": [ch.chars for ch in chunks],
            "tokens": list(an.tokens),
            **({} if unit == "chars" else {f"length ({unit})": [ch.length for ch in chunks]}),  # chars: as above
            "pages": [", ".join(map(str, ch.pages)) for ch in chunks],
            "section": [" › ".join(ch.headings) for ch in chunks],
            "ends because": [ch.reason for ch in chunks],
            "flags": [", ".join(f.replace("_", "-") for f in fl) for fl in an.flags],
            "never embedded (chars)": [reads[i].unread_chars if i in reads else 0 for i in range(len(chunks))],
        }
    )


def table_selection() -> list[int]:
    """The rows selected in the chunk table (of the last run)."""
    return (session.widget(W.TABLE) or {}).get("selection", {}).get("rows") or []
