"""A retrieved chunk's text for its hit card: escaped, capped, with the expected answer, the
question's matched words and the chunk's best piece (where pieces score it) marked.

Apart from :mod:`explorer.render.html` (the document view) because a card needs none of its
chunk colouring; both use its style sheet (:data:`~explorer.render.html.CSS`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from explorer.render.html import CSS
from explorer.render.inert import escape_text
from explorer.render.layout import segments

#: Tooltips of the two marks.
ANSWER_TITLE = "In the expected answer"
TERM_TITLE = "A word of the question (as keyword search matches it)"
PIECE_TITLE = "This chunk's best piece for the question (half of its dense score)"
ABOVE_TITLE = "Show the chunk's text above the evidence"
#: A line end between a character and a word (its first letter decides: lower case continues
#: a sentence), for ``soft_breaks``.
_SOFT_BREAK = re.compile(r"(?<=[^\n-])\n(?=(\w))")  # not after a hyphen: "experi-\nenced" stays


def _space_if_lower(m: re.Match[str]) -> str:
    return " " if m.group(1).islower() else "\n"


#: A card's box shows about this many characters before it scrolls; evidence that starts later
#: opens the box a little before it, the text above folded (a best piece deep in a long chunk
#: was out of sight, and past the cap not shown at all).
FOLD_AFTER = 300
#: At most this many characters of context kept above the evidence when the box opens on it.
LEAD_CHARS = 160


def fold_start(text: str, start: int, focus: int | None) -> int:
    """Where a card's box opens for a chunk starting at ``start`` whose evidence starts at
    ``focus``: ``start`` when the evidence is near it, else the first line start, then word
    start, at most :data:`LEAD_CHARS` before the evidence (so a line is not cut), else ``focus``."""
    if focus is None or focus - start <= FOLD_AFTER:
        return start
    lo = max(start + 1, focus - LEAD_CHARS)
    for sep in ("\n", " "):
        at = text.find(sep, lo - 1, focus)
        if at >= 0:
            return at + 1
    return focus


def shown_span(start: int, end: int, fold: int, max_chars: int) -> tuple[int, int]:
    """The part of a chunk ``[start, end)`` a card holds when its box opens at ``fold``: at most
    ``max_chars`` folded above and ``max_chars`` from the fold on (a huge chunk never becomes a
    huge card, whichever end its evidence is at)."""
    return max(start, fold - max_chars), min(end, fold + max_chars)


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
    fold: int | None = None,
    soft_breaks: bool = False,
) -> str:
    """Escaped HTML of ``text[start:end]`` (capped at ``max_chars``) with ``marks`` highlighted
    (e.g. the part of a retrieved chunk that is in the expected answer), ``terms`` in bold,
    underlined (the question's words, :func:`explorer.retrieval.lexical.matched_spans`) and
    ``best_piece`` tinted (:mod:`explorer.retrieval.pieces`). ``fold`` (:func:`fold_start`): the
    box opens there, the text before it folded under a line that unfolds it; the cap counts
    from there, both ways (:func:`shown_span`). ``soft_breaks`` (a PDF's text): a line end inside a sentence (the next line starts
    in lower case) shows as a space, so the card's narrow box does not wrap each page line again
    into ragged fragments; every other character is shown as it is."""
    fold = start if fold is None else min(max(fold, start), end)
    lo, hi = shown_span(start, end, fold, max_chars)
    out: list[str] = [CSS] if with_css else []
    out.append(f'<div class="ce-snip" style="--ce-h:{int(height)}px">')
    bounds = [*terms, *([best_piece] if best_piece else [])]  # as "chunks": a segment is in them or not
    shown = _SOFT_BREAK.sub(_space_if_lower, text[lo:hi]) if soft_breaks else text[lo:hi]
    if fold > start:
        out.append(f'<details class="ce-above"><summary class="ce-more" title="{ABOVE_TITLE}">▸ {fold - start:,} characters above</summary>')
        if lo > start:
            out.append(f'<span class="ce-more">(+{lo - start:,} characters before) … </span>')
        out += _marked(shown, lo, (lo, fold), marks, bounds, len(terms), best_piece is not None)
        out.append("</details>")
    out += _marked(shown, lo, (fold, hi), marks, bounds, len(terms), best_piece is not None)
    if hi < end:
        out.append(f'<span class="ce-more"> … (+{end - hi:,} characters)</span>')
    out.append("</div>")
    return "".join(out)


def _marked(
    shown: str,
    base: int,
    span: tuple[int, int],
    marks: Sequence[tuple[int, int]],
    bounds: Sequence[tuple[int, int]],
    n_terms: int,
    piece: bool,
) -> list[str]:
    """Escaped ``span`` of the text (``shown`` is its part from offset ``base``) in segments:
    ``bounds`` are the terms then the best piece."""
    out = []
    for seg in segments(bounds, span[0], span[1], marks):
        part = escape_text(shown[seg.start - base : seg.end - base])
        if any(i < n_terms for i in seg.chunks):
            part = f'<b class="ce-term" title="{TERM_TITLE}">{part}</b>'
        if piece and n_terms in seg.chunks:
            part = f'<span class="ce-piece" title="{PIECE_TITLE}">{part}</span>'
        out.append(f'<span class="ce-ans" title="{ANSWER_TITLE}">{part}</span>' if seg.marked else part)
    return out

