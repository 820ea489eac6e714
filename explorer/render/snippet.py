"""A retrieved chunk's text for its hit card: escaped, capped, with the expected answer, the
question's matched words and the chunk's best piece (where pieces score it) marked.

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
PIECE_TITLE = "This chunk's best piece for the question (half of its dense score)"


def render_snippet(
    text: str,
    start: int,
    end: int,
    marks: Sequence[tuple[int, int]] = (),
    max_chars: int = 4_000,
    height: int = 260,
    with_css: bool = False,
    terms: Sequence[tuple[int, int]] = (),
    best_piece: tuple[int, int] | None = None,
) -> str:
    """Escaped HTML of ``text[start:end]`` (capped at ``max_chars``) with ``marks`` highlighted
    (e.g. the part of a retrieved chunk that is in the expected answer), ``terms`` in bold,
    underlined (the question's words, :func:`explorer.retrieval.lexical.matched_spans`) and
    ``best_piece`` tinted (:mod:`explorer.retrieval.pieces`)."""
    hi = min(end, start + max_chars)
    out: list[str] = [CSS] if with_css else []
    out.append(f'<div class="ce-snip" style="--ce-h:{int(height)}px">')
    bounds = [*terms, *([best_piece] if best_piece else [])]  # as "chunks": a segment is in them or not
    n_terms = len(terms)
    for seg in segments(bounds, start, hi, marks):
        piece = html.escape(text[seg.start : seg.end])
        if any(i < n_terms for i in seg.chunks):
            piece = f'<b class="ce-term" title="{TERM_TITLE}">{piece}</b>'
        if n_terms in seg.chunks and best_piece:
            piece = f'<span class="ce-piece" title="{PIECE_TITLE}">{piece}</span>'
        out.append(f'<span class="ce-ans" title="{ANSWER_TITLE}">{piece}</span>' if seg.marked else piece)
    if hi < end:
        out.append(f'<span class="ce-more"> … (+{end - hi:,} characters)</span>')
    out.append("</div>")
    return "".join(out)
