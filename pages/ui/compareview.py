"""Compare's side-by-side view: every configuration's chunks over the same window of text, in
one component, so that the panels line up, scroll together and show where they cut differently.

Why one component (Streamlit's components v2, no build step: ``compareview.js`` and
``compareview.css`` beside this file): separate ``st.html`` blocks cannot scroll together and
start lower when a title wraps. Here the panels sit in one CSS grid (a row of titles, then a row
of texts, so every text starts at the same height), scrolling one scrolls the others to the
same text position, and a click on a chunk reports ``pick``: ``{"panel", "chunk"}`` (a click on
an overlap moves to the next chunk covering it, as in the text view).

The cuts only some configurations make are marked in each panel
(:mod:`explorer.render.boundaries`); every piece of text and every label is escaped here.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import streamlit as st

from explorer.documents.document import Document
from explorer.render.boundaries import (
    BoundaryDiff,
    boundary_diff,
    identical_groups,
    mark_cuts,
    marker,
    summary,
)
from explorer.render.html import CSS as CHUNK_CSS
from explorer.render.html import legend, render_chunks
from explorer.render.unread import UNREAD_KEY
from explorer.text.wording import plural
from pages.ui.inspector import inspector
from pages.ui.safe import md
from pages.ui.state import W, session

NAME = "chunk_explorer.compare_view"
_HERE = Path(__file__).parent
JS = (_HERE / "compareview.js").read_text(encoding="utf-8")
CSS = (_HERE / "compareview.css").read_text(encoding="utf-8")
_COMPONENT = st.components.v2.component(NAME, js=JS, css=CSS, isolate_styles=False)

#: Height of each panel's text, in pixels.
TEXT_HEIGHT = 480


@dataclass
class Panel:
    """One configuration's column: its label and colour, and its chunks or why there are none."""

    label: str
    color: str
    chunks: Sequence[Any] = ()
    analysis: Any = None
    message: str = ""  # why there are no chunks (plain text)
    kind: str = ""  # "pending", "error" or "empty" with a message
    number: str = ""  # what the diff summary calls it ("1")
    #: The truncation audit: chunk position → offset where the model stops reading it.
    unread: Mapping[int, int] = field(default_factory=dict)


def per_row(n: int) -> int:
    return 2 if n == 4 else max(1, min(3, n))


def grid_html(
    text: str,
    panels: Sequence[Panel],
    lo: int,
    hi: int,
    diff: BoundaryDiff | None,
    selected: tuple[int, int] | None = None,
) -> str:
    """The panels as one grid: for each row of panels, their headers, then their texts.
    ``diff`` is over the panels that have chunks (in order); ``selected`` is (panel, chunk)."""
    with_chunks = [i for i, p in enumerate(panels) if p.chunks]
    cols = per_row(len(panels))
    rows = " ce-cmp-rows" if len(panels) > cols else ""  # two rows of panels share the window's height
    out = [CHUNK_CSS, f'<div class="ce-cmp{rows}" style="grid-template-columns:repeat({cols},minmax(0,1fr))">']
    if any(p.unread for p in panels):
        out.append(f'<div class="ce-cmp-legend ce-legend" style="grid-column:1/-1">{UNREAD_KEY}</div>')
    if diff is not None and len(diff.cuts) > 1:
        some = (
            ' · <span class="ce-cut ce-cut-some ce-cut-key"></span>a cut some configurations make, not all'
            if len(diff.cuts) > 2
            else ""
        )
        out.append(
            '<div class="ce-cmp-legend" style="grid-column:1/-1"><span class="ce-cut ce-cut-only ce-cut-key">'
            f"</span>a cut only this configuration makes{some} · click a chunk to inspect it</div>"
        )
    for first in range(0, len(panels), cols):
        row = range(first, min(first + cols, len(panels)))
        for i in row:
            d = with_chunks.index(i) if diff is not None and i in with_chunks else None
            out.append(_header(i, panels, with_chunks, diff, d))
        for i in row:
            d = with_chunks.index(i) if diff is not None and i in with_chunks else None
            sel = selected[1] if selected and selected[0] == i else None
            out.append(_body(i, panels[i], text, lo, hi, diff, d, sel, [panels[j] for j in with_chunks]))
    out.append("</div>")
    return "".join(out)


