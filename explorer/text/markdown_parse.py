"""Markdown block structure as character ranges, from one markdown-it-py parse (CommonMark + tables).

One parse, two readers: the Markdown loader's blocks (:mod:`explorer.documents.markdown_blocks`)
and the sentence splitter's code fences (:mod:`explorer.text.line_breaks`), so a fence nested in
a list item or a quote is one unit for every strategy. It lives in the text layer because the
sentence splitter does.

markdown-it reports each block as a range of source lines; we turn those into character
ranges of the text (which uses ``\\n`` line ends only, so line ``i`` starts right after the
``i``-th ``\\n``). Top-level blocks are listed: a heading inside a list or a quote is part of
that block, and a ``#`` line inside a code fence is code, not a heading. Code blocks and tables
nested in a list or a quote are listed too, right after their container and inside it.
YAML front matter (``---`` on the first line up to a closing ``---`` or ``...`` line) is a
``front_matter`` block; markdown-it would otherwise read it as a rule and a setext heading.
One departure from CommonMark: a line of tildes alone right under a line of text at least as
long is that line's underline (reStructuredText and plain-text headings, vimtutor's rules), not
a fence that would make the rest of the text code.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from explorer import limits
from explorer.lru import per_text, spans_size

_OPEN_KINDS = {
    "heading_open": "heading",
    "paragraph_open": "paragraph",
    "table_open": "table",
    "bullet_list_open": "list",
    "ordered_list_open": "list",
    "blockquote_open": "blockquote",
}
_LEAF_KINDS = {"fence": "code", "code_block": "code", "html_block": "html", "hr": "hr"}
#: Token types listed at any depth (the others only at the top level): what no strategy may cut.
_NESTED_TYPES = ("fence", "code_block", "table_open")
#: The kinds of block that may lie inside a list or a quote listed before them.
NESTED_KINDS = ("code", "table")
#: A block as (kind, start, end, level, info); :class:`explorer.documents.document.Block` fields.
RawBlock = tuple[str, int, int, int, str]


@dataclass(frozen=True, slots=True)
class Structure:
    """What one parse of a text gives: its blocks, its list items (any depth) and its fenced code
    blocks (any depth, sorted, disjoint; indented code is not among them: plain text indents prose)."""

    blocks: tuple[RawBlock, ...]
    n_items: int
    fences: tuple[tuple[int, int], ...]


def _underline(state, line: int) -> bool:
    """Whether ``line`` is tildes alone, right under a non-blank line no longer than it."""
    src, pos = state.src, state.bMarks[line] + state.tShift[line]
    if line == 0 or not src.startswith("~~~", pos):  # most lines: no slice made
        return False
    row = src[pos : state.eMarks[line]].rstrip()
    if row.strip("~"):
        return False
    above = src[state.bMarks[line - 1] + state.tShift[line - 1] : state.eMarks[line - 1]].strip()
    return 0 < len(above) <= len(row)


@lru_cache(maxsize=1)
def _parser():
    from markdown_it import MarkdownIt
    from markdown_it.rules_block import fence

    def fence_unless_underline(state, start: int, end: int, silent: bool) -> bool:
        return not _underline(state, start) and fence(state, start, end, silent)

    # Block structure only: skipping inline parsing (emphasis, links) saves time and avoids
    # its worst cases on hostile input.
    md = MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])
    alt = ["paragraph", "reference", "blockquote", "list"]  # what a fence may interrupt, as before
    md.block.ruler.at("fence", fence_unless_underline, {"alt": alt})
    return md


def front_matter_lines(text: str) -> int:
    """Number of lines of YAML front matter at the top of ``text`` (0 if none)."""
    if not text.startswith("---"):
        return 0
    lines = text.split("\n", 2001)[:2001]  # front matter is short; do not scan a whole book
    if lines[0].rstrip() != "---":
        return 0
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            return i + 1
    return 0


def _tokens(text: str, starts: list[int]):
    n_front = front_matter_lines(text)
    src = text
    if n_front:
        # blank the front matter out, keeping its line breaks, so line numbers stay true
        cut = starts[n_front] if n_front < len(starts) else len(text)
        src = "\n" * text.count("\n", 0, cut) + text[cut:]
    return n_front, _parser().parse(src)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    pos = text.find("\n")
    while pos >= 0:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    return starts


def _span(text: str, starts: list[int], first: int, last: int) -> tuple[int, int]:
    """Characters of lines [first, last), without surrounding whitespace."""
    s = starts[first] if first < len(starts) else len(text)
    e = starts[last] if last < len(starts) else len(text)
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return s, e


@per_text(limits.TEXT_MEMO_BYTES, lambda s: spans_size(s.blocks, 400) + spans_size(s.fences))
def structure(text: str) -> Structure:
    """One parse serves the loader's blocks, the profile's list count and the sentence splitter's
    fences (markdown-it-py takes ~2 s per MB): the memo keeps recent parses within its byte budget."""
    if not text:
        return Structure((), 0, ())
    starts = _line_starts(text)
    n_front, tokens = _tokens(text, starts)
    blocks: list[RawBlock] = []
    fences: list[tuple[int, int]] = []
    if n_front:
        blocks.append(("front_matter", *_span(text, starts, 0, n_front), 0, "yaml"))
    n_items = 0
    for i, tok in enumerate(tokens):
        if tok.type == "list_item_open":
            n_items += 1
        if tok.map is None or (tok.level != 0 and tok.type not in _NESTED_TYPES):
            continue
        kind = _OPEN_KINDS.get(tok.type) or _LEAF_KINDS.get(tok.type)
        if kind is None:
            continue
        s, e = _span(text, starts, tok.map[0], tok.map[1])
        if e <= s:
            continue
        level, info = 0, ""
        if kind == "heading":
            level = int(tok.tag[1:])
            inline = tokens[i + 1] if i + 1 < len(tokens) else None
            info = inline.content.strip() if inline is not None and inline.type == "inline" else ""
        elif tok.type == "fence":
            info = tok.info.strip().split(maxsplit=1)[0] if tok.info.strip() else ""
            fences.append((s, e))
        elif kind == "list":
            info = "ordered" if tok.type == "ordered_list_open" else "bullet"
        blocks.append((kind, s, e, level, info))
    return Structure(tuple(blocks), n_items, tuple(fences))


def structure_readable(text: str) -> bool:
    """Whether ``text`` is short enough for its Markdown structure to be read (the limit is
    :data:`~explorer.limits.MAX_MARKDOWN_CHARS`): the loader, the profile and the sentence
    splitter's fences ask the same question, so they agree on what was read."""
    return len(text) <= limits.MAX_MARKDOWN_CHARS


@per_text(limits.TEXT_MEMO_BYTES, spans_size)
def fenced_code(text: str) -> tuple[tuple[int, int], ...]:
    """The fenced code blocks of ``text`` at any depth (see :class:`Structure`). None in a text
    with no fence marks (nothing to parse), nor in one over ``MAX_MARKDOWN_CHARS``, whose
    structure is not read (as the loader does not read a Markdown file's)."""
    if ("```" not in text and "~~~" not in text) or not structure_readable(text):
        return ()
    return structure(text).fences
