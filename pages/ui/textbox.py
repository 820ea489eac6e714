"""A box that shows a chunk's exact text, with a button that copies it.

Why not ``st.code``: the first ``st.code`` of a page loads Streamlit's syntax highlighter,
1.5 MB of JavaScript, only to show plain text. Parsing it was about a third of the browser's
work before Explore's first view appeared (main-thread time, median of 4 visits on a loaded
2-core machine: 10.4 s with it, 7.2 s without). This box is a components v2 component (no build
step: ``textbox.js`` and ``textbox.css`` beside this file), whose small bundle the text view
loads anyway. The text goes in as ``textContent``: never read as HTML or Markdown, and shown
whole, bidirectional controls included (the inspector says when a chunk holds them).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

NAME = "chunk_explorer.text_box"

_HERE = Path(__file__).parent
JS = (_HERE / "textbox.js").read_text(encoding="utf-8")
CSS = (_HERE / "textbox.css").read_text(encoding="utf-8")

#: Registered once per process, as the text view is (pages/ui/textview.py).
_COMPONENT = st.components.v2.component(NAME, js=JS, css=CSS, isolate_styles=False)


def text_box(text: str, *, key: str, label: str, height: int | None = None) -> None:
    """Show ``text`` exactly (white space kept, long lines wrapped), scrolling past ``height``
    pixels; ``label`` names the box for a screen reader."""
    _COMPONENT(key=key, data={"text": text, "label": label, "height": height})
