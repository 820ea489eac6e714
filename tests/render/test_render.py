"""Rendering: segments come from offsets (overlaps exactly where they are), text is escaped, windows cap."""

from __future__ import annotations

import html
import itertools
import re
from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.render.html import PALETTE, chunk_tooltip, color_of, render_chunks, tint
from explorer.render.layout import MAX_RENDER_CHARS, chunk_at, chunks_in, holders, segments, window_around
from explorer.render.snippet import LEAD_CHARS, box_rows, fold_end, fold_start, render_snippet, rows
from explorer.text.chunk import Chunk


def make_chunks(text: str, bounds, **kw) -> list[Chunk]:
    return [
        Chunk("d", "doc", i, s, e, text[s:e], e - s, "chars", kw.get("reason", "size limit"))
        for i, (s, e) in enumerate(bounds)
    ]


class _TextOnly(HTMLParser):
    """Collects the visible text and every tag, to check what the browser would build."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []
        self._skip = 0
        self._in_badge = 0

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        cls = dict(attrs).get("class") or ""
        if tag == "style":
            self._skip += 1
        if tag == "span" and ("ce-idx" in cls or "ce-more" in cls or "ce-warn" in cls):
            self._in_badge += 1
            self._badge_stack = [*getattr(self, "_badge_stack", []), True]
        elif tag == "span":
            self._badge_stack = [*getattr(self, "_badge_stack", []), False]

    def handle_endtag(self, tag):
        if tag == "style":
            self._skip -= 1
        if tag == "span" and getattr(self, "_badge_stack", None) and self._badge_stack.pop():
            self._in_badge -= 1

    def handle_data(self, data):
        if not self._skip and not self._in_badge:
            self.text.append(data)


def visible_text(html_out: str) -> tuple[str, list[str]]:
    p = _TextOnly()
    p.feed(html_out)
    return "".join(p.text), p.tags


def test_segments_overlap_exactly_where_offsets_say():
    # chunk 0 = [0, 10), chunk 1 = [6, 16), chunk 2 = [16, 20); gap [20, 22)
    segs = segments([(0, 10), (6, 16), (16, 20)], 0, 22)
    got = [(s.start, s.end, s.chunks) for s in segs]
    assert got == [(0, 6, (0,)), (6, 10, (0, 1)), (10, 16, (1,)), (16, 20, (2,)), (20, 22, ())]
    assert [s.is_overlap for s in segs] == [False, True, False, False, False]


def test_segments_triple_overlap_and_window_clipping():
    segs = segments([(0, 30), (5, 25), (10, 20)], 8, 22)
    assert [(s.start, s.end, s.chunks) for s in segs] == [
        (8, 10, (0, 1)),
        (10, 20, (0, 1, 2)),
        (20, 22, (0, 1)),
    ]


def test_segments_marks():
    segs = segments([(0, 10)], 0, 10, marks=[(3, 5)])
    assert [(s.start, s.end, s.marked) for s in segs] == [(0, 3, False), (3, 5, True), (5, 10, False)]


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 200),
    raw=st.lists(st.tuples(st.integers(0, 200), st.integers(1, 60)), max_size=12),
    lo=st.integers(0, 200),
    width=st.integers(0, 200),
)
def test_segments_tile_window_and_cover_by_offsets(n, raw, lo, width):
    starts = sorted({min(s, n - 1) for s, _ in raw})
    bounds = [(s, min(n, s + w)) for s, (_, w) in zip(starts, raw, strict=False)]
    lo = min(lo, n)
    hi = min(n, lo + width)
    segs = segments(bounds, lo, hi)
    if hi <= lo:
        assert segs == []
        return
    assert segs[0].start == lo and segs[-1].end == hi
    for a, b in itertools.pairwise(segs):
        assert a.end == b.start
    for s in segs:
        assert s.start < s.end
        for pos in (s.start, s.end - 1):
            expected = tuple(i for i, (cs, ce) in enumerate(bounds) if cs <= pos < ce)
            assert s.chunks == expected


def test_render_escapes_script_and_img_onerror():
    text = 'Intro <script>alert("x")</script> and <img src=x onerror="alert(1)"> & "quotes" end.'
    chunks = make_chunks(text, [(0, 36), (34, len(text))])
    out = render_chunks(text, chunks, flags={1: ["mid_word"]})
    assert "<script>" not in out and "<img" not in out
    assert "&lt;script&gt;" in out and "&lt;img src=x onerror=" in out
    shown, tags = visible_text(out)
    assert "script" not in tags and "img" not in tags
    assert set(tags) <= {"style", "div", "span"}
    # the visible text (badges aside) is the window's text, once, in order
    assert shown == text


def test_render_escapes_tooltips():
    text = 'x" onmouseover="alert(1) <b>bold</b>'
    chunks = make_chunks(text, [(0, len(text))], reason='separator "<b>"')
    out = render_chunks(text, chunks)
    # no attribute injection: every quote in document text is escaped
    assert 'onmouseover="alert' not in out
    _, tags = visible_text(out)
    assert "b" not in tags


def test_render_marks_overlap_segments_only():
    text = "abcdefghijklmnopqrstuvwxyz"
    chunks = make_chunks(text, [(0, 10), (6, 16), (16, 26)])
    out = render_chunks(text, chunks)
    spans = re.findall(r'<span class="([^"]*)"[^>]*>([^<]*)</span>', out)
    overlap_text = [t for cls, t in spans if "ce-ov" in cls.split()]
    assert overlap_text == ["ghij"]
    # one boundary marker per chunk end, one index badge per chunk start
    assert out.count('class="ce-end"') == 3
    assert len(re.findall(r'class="ce-idx[ "]', out)) == 3


def test_render_flags_and_selection():
    text = "one two three four five six"
    chunks = make_chunks(text, [(0, 8), (8, 18), (18, 27)])
    out = render_chunks(text, chunks, selected=1, flags={2: ["tiny", "over_limit"]})
    assert out.count('class="ce-warn"') == 1
    assert "over the model" in out
    sel = re.findall(r'<span class="[^"]*ce-sel[^"]*"[^>]*>([^<]*)</span>', out)
    assert sel == [text[8:18]]


def test_render_window_caps_characters():
    text = ("word " * 40_000).strip()  # ~200 k characters
    bounds = [(i, min(i + 500, len(text))) for i in range(0, len(text), 500)]
    chunks = make_chunks(text, bounds)
    lo, hi = window_around(bounds, 200, len(text))
    assert hi - lo <= MAX_RENDER_CHARS
    assert lo <= bounds[200][0] < hi
    out = render_chunks(text, chunks, lo=lo, hi=hi, selected=200)
    shown, _ = visible_text(out)
    assert shown == text[lo:hi]
    assert "characters before this window" in out and "characters after this window" in out
    # even a caller asking for everything gets at most max_chars
    out = render_chunks(text, chunks, max_chars=1000)
    assert len(visible_text(out)[0]) == 1000


def test_window_whole_text_when_small_and_helpers():
    bounds = [(0, 10), (8, 20), (25, 30)]
    assert window_around(bounds, 2, 30) == (0, 30)
    # a window from the first chunk starts at the text's start: "17 characters before this
    # window" were blank lines, offered as a link
    late = [(17 + 100 * i, 17 + 100 * (i + 1)) for i in range(500)]
    assert window_around(late, 0, 50_017, max_chars=1_000) == (0, 1_000)
    assert window_around(late, 1, 50_017, max_chars=1_000) == (0, 1_000)
    assert window_around(late, 3, 50_017, max_chars=1_000) == (217, 1_217)
    assert chunks_in(bounds, 9, 26) == [0, 1, 2]
    assert chunks_in(bounds, 20, 25) == []
    assert chunk_at(bounds, 9) == 1
    assert chunk_at(bounds, 22) == 2
    assert chunk_at([], 3) is None


def test_tooltip_content():
    text = "hello world"
    c = Chunk("d", "doc", 4, 0, 11, text, 11, "chars", "sentence end", pages=(2, 3), headings=("A", "B"))
    tip = chunk_tooltip(c, tokens=5, flags=["mid_sentence"])
    assert "Chunk 4" in tip and "0–11" in tip and "11 chars" in tip and "5 tokens" in tip
    assert "Pages 2–3" in tip and "A › B" in tip and "sentence end" in tip and "mid-sentence" in tip


def test_snippet_marks_and_escapes():
    text = "The <answer> is 42, clearly."
    out = render_snippet(text, 0, len(text), marks=[(4, 12)])
    assert "&lt;answer&gt;" in out and "<answer>" not in out
    assert re.findall(r'class="ce-ans"[^>]*>([^<]*)<', out) == ["&lt;answer&gt;"]


def test_snippet_underlines_terms_inside_and_outside_the_answer():
    text = "Les <paquets> sont installés ; le paquet reste."
    a, b = text.index("<paquets>") + 1, text.index(">")
    c = text.index("paquet reste")
    out = render_snippet(text, 0, len(text), marks=[(0, b + 1)], terms=[(a, b), (c, c + 6)])
    assert re.findall(r'class="ce-term"[^>]*>([^<]*)<', out) == ["paquets", "paquet"]
    # one answer mark around the word marked inside it (its outline is not cut in two)
    assert out.count('class="ce-ans"') == 1
    inside = out.split('class="ce-ans"')[1].split('title="In the expected answer">', 1)[1]
    assert '<b class="ce-term"' in inside.split("</b>")[0]
    assert re.sub(r"<[^>]+>", "", inside.split("</b>", 1)[1].split("</span>", 1)[0]) == html.escape(text[b:b + 1])
    assert "&lt;" in out and "<paquets>" not in out
    assert re.sub(r"<[^>]+>", "", out) == html.escape(text)  # every character once, in order


def test_snippet_tints_the_best_piece_with_terms_and_answer_inside_it():
    text = "First line.\nThe <filters> are backwashed daily.\nLast line."
    start, end = text.index("The"), text.index("\nLast")
    word = text.index("backwashed")
    out = render_snippet(text, 0, len(text), marks=[(word, word + 10)], terms=[(word, word + 10)], best_piece=(start, end))
    tinted = re.findall(r'class="ce-piece"[^>]*>(.*?)</span>', out)
    assert "".join(re.sub(r"<[^>]+>", "", t) for t in tinted) == html.escape(text[start:end])
    assert re.sub(r"<[^>]+>", "", out) == html.escape(text)  # every character once, in order
    assert "ce-piece" not in render_snippet(text, 0, len(text))  # no piece: no tint


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab \n", max_size=900), st.integers(0, 900), st.integers(0, 900))
def test_fold_start_opens_near_the_evidence_at_a_line_or_word(text, start, focus):
    start, focus = min(start, len(text)), min(focus, len(text))
    cut = fold_start(text, start, focus, 180)
    if rows(text[start : focus + 1]) <= box_rows(180) - 2:
        assert cut == start  # the evidence's line and the next are in the box: nothing folded
        return
    assert start < cut <= focus and focus - cut <= LEAD_CHARS
    fits = [
        i for i in range(max(start + 1, focus - LEAD_CHARS), focus + 1)
        if text[i - 1] in "\n " and rows(text[i : focus + 1]) <= box_rows(180) - 3
    ]  # fmt: skip
    lines = [i for i in fits if text[i - 1] == "\n"]
    assert cut == (lines or fits or [focus])[0]  # the most context that starts a line, else a word


def test_a_card_opens_on_an_answer_below_its_box_read_in_lines_not_characters():
    """Found by a user: a rank-1 card's expected answer on its ninth line, under the box's edge
    (the chunk's short lines of command output put it there after 250 characters)."""
    lines = ["--- ping statistics ---", "  1 packets transmitted, 1 received", "  rtt min/avg = 191/191 ms", ""]
    text = "\n".join(lines * 2) + "\nCe processus est la découverte du chemin MTU et la commande tracepath(8) l'automatise."
    focus = text.index("la commande")
    assert focus < 300 and rows(text[: focus + 1]) > box_rows(180) - 2
    cut = fold_start(text, 0, focus, 180)
    assert 0 < cut <= focus and text[cut - 1] == "\n"
    assert fold_start(text, 0, focus, 400) == 0  # a taller box shows it as it opens


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab \n", max_size=600), st.integers(1, 10))
def test_fold_end_fills_the_lines_it_is_given_at_a_line_or_word(text, lines):
    cut = fold_end(text, 0, len(text), lines)
    if rows(text) <= lines + 2:
        assert cut == len(text)  # two lines or less left: shown, not folded under a line as long
        return
    assert 0 < cut <= len(text) and rows(text[:cut].rstrip("\n")) <= lines
    assert text[cut - 1] in "\n " or cut % 40 == 0  # a word longer than a line is cut at the line


def test_a_long_card_folds_what_its_box_cannot_show_and_says_how_much():
    text = "".join(f"Line {i} of the manual, with a few words.\n" for i in range(40))
    answer = (text.index("Line 3 "), text.index("Line 4 "))
    out = render_snippet(text, 0, len(text), [answer], 4_000, 180, fold=0, fold_below=True)
    m = re.search(r'<details class="ce-below"><summary class="ce-more"[^>]*>▾ ([\d,]+) characters below</summary>', out)
    assert m and int(m.group(1).replace(",", "")) == len(text) - text.index("Line 7 ")
    assert "ce-ans" in out.split('<details class="ce-below">')[0]  # the answer is in the box as it opens
    shown = re.sub(r"(?s)<summary.*?</summary>|<[^>]+>", "", out)
    assert html.unescape(shown) == text  # every character once, in order
    assert "ce-below" not in render_snippet(text, 0, 120, fold=0, fold_below=True)  # it fits: no fold
    assert "--ce-h:none" in out  # no box to scroll: a card narrower than reckoned grows instead
    # evidence after the lines the card has (a piece, then the answer): the card opens long enough
    late = (text.index("Line 12 "), text.index("Line 13 "))
    out = render_snippet(text, 0, len(text), [late], 4_000, 180, best_piece=answer, fold=0, fold_below=True)
    assert "ce-ans" in out.split('<details class="ce-below">')[0] and "Line 13 " in out.split("ce-below")[0]


def test_snippet_folds_the_text_above_a_deep_piece_and_caps_from_there():
    text = "".join(f"Line {i} of the manual.\n" for i in range(80)) + "The <filters> are backwashed daily.\nEnd."
    piece = (text.index("The <filters>"), text.index("\nEnd"))
    cut = fold_start(text, 0, piece[0])
    assert 0 < cut < piece[0] and text[cut - 1] == "\n"
    out = render_snippet(text, 0, len(text), max_chars=200, best_piece=piece, fold=cut)
    above = re.search(r'<details class="ce-above"><summary class="ce-more"[^>]*>▸ ([\d,]+) characters above</summary>(.*?)</details>', out, re.S)
    assert above and above.group(1) == f"{cut:,}"
    # at most max_chars folded above too, the rest counted: a huge chunk is never a huge card
    before = f'<span class="ce-more">(+{cut - 200:,} characters before) … </span>'
    assert above.group(2) == before + html.escape(text[cut - 200 : cut])
    assert "ce-piece" in out.split("</details>")[1]  # the piece is in the box as it opens
    shown = re.sub(r"(?s)<summary.*?</summary>|<span class=\"ce-more\">[^<]*</span>|<[^>]+>", "", out)
    assert shown == html.escape(text[cut - 200 : min(len(text), cut + 200)])  # every character once, in order
    near = fold_start(text, 0, 150)  # evidence near the top: nothing folded, nothing before
    assert near == 0 and "ce-above" not in render_snippet(text, 0, len(text), max_chars=200, fold=near)
    assert "ce-above" not in render_snippet(text, 0, len(text), best_piece=piece)  # no fold asked: none


def test_soft_breaks_join_page_lines_inside_sentences_only():
    """A PDF's page lines in a hit card: a line end before a lower-case word shows as a space;
    a blank line, a line end before a heading or a capital, and every other character stay."""
    text = "disinfection with lime before\nthe water enters.\n2. Daily rounds\nOperators walk\n\nthe plant <daily>, experi-\nenced."
    out = render_snippet(text, 0, len(text), terms=[(0, 12)], soft_breaks=True)
    shown = html.unescape(re.sub(r"<[^>]+>", "", out))
    assert shown == text.replace("before\nthe", "before the")
    assert len(shown) == len(text)  # the same offsets: only that line end is shown otherwise
    assert html.unescape(re.sub(r"<[^>]+>", "", render_snippet(text, 0, len(text)))) == text  # off: as it is


class _Offsets(HTMLParser):
    """(data-o, text) of every offset-carrying span, and the data-c of every element with one."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.pieces: list[tuple[int, str]] = []
        self.covers: list[tuple[int, tuple[int, ...]]] = []  # (data-o, data-c) of text spans
        self.badges: list[int] = []
        self._open: list[int | None] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag != "span":
            return
        if "ce-idx" in (a.get("class") or ""):
            self.badges.append(int(a["data-c"]))
        o = a.get("data-o")
        self._open.append(int(o) if o is not None else None)
        if o is not None:
            self.pieces.append((int(o), ""))
            cov = tuple(int(x) for x in a["data-c"].split()) if a.get("data-c") else ()
            self.covers.append((int(o), cov))

    def handle_endtag(self, tag):
        if tag == "span" and self._open:
            self._open.pop()

    def handle_data(self, data):
        if self._open and self._open[-1] is not None:
            o, t = self.pieces[-1]
            self.pieces[-1] = (o, t + data)


def offsets_of(html_out: str) -> _Offsets:
    p = _Offsets()
    p.feed(html_out)
    return p


@settings(max_examples=80, deadline=None)
@given(
    text=st.text(
        alphabet=st.sampled_from([*"ab <>&\"'\n", "é", "日", "😀", "\u200d", "\t"]),
        min_size=1,
        max_size=120,
    ),
    raw=st.lists(st.tuples(st.integers(0, 119), st.integers(1, 40)), max_size=8),
    marks=st.lists(st.tuples(st.integers(0, 119), st.integers(1, 30)), max_size=2),
    lo=st.integers(0, 119),
)
def test_interactive_spans_carry_exact_offsets(text, raw, marks, lo):
    """What the text view reads back: every character of the window sits in exactly one span
    whose data-o is its document offset (code points, astral characters included), and each
    span's data-c lists exactly the chunks whose offsets cover it."""
    n = len(text)
    starts = sorted({min(s, n - 1) for s, _ in raw})
    bounds = [(s, min(n, s + w)) for s, (_, w) in zip(starts, raw, strict=False)]
    chunks = make_chunks(text, bounds)
    lo = min(lo, n - 1)
    mk = [(min(s, n - 1), min(n, s + w)) for s, w in marks]
    out = render_chunks(text, chunks, lo=lo, marks=mk, interactive=True, selected=0 if chunks else None)
    p = offsets_of(out)
    pos = lo
    for o, piece in p.pieces:
        assert o == pos and piece == text[o : o + len(piece)] and piece
        pos += len(piece)
    assert pos == n
    for o, cov in p.covers:
        assert cov == tuple(i for i, (s, e) in enumerate(bounds) if s <= o < e)
    assert p.badges == [i for i, (s, _) in enumerate(bounds) if s >= lo]


def test_interactive_is_opt_in_and_escapes():
    text = 'a <script>alert("x")</script> b'
    chunks = make_chunks(text, [(0, 12), (10, len(text))])
    plain = render_chunks(text, chunks)
    assert "data-o" not in plain and "data-c" not in plain
    out = render_chunks(text, chunks, interactive=True, marks=[(2, 10)], mark_title="Selected text")
    assert "<script>" not in out and "&lt;script&gt;" in out
    assert 'title="Selected text' in out and "Expected answer" not in out
    assert "".join(t for _, t in offsets_of(out).pieces) == text


def test_holders_of_a_span():
    bounds = [(0, 10), (6, 16), (16, 20)]
    assert holders(bounds, 7, 9) == ([0, 1], [])  # in the overlap: both hold it whole
    assert holders(bounds, 12, 18) == ([], [1, 2])  # across a boundary: split
    assert holders(bounds, 2, 5) == ([0], [])
    assert holders([(0, 4), (6, 9)], 4, 6) == ([], [])  # the gap between chunks


# -- overlaps without a pattern, and a legend built from what the text uses -----------------------
_COLOR = re.compile(r"rgba?\((\d+),\s*(\d+),\s*(\d+)|#([0-9A-Fa-f]{6})\b")


def _rgbs(css: str) -> set[tuple[int, int, int]]:
    """Every colour named in ``css`` (hex or rgb/rgba), as (r, g, b)."""
    out = set()
    for m in _COLOR.finditer(css):
        if m.group(4):
            h = m.group(4)
            out.add((int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)))
        else:
            out.add((int(m.group(1)), int(m.group(2)), int(m.group(3))))
    return out


