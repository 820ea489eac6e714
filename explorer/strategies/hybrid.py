"""Hybrid: look at the document, then hand it (or each top-level section) to the strategy that fits.

The router reads cheap facts about a range of text: headings, Markdown code blocks and tables,
the share of code-like lines, line lengths, paragraph lengths against ``chunk_size`` and the
dominant script. Rules, first match wins:

1. A document with headings (Markdown's, or a PDF's read from its fonts) is cut into top-level
   sections (at the shallowest heading level used twice or more, so a lone H1 title over H2
   sections cuts at the H2s; text before the first cut is a section too, and a title alone there
   opens the first section) and each is routed on its own: sub-headings or tables → ``markdown``;
   fits in one chunk → ``markdown``; otherwise rules 2, 3 and 5 on the section; anything else
   (lists, short paragraphs) → ``markdown`` in a Markdown document, rules 4 and 6 in a PDF (its
   lists and paragraphs are not blocks that ``markdown`` could keep whole).
2. CJK text (half the letters or more are Han, kana or Hangul) → ``recursive`` with CJK
   sentence ends (``。！？；``) as separators, kept at the end of their sentence; Thai, written
   without sentence marks → ``recursive`` (paragraphs, lines, then the spaces between phrases).
3. Code-heavy (code blocks or code-like lines make up 40% of the text or more; not code inside a
   list or quote, which belongs to the list): Markdown code blocks → ``markdown``, which keeps
   each whole (``recursive`` knows no fences); plain text's code-like lines → ``recursive``.
4. Line-structured text (60% or more of the lines are short: lists, logs, verse, tables) →
   ``recursive``, which cuts at line breaks.
5. Prose whose paragraphs are mostly longer than ``chunk_size`` (including hard-wrapped PDF
   text with no blank lines) → ``sentence``, packing whole sentences up to ``chunk_size``.
6. Otherwise plain prose → ``recursive``, which cuts at paragraph breaks first.

Sub-strategies get ``chunk_size``, ``chunk_overlap`` and ``length``; ``sentence`` gets as many
sentences per chunk as fit under the ``chunk_size`` cap, and an overlap in sentences that
approximates ``chunk_overlap``. A section is split as a document of its own (its blocks and
pages shifted), so no chunk crosses a section boundary; every span is shifted back to the
document's offsets. Each chunk records ``hybrid_choice`` and ``hybrid_reason`` in its meta.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from explorer.documents.document import Block, Document, Page, heading_reason
from explorer.documents.markdown_blocks import only_headings, top_level
from explorer.strategies.base import OVERLAP_BELOW_SIZE, Strategy, check_size_overlap
from explorer.strategies.params import CHUNK_OVERLAP, CHUNK_SIZE, LENGTH, declare
from explorer.strategies.registry import get_strategy, register
from explorer.text.chunk import END_OF_TEXT, HEADING, Span
from explorer.text.length import get_length
from explorer.text.measures import dominant_script, line_stats, sample
from explorer.text.sentences import paragraph_spans, sentence_spans

if TYPE_CHECKING:
    from explorer.strategies.context import Context

CJK_SEPARATORS = ("\n\n", "\n", "。", "！", "？", "；", "．", ". ", "，", "、", " ", "")
CODE_SHARE = 0.40
SHORT_LINES_SHARE = 0.60
LONG_PARAGRAPH_SHARE = 0.50
CJK_SHARE = 0.50
CJK_REASON = "CJK text"
#: Scripts written without sentence marks, a space ending a phrase or a sentence.
UNMARKED_SCRIPTS = ("Thai",)
DEFAULT_SIZE = 1000

_CODE_LINE = re.compile(
    r"^\s*(?:def |class |import |from \S+ import |return\b|async |await |#include|#define|public |"
    r"private |protected |static |function\b|const |let |var |fn |func |package |using |SELECT |"
    r"INSERT |UPDATE |CREATE |[}\])]+;?\s*$|@\w+)"
    r"|[{;]\s*$"
    r"|^\s*[\w.\[\]]+\s*(?:[+\-*/]?=|:=|=>|->)\s*\S"
)
#: An indented line: code, unless it reads as prose (:func:`_prose_like`).
_INDENTED = re.compile(r"^(?: {4,}|\t)\S")
#: Characters of prose besides letters and spaces.
_PROSE_MARKS = frozenset(",.;:!?'’\"«»()-–—/%")
#: Characters that prose has little use for and code much: one makes an indented line code.
_CODE_MARKS = frozenset("$={}[]<>\\_@`~^|")


def _prose_like(line: str) -> bool:
    """Nearly all letters (a manual page's or a text dump's indented paragraph: "Ce document
    décrit la façon de construire un paquet"), or a row of a text table, and not ending in ``:``
    as a block of code opens (``for item in items:``; ``print(a, b)`` has too few letters)."""
    body = line.strip()
    if body.startswith(("|", "+-", "+=")):
        return True
    if body.endswith(":") or not _CODE_MARKS.isdisjoint(body):
        return False
    plain = sum(c.isalpha() or c.isspace() or c in _PROSE_MARKS for c in body)
    return plain >= 0.9 * len(body)


def _code_line(line: str) -> bool:
    """A line of a plain text that looks like code (keywords, assignments, braces, or an
    indentation that is not prose)."""
    return bool(_CODE_LINE.search(line)) or (bool(_INDENTED.match(line)) and not _prose_like(line))


class Route(NamedTuple):
    """``text[start:end]`` goes to ``strategy`` because of ``reason``."""

    start: int
    end: int
    strategy: str
    reason: str


class _Facts(NamedTuple):
    code_share: float
    short_share: float
    mean_line: float
    long_par_share: float
    wrapped_share: float  # share of prose in paragraphs of 3+ lines (hard-wrapped text)
    median_par: int
    cjk_share: float
    script: str
    has_subheadings: bool
    n_tables: int
    code_in_blocks: bool  # code_share counts code blocks (Markdown), not code-like lines


def _size_in_chars(doc: Document, chunk_size: int, unit: str, ctx: Context | None) -> float:
    """``chunk_size`` converted to characters with the document's own chars-per-unit ratio."""
    if unit == "chars":
        return float(chunk_size)
    probe = sample(doc.text, 20_000, 4)
    length = ctx.length(unit) if ctx is not None else get_length(unit)
    n = length(probe) - length.special
    ratio = len(probe) / n if n > 0 else 4.0
    return (chunk_size - length.special) * ratio


def _facts(
    doc: Document, start: int, end: int, size_chars: float, level: int, block_starts: list[int] | None = None
) -> _Facts:
    text = doc.text
    piece = text[start:end]
    starts = block_starts if block_starts is not None else [b.start for b in doc.blocks]
    lo = bisect_left(starts, start)
    hi = bisect_left(starts, end, lo)
    blocks = doc.blocks[lo:hi]
    # code in a list or quote is the list's: steps, each with its command, are a procedure that
    # recursive (which knows no fences) would cut inside, not a listing
    code_chars = sum(b.end - b.start for b in top_level(blocks) if b.kind == "code")
    lines = [ln for ln in piece.split("\n") if ln.strip()]
    if doc.kind == "markdown":
        code_share = code_chars / max(len(piece.strip()), 1)
    else:
        probe = [ln for ln in sample(piece).split("\n") if ln.strip()]
        code_share = sum(1 for ln in probe if _code_line(ln)) / max(len(probe), 1)
    mean_line, short_share = line_stats(piece)
    # prose paragraphs: blank-line paragraphs outside code, tables and html blocks
    skip = [(b.start, b.end) for b in blocks if b.kind in ("code", "table", "html", "front_matter")]
    pars = _outside(paragraph_spans(text, start, end), skip)
    par_lens = sorted(e - s for s, e in pars)
    prose = sum(par_lens)
    wrapped = sum(e - s for s, e in pars if text.count("\n", s, e) >= 2)
    long_par = sum(n for n in par_lens if n > size_chars)
    script, share = dominant_script(piece)
    return _Facts(
        code_share=min(code_share, 1.0),
        short_share=short_share if len(lines) >= 5 else 0.0,
        mean_line=mean_line,
        long_par_share=long_par / prose if prose else 0.0,
        wrapped_share=wrapped / prose if prose else 0.0,
        median_par=par_lens[len(par_lens) // 2] if par_lens else 0,
        cjk_share=share if script == "CJK" else 0.0,
        script=script,
        has_subheadings=any(b.kind == "heading" and b.level > level for b in blocks),
        n_tables=sum(1 for b in blocks if b.kind == "table"),
        code_in_blocks=doc.kind == "markdown",
    )


def _outside(spans: list[tuple[int, int]], skip: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans not inside any ``skip`` range (both sorted by start): one linear sweep."""
    out = []
    j = 0
    for s, e in spans:
        while j < len(skip) and skip[j][1] < e:
            j += 1
        if j < len(skip) and skip[j][0] <= s and e <= skip[j][1]:
            continue
        out.append((s, e))
    return out


def _route_prose(f: _Facts, size_chars: float, fallback: str | None) -> tuple[str, str]:
    """Rules 3–6 for one range (``fallback`` replaces rule 6, for Markdown sections)."""
    if f.code_share >= CODE_SHARE:
        if f.code_in_blocks:
            return "markdown", f"code-heavy ({f.code_share:.0%} in code blocks): markdown keeps code blocks whole"
        return "recursive", f"code-heavy ({f.code_share:.0%} code): recursive cuts at blank lines, then lines"
    if f.short_share >= SHORT_LINES_SHARE and fallback is None:  # Markdown lists: markdown handles them
        return (
            "recursive",
            f"line-structured text ({f.short_share:.0%} of lines are short): recursive cuts at line breaks",
        )
    if f.long_par_share >= LONG_PARAGRAPH_SHARE:
        wrapped = ""
        if f.wrapped_share >= 0.5:
            wrapped = f"; its line breaks are layout (lines of ~{f.mean_line:.0f} characters)"
        return (
            "sentence",
            f"prose with long paragraphs ({f.long_par_share:.0%} of it in paragraphs over chunk_size"
            f"{wrapped}): sentence groups keep sentences whole",
        )
    if fallback:
        return fallback, "prose section: markdown keeps its paragraphs, lists and code whole"
    return (
        "recursive",
        f"plain prose with paragraphs that fit chunk_size (median {f.median_par} characters): "
        "recursive cuts at paragraph breaks first",
    )


def route(
    doc: Document,
    chunk_size: int = DEFAULT_SIZE,
    length: str = "chars",
    ctx: Context | None = None,
) -> list[Route]:
    """Hybrid's plan for ``doc``: ranges that cover the text, each with a strategy and a reason."""
    text = doc.text
    if not text.strip():
        return []
    size_chars = _size_in_chars(doc, chunk_size, length, ctx)
    headings = doc.headings
    if headings:
        return _route_sections(doc, headings, size_chars)
    f = _facts(doc, 0, len(text), size_chars, 0)
    name, why = _route_script(f) or _route_prose(f, size_chars, None)
    return [Route(0, len(text), name, why)]


def _route_script(f: _Facts) -> tuple[str, str] | None:
    if f.cjk_share >= CJK_SHARE:
        return (
            "recursive",
            f"{CJK_REASON} ({f.cjk_share:.0%} of letters): recursive with 。！？ as sentence ends",
        )
    if f.script in UNMARKED_SCRIPTS:  # its sentence ends are only spaces: recursive cuts there too
        return "recursive", f"{f.script} text, written without sentence marks: recursive cuts at the spaces between phrases"
    return None


def _route_sections(doc: Document, headings: tuple[Block, ...], size_chars: float) -> list[Route]:
    text = doc.text
    levels = sorted({h.level for h in headings})
    # the shallowest level with 2+ headings: a lone H1 title over H2 sections cuts at the H2s
    top = next((lv for lv in levels if sum(1 for h in headings if h.level == lv) > 1), levels[0])
    cuts = [h.start for h in headings if h.level == top]
    cuts[:1] = [0] if only_headings(text, top_level(doc.blocks), cuts[0]) else [0, cuts[0]]
    routes = []
    block_starts = [b.start for b in doc.blocks]
    fallback = "markdown" if doc.kind == "markdown" else None  # a PDF's blocks are its headings only
    for i, start in enumerate(cuts):
        end = cuts[i + 1] if i + 1 < len(cuts) else len(text)
        f = _facts(doc, start, end, size_chars, top, block_starts)
        if f.has_subheadings or f.n_tables:
            what = " and ".join(
                w for w, on in (("sub-headings", f.has_subheadings), ("tables", f.n_tables)) if on
            )
            routes.append(Route(start, end, "markdown", f"section with {what}: markdown keeps its structure"))
        elif len(text[start:end].strip()) <= size_chars:
            routes.append(Route(start, end, "markdown", "section fits in one chunk: markdown keeps it whole"))
        else:
            routes.append(Route(start, end, *(_route_script(f) or _route_prose(f, size_chars, fallback))))
    return routes


def describe_routes(routes: tuple[Route, ...] | list[Route]) -> tuple[str, str]:
    """(choice, reason) for the document summary: the strategy, or a per-section summary."""
    if not routes:
        return "", "the document is empty"
    names = [r.strategy for r in routes]
    if len(set(names)) == 1 and len(routes) == 1:
        return names[0], routes[0].reason
    counts: dict[str, int] = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    choice = " + ".join(counts)
    parts = ", ".join(f"{n} for {c} section{'s' if c > 1 else ''}" for n, c in counts.items())
    return choice, f"routes each top-level section on its own: {parts}"


def _sub_params(
    strategy: Strategy[Any], p: HybridParams, doc: Document, r: Route, chars_per_unit: float
) -> dict[str, Any]:
    """Parameters for the delegated strategy, within its own bounds."""
    name = r.strategy
    values: dict[str, Any] = {
        "chunk_size": p.chunk_size,
        "chunk_overlap": p.chunk_overlap,
        "length": p.length,
    }
    if name == "sentence":
        per = strategy.param("sentences_per_chunk")
        per_max = int(per.max) if per.max is not None else 100
        overlap = 0
        if p.chunk_overlap:
            mean = _mean_sentence_chars(doc, r.start, r.end)
            overlap = max(1, round(p.chunk_overlap * chars_per_unit / mean))
        values = {
            "sentences_per_chunk": per_max,  # the chunk_size cap closes each group
            "overlap_sentences": min(overlap, per_max - 1),
            "chunk_size": p.chunk_size,
            "length": p.length,
        }
    elif name == "recursive" and r.reason.startswith(CJK_REASON):
        values["separators"] = CJK_SEPARATORS
        values["keep_separator"] = "end"
    names = set(strategy.param_names())
    return {k: v for k, v in values.items() if k in names}


def _mean_sentence_chars(doc: Document, start: int, end: int) -> float:
    spans = sentence_spans(doc.text, start, min(end, start + 20_000))
    if not spans:
        return 100.0
    return max(sum(e - s for s, e in spans) / len(spans), 1.0)


def _subdoc(doc: Document, start: int, end: int, block_starts: list[int] | None = None) -> Document:
    """``doc.text[start:end]`` as a document of its own, its blocks and pages shifted
    (``block_starts``: the blocks' starts, sorted as the blocks are, so a section's blocks are
    found by bisection: a document of 100,000 sections stays linear)."""
    if start == 0 and end == len(doc.text):
        return doc
    lo, hi = 0, len(doc.blocks)
    if block_starts is not None:
        lo, hi = bisect_left(block_starts, start), bisect_left(block_starts, end)
    blocks = tuple(
        replace(b, start=b.start - start, end=b.end - start)
        for b in doc.blocks[lo:hi]
        if start <= b.start and b.end <= end
    )
    pages = tuple(
        Page(pg.number, max(pg.start, start) - start, min(pg.end, end) - start)
        for pg in doc.pages
        if pg.end >= start and pg.start <= end
    )
    return Document(
        doc.name, doc.kind, doc.text[start:end], pages=pages, blocks=blocks, encoding=doc.encoding
    )


def _next_section_reason(headings: dict[int, Block], pos: int, kind: str) -> str:
    """Reason of a section's last chunk: the heading that starts the next section
    (``headings``: the document's headings by start)."""
    h = headings.get(pos)
    return heading_reason(h, kind) if h is not None else HEADING


@dataclass(frozen=True)
class HybridParams:
    chunk_size: int = declare(CHUNK_SIZE.with_default(DEFAULT_SIZE))
    chunk_overlap: int = declare(
        CHUNK_OVERLAP.with_default(0, note="For sentence groups it becomes a number of sentences.")
    )
    length: str = declare(LENGTH)


@register
class HybridStrategy(Strategy[HybridParams]):
    name = "hybrid"
    description = (
        "Looks at the document (headings, code, tables, line and paragraph lengths, script) and hands "
        "it, or each top-level section of a document with headings (Markdown, or a PDF's read from its "
        "font sizes), to the strategy that fits: markdown for structured sections and for code blocks (kept "
        "whole), recursive for code-like plain text, line-structured or short-paragraph prose (with 。！？ as "
        "sentence ends for CJK), recursive for Thai (no sentence marks), sentence groups for prose with long "
        "paragraphs. Each chunk says what was chosen and why."
    )
    Params = HybridParams
    rules = (OVERLAP_BELOW_SIZE,)

    def check(self, p: HybridParams) -> None:
        check_size_overlap(p.chunk_size, p.chunk_overlap, p.length)

    def size_cap(self, p: HybridParams) -> int:
        return p.chunk_size

    def split(self, doc: Document, p: HybridParams, ctx: Context) -> list[Span]:
        routes = route(doc, p.chunk_size, p.length, ctx)
        chars_per_unit = _size_in_chars(doc, p.chunk_size, p.length, ctx) / p.chunk_size
        spans: list[Span] = []
        block_starts = [b.start for b in doc.blocks]
        headings = {h.start: h for h in doc.headings}
        for i, r in enumerate(routes):
            strategy = get_strategy(r.strategy)
            sub_p = strategy.parse(_sub_params(strategy, p, doc, r, chars_per_unit))
            got = strategy.split(_subdoc(doc, r.start, r.end, block_starts), sub_p, ctx)
            meta = (("hybrid_choice", r.strategy), ("hybrid_reason", r.reason))
            last = len(got) - 1
            for j, s in enumerate(got):
                reason = s.reason
                if j == last and i + 1 < len(routes) and reason.startswith(END_OF_TEXT):
                    reason = _next_section_reason(headings, routes[i + 1].start, doc.kind)
                spans.append(Span(s.start + r.start, s.end + r.start, reason, s.meta + meta))
        return spans