def _header(
    i: int, panels: Sequence[Panel], with_chunks: list[int], diff: BoundaryDiff | None, d: int | None
) -> str:
    p = panels[i]
    title = (
        f'<div class="ce-cmp-title"><span class="ce-cmp-dot" style="background:{p.color}"></span>'
        f"{html.escape(p.label)}</div>"
    )
    facts = []
    if p.chunks:
        sizes = [ch.end - ch.start for ch in p.chunks]
        facts.append(f"{plural(len(sizes), 'chunk')} · mean {sum(sizes) / len(sizes):,.0f} chars")
    if diff is not None and d is not None and len(diff.cuts) > 1:
        only = len(diff.unique[d])
        facts.append(
            f'<span class="ce-cmp-only"><span class="ce-cut ce-cut-only ce-cut-key"></span>'
            f"{plural(only, 'cut')} only here</span>"
        )
        twins = diff.twins[d]
        if twins:
            names = ", ".join(html.escape(panels[with_chunks[t]].number) for t in twins)
            facts.append(f'<span class="ce-cmp-same" data-identical="1">identical chunks to {names}</span>')
    sub = f'<div class="ce-cmp-sub">{" · ".join(facts)}</div>' if facts else ""
    return f'<div class="ce-cmp-head" data-panel="{i}">{title}{sub}</div>'


def _body(
    i: int,
    p: Panel,
    text: str,
    lo: int,
    hi: int,
    diff: BoundaryDiff | None,
    d: int | None,
    selected: int | None,
    named: Sequence[Panel],
) -> str:
    if not p.chunks:
        msg = p.message or "No chunks."
        if p.kind == "pending":  # written for Markdown (its escapes undone); errors are plain text
            msg = re.sub(r"\\(.)", r"\1", msg)
        return (
            f'<div class="ce-cmp-body" data-panel="{i}"><div class="ce-cmp-msg ce-cmp-{p.kind or "empty"}">'
            f"{html.escape(msg)}</div></div>"
        )
    flags = {j: f for j, f in enumerate(p.analysis.flags) if f} if p.analysis is not None else {}
    tokens = p.analysis.tokens if p.analysis is not None else None
    body = render_chunks(
        text,
        p.chunks,
        lo=lo,
        hi=hi,
        selected=selected,
        flags=flags,
        tokens=tokens,
        height=TEXT_HEIGHT,
        with_css=False,
        interactive=True,
        unread=p.unread,
    )
    if diff is not None and d is not None and len(diff.cuts) > 1:
        body = mark_cuts(body, cut_marks(diff, d, named, lo, hi))
    return f'<div class="ce-cmp-body" data-panel="{i}">{body}</div>'


def cut_marks(diff: BoundaryDiff, d: int, named: Sequence[Panel], lo: int, hi: int) -> dict[int, str]:
    """Markers of panel ``d``'s cuts in ``[lo, hi]`` that not every configuration makes."""
    marks = {}
    for x in diff.unique[d]:
        if lo <= x <= hi:
            marks[x] = marker("only", f"Only {named[d].label} cuts here (character {x:,})")
    for x in diff.partial[d]:
        if lo <= x <= hi:
            makers = diff.makers(x)
            who = ", ".join(named[j].number for j in makers)
            missing = ", ".join(named[j].number for j in range(len(named)) if j not in makers)
            marks[x] = marker("some", f"Cut here by {who}, not by {missing} (character {x:,})")
    return marks


