"""A PDF's headings, read from its fonts: short lines set clearly larger than the body text.

Why: a PDF has no Markdown to say where its sections start, yet its headings are there for a
reader to see, in a bigger (or bold) font. Read from the fonts pypdf reports for each run of
text, they give PDF chunks their heading paths and let ``markdown`` and ``hybrid`` cut at sections.
A false heading is worse than a missed one (it renames and cuts every chunk after it), so each
rule below leaves a line out when in doubt.

1. While pypdf extracts a page, :class:`StyleReader` (its ``visitor_text``) notes each short line's
   smallest effective font size (the font size times the text and user matrices' vertical scale),
   whether all its runs are in a bold font (by font name: "Bold", "Black", "Heavy", "Demi", TeX's
   "CMB..."), and where it stands, and counts the visible characters set at each size.
2. The body size is the size that sets the most characters. A heading line is a line of at most
   :data:`MAX_LINE_CHARS` characters, with 2 letters or more, no dot leaders (a table of contents)
   and no ending of a sentence in progress (``,`` ``;`` ``:`` or a hyphen), whose runs are all at
   :data:`SIZE_RATIO` times the body size or more, or bold at :data:`BOLD_RATIO` times or more, or
   bold at the body size when numbered ("2.3 Scope", "Article 4", "Annexe B"); bold counts only
   where the body text is not bold.
3. Heading lines in a row (nothing but blank lines between them) set at one size are one heading
   when there are two and the second sits a line below the first (a title wrapped over two
   lines); three or more are a cover page, a list of names or a pull quote, and none is a heading.
   A title that opens (or closes) its page, as it does on 3 pages or more, is a running header
   there. A size used by one heading only is left out unless it is the largest (the document's
   title): a cover page's address, a date. Levels rank the sizes left, largest first (sizes
   within 3% are one), up to 6.
4. :func:`heading_blocks` finds each heading in the document's final text (after clean-up) by
   aligning the lines of its page as extracted with the lines of that page's range: a heading
   whose lines did not come through as they are (a running header clean-up removed, a word
   joined across its line end) is left out.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from math import hypot
from typing import Any

from explorer.documents.cleanup import HEADER_MIN_PAGES
from explorer.documents.document import Block, Page

#: Smallest size of a heading line against the body size.
SIZE_RATIO = 1.15
#: Smallest size of a bold heading line against the body size (a bold line a little larger).
BOLD_RATIO = 1.05
#: A bold line at the body size (within this share) is a heading when it is numbered.
BODY_TOLERANCE = 0.97
#: Longest heading line (visible characters).
MAX_LINE_CHARS = 120
#: Sizes within this ratio are one heading level.
SAME_SIZE = 1.03
#: Deepest heading level.
MAX_LEVEL = 6
#: Short lines noted per page at most (a normal page has under 100 lines); later ones are not read.
MAX_LINES_PER_PAGE = 400
#: A wrapped title's second line stands this many times its size below the first, at most.
WRAP_GAP = 1.8

_BOLD_NAME = re.compile(r"bold|black|heavy|demi|(?:^|[-,_ ])bd(?:$|[-,_ ])|^cmb", re.IGNORECASE)
_SUBSET = re.compile(r"^[A-Z]{6}\+")
#: Dot leaders of a table of contents ("Introduction . . . . 4", "Scope ....... 7").
_LEADERS = re.compile(r"(?:\.\s?){4,}|…{2,}|_{4,}")
#: What a numbered heading opens with: "2.", "2.3", "IV.", "B.", "Article 4", "Annexe B".
_NUMBERED = re.compile(
    r"(?:\d{1,2}(?:\.\d{1,2})*\.?|[IVX]{1,5}\.|[A-Z]\.|"
    r"(?i:chapitre|chapter|article|annexe|appendix|section|partie|part|titre)\s+[\dA-Z]{1,4}\b\.?)\s+\S"
)


@dataclass(frozen=True, slots=True)
class LineStyle:
    """How one short line of a page's text is set (``line``: its index in the page's lines)."""

    line: int
    size: float  # the smallest effective font size among its visible runs
    bold: bool  # every visible run in a bold font
    top: float  # the vertical position of its first visible run (user space, up is larger)


@dataclass(frozen=True, slots=True)
class PageStyles:
    """One page's short lines, and how many visible characters each size sets, bold or not."""

    lines: tuple[LineStyle, ...]
    chars: tuple[tuple[tuple[float, bool], int], ...]  # ((size, bold), characters)


