"""The interactive text view: chunk HTML in which a click picks a chunk and a selection marks a span.

Why a component: ``st.html`` cannot talk back, and a link would reload the page (and lose the
uploads). This one (Streamlit's components v2, no build step: ``textview.js`` and
``textview.css`` beside this file, passed inline) shows the HTML that
:func:`explorer.render.html.render_chunks` made with ``interactive=True`` and reports

- ``pick``: the position of the chunk clicked (a click on an overlap moves to the next
  chunk covering it, so each one stays reachable);
- ``select``: ``{"start", "end"}`` of the text the user selected, in document offsets (code
  points), read from the ``data-o`` offsets the renderer wrote, never by searching the text.

Given the number of chunks (``count``), the text box takes the keyboard focus (a click or Tab)
and its keys move the selection: ``j`` or ``→`` to the next chunk, ``k`` or ``←`` to the
previous one (reported as a ``pick``); the box scrolls to the chunk and keeps the focus.

Document text inside the HTML was escaped by the renderer; the script only reads attributes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

from explorer.strategies.base import trim
from pages.ui.state import session

NAME = "chunk_explorer.text_view"

_HERE = Path(__file__).parent
JS = (_HERE / "textview.js").read_text(encoding="utf-8")
CSS = (_HERE / "textview.css").read_text(encoding="utf-8")


#: Registered once per process; mounting re-registers it on a runtime that lacks it (AppTest).
_COMPONENT = st.components.v2.component(NAME, js=JS, css=CSS, isolate_styles=False)


def text_view(
    body: str,
    *,
    key: str,
    view: str,
    selected: int | None = None,
    count: int = 0,
    text: str = "",
    on_pick: Callable[[int], None] | None = None,
    on_select: Callable[[int, int], None] | None = None,
) -> None:
    """Show ``body`` (from ``render_chunks(..., interactive=True)``); ``view`` names what is shown
    (document and window) so the scroll position is kept while it stays the same; ``count``
    (the number of chunks) turns the next/previous keys on. The callbacks
    run before the rerun, like a widget's ``on_change``; ``on_select`` gets the selection
    within ``text`` (the document's), without the white space at its ends, and never an empty one."""

    def picked() -> None:
        value = _value(key, "pick")
        if on_pick is not None and isinstance(value, int | float):
            on_pick(int(value))

    def selected_span() -> None:
        value = _value(key, "select")
        if on_select is not None and isinstance(value, dict):
            try:
                start, end = int(value["start"]), int(value["end"])
            except (KeyError, TypeError, ValueError):
                return
            start, end = trim(text, max(start, 0), min(end, len(text)))
            if start < end:
                on_select(start, end)

    _COMPONENT(
        key=key,
        data={
            "html": body,
            "view": view,
            "selected": selected,
            "count": int(count) if on_pick is not None else 0,
            "pick": on_pick is not None,
            "select": on_select is not None,
        },
        on_pick_change=picked,
        on_select_change=selected_span,
    )


def _value(key: str, name: str) -> Any:
    state = session.widget(key)
    if state is None:
        return None
    return state.get(name) if hasattr(state, "get") else getattr(state, name, None)
