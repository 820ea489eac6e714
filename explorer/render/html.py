"""Pure HTML rendering of chunks over a document's text: colours, overlaps, boundaries, flags.

Why a pure module: the app, the benchmarks and the tests share it, and it is the one place
where untrusted document text becomes markup, so every piece of it goes through
:func:`html.escape` here. The text is cut into *segments* computed from the chunk offsets
(a sweep over the chunk boundaries), never by searching chunk text, so overlaps are drawn
exactly where the offsets say they are (:mod:`explorer.render.layout`).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from explorer.render.inert import escape_text, named_controls
from explorer.render.layout import MAX_RENDER_CHARS, Segment, chunk_at, segments
from explorer.render.unread import UNREAD_CSS, UNREAD_KEY, unread_title
from explorer.text.words import mid_word_where

#: Okabe–Ito colours (colour-blind safe), ordered so that consecutive chunks contrast.
PALETTE = (
    "#E69F00",  # orange
    "#0072B2",  # blue
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#D55E00",  # vermillion
    "#F0E442",  # yellow
)
#: Opacity of a chunk's background tint (text stays readable on every palette colour).
TINT = 0.30
TINT_SELECTED = 0.55

#: Flags about the chunk as a whole (underlined); the others are about a cut (⚠ at the boundary).
WHOLE_CHUNK_FLAGS = frozenset({"over_limit", "tiny", "duplicate"})
FLAG_LABELS = {
    "over_limit": "over the model's token limit (truncated when embedded)",
    "mid_sentence": "cut mid-sentence",
    "mid_word": "cut mid-word",
    "tiny": "tiny",
    "duplicate": "exact duplicate of another chunk",
}


class ChunkLike(Protocol):
    """What rendering needs from a chunk (:class:`explorer.text.chunk.Chunk` fits)."""

    index: int
    start: int
    end: int
    length: int
    unit: str
    reason: str
    pages: tuple[int, ...]
    headings: tuple[str, ...]


def tint(color: str, alpha: float = TINT) -> str:
    """``#RRGGBB`` → ``rgba(...)`` with the given opacity."""
    r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha:.2f})"


def color_of(position: int) -> str:
    return PALETTE[position % len(PALETTE)]


def flag_text(flags: Sequence[str], mid_word_at: str = "") -> str:
    """The flags as words; ``mid_word_at`` ("its start", "its end", "both ends": see
    :func:`explorer.text.words.mid_word_where`) says where a chunk cut mid-word was cut, since
    the ⚠ sits at its end whichever end it was."""
    return "; ".join(
        FLAG_LABELS.get(f, f) + (f" at {mid_word_at}" if f == "mid_word" and mid_word_at else "") for f in flags
    )


def chunk_tooltip(
    chunk: ChunkLike,
    tokens: int | None = None,
    flags: Sequence[str] = (),
    text: str | None = None,
) -> str:
    """Plain-text tooltip of a chunk (escaped later, when it goes into an attribute)."""
    chars = chunk.end - chunk.start
    size = f"{chars:,} chars"
    if tokens is not None:
        size += f" · {tokens:,} tokens"
    elif chunk.unit != "chars":
        size += f" · {chunk.length:,} {chunk.unit}"
    lines = [f"Chunk {chunk.index} · {chunk.start:,}–{chunk.end:,} ({size})"]
    if chunk.pages:
        first, last = chunk.pages[0], chunk.pages[-1]
        lines.append(f"Page {first}" if first == last else f"Pages {first}–{last}")
    if chunk.headings:
        lines.append("Section: " + " › ".join(chunk.headings))
    lines.append(f"Ends: {chunk.reason}")
    if flags:
        where = mid_word_where(text, chunk.start, chunk.end) if text is not None and "mid_word" in flags else ""
        lines.append("⚠ " + flag_text(flags, where))
    return "\n".join(lines)