@dataclass(frozen=True, slots=True)
class Body:
    """The body text's size (the one that sets the most characters), and whether it is set in
    bold: then bold sets nothing apart."""

    size: float
    bold: bool


@dataclass(frozen=True, slots=True)
class HeadingLine:
    """A heading found in a page as extracted: its lines ``first``..``last`` (one or two)."""

    page: int  # 0-based
    first: int
    last: int
    title: str
    size: float
    bold: bool
    level: int = 0


class StyleReader:
    """pypdf's ``visitor_text`` for one page: notes how each run of text is set as pypdf
    extracts it; :meth:`styles` makes lines of them.

    The runs must join into the page's text as extracted exactly, or the page gets no styles.
    ``clean`` is what the loader then does to that text (normalisation, ligatures); it is applied
    to each run only when it changes the page's lines (a lone carriage return, a form feed),
    since that costs more than the rest of the reading. It never raises: an error in a visitor
    would make pypdf lose the page's text.
    """

    def __init__(self, clean: Callable[[str], str]) -> None:
        self._clean = clean
        self._runs: list[tuple[str, tuple[float, bool, float] | None]] = []  # text, (size, bold, top)
        self._bold_cache: dict[int, tuple[Any, bool]] = {}  # the font kept: its id stays its own
        self._broken = False

    def __call__(self, text: Any, cm: Any, tm: Any, font: Any, size: Any) -> None:
        if self._broken or not text:
            return
        try:
            text = str(text)
            look = None
            if not text.isspace():  # size, bold and place: read for visible text only
                c, d = tm[2] * cm[0] + tm[3] * cm[2], tm[2] * cm[1] + tm[3] * cm[3]
                top = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
                look = round(abs(float(size)) * hypot(c, d), 2), self._bold(font), float(top)
            self._runs.append((text, look))
        except Exception:  # a malformed matrix or font: this page's styles are not read
            self._broken = True

    def _bold(self, font: Any) -> bool:
        known = self._bold_cache.get(id(font))
        if known is None:
            known = self._bold_cache[id(font)] = (font, _is_bold(font))
        return known[1]

    def styles(self, raw: str, page_text: str) -> PageStyles | None:
        """The page's styles, or None when they cannot be trusted to match its text as extracted
        (``raw``) and as the loader keeps it (``page_text``)."""
        runs = self._runs
        if self._broken or "".join(t for t, _ in runs) != raw:
            return None
        if raw.count("\n") != page_text.count("\n"):  # cleaning made line ends: clean each run
            runs = [(self._clean(t), look) for t, look in runs]
            if "".join(t for t, _ in runs) != page_text:
                return None
        return _lines_of(runs)


def _lines_of(runs: Sequence[tuple[str, tuple[float, bool, float] | None]]) -> PageStyles:
    """Each short line's style (its smallest size, all bold or not, its first run's place), and
    the visible characters set at each size."""
    lines: list[LineStyle] = []
    chars: Counter[tuple[float, bool]] = Counter()
    line = 0
    cur: list[Any] | None = None  # [size, bold, top, visible characters]
    for text, look in (*runs, ("\n", None)):  # a last line end closes the last line
        for k, piece in enumerate(text.split("\n")):
            if k:
                if cur is not None and cur[3] <= MAX_LINE_CHARS and len(lines) < MAX_LINES_PER_PAGE:
                    lines.append(LineStyle(line, cur[0], cur[1], cur[2]))
                cur, line = None, line + 1
            if look is None or not (visible := len("".join(piece.split()))):
                continue
            size, bold, top = look
            chars[round(size, 1), bold] += visible
            if cur is None:
                cur = [size, bold, top, visible]
            else:
                cur[0], cur[1], cur[3] = min(cur[0], size), cur[1] and bold, cur[3] + visible
    return PageStyles(tuple(lines), tuple(sorted(chars.items())))


def _is_bold(font: Any) -> bool:
    """A bold font by its name (a subset prefix set aside) or its descriptor's weight."""
    if not hasattr(font, "get"):
        return False
    name = _SUBSET.sub("", str(font.get("/BaseFont", "")).lstrip("/"))
    if _BOLD_NAME.search(name):
        return True
    descriptor = font.get("/FontDescriptor")
    descriptor = descriptor.get_object() if hasattr(descriptor, "get_object") else descriptor
    weight = descriptor.get("/FontWeight", 0) if hasattr(descriptor, "get") else 0
    return isinstance(weight, (int, float)) and weight >= 600


