"""Pure HTML rendering of chunks over a document's text: colours, overlaps, boundaries, flags.

Why a pure module: the app, the benchmarks and the tests share it, and it is the one place
where untrusted document text becomes markup, so every piece of it goes through
:func:`html.escape` here. The text is cut into *segments* computed from the chunk offsets
(a sweep over the chunk boundaries), never by searching chunk text, so overlaps are drawn
exactly where the offsets say they are.
"""

from __future__ import annotations

import html
import itertools
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

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
#: Most characters rendered at once: a 500-page PDF is shown as a window, not in full.
MAX_RENDER_CHARS = 30_000
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


@dataclass(frozen=True, slots=True)
class Segment:
    """``text[start:end]`` is covered by exactly the chunks at positions ``chunks``.

    ``marked`` is True inside one of the extra marks (e.g. an expected answer span).
    """

    start: int
    end: int
    chunks: tuple[int, ...]
    marked: bool = False

    @property
    def is_overlap(self) -> bool:
        return len(self.chunks) > 1


def segments(
    bounds: Sequence[tuple[int, int]],
    lo: int,
    hi: int,
    marks: Sequence[tuple[int, int]] = (),
) -> list[Segment]:
    """Tile ``[lo, hi)`` into segments with a constant set of covering chunks.

    ``bounds`` are the chunks' ``(start, end)`` offsets (positions in this list identify the
    chunks). Uncovered stretches (whitespace between chunks) come out with ``chunks == ()``.
    """
    if hi <= lo:
        return []
    starts: dict[int, list[int]] = {}
    ends: dict[int, list[int]] = {}
    for i, (s, e) in enumerate(bounds):
        if s < hi and e > lo and e > s:
            starts.setdefault(max(s, lo), []).append(i)
            ends.setdefault(min(e, hi), []).append(i)
    mark_starts: dict[int, int] = {}
    mark_ends: dict[int, int] = {}
    for s, e in marks:
        s, e = max(s, lo), min(e, hi)
        if e > s:
            mark_starts[s] = mark_starts.get(s, 0) + 1
            mark_ends[e] = mark_ends.get(e, 0) + 1
    points = sorted({lo, hi, *starts, *ends, *mark_starts, *mark_ends})
    active: set[int] = set()
    in_marks = 0
    out: list[Segment] = []
    for a, b in itertools.pairwise(points):
        active.difference_update(ends.get(a, ()))
        active.update(starts.get(a, ()))
        in_marks += mark_starts.get(a, 0) - mark_ends.get(a, 0)
        out.append(Segment(a, b, tuple(sorted(active)), in_marks > 0))
    return out


def window_around(
    bounds: Sequence[tuple[int, int]],
    selected: int | None,
    text_len: int,
    max_chars: int = MAX_RENDER_CHARS,
) -> tuple[int, int]:
    """The ``[lo, hi)`` range to render: the whole text if it fits, else ``max_chars``
    starting at the chunk before ``selected`` (so the selection sits near the top)."""
    if text_len <= max_chars:
        return 0, text_len
    if selected is None or not bounds:
        return 0, max_chars
    selected = min(max(selected, 0), len(bounds) - 1)
    lo = bounds[max(selected - 1, 0)][0]
    if bounds[selected][0] - lo > max_chars // 2:  # a huge previous chunk: start nearer
        lo = max(0, bounds[selected][0] - max_chars // 4)
    return lo, min(text_len, lo + max_chars)


def chunks_in(bounds: Sequence[tuple[int, int]], lo: int, hi: int) -> list[int]:
    """Positions of the chunks that intersect ``[lo, hi)`` (starts must increase)."""
    starts = [b[0] for b in bounds]
    stop = bisect_left(starts, hi)
    return [i for i in range(stop) if bounds[i][1] > lo]


def holders(bounds: Sequence[tuple[int, int]], start: int, end: int) -> tuple[list[int], list[int]]:
    """Positions of the chunks that hold ``[start, end)`` whole, and of those that hold part of
    it (starts must increase): where a selected passage would be retrieved from."""
    inside = chunks_in(bounds, start, end)
    whole = [i for i in inside if bounds[i][0] <= start and bounds[i][1] >= end]
    return whole, [i for i in inside if i not in whole]


def chunk_at(bounds: Sequence[tuple[int, int]], pos: int) -> int | None:
    """Position of the last chunk starting at or before ``pos`` that contains it, else the next one."""
    if not bounds:
        return None
    starts = [b[0] for b in bounds]
    i = bisect_left(starts, pos + 1) - 1
    if i >= 0 and bounds[i][1] > pos:
        return i
    return min(max(i + 1, 0), len(bounds) - 1)


def tint(color: str, alpha: float = TINT) -> str:
    """``#RRGGBB`` → ``rgba(...)`` with the given opacity."""
    r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha:.2f})"


def color_of(position: int) -> str:
    return PALETTE[position % len(PALETTE)]


