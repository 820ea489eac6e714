"""Markdown blocks of a document's text, as :class:`Block` objects with character offsets.

The parse itself is :mod:`explorer.text.markdown_parse`, shared with the sentence splitter's
fences so both read one structure. Top-level blocks are listed: a heading inside a list or a
quote is part of that block, and a ``#`` line inside a code fence is code, not a heading. Code
blocks and tables nested in a list or a quote are listed too, right after their container and
inside it: a strategy must not cut them any more than top-level ones, and the profile counts them.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from explorer import limits
from explorer.documents.document import Block
from explorer.lru import per_text, spans_size
from explorer.text.markdown_parse import NESTED_KINDS, structure


@per_text(limits.TEXT_MEMO_BYTES, lambda b: spans_size(b, 400))
def markdown_blocks(text: str) -> tuple[Block, ...]:
    """Blocks of ``text`` sorted by start, containers before the code blocks and tables nested in them
    (see the module docstring)."""
    return tuple(Block(*b) for b in structure(text).blocks)


def count_list_items(text: str) -> int:
    """List items at any depth (the document profile shows it)."""
    return structure(text).n_items


def top_level(blocks: Sequence[Block]) -> list[Block]:
    """``blocks`` (sorted as :func:`markdown_blocks` lists them) less those nested in a list or
    quote: what a text is made of, its lists' code and tables being part of the lists."""
    out: list[Block] = []
    reach = 0  # the end of the last list or quote
    for b in blocks:
        if b.start < reach and b.kind in NESTED_KINDS:
            continue
        out.append(b)
        if b.kind in ("list", "blockquote"):
            reach = b.end
    return out


def block_at(blocks: tuple[Block, ...], pos: int) -> Block | None:
    """The innermost block containing character ``pos``, if any (blocks sorted by start; top-level
    ones disjoint, nested code blocks and tables inside their container and after it)."""
    i = bisect_right([b.start for b in blocks], pos) - 1
    while i >= 0:
        if pos < blocks[i].end:
            return blocks[i]
        if blocks[i].kind not in NESTED_KINDS:
            return None  # a top-level block ends before pos: nothing earlier reaches it
        i -= 1  # a code block or table (maybe nested) ends before pos: its container may hold pos
    return None


def only_headings(text: str, blocks: Sequence[Block], end: int) -> bool:
    """Whether ``text[:end]`` holds nothing but headings (and blank space): a document's title
    alone before its first section, which is not a section of its own (a chunk "# Orion")."""
    pos = 0
    for b in blocks:
        if b.start >= end:
            break
        if b.kind != "heading" or text[pos : b.start].strip():
            return False
        pos = b.end
    return not text[pos:end].strip()
