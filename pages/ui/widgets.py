"""Sidebar widgets: the document picker and the configuration editor (its parameter widgets are
:mod:`pages.ui.paramwidgets`).

Widgets are re-seeded from the session every time they are drawn (after a page switch the old
widget value is stale, not live), and write back to it when the user changes them. The editor
adapts the parameters to what the user set each run (:func:`pages.ui.configs.refresh`): a note
under the widget of the parameter it changed, a conflict under its widget, the page on the last valid settings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from explorer.documents.document import Document
from explorer.errors import ExplorerError
from explorer.strategies import get_strategy, strategy_names
from explorer.strategies.config import StrategyConfig
from pages.ui import compute
from pages.ui.background import drop_other_documents_jobs
from pages.ui.configs import (
    MAX_CONFIGS,
    active_config_dict,
    adapted,
    config_labels,
    config_of,
    conflicts_of,
    duplicate_active,
    notes_of,
    refresh,
    remove_active,
)
from pages.ui.flow import end_page
from pages.ui.nav import PAGES
from pages.ui.paramwidgets import param_widget
from pages.ui.safe import md
from pages.ui.sources import current_source, doc_label, load, loaded
from pages.ui.state import ConfigDict, W, session
from pages.ui.switching import anchor_selection, follow_anchor, pending_anchor, switch_strategy


def synced(
    draw: Callable, label: str, *args: Any, key: str, value: Any, on_change: Callable, **kwargs: Any
) -> Any:
    """``draw(label, *args, key=key, ...)`` showing ``value``; ``on_change(new value)`` when the user
    changes it."""
    session.seed(key, value)
    return draw(label, *args, key=key, on_change=lambda: on_change(session.widget(key)), **kwargs)


def choose(draw: Callable, label: str, labels: dict, **kwargs: Any) -> Any:
    """:func:`synced` over the keys of ``labels``, each shown as its label."""
    return synced(draw, label, list(labels), format_func=labels.get, **kwargs)


def _pick_doc(key: str) -> None:
    session.doc_key = key
    del session.chunk_sel
    doc = _current_doc()
    if doc is not None:
        drop_other_documents_jobs(doc.id)


def doc_picker(where: Any = None) -> Document | None:
    """Sidebar select of the document a page works on; None (with a hint) when none loads."""
    where = where or st.sidebar
    docs = loaded()
    if not docs:
        st.info("No document loaded yet: add a sample or upload a file on the **Documents** page.")
        st.page_link(PAGES["documents"], label="Go to Documents", icon=":material/upload_file:")
        return None
    keys = [s["key"] for s, _ in docs]
    if session.doc_key not in keys:
        session.doc_key = keys[0]
    labels = {s["key"]: doc_label(s, d) for s, d in docs}
    choose(where.selectbox, "Document", labels, key=W.DOC, value=session.doc_key, on_change=_pick_doc)
    return dict(zip(keys, [d for _, d in docs], strict=True))[session.doc_key]


def own_documents_hint() -> None:
    """A newcomer sees the bundled samples: one line saying where their own documents go."""
    if all(src["kind"] == "sample" for src in session.sources):
        left, right = st.columns([0.75, 0.25], vertical_alignment="center")
        left.caption(
            ":material/info: A bundled sample is shown. To see how your own documents are cut, "
            "upload a PDF, Markdown or text file on **Documents**."
        )
        right.page_link(PAGES["documents"], label="Upload yours", icon=":material/upload_file:")


def documents_or_stop() -> list[Document]:
    """Every loaded document; when there is none, the picker's hint, and the page stops."""
    docs = [d for _, d in loaded()]
    if not docs:
        doc_picker()
        end_page()
    return docs