def chunk_tooltip(
    chunk: ChunkLike,
    tokens: int | None = None,
    flags: Sequence[str] = (),
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
        lines.append("⚠ " + "; ".join(FLAG_LABELS.get(f, f) for f in flags))
    return "\n".join(lines)


CSS = """<style>
.ce-text{white-space:pre-wrap;overflow-wrap:anywhere;font-size:0.93rem;line-height:1.85;
  font-family:"Source Sans Pro","Source Sans 3",system-ui,-apple-system,"Segoe UI",sans-serif;
  color:#1f2328;padding:0.9rem 1.1rem;border:1px solid #e3e6ea;border-radius:8px;background:#fff;
  max-height:var(--ce-h,560px);overflow-y:auto}
.ce-text span.ce-s{border-radius:2px;box-decoration-break:clone;-webkit-box-decoration-break:clone}
.ce-ov{background-size:10px 10px;outline:1px dashed rgba(0,0,0,.45);outline-offset:-1px}
.ce-flag{text-decoration:underline wavy #c1121f;text-decoration-thickness:1.5px;text-underline-offset:3px}
.ce-sel{box-shadow:inset 0 -2px 0 rgba(31,35,40,.75)}
.ce-ans{font-weight:650;background-image:linear-gradient(rgba(255,214,0,.55),rgba(255,214,0,.55))!important;
  outline:1.5px solid #8a6d00;outline-offset:-1px}
.ce-idx{display:inline-block;font:600 0.66rem/1.2 ui-monospace,SFMono-Regular,Menlo,monospace;
  color:#fff;background:#3b4350;border-radius:4px;padding:0 4px;margin:0 3px 0 1px;
  vertical-align:0.35em;user-select:none}
.ce-idx.ce-idx-sel{background:#111;outline:2px solid #111}
.ce-end{display:inline-block;width:0;height:1.25em;border-left:2px solid #3b4350;margin:0 2px;
  vertical-align:-0.25em;user-select:none}
.ce-warn{display:inline-block;font:700 0.66rem/1.2 system-ui,sans-serif;color:#fff;background:#c1121f;
  border-radius:4px;padding:0 4px;margin:0 2px;vertical-align:0.35em;user-select:none}
.ce-more{color:#6a737d;font-style:italic}
.ce-legend{font-size:0.8rem;color:#4a5361;display:flex;gap:1.1rem;flex-wrap:wrap;align-items:center;
  margin:0.1rem 0 0.4rem 0}
.ce-legend span.ce-sw{display:inline-block;width:1.6em;height:0.95em;border-radius:2px;
  vertical-align:-0.1em;margin-right:0.35em}
.ce-facts{display:flex;gap:0.6rem 2.4rem;flex-wrap:wrap;margin:0.15rem 0 0.35rem 0}
.ce-fact-l{font-size:0.78rem;color:#5b6470;line-height:1.3}
.ce-fact-v{font-size:1.12rem;font-weight:600;color:#1f2328;line-height:1.4}
.ce-snip{white-space:pre-wrap;overflow-wrap:anywhere;font-size:0.88rem;line-height:1.6;color:#1f2328;
  max-height:var(--ce-h,260px);overflow-y:auto}
</style>"""


def _overlap_style(positions: Sequence[int]) -> str:
    """Diagonal stripes of the overlapping chunks' colours: visibly different from any single chunk."""
    cols = [tint(color_of(p), 0.55) for p in positions[:3]]
    n = len(cols)
    stops = ",".join(f"{c} {i * 6}px {(i + 1) * 6}px" for i, c in enumerate(cols))
    return f"background:repeating-linear-gradient(135deg,{stops},{cols[0]} {n * 6}px)"


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
) -> str:
    """HTML of ``text[lo:hi]`` with every chunk highlighted (positions in ``chunks`` index
    ``flags``, ``tokens`` and ``selected``).

    Overlaps (characters in 2+ chunks) get striped, outlined backgrounds; each chunk start gets
    its index badge and each end a boundary bar; flagged chunks a red wavy underline and a ⚠
    badge; ``marks`` (e.g. an expected answer) a bold yellow highlight, titled ``mark_title``.
    At most ``max_chars`` characters are rendered.

    ``interactive`` puts every piece of text in a span carrying its document offset
    (``data-o``, in code points) and the positions of the chunks covering it (``data-c``), so
    the app's text view can turn a click into a chunk and a selection into exact offsets
    without searching for text.
    """
    hi = len(text) if hi is None else hi
    lo = max(0, min(lo, len(text)))
    hi = max(lo, min(hi, len(text), lo + max_chars))
    flags = flags or {}
    bounds = [(c.start, c.end) for c in chunks]
    segs = segments(bounds, lo, hi, marks)
    tips: dict[int, str] = {}

    def tip(p: int) -> str:
        if p not in tips:
            tok = tokens[p] if tokens is not None and p < len(tokens) else None
            tips[p] = chunk_tooltip(chunks[p], tok, flags.get(p, ()))
        return tips[p]

    out: list[str] = [CSS] if with_css else []
    out.append(f'<div class="ce-text" style="--ce-h:{int(height)}px">')
    if lo > 0:
        out.append(f'<span class="ce-more">… {lo:,} characters before this window …\n</span>')
    for seg in segs:
        for p in seg.chunks:
            if chunks[p].start == seg.start and show_index:
                sel = " ce-idx-sel" if p == selected else ""
                data = f' data-c="{p}"' if interactive else ""
                out.append(
                    f'<span class="ce-idx{sel}" title="{html.escape(tip(p))}"{data}>{chunks[p].index}</span>'
                )
        piece = html.escape(text[seg.start : seg.end])
        classes = []
        style = ""
        title = ""
        data = ""
        if interactive:
            data = f' data-o="{seg.start}"'
            if seg.chunks:
                data += f' data-c="{" ".join(map(str, seg.chunks))}"'
        if seg.chunks:
            classes.append("ce-s")
            if seg.is_overlap:
                classes.append("ce-ov")
                style = _overlap_style(seg.chunks)
                names = " and ".join(str(chunks[p].index) for p in seg.chunks)
                title = f"Overlap of chunks {names}\n\n" + "\n\n".join(tip(p) for p in seg.chunks)
            else:
                alpha = TINT_SELECTED if seg.chunks[0] == selected else TINT
                style = f"background-color:{tint(color_of(seg.chunks[0]), alpha)}"
                title = tip(seg.chunks[0])
            if any(WHOLE_CHUNK_FLAGS.intersection(flags.get(p, ())) for p in seg.chunks):
                classes.append("ce-flag")  # the whole chunk is the problem; cuts get a ⚠ at the end
            if selected is not None and selected in seg.chunks:
                classes.append("ce-sel")
        if seg.marked:
            classes.append("ce-ans")
            title = f"{mark_title}\n\n{title}" if title else mark_title
        if classes or data:
            attrs = f' class="{" ".join(classes)}"' if classes else ""
            if style:
                attrs += f' style="{style}"'
            if title:
                attrs += f' title="{html.escape(title)}"'
            out.append(f"<span{attrs}{data}>{piece}</span>")
        else:
            out.append(piece)
        for p in seg.chunks:
            if chunks[p].end == seg.end:
                if flags.get(p):
                    label = "; ".join(FLAG_LABELS.get(f, f) for f in flags[p])
                    out.append(f'<span class="ce-warn" title="{html.escape(label)}">⚠</span>')
                reason = html.escape(f"End of chunk {chunks[p].index}: {chunks[p].reason}")
                out.append(f'<span class="ce-end" title="{reason}"></span>')
    if hi < len(text):
        out.append(f'<span class="ce-more">\n… {len(text) - hi:,} characters after this window …</span>')
    out.append("</div>")
    return "".join(out)