def _styles(fragment: str) -> str:
    return " ".join(re.findall(r'style="([^"]*)"', fragment))


def _split_legend(out: str) -> tuple[str, str]:
    """(the legend's markup, the text box's markup) of ``render_chunks(..., with_legend=True)``."""
    legend_at, text_at = out.index('<div class="ce-legend">'), out.index('<div class="ce-text"')
    assert legend_at < text_at
    return out[legend_at:text_at], out[text_at:]


def test_overlaps_have_no_pattern_behind_the_text_but_a_double_underline():
    text = "abcdefghijklmnopqrstuvwxyz" * 4
    chunks = make_chunks(text, [(0, 30), (20, 60), (50, 90), (85, 104)])
    out = render_chunks(text, chunks, selected=1, interactive=True)
    assert "gradient" not in out and "repeating" not in out and "background-image" not in out
    overlaps = re.findall(r'<span class="[^"]*\bce-ov\b[^"]*" style="([^"]*)"[^>]*data-o="(\d+)"[^>]*>', out)
    assert [int(o) for _, o in overlaps] == [20, 50, 85]
    for style, o in overlaps:
        # the tint of the chunk it continues, the colour of the one that also holds it underneath
        first = next(i for i, c in enumerate(chunks) if c.start <= int(o) < c.end)
        alpha = 0.55 if first == 1 else 0.30
        assert f"background-color:{tint(color_of(first), alpha)}" in style
        assert f"border-bottom-color:{color_of(first + 1)}" in style
    assert re.search(r"\.ce-ov\{[^}]*border-bottom:3px double", out)