#: ``unicode-bidi:plaintext``: each line in its first letter's direction (Hebrew, Arabic from the right).
CSS = """<style>
.ce-text{white-space:pre-wrap;overflow-wrap:anywhere;font-size:0.93rem;line-height:1.9;unicode-bidi:plaintext;
  font-family:"Source Sans Pro","Source Sans 3",system-ui,-apple-system,"Segoe UI",sans-serif;
  color:inherit;padding:0.9rem 1.1rem;border:1px solid rgba(128,128,128,.38);border-radius:8px;
  background:transparent;max-height:var(--ce-h,560px);overflow-y:auto}
.ce-text:focus{outline:none}.ce-text:focus-visible{outline:2px solid #0072B2;outline-offset:1px}
.ce-text span.ce-s{border-radius:2px;box-decoration-break:clone;-webkit-box-decoration-break:clone}
.ce-ov{border-bottom:3px double;padding-bottom:1px}
.ce-flag{text-decoration:underline wavy #e03131;text-decoration-thickness:1.5px;text-underline-offset:3px}
.ce-sel{box-shadow:inset 0 -2px 0 currentColor}
.ce-ans{font-weight:650;background-color:rgba(255,214,0,.85)!important;color:#1f2328;
  outline:1.5px solid #8a6d00;outline-offset:-1px}
.ce-idx{display:inline-block;font:600 0.66rem/1.2 ui-monospace,SFMono-Regular,Menlo,monospace;
  color:#fff;background:#4a5361;border-radius:4px;padding:0 4px;margin:0 3px 0 1px;
  vertical-align:0.35em;user-select:none}
.ce-idx.ce-idx-sel{background:#111;box-shadow:0 0 0 2px #f5b700}
.ce-end{display:inline-block;width:0;height:1.25em;border-left:2px solid currentColor;opacity:.7;margin:0 2px;
  vertical-align:-0.25em;user-select:none}
.ce-warn{display:inline-block;font:700 0.66rem/1.2 system-ui,sans-serif;color:#fff;background:#c1121f;
  border-radius:4px;padding:0 4px;margin:0 2px;vertical-align:0.35em;user-select:none}
.ce-more{opacity:.65;font-style:italic}
.ce-bidi{color:#c1121f;font-weight:700;outline:1px dashed #c1121f;outline-offset:-1px;border-radius:2px}
.ce-jump{cursor:pointer;text-decoration:underline dotted;text-underline-offset:3px}
.ce-legend{font-size:0.8rem;display:flex;gap:0.4rem 1.1rem;flex-wrap:wrap;align-items:center;
  margin:0.1rem 0 0.4rem 0}
.ce-legend>span{opacity:.9}
.ce-legend span.ce-sw{display:inline-block;width:1.2em;height:0.95em;border-radius:2px;
  vertical-align:-0.1em;margin-right:0.2em}
.ce-facts{display:flex;gap:0.6rem 2.4rem;flex-wrap:wrap;margin:0.15rem 0 0.35rem 0}
.ce-fact-l{font-size:0.78rem;opacity:.7;line-height:1.3}
.ce-fact-v{font-size:1.12rem;font-weight:600;line-height:1.4}
.ce-fact:not([title=""]) .ce-fact-v{text-decoration:underline dotted;text-underline-offset:3px;cursor:help}
.ce-term{font-weight:700;text-decoration:underline 2px #0072B2;text-underline-offset:2px}
.ce-piece{background-color:rgba(0,158,115,.18)}
.ce-above,.ce-below{display:inline}
.ce-above[open]::details-content,.ce-below[open]::details-content{display:contents}
.ce-above>summary,.ce-below>summary{display:block;cursor:pointer;list-style:none;font-size:0.82rem;
  font-style:normal;opacity:.85;text-decoration:underline dotted;text-underline-offset:3px}
.ce-above>summary::-webkit-details-marker,.ce-below>summary::-webkit-details-marker{display:none}
.ce-above[open]>summary,.ce-below[open]>summary{display:none}
.ce-snip{white-space:pre-wrap;overflow-wrap:anywhere;font-size:0.88rem;line-height:1.6;unicode-bidi:plaintext;
  max-height:var(--ce-h,260px);overflow-y:auto}
""" + UNREAD_CSS + "</style>"