def body_of(styles: Sequence[PageStyles | None]) -> Body | None:
    """The document's body text (None without styles)."""
    total: Counter[float] = Counter()
    bold: Counter[float] = Counter()
    for page in styles:
        for (size, is_bold), n in page.chars if page is not None else ():
            total[size] += n
            bold[size] += n if is_bold else 0
    if not total:
        return None
    size = max(total, key=lambda s: (total[s], -s))
    return Body(size, 2 * bold[size] > total[size])


def _title_like(text: str) -> bool:
    """Short, with letters, not a table of contents' entry, not a sentence going on."""
    s = text.strip()
    return (
        2 <= len(s) <= MAX_LINE_CHARS
        and sum(ch.isalpha() for ch in s) >= 2
        and not s.endswith((",", ";", ":", "-", "\u00ad", "\u2010"))
        and not _LEADERS.search(s)
    )


def _heading_style(style: LineStyle, text: str, body: Body) -> bool:
    """Set as a heading: clearly larger than the body, bold and larger, or bold, numbered and
    at the body size (a bold line alone is often a label or a table's header row); bold counts
    only where the body is not bold."""
    if style.size >= SIZE_RATIO * body.size:
        return True
    if not style.bold or body.bold:
        return False
    return style.size >= BOLD_RATIO * body.size or (
        style.size >= BODY_TOLERANCE * body.size and _NUMBERED.match(text.strip()) is not None
    )


def _alike(a: HeadingLine, b: HeadingLine) -> bool:
    """Set at one size (bold or not: a title may hold a word in a code font)."""
    return max(a.size, b.size) <= SAME_SIZE * min(a.size, b.size)


def _page_candidates(page: int, text: str, styles: PageStyles, body: Body) -> list[HeadingLine]:
    """The page's heading lines, a title wrapped over two lines joined, runs of 3+ left out."""
    lines = text.split("\n")
    found = [
        (s, HeadingLine(page, s.line, s.line, lines[s.line].strip(), s.size, s.bold))
        for s in styles.lines
        if s.line < len(lines) and _heading_style(s, lines[s.line], body) and _title_like(lines[s.line])
    ]
    out: list[HeadingLine] = []
    i = 0
    while i < len(found):
        j = i + 1  # found[i:j]: lines in a row that look alike
        while (
            j < len(found)
            and _alike(found[j - 1][1], found[j][1])
            and not any(ln.strip() for ln in lines[found[j - 1][0].line + 1 : found[j][0].line])
        ):
            j += 1
        if j - i == 1:
            out.append(found[i][1])
        elif j - i == 2 and _wrapped(found[i][0], found[i + 1][0], found[i][1].title):
            (_, a), (_, b) = found[i], found[i + 1]
            title = f"{a.title} {b.title}"
            if len(title) <= MAX_LINE_CHARS:
                out.append(replace(a, last=b.last, title=title))
        i = j
    return out


def _wrapped(a: LineStyle, b: LineStyle, first: str) -> bool:
    """``b`` is the next line of a title that ``a`` starts: right below it, and ``a`` does not
    end a sentence."""
    gap = a.top - b.top
    return 0.8 * a.size <= gap <= WRAP_GAP * a.size and not first.endswith((".", "!", "?"))


def _running(found: list[HeadingLine], texts: Sequence[str]) -> list[HeadingLine]:
    """``found`` less running headers set large: a title that opens (or closes) its page, as it
    does :data:`HEADER_MIN_PAGES` pages or more. The same title elsewhere on a page stays (a
    report's title under its running header), and so do titles alike but for their numbers."""
    edges: dict[int, tuple[int, int]] = {}  # page -> its first and last line with text
    for page in {h.page for h in found}:
        lines = [i for i, ln in enumerate(texts[page].split("\n")) if ln.strip()]
        edges[page] = (lines[0], lines[-1]) if lines else (-1, -1)

    def edge(h: HeadingLine) -> tuple[bool, str] | None:
        first, last = edges[h.page]
        return (True, _key(h.title)) if h.first == first else (False, _key(h.title)) if h.last == last else None

    seen = Counter(e for h in found if (e := edge(h)) is not None)
    return [h for h in found if seen[edge(h)] < HEADER_MIN_PAGES]


def _key(title: str) -> str:
    return " ".join(title.split()).lower()