def render_snippet(
    text: str,
    start: int,
    end: int,
    marks: Sequence[tuple[int, int]] = (),
    max_chars: int = 4_000,
    height: int = 260,
    with_css: bool = False,
) -> str:
    """Escaped HTML of ``text[start:end]`` (capped) with ``marks`` highlighted, e.g. the part of
    a retrieved chunk that is in the expected answer."""
    hi = min(end, start + max_chars)
    out: list[str] = [CSS] if with_css else []
    out.append(f'<div class="ce-snip" style="--ce-h:{int(height)}px">')
    for seg in segments([], start, hi, marks):
        piece = html.escape(text[seg.start : seg.end])
        out.append(
            f'<span class="ce-ans" title="In the expected answer">{piece}</span>' if seg.marked else piece
        )
    if hi < end:
        out.append(f'<span class="ce-more"> … (+{end - hi:,} characters)</span>')
    out.append("</div>")
    return "".join(out)


def legend(flags: bool = True, selection: bool = True) -> str:
    """A one-line key to the styles used by :func:`render_chunks`."""
    a, b = tint(PALETTE[0]), tint(PALETTE[1])
    ov = _overlap_style([0, 1])
    items = [
        f'<span><span class="ce-sw" style="background:{a}"></span>'
        f'<span class="ce-sw" style="background:{b}"></span>chunks</span>',
        f'<span><span class="ce-sw ce-ov" style="{ov}"></span>overlap</span>',
        '<span><span class="ce-idx">7</span>start · <span class="ce-end"></span>boundary</span>',
    ]
    if selection:
        items.append('<span><span class="ce-s ce-sel" style="padding:0 .3em">▁▁</span>selected</span>')
    if flags:
        items.append('<span><span class="ce-flag">flagged</span><span class="ce-warn">⚠</span></span>')
    items.append("<span>hover for details</span>")
    return CSS + '<div class="ce-legend">' + "".join(items) + "</div>"


def facts(pairs: Sequence[tuple[str, str]]) -> str:
    """A compact row of labelled values (e.g. a document's summary), every string escaped."""
    cells = "".join(
        f'<div class="ce-fact"><div class="ce-fact-l">{html.escape(label)}</div>'
        f'<div class="ce-fact-v">{html.escape(value)}</div></div>'
        for label, value in pairs
    )
    return CSS + f'<div class="ce-facts">{cells}</div>'
