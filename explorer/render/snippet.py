"""A retrieved chunk's text for its hit card: escaped, capped, with the expected answer and the
question's matched words marked.

Apart from :mod:`explorer.render.html` (the document view) because a card needs none of its
chunk colouring; both use its style sheet (:data:`~explorer.render.html.CSS`).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from explorer.render.html import CSS
from explorer.render.layout import segments

#: Tooltips of the two marks.
ANSWER_TITLE = "In the expected answer"
TERM_TITLE = "A word of the question (as keyword search matches it)"


def render_snippet(
    text: str,
    start: int,
    end: int,
    marks: Sequence[tuple[int, int]] = (),
    max_chars: int = 4_000,
    height: int = 260,
    with_css: bool = False,
    terms: Sequence[tuple[int, int]] = (),
) -> str:
    """Escaped HTML of ``text[start:end]`` (capped at ``max_chars``) with ``marks`` highlighted
    (e.g. the part of a retrieved chunk that is in the expected answer) and ``terms`` in bold,
    underlined (the question's words, :func:`explorer.retrieval.lexical.matched_spans`)."""
    hi = min(end, start + max_chars)
    out: list[str] = [CSS] if with_css else []
    out.append(f'<div class="ce-snip" style="--ce-h:{int(height)}px">')
    for seg in segments(terms, start, hi, marks):  # terms as "chunks": a segment is in one or not
        piece = html.escape(text[seg.start : seg.end])
        if seg.chunks:
            piece = f'<b class="ce-term" title="{TERM_TITLE}">{piece}</b>'
        out.append(f'<span class="ce-ans" title="{ANSWER_TITLE}">{piece}</span>' if seg.marked else piece)
    if hi < end:
        out.append(f'<span class="ce-more"> … (+{end - hi:,} characters)</span>')
    out.append("</div>")
    return "".join(out)