def _overlap_style(first: str, last: str, alpha: float = TINT) -> str:
    """An overlap: the tint of the chunk it continues and a double underline in the colour of
    the chunk that also holds it (no pattern behind the text: it stays readable)."""
    return f"background-color:{tint(first, alpha)};border-bottom-color:{last}"


def render_chunks(
    text: str,
    chunks: Sequence[ChunkLike],
    *,
    lo: int = 0,
    hi: int | None = None,
    selected: int | None = None,
    flags: Mapping[int, Sequence[str]] | None = None,
    tokens: Sequence[int] | None = None,
    marks: Sequence[tuple[int, int]] = (),
    show_index: bool = True,
    max_chars: int = MAX_RENDER_CHARS,
    height: int = 560,
    with_css: bool = True,
    interactive: bool = False,
    mark_title: str = "Expected answer",
    with_legend: bool = False,
    unread: Mapping[int, int] | None = None,
) -> str:
    """HTML of ``text[lo:hi]`` with every chunk highlighted (positions in ``chunks`` index
    ``flags``, ``tokens`` and ``selected``).

    Each chunk gets a tint of its palette colour; an overlap (characters in 2+ chunks) keeps
    the tint of the chunk it continues and gets a double underline in the colour of the chunk
    that also holds it. Each chunk start gets its index badge and each end a boundary bar;
    flagged chunks a red wavy underline and a ⚠ badge; ``marks`` (e.g. an expected answer) a
    bold yellow highlight, titled ``mark_title``; ``unread`` (position → offset where the model
    stops reading the chunk) greys the rest (:mod:`.unread`). At most ``max_chars`` characters
    are rendered. ``with_legend`` puts a key above the text built from what it uses.

    ``interactive`` puts every piece of text in a span carrying its document offset
    (``data-o``, in code points) and the positions of the chunks covering it (``data-c``), so
    the app's text view can turn a click into a chunk and a selection into exact offsets
    without searching for text; the notes of text outside the window then carry the chunk
    to move to (``data-c``) as well.
    """
    hi = len(text) if hi is None else hi
    lo = max(0, min(lo, len(text)))
    hi = max(lo, min(hi, len(text), lo + max_chars))
    bounds = [(c.start, c.end) for c in chunks]
    segs = segments(bounds, lo, hi, marks, unread)
    view = _ChunkView(text, chunks, flags or {}, tokens, selected, interactive, mark_title)
    body: list[str] = [f'<div class="ce-text" style="--ce-h:{int(height)}px">']
    if lo > 0:
        body.append(view.more(f"… {lo:,} characters before this window …\n", _jump_back(bounds, lo, hi)))
    for seg in segs:
        if show_index:
            body.extend(view.badges(seg))
        body.append(view.piece(seg))
        body.extend(view.ends(seg))
    if hi < len(text):
        after = f"\n… {len(text) - hi:,} characters after this window …"
        body.append(view.more(after, _jump_on(bounds, hi)))
    body.append("</div>")
    head = [CSS] if with_css else []
    if with_legend:
        head.append(view.legend())
    return "".join(head + body)


def _jump_back(bounds: Sequence[tuple[int, int]], lo: int, hi: int) -> int | None:
    """The chunk whose window ends about where the window ``[lo, hi)`` starts."""
    before = [i for i, (s, _) in enumerate(bounds) if s < lo]
    if not before:
        return None
    target = chunk_at(bounds, max(0, lo - (hi - lo)))
    return min((target or 0) + 1, before[-1])


def _jump_on(bounds: Sequence[tuple[int, int]], hi: int) -> int | None:
    """The first chunk that starts at or after ``hi`` (else the one holding it)."""
    after = next((i for i, (s, _) in enumerate(bounds) if s >= hi), None)
    return after if after is not None else chunk_at(bounds, hi)