def config_editor(*, multi: bool, title: str = "Strategy") -> None:
    """Sidebar: pick the configuration to edit (add/remove when ``multi``), its strategy and
    parameters. Errors appear beside the parameters."""
    sb = st.sidebar
    sb.subheader(title)
    ids = [c["id"] for c in session.configs]
    picker = sb.container()  # filled last: its labels show the parameters as the widgets below set them
    if multi:
        c1, c2 = sb.columns(2)
        c1.button(
            "Add",
            icon=":material/add:",
            key=W.CFG_ADD,
            on_click=duplicate_active,
            disabled=len(ids) >= MAX_CONFIGS,
            width="stretch",
            help=f"Add a copy of this configuration (at most {MAX_CONFIGS}).",
        )
        c2.button(
            "Remove",
            icon=":material/remove:",
            key=W.CFG_REMOVE,
            on_click=remove_active,
            disabled=len(ids) <= 1,
            width="stretch",
        )
    active = active_config_dict()
    strategy_widgets(active, sb)
    if multi:  # the others keep their state: say which ones show their last valid settings
        for cfg in session.configs:
            if cfg is not active and not adapted(cfg).ok:
                _last_valid_note(cfg)
    else:
        _keep_place(active)
    if len(ids) > 1 or multi:
        choose(
            picker.selectbox,
            "Configuration",
            config_labels(),
            key=W.CFG,
            value=session.active_cfg,
            on_change=lambda cid: setattr(session, "active_cfg", cid),
            help="Each configuration is a strategy with its own parameters. Compare, Retrieve "
            "and Evaluate use all of them; Explore shows the one selected here.",
        )


def strategy_widgets(cfg: ConfigDict, where: Any, *, fixed_strategy: bool = False) -> StrategyConfig | None:
    """Strategy select + one widget per parameter, showing the values as adapted to what the
    user set (:func:`pages.ui.configs.refresh`): a value that conflicts is flagged under its
    widget, what was adapted under the widget of the parameter it changed. Returns the configuration to show:
    the last valid one while a value conflicts (said on the page), None if there never was one."""
    if not fixed_strategy:
        names = strategy_names()
        skey = W.STRATEGY(cfg["id"])
        session.seed(skey, cfg["strategy"] if cfg["strategy"] in names else names[0])
        where.selectbox("Strategy", names, key=skey, on_change=_switch, args=(cfg,))
        cfg["strategy"] = session.widget(skey)
    strategy = get_strategy(cfg["strategy"])
    where.caption(strategy.description)
    got = refresh(cfg)
    notes = notes_of(cfg, got)
    said = {n: note.split(" ", 1)[0] for n, note in enumerate(notes)}  # a note starts with its parameter
    for p in strategy.params:
        param_widget(p, cfg, where)
        if p.name in got.conflicts:
            where.error(md(got.conflicts[p.name]), icon=":material/error:")
        for n in [n for n, name in said.items() if name == p.name]:  # beside the widget it changed
            where.caption(f":material/tune: {md(notes[n])}")
            del said[n]
    for name, message in got.conflicts.items():
        if name not in strategy.param_names():  # no widget to put it under
            where.error(md(message), icon=":material/error:")
    for n in said:
        where.caption(f":material/tune: {md(notes[n])}")
    if strategy.needs_embedder:
        where.caption(":material/memory: Embeds text with the model: the first run shows progress.")
    try:
        config = config_of(cfg)
    except ExplorerError:
        return None
    if not got.ok:
        _last_valid_note(cfg)
    return config


def _last_valid_note(cfg: ConfigDict) -> None:
    """A line on the page: it shows ``cfg``'s last valid settings while one of its values conflicts."""
    try:
        shown = config_of(cfg).display
    except ExplorerError:
        return
    names = ", ".join(conflicts_of(cfg))
    st.caption(
        f":material/history: Showing the last valid settings, {md(shown)}: fix {md(names)} in the sidebar."
    )


def _current_doc() -> Document | None:
    src = current_source()
    return load(src)[0] if src is not None else None


def _switch(cfg: ConfigDict) -> None:
    """Callback of the strategy select: switch (:func:`pages.ui.switching.switch_strategy`), and
    keep Explore's view at the same place in the text: the selected chunk's start."""
    doc = _current_doc() if cfg.get("id") == session.active_cfg else None
    start = None
    if doc is not None:
        try:
            out = compute.peek(doc, config_of(cfg))
        except ExplorerError:
            out = None
        if out is not None and out.chunks:
            start = out.chunks[min(max(int(session.chunk_sel or 0), 0), len(out.chunks) - 1)].start
    switch_strategy(cfg)
    if doc is not None and start is not None:
        anchor_selection(doc.id, cfg["id"], start)


def _keep_place(cfg: ConfigDict) -> None:
    """After a strategy switch, select the new chunk that holds the place the view was at (its
    chunks are made here, as the page would; an embedding strategy may take another run)."""
    doc = _current_doc()
    if doc is None or pending_anchor(doc.id, cfg["id"]) is None:
        return
    try:
        out = compute.chunk(doc, config_of(cfg))
    except ExplorerError:
        return
    if not out.pending:
        follow_anchor(doc.id, cfg["id"], [(ch.start, ch.end) for ch in out.chunks])
