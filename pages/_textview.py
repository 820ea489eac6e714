"""The interactive text view: chunk HTML in which a click picks a chunk and a selection marks a span.

Why a component: ``st.html`` cannot talk back, and a link would reload the page (and lose the
uploads). This one (Streamlit's components v2, inline JavaScript, no build step) shows the HTML
that :func:`explorer.render.html.render_chunks` made with ``interactive=True`` and reports

- ``pick``: the position of the chunk clicked (a click on an overlap moves to the next
  chunk covering it, so each one stays reachable);
- ``select``: ``{"start", "end"}`` of the text the user selected, in document offsets (code
  points), read from the ``data-o`` offsets the renderer wrote, never by searching the text.

Document text inside the HTML was escaped by the renderer; the script only reads attributes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from explorer.strategies.base import trim

NAME = "chunk_explorer.text_view"

JS = r"""
const scrolls = new Map();

function codePoints(s) {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  let root = parentElement.querySelector(":scope > .ce-view");
  if (!root) {
    root = document.createElement("div");
    root.className = "ce-view";
    parentElement.appendChild(root);
  }
  const old = root.querySelector(".ce-text");
  if (old) scrolls.set(root.dataset.view, old.scrollTop);
  root.innerHTML = data.html;
  root.dataset.view = data.view;
  const box = root.querySelector(".ce-text");
  if (box) {
    box.scrollTop = scrolls.get(data.view) || 0;
    const sel = Array.from(box.querySelectorAll(".ce-sel"));
    if (sel.length) {
      const view = box.getBoundingClientRect();
      const seen = sel.some((el) => {
        const r = el.getBoundingClientRect();
        return r.bottom > view.top && r.top < view.bottom;
      });
      if (!seen) {
        const first = sel[0].getBoundingClientRect();
        box.scrollTop += first.top - view.top - 24;
      }
    }
  }

  // offsets of a selection boundary, from the data-o of the text it falls in (or the
  // nearest text after a start / before an end when it falls on a badge or between spans)
  function offsetOf(node, off, isStart) {
    if (node.nodeType === Node.TEXT_NODE) {
      const host = node.parentElement && node.parentElement.closest("[data-o]");
      if (host && root.contains(host)) return Number(host.dataset.o) + codePoints(node.data.slice(0, off));
    }
    const probe = document.createRange();
    probe.setStart(node, off);
    const spans = Array.from(root.querySelectorAll("[data-o]"));
    if (isStart) {
      for (const s of spans) if (probe.comparePoint(s, 0) >= 0) return Number(s.dataset.o);
      return null;
    }
    for (let i = spans.length - 1; i >= 0; i--) {
      const s = spans[i];
      if (probe.comparePoint(s, s.childNodes.length) <= 0) return Number(s.dataset.o) + codePoints(s.textContent);
    }
    return null;
  }

  root.onclick = (e) => {
    const sel = window.getSelection();
    if (sel && !sel.isCollapsed) return;
    const el = e.target.closest("[data-c]");
    if (!el || !data.pick) return;
    const cs = el.dataset.c.split(" ").map(Number);
    let pick = cs[0];
    const here = cs.indexOf(data.selected);
    if (cs.length > 1 && here >= 0) pick = cs[(here + 1) % cs.length];
    setTriggerValue("pick", pick);
  };
  root.onmouseup = () => {
    if (!data.select) return;
    setTimeout(() => {
      const sel = window.getSelection();
      if (!sel || sel.isCollapsed || !sel.rangeCount) return;
      const r = sel.getRangeAt(0);
      if (!root.contains(r.commonAncestorContainer)) return;
      const start = offsetOf(r.startContainer, r.startOffset, true);
      const end = offsetOf(r.endContainer, r.endOffset, false);
      if (start !== null && end !== null && end > start) setTriggerValue("select", { start, end });
    }, 0);
  };
}
"""

CSS = """
.ce-view [data-c]{cursor:pointer}
.ce-view .ce-text{user-select:text}
"""


#: Registered once per process; mounting re-registers it on a runtime that lacks it (AppTest).
_COMPONENT = st.components.v2.component(NAME, js=JS, css=CSS, isolate_styles=False)


def text_view(
    body: str,
    *,
    key: str,
    view: str,
    selected: int | None = None,
    text: str = "",
    on_pick: Callable[[int], None] | None = None,
    on_select: Callable[[int, int], None] | None = None,
) -> None:
    """Show ``body`` (from ``render_chunks(..., interactive=True)``); ``view`` names what is shown
    (document and window) so the scroll position is kept while it stays the same. The callbacks
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
            "pick": on_pick is not None,
            "select": on_select is not None,
        },
        on_pick_change=picked,
        on_select_change=selected_span,
    )


def _value(key: str, name: str) -> Any:
    state = st.session_state.get(key)
    if state is None:
        return None
    return state.get(name) if hasattr(state, "get") else getattr(state, name, None)