def test_the_legend_shows_exactly_the_colours_the_text_uses():
    text = ("The pumps are checked. " * 200).strip()
    bounds = [(i, min(i + 300, len(text))) for i in range(0, len(text) - 50, 250)]  # overlaps of 50
    chunks = make_chunks(text, bounds)
    for lo, hi in ((0, len(text)), (0, 700), (1000, 1400)):
        out = render_chunks(text, chunks, lo=lo, hi=hi, selected=2, with_legend=True, interactive=True)
        legend, body = _split_legend(out)
        used = _rgbs(_styles(body))
        assert used and _rgbs(_styles(legend)) == used, (lo, hi)
        assert len(used) == len({color_of(i) for i in chunks_in(bounds, lo, hi)})
        assert ("ce-ov" in legend) == ("ce-ov" in body)
    assert len(used) < len(PALETTE)  # a window with 2 chunks shows their 2 colours, not the palette
    # every colour of the palette once the text uses them all, and no overlap key when none
    parts = make_chunks(text, [(i, i + 100) for i in range(0, 1000, 100)])
    legend, body = _split_legend(render_chunks(text, parts, hi=1000, with_legend=True))
    assert _rgbs(_styles(legend)) == _rgbs(_styles(body)) == _rgbs(" ".join(PALETTE))
    assert "ce-ov" not in legend and "ce-sel" not in legend and "ce-flag" not in legend