def detect(texts: Sequence[str], styles: Sequence[PageStyles | None]) -> list[HeadingLine]:
    """The headings of a PDF whose pages extracted as ``texts``, with their levels."""
    body = body_of(styles)
    if body is None or body.size <= 0:
        return []
    found = [
        h
        for page, (text, st) in enumerate(zip(texts, styles, strict=True))
        if st is not None
        for h in _page_candidates(page, text, st, body)
    ]
    return _levels(_running(found, texts))


def _levels(found: list[HeadingLine]) -> list[HeadingLine]:
    """Level by size, largest first (sizes within :data:`SAME_SIZE` are one); a size used by one
    heading only goes, unless it is the largest (the title)."""
    groups: list[list[float]] = []
    for size in sorted({h.size for h in found}, reverse=True):
        if groups and groups[-1][0] <= SAME_SIZE * size:
            groups[-1].append(size)
        else:
            groups.append([size])
    rank = {size: i for i, group in enumerate(groups) for size in group}
    uses = Counter(rank[h.size] for h in found)
    kept = sorted({r for r, n in uses.items() if n > 1 or r == 0})
    level = {r: min(i + 1, MAX_LEVEL) for i, r in enumerate(kept)}
    return [replace(h, level=level[rank[h.size]]) for h in found if rank[h.size] in level]


def opens_with_heading(texts: Sequence[str], styles: Sequence[PageStyles | None], found: Sequence[HeadingLine]) -> bool:
    """Whether the first page with text opens with one of the headings ``found`` (True where its
    fonts were not read): clean-up keeps that line, else drops it with the running header."""
    page = next((i for i, t in enumerate(texts) if t.strip()), None)
    if page is None or styles[page] is None:
        return True
    first = next(i for i, ln in enumerate(texts[page].split("\n")) if ln.strip())
    return any(h.page == page and h.first == first for h in found)


def heading_blocks(
    texts: Sequence[str], found: Sequence[HeadingLine], text: str, pages: Sequence[Page]
) -> tuple[Block, ...]:
    """Heading blocks of the headings ``found`` (:func:`detect`) in a PDF whose pages extracted as
    ``texts`` (before the loader stripped and cleaned them), placed in the document's final
    ``text`` through its page map ``pages``."""
    by_page: dict[int, list[HeadingLine]] = {}
    for h in found:
        by_page.setdefault(h.page, []).append(h)
    blocks: list[Block] = []
    for i, heads in sorted(by_page.items()):
        page = pages[i]
        ends = _line_ends(text, page.start, page.end)
        to_final = _align(texts[i].split("\n"), [text[s:e] for s, e in ends])
        for h in heads:
            span = _span(h, to_final, ends, text)
            if span is not None:
                blocks.append(Block("heading", span[0], span[1], h.level, h.title))
    return tuple(blocks)


def _line_ends(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """(start, end) of each line of ``text[start:end]``."""
    out = []
    pos = start
    while True:
        nl = text.find("\n", pos, end)
        if nl < 0:
            out.append((pos, end))
            return out
        out.append((pos, nl))
        pos = nl + 1


def _align(before: list[str], after: list[str]) -> dict[int, int]:
    """Line ``i`` of ``before`` -> line ``j`` of ``after`` where the alignment of the two (lines
    compared stripped) matches them; lines removed or changed by clean-up are left out."""
    a = [ln.strip() for ln in before]
    b = [ln.strip() for ln in after]
    lead = next((i for i, ln in enumerate(a) if ln), 0)
    if a[lead : lead + len(b)] == b:  # no clean-up changed the page: only its ends were stripped
        return {lead + j: j for j in range(len(b))}
    out: dict[int, int] = {}
    for i, j, n in SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        out.update((i + k, j + k) for k in range(n))
    return out


def _span(h: HeadingLine, to_final: dict[int, int], ends: list[tuple[int, int]], text: str) -> tuple[int, int] | None:
    """Where heading ``h`` is in the final text, or None when its lines did not come through."""
    j1, j2 = to_final.get(h.first), to_final.get(h.last)
    if j1 is None or j2 is None or j2 < j1:
        return None
    if any(text[s:e].strip() for s, e in ends[j1 + 1 : j2]):
        return None
    first, last = text[ends[j1][0] : ends[j1][1]], text[ends[j2][0] : ends[j2][1]]
    start = ends[j1][0] + len(first) - len(first.lstrip())
    end = ends[j2][1] - (len(last) - len(last.rstrip()))
    parts = [first.strip()] if j1 == j2 else [first.strip(), last.strip()]
    return (start, end) if " ".join(parts) == h.title else None