class _ChunkView:
    """What :func:`render_chunks` draws for each segment: badges where chunks start, the text
    in its span, and the marks where chunks end. Tooltips are built once per chunk."""

    def __init__(
        self,
        text: str,
        chunks: Sequence[ChunkLike],
        flags: Mapping[int, Sequence[str]],
        tokens: Sequence[int] | None,
        selected: int | None,
        interactive: bool,
        mark_title: str,
    ) -> None:
        self.text, self.chunks, self.flags, self.tokens = text, chunks, flags, tokens
        self.selected, self.interactive, self.mark_title = selected, interactive, mark_title
        self._tips: dict[int, str] = {}
        self.used = _Used()

    def tip(self, p: int) -> str:
        if p not in self._tips:
            tok = self.tokens[p] if self.tokens is not None and p < len(self.tokens) else None
            self._tips[p] = chunk_tooltip(self.chunks[p], tok, self.flags.get(p, ()), self.text)
        return self._tips[p]

    def badges(self, seg: Segment) -> list[str]:
        """The index badge of every chunk that starts at ``seg``."""
        out = []
        for p in seg.chunks:
            if self.chunks[p].start == seg.start:
                sel = " ce-idx-sel" if p == self.selected else ""
                data = f' data-c="{p}"' if self.interactive else ""
                title = html.escape(named_controls(self.tip(p)))
                out.append(f'<span class="ce-idx{sel}" title="{title}"{data}>{self.chunks[p].index}</span>')
        return out

    def piece(self, seg: Segment) -> str:
        """The segment's text, escaped, in a span saying which chunks hold it (if any)."""
        piece = escape_text(self.text[seg.start : seg.end])
        classes, style, title, data = [], "", "", ""
        if self.interactive:
            data = f' data-o="{seg.start}"'
            if seg.chunks:
                data += f' data-c="{" ".join(map(str, seg.chunks))}"'
        if seg.chunks:
            classes.append("ce-s")
            first = seg.chunks[0]
            alpha = TINT_SELECTED if first == self.selected else TINT
            self.used.color(color_of(first))
            if seg.is_overlap:
                classes.append("ce-ov")
                style = _overlap_style(color_of(first), color_of(seg.chunks[-1]), alpha)
                self.used.overlap(color_of(first), color_of(seg.chunks[-1]))
                names = " and ".join(str(self.chunks[p].index) for p in seg.chunks)
                title = f"Overlap of chunks {names}\n\n" + "\n\n".join(self.tip(p) for p in seg.chunks)
            else:
                style = f"background-color:{tint(color_of(first), alpha)}"
                title = self.tip(first)
            if any(WHOLE_CHUNK_FLAGS.intersection(self.flags.get(p, ())) for p in seg.chunks):
                classes.append("ce-flag")  # the whole chunk is the problem; cuts get a ⚠ at the end
                self.used.flagged = True
            if seg.unread:  # past the end of what the model reads of a chunk holding it
                classes.append("ce-unread")
                title, self.used.unread = unread_title([self.chunks[p].index for p in seg.unread]) + title, True
            if self.selected is not None and self.selected in seg.chunks:
                classes.append("ce-sel")
                self.used.selected = True
        if seg.marked:
            classes.append("ce-ans")
            title = f"{self.mark_title}\n\n{title}" if title else self.mark_title
        if not classes and not data:
            return piece
        attrs = f' class="{" ".join(classes)}"' if classes else ""
        if style:
            attrs += f' style="{style}"'
        if title:
            attrs += f' title="{html.escape(named_controls(title))}"'
        return f"<span{attrs}{data}>{piece}</span>"

    def more(self, note: str, jump: int | None) -> str:
        """A note on the text outside the window; interactive, a click on it moves there."""
        if self.interactive and jump is not None:
            tip = html.escape(f"Show this text (from chunk {self.chunks[jump].index})")
            return f'<span class="ce-more ce-jump" title="{tip}" data-c="{jump}">{html.escape(note)}</span>'
        return f'<span class="ce-more">{html.escape(note)}</span>'

    def legend(self) -> str:
        """The key to what this rendering used (call after rendering every segment)."""
        u = self.used
        flags = u.flagged or bool(u.warned)
        return _legend(list(u.colors), u.overlap_pair, flags=flags, selection=u.selected, unread=u.unread)

    def ends(self, seg: Segment) -> list[str]:
        """The ⚠ of a flagged chunk and the boundary bar of every chunk that ends at ``seg``."""
        out = []
        for p in seg.chunks:
            if self.chunks[p].end == seg.end:
                if self.flags.get(p):
                    self.used.warned = True
                    c = self.chunks[p]
                    label = flag_text(self.flags[p], mid_word_where(self.text, c.start, c.end))
                    out.append(f'<span class="ce-warn" title="{html.escape(label)}">⚠</span>')
                reason = html.escape(f"End of chunk {self.chunks[p].index}: {self.chunks[p].reason}")
                out.append(f'<span class="ce-end" title="{reason}"></span>')
        return out


