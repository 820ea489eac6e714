"""Markdown block structure as character ranges, from markdown-it-py (CommonMark + tables).

markdown-it reports each block as a range of source lines; we turn those into character
ranges of the document text (which uses ``\\n`` line ends only, so line ``i`` starts right
after the ``i``-th ``\\n``). Top-level blocks are listed: a heading inside a list or a quote
is part of that block, and a ``#`` line inside a code fence is code, not a heading. Code blocks
nested in a list or a quote are listed too, right after their container and inside it: a
strategy must not cut them any more than top-level ones, and the profile counts them.
YAML front matter (``---`` on the first line up to a closing ``---`` or ``...`` line) is a
``front_matter`` block; markdown-it would otherwise read it as a rule and a setext heading.
"""

from __future__ import annotations

from bisect import bisect_right
from functools import lru_cache

from explorer.documents.document import Block

_OPEN_KINDS = {
    "heading_open": "heading",
    "paragraph_open": "paragraph",
    "table_open": "table",
    "bullet_list_open": "list",
    "ordered_list_open": "list",
    "blockquote_open": "blockquote",
}
_LEAF_KINDS = {"fence": "code", "code_block": "code", "html_block": "html", "hr": "hr"}
#: Token types listed at any depth (the others only at the top level).
_NESTED_TYPES = ("fence", "code_block")


@lru_cache(maxsize=1)
def _parser():
    from markdown_it import MarkdownIt

    # Block structure only: skipping inline parsing (emphasis, links) saves time and avoids
    # its worst cases on hostile input.
    return MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])


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


def markdown_blocks(text: str) -> tuple[Block, ...]:
    """Blocks of ``text`` sorted by start, containers before the code blocks nested in them
    (see the module docstring)."""
    return _structure(text)[0]


def count_list_items(text: str) -> int:
    """List items at any depth (the document profile shows it)."""
    return _structure(text)[1]


@lru_cache(maxsize=2)
def _structure(text: str) -> tuple[tuple[Block, ...], int]:
    """One parse serves both the loader's blocks and the profile's list count (markdown-it-py
    takes ~2 s per MB): the cache holds the last two texts."""
    if not text:
        return (), 0
    starts = _line_starts(text)
    n_front, tokens = _tokens(text, starts)
    blocks: list[Block] = []
    if n_front:
        s, e = _span(text, starts, 0, n_front)
        blocks.append(Block("front_matter", s, e, 0, "yaml"))
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
        elif kind == "list":
            info = "ordered" if tok.type == "ordered_list_open" else "bullet"
        blocks.append(Block(kind, s, e, level, info))
    return tuple(blocks), n_items


def block_at(blocks: tuple[Block, ...], pos: int) -> Block | None:
    """The innermost block containing character ``pos``, if any (blocks sorted by start; top-level
    ones disjoint, nested code blocks inside their container and after it)."""
    i = bisect_right([b.start for b in blocks], pos) - 1
    while i >= 0:
        if pos < blocks[i].end:
            return blocks[i]
        if blocks[i].kind != "code":
            return None  # a top-level block ends before pos: nothing earlier reaches it
        i -= 1  # a code block (maybe nested) ends before pos: its container may hold pos
    return None
