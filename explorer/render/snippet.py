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
BELOW_TITLE = "Show the rest of the chunk's text"
#: A line end between a character and a word (its first letter decides: lower case continues
#: a sentence), for ``soft_breaks``.
_SOFT_BREAK = re.compile(r"(?<=[^\n-])\n(?=(\w))")  # not after a hyphen: "experi-\nenced" stays


def _space_if_lower(m: re.Match[str]) -> str:
    return " " if m.group(1).islower() else "\n"


#: A card's line: its height in pixels (0.88rem text at a line height of 1.6), and the characters
#: it holds by default (a card of three side by side in a 1,280-pixel window: about 40). Where a
#: card's box opens and where it folds the rest are read in such lines: a count of characters
#: alone missed the short lines of a command's output, and an expected answer on a rank-1
#: card's ninth line sat under the box's edge with nothing saying so.
LINE_PX = 22.5
LINE_CHARS = 40
#: At most this many characters of context kept above the evidence when the box opens on it.
LEAD_CHARS = 160


def rows(text: str, line_chars: int = LINE_CHARS) -> int:
    """The lines ``text`` takes in a card, ``line_chars`` to a line (0 for no text)."""
    if not text:
        return 0
    return sum(max(1, -(-len(line) // line_chars)) for line in text.split("\n"))


def box_rows(height: int) -> int:
    """The lines a card's box of ``height`` pixels shows before it scrolls."""
    return max(3, int(height // LINE_PX))


def fold_start(
    text: str, start: int, focus: int | None, height: int = 260, soft_breaks: bool = False, line_chars: int = LINE_CHARS
) -> int:
    """Where a card's box of ``height`` pixels opens for a chunk starting at ``start`` whose
    evidence starts at ``focus``: ``start`` when the evidence's line and the next are in the box
    as it opens; else the earliest line start, then word start, at most :data:`LEAD_CHARS` before
    the evidence that keeps it so (a line is not cut where it can be helped); else ``focus``."""
    room = box_rows(height) - 2  # the evidence's line and the next
    if focus is None or rows(_shown(text[start : focus + 1], soft_breaks), line_chars) <= room:
        return start
    lo = max(start + 1, focus - LEAD_CHARS)
    for sep in ("\n", " "):
        at = text.find(sep, lo - 1, focus)
        while at >= 0:
            if rows(_shown(text[at + 1 : focus + 1], soft_breaks), line_chars) <= room - 1:  # less the fold's line
                return at + 1
            at = text.find(sep, at + 1, focus)
    return focus


def fold_end(
    text: str,
    fold: int,
    end: int,
    lines: int,
    soft_breaks: bool = False,
    line_chars: int = LINE_CHARS,
    keep: int | None = None,
) -> int:
    """Where the text from ``fold`` stops filling ``lines`` lines of a card, stretched to the line
    after ``keep`` (the last evidence to be in sight as the card opens): ``end`` when the rest is
    two lines or less (a fold line as long as what it hides), else a line start, else a word
    start (a word longer than a line is cut)."""
    shown = _shown(text[fold:end], soft_breaks)  # the same length: a soft break is one space
    if keep is not None and fold <= keep < end:
        lines = max(lines, rows(shown[: keep - fold + 1], line_chars) + 1)
    if rows(shown, line_chars) <= lines + 2:
        return end
    used = at = 0
    for line in shown.split("\n"):
        take = max(1, -(-len(line) // line_chars))
        if used + take > lines:
            room = (lines - used) * line_chars
            cut = shown.rfind(" ", at, at + room)
            return fold + (at if room <= 0 else cut + 1 if cut > at else at + room)
        used += take
        at += len(line) + 1
    return end


def _shown(text: str, soft_breaks: bool) -> str:
    return _SOFT_BREAK.sub(_space_if_lower, text) if soft_breaks else text


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
    fold_below: bool = False,
    line_chars: int = LINE_CHARS,
) -> str:
    """Escaped HTML of ``text[start:end]`` (capped at ``max_chars``) with ``marks`` highlighted
    (e.g. the part of a retrieved chunk that is in the expected answer), ``terms`` in bold,
    underlined (the question's words, :func:`explorer.retrieval.lexical.matched_spans`) and
    ``best_piece`` tinted (:mod:`explorer.retrieval.pieces`). ``fold`` (:func:`fold_start`): the
    box opens there, the text before it folded under a line that unfolds it; the cap counts
    from there, both ways (:func:`shown_span`). ``soft_breaks`` (a PDF's text): a line end inside a sentence (the next line starts
    in lower case) shows as a space, so the card's narrow box does not wrap each page line again
    into ragged fragments; every other character is shown as it is. ``fold_below``: the text past
    what the box shows as it opens (:func:`fold_end`) is folded too, under a line that says how
    much follows (a box that scrolls gave no sign of it), ``line_chars`` to a line; the box then
    has no height cap, and the evidence (``marks``, ``best_piece``) is in sight as it opens."""
    fold = start if fold is None else min(max(fold, start), end)
    lo, hi = shown_span(start, end, fold, max_chars)
    out: list[str] = [CSS] if with_css else []
    # folded below, a card is as tall as what it shows (no box to scroll: a line cut at its edge
    # hid the fold line where a card was narrower than reckoned); opened, as tall as the chunk
    cap = "none" if fold_below else f"{int(height)}px"
    out.append(f'<div class="ce-snip" style="--ce-h:{cap}">')
    bounds = [*terms, *([best_piece] if best_piece else [])]  # as "chunks": a segment is in them or not
    shown = _SOFT_BREAK.sub(_space_if_lower, text[lo:hi]) if soft_breaks else text[lo:hi]
    if fold > start:
        out.append(f'<details class="ce-above"><summary class="ce-more" title="{ABOVE_TITLE}">▸ {fold - start:,} characters above</summary>')
        if lo > start:
            out.append(f'<span class="ce-more">(+{lo - start:,} characters before) … </span>')
        out += _marked(shown, lo, (lo, fold), marks, bounds, len(terms), best_piece is not None)
        out.append("</details>")
    lines = box_rows(height) - 1 - (fold > start)  # less the lines that fold
    evidence = [max(a, fold) for a, b in [*marks, *([best_piece] if best_piece else [])] if b > fold and a < hi]
    keep = max(evidence, default=None)
    below = fold_end(text, fold, hi, lines, soft_breaks, line_chars, keep) if fold_below else hi
    out += _marked(shown, lo, (fold, below), marks, bounds, len(terms), best_piece is not None)
    if below < hi:
        out.append(f'<details class="ce-below"><summary class="ce-more" title="{BELOW_TITLE}">▾ {end - below:,} characters below</summary>')
        out += _marked(shown, lo, (below, hi), marks, bounds, len(terms), best_piece is not None)
    if hi < end:
        out.append(f'<span class="ce-more"> … (+{end - hi:,} characters)</span>')
    out.append("</details></div>" if below < hi else "</div>")
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
    ``bounds`` are the terms then the best piece. The answer's consecutive segments share one
    mark, so a question word inside the answer does not cut its outline in two."""
    out = []
    in_answer = False
    for seg in segments(bounds, span[0], span[1], marks):
        part = escape_text(shown[seg.start - base : seg.end - base])
        if any(i < n_terms for i in seg.chunks):
            part = f'<b class="ce-term" title="{TERM_TITLE}">{part}</b>'
        if piece and n_terms in seg.chunks:
            part = f'<span class="ce-piece" title="{PIECE_TITLE}">{part}</span>'
        if seg.marked != in_answer:
            out.append(f'<span class="ce-ans" title="{ANSWER_TITLE}">' if seg.marked else "</span>")
            in_answer = seg.marked
        out.append(part)
    if in_answer:
        out.append("</span>")
    return out