def test_window_notes_move_to_the_text_outside_the_window():
    text = ("word " * 40_000).strip()
    bounds = [(i, min(i + 500, len(text))) for i in range(0, len(text), 500)]
    chunks = make_chunks(text, bounds)
    lo, hi = window_around(bounds, 200, len(text))
    out = render_chunks(text, chunks, lo=lo, hi=hi, selected=200, interactive=True)
    jumps = [int(j) for j in re.findall(r'class="ce-more ce-jump"[^>]*data-c="(\d+)"', out)]
    assert len(jumps) == 2
    back, on = jumps
    assert bounds[back][0] < lo and window_around(bounds, back, len(text))[1] >= lo  # the text just before
    assert bounds[on][0] >= hi and window_around(bounds, on, len(text))[0] <= hi  # the text just after
    assert "ce-jump" not in render_chunks(
        text, chunks, lo=lo, hi=hi, with_css=False
    )  # only where clicks land


def test_a_window_near_the_end_is_full_and_holds_the_selection():
    bounds = [(i, i + 100) for i in range(0, 100_000, 100)]
    for sel in (0, 500, 990, 999):
        lo, hi = window_around(bounds, sel, 100_000)
        assert hi - lo == MAX_RENDER_CHARS and lo <= bounds[sel][0] and bounds[sel][1] <= hi
    assert window_around(bounds, 999, 100_000) == (100_000 - MAX_RENDER_CHARS, 100_000)