@dataclass
class _Used:
    """What a rendering drew, for its legend: the palette colours (in order of use), the
    colours of the first overlap, and whether flags and the selection appear."""

    colors: dict[str, None] = field(default_factory=dict)
    overlap_pair: tuple[str, str] | None = None
    flagged: bool = False
    warned: bool = False
    selected: bool = False
    unread: bool = False

    def color(self, c: str) -> None:
        self.colors.setdefault(c, None)

    def overlap(self, first: str, last: str) -> None:
        self.color(last)
        if self.overlap_pair is None:
            self.overlap_pair = (first, last)


def _legend(colors: Sequence[str], overlap: tuple[str, str] | None, *, flags: bool, selection: bool,
            unread: bool = False) -> str:  # fmt: skip
    """A one-line key: one swatch per colour in ``colors``, and the overlap, selection, flag and
    unread styles when they are used."""
    swatches = "".join(f'<span class="ce-sw" style="background:{tint(c)}"></span>' for c in colors)
    items = [f'<span title="Each chunk has a colour; the colours repeat in turn">{swatches}chunks</span>']
    if overlap is not None:
        items.append(
            f'<span><span class="ce-s ce-ov" style="{_overlap_style(*overlap)}">text</span> '
            "overlap: also in the chunk of the underline's colour</span>"
        )
    items.append(
        '<span><span class="ce-key ce-idx">7</span>start · <span class="ce-end"></span>boundary</span>'
    )
    if selection and colors:
        sel = f"background-color:{tint(colors[0], TINT_SELECTED)};padding:0 .3em"
        items.append(f'<span><span class="ce-s ce-sel" style="{sel}">chunk</span> selected</span>')
    if flags:
        items.append('<span><span class="ce-flag">flagged</span><span class="ce-warn">⚠</span></span>')
    if unread:
        items.append(UNREAD_KEY)
    items.append("<span>hover for details</span>")
    return '<div class="ce-legend">' + "".join(items) + "</div>"


def legend(flags: bool = True, selection: bool = True) -> str:
    """A one-line key to the styles of :func:`render_chunks` in general (its first two colours);
    ``render_chunks(..., with_legend=True)`` gives the key to exactly what it drew."""
    first, second = PALETTE[0], PALETTE[1]
    return CSS + _legend([first, second], (first, second), flags=flags, selection=selection)


def facts(pairs: Sequence[tuple[str, str] | tuple[str, str, str]]) -> str:
    """A compact row of labelled values (e.g. a document's summary), every string escaped; a
    third item is shown on hover: why a value is "—"."""
    cells = "".join(
        f'<div class="ce-fact" title="{html.escape("".join(tip))}"><div class="ce-fact-l">{html.escape(label)}'
        f'</div><div class="ce-fact-v">{html.escape(value)}</div></div>'
        for label, value, *tip in pairs
    )
    return CSS + f'<div class="ce-facts">{cells}</div>'