def compare_view(
    body: str,
    *,
    key: str,
    view: str,
    selected: tuple[int, int] | None,
    on_pick: Callable[[int, int], None],
) -> None:
    """Show :func:`grid_html`'s ``body``; ``view`` names what is shown (document, window,
    configurations) so that the scroll position is kept while it stays the same;
    ``on_pick(panel, chunk)`` runs (before the rerun) when a chunk is clicked."""

    def picked() -> None:
        state = session.widget(key)
        value = state.get("pick") if hasattr(state, "get") else getattr(state, "pick", None)
        if isinstance(value, dict):
            try:
                on_pick(int(value["panel"]), int(value["chunk"]))
            except (KeyError, TypeError, ValueError):
                return

    _COMPONENT(
        key=key,
        data={"html": body, "view": view, "selected": list(selected) if selected else None},
        on_pick_change=picked,
    )


# -- the tab ------------------------------------------------------------------------------------
def side_by_side(doc: Document, panels: Sequence[Panel], ids: Sequence[Any]) -> None:
    """The window controls, the boundary diff's summary, the panels (``ids``: the
    configuration of each), and the inspector of the chunk clicked in one of them."""
    lo, hi = _window(doc)
    good = [i for i, p in enumerate(panels) if p.chunks]
    diff = (
        boundary_diff([[(ch.start, ch.end) for ch in panels[i].chunks] for i in good])
        if len(good) > 1
        else None
    )
    if diff is not None:
        line = summary(diff, [panels[i].number for i in good])
        same = identical_groups(diff)
        st.markdown(
            f":material/content_cut: **Cuts:** {md(line)}"
            + (" :green-badge[:material/drag_handle: identical chunks]" if same else "")
        )
    st.html(legend(selection=True))
    pick = _pick(doc, panels, ids)

    def on_pick(panel: int, position: int) -> None:
        if 0 <= panel < len(ids):
            session.cmp_pick = [doc.id, ids[panel], position]

    compare_view(
        grid_html(doc.text, panels, lo, hi, diff, pick),
        key=W.CMP_VIEW,
        view=f"{doc.id}:{lo}:{hi}:{','.join(map(str, ids))}",
        selected=pick,
        on_pick=on_pick,
    )
    if pick is None:
        st.caption("Click a chunk in any panel to inspect it here.")
        return
    p = panels[pick[0]]
    st.markdown(f":material/ads_click: Inspecting a chunk of **{md(p.label)}**")
    inspector(doc, p.chunks, p.analysis, pick[1])


def _pick(doc: Document, panels: Sequence[Panel], ids: Sequence[Any]) -> tuple[int, int] | None:
    """(panel, chunk position) of the chunk clicked last, if it is still on show."""
    pick = session.cmp_pick
    if not pick or pick[0] != doc.id or pick[1] not in ids:
        return None
    panel = list(ids).index(pick[1])
    chunks = panels[panel].chunks
    if not chunks or panels[panel].analysis is None:
        return None
    return panel, min(max(int(pick[2]), 0), len(chunks) - 1)


def _window(doc: Document) -> tuple[int, int]:
    """The same window of text for every panel: its width, and a page or a start."""
    n_text = len(doc.text)
    ctl = st.columns([1, 1, 3], vertical_alignment="bottom")
    width = ctl[0].selectbox(
        "Window",
        [2_000, 5_000, 10_000, 20_000],
        index=1,
        format_func=lambda w: f"{w:,} characters",
        key=W.CMP_WIDTH,
    )
    if doc.pages:
        page = ctl[1].number_input("Page", 1, doc.pages[-1].number, step=1, key=W.CMP_PAGE)
        lo = next(p.start for p in doc.pages if p.number == page)
    else:
        max_lo = max(0, n_text - width)
        lo = ctl[1].number_input("Start at character", 0, max_lo, step=500, key=W.CMP_LO) if max_lo else 0
    hi = min(n_text, lo + width)
    ctl[2].caption(
        f"Characters {lo:,}–{hi:,} of {n_text:,}: the same window for every configuration. "
        "Scroll one panel, the others follow."
    )
    return lo, hi