def test_a_chunk_cut_mid_word_says_at_which_end():
    """The ⚠ sits at a chunk's end whichever end was cut: its title and the tooltip say where."""
    text = "alpha beta gamma delta"
    chunks = make_chunks(text, [(0, 8), (8, 16), (16, 22)])  # "alpha be" | "ta gamma" | " delta"
    out = render_chunks(text, chunks, flags={0: ["mid_word"], 1: ["mid_word", "tiny"]}, interactive=True)
    titles = re.findall(r'class="ce-warn" title="([^"]*)"', out)
    assert titles == ["cut mid-word at its end", "cut mid-word at its start; tiny"]
    assert "⚠ cut mid-word at its start; tiny" in chunk_tooltip(chunks[1], None, ["mid_word", "tiny"], text)
    assert "⚠ cut mid-word\n" not in chunk_tooltip(chunks[1], None, ["mid_word"], text) + "\n"


def test_bidi_controls_are_shown_as_signs_not_obeyed_with_offsets_kept():
    """An override in a document reversed the rest of its line in the text view and in a hit's
    snippet: each bidirectional control is a marked sign of one code point, so the text's
    offsets (``data-o`` plus code points) still hold after it."""
    text = "Valve alpha \u202eopens beta\u202c then \u2067epsilon\u2069 closes."
    chunks = make_chunks(text, [(0, 20), (20, len(text))])
    out = render_chunks(text, chunks, interactive=True)
    snippet = render_snippet(text, 0, len(text))
    for html_out in (out, snippet):
        assert not re.search("[\u202a-\u202e\u2066-\u2069]", html_out)
        assert html_out.count('class="ce-bidi"') == 4
    assert "U+202E right-to-left override" in out and "U+2067 right-to-left isolate" in out
    parser = _TextOnly()
    parser.feed(out)
    shown = "".join(parser.text)
    assert len(shown) == len(text) and shown == re.sub("[\u202a-\u202e\u2066-\u2069]", "⇄", text)
