"""The document model: normalised text plus structure, all addressed by character offsets."""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from explorer.limits import MAX_HEADING_CHARS
from explorer.text.chunk import HEADING


@dataclass(frozen=True, slots=True)
class Page:
    """A PDF page: ``text[start:end]`` is its text (1-based ``number``)."""

    number: int
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Block:
    """A structural block of a Markdown document, or a PDF's heading (``text[start:end]``).

    ``kind`` is one of ``heading``, ``code``, ``table``, ``list``, ``paragraph``, ``html``,
    ``blockquote``, ``front_matter``, ``hr``. ``level`` is the heading level (0 otherwise);
    ``info`` is the heading title or the code fence's language. Top-level blocks are disjoint; a
    ``code`` block or ``table`` nested in a list or quote follows its container and lies inside it.
    A PDF's blocks are its headings only (:mod:`explorer.documents.pdf_headings`): its heading
    line, or two for a title wrapped over two lines (``info`` then joins them with a space).
    """

    kind: str
    start: int
    end: int
    level: int = 0
    info: str = ""


def text_id(text: str) -> str:
    """Stable id of a document: a hash of its (normalised) text."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def repeats(docs: Sequence[Document]) -> dict[int, int]:
    """Index of each document whose text an earlier one has -> that earlier one's index. A
    document's id is its text's hash, so such a document would put the same chunks in every
    index twice (and share their ids): callers leave it out and say so."""
    first: dict[str, int] = {}
    out = {}
    for i, d in enumerate(docs):
        if d.id in first:
            out[i] = first[d.id]
        else:
            first[d.id] = i
    return out


@dataclass(frozen=True)
class Document:
    """A loaded document. Every offset in the app indexes ``text``.

    ``text`` is the normalised text (after any clean-up the user switched on): the
    exact string the user sees and every chunk is a slice of.
    """

    name: str
    kind: str  # "text" | "markdown" | "pdf"
    text: str
    pages: tuple[Page, ...] = ()
    blocks: tuple[Block, ...] = ()
    warnings: tuple[str, ...] = ()
    cleanup: tuple[str, ...] = ()  # clean-up steps applied, in order
    encoding: str = ""
    id: str = field(default="")
    #: Control characters of a text file the loader removed (NUL, ESC...) or made line ends
    #: (form feed, vertical tab, NEL): a peer library that reads the file keeps them, so its
    #: chunks differ (its exported snippet says so).
    changed_controls: int = 0

    def __post_init__(self) -> None:
        if not self.id:
            object.__setattr__(self, "id", text_id(self.text))

    # -- structure look-ups (cached: Document is immutable) -------------------------------
    @cached_property
    def _page_starts(self) -> list[int]:
        return [p.start for p in self.pages]

    def pages_for(self, start: int, end: int) -> tuple[int, ...]:
        """1-based numbers of the pages that ``text[start:end]`` touches (empty if no page map)."""
        if not self.pages:
            return ()
        end = max(end, start + 1)
        first = max(bisect_right(self._page_starts, start) - 1, 0)
        out = []
        for page in self.pages[first:]:
            if page.start >= end:
                break
            if page.end > start or page.start == page.end == start:
                out.append(page.number)
        return tuple(out) or (self.pages[first].number,)

    @cached_property
    def headings(self) -> tuple[Block, ...]:
        return tuple(b for b in self.blocks if b.kind == "heading")

    @cached_property
    def _heading_starts(self) -> list[int]:
        return [h.start for h in self.headings]

    @cached_property
    def _heading_paths(self) -> tuple[tuple[str, ...], ...]:
        paths: list[tuple[str, ...]] = []
        stack: list[Block] = []
        for h in self.headings:
            while stack and stack[-1].level >= h.level:
                stack.pop()
            stack.append(h)
            paths.append(tuple(heading_title(b.info) for b in stack))
        return tuple(paths)

    def heading_path(self, pos: int) -> tuple[str, ...]:
        """Titles of the headings in force at ``pos`` (outermost first, each cut at
        :data:`~explorer.limits.MAX_HEADING_CHARS`); () before the first."""
        i = bisect_right(self._heading_starts, pos) - 1
        return self._heading_paths[i] if i >= 0 else ()

    @cached_property
    def _heading_by_start(self) -> dict[int, Block]:
        return {h.start: h for h in self.headings}

    def heading_at(self, pos: int) -> Block | None:
        """The heading that starts at ``pos``, if any."""
        return self._heading_by_start.get(pos)

    def blocks_of(self, *kinds: str) -> tuple[Block, ...]:
        return tuple(b for b in self.blocks if b.kind in kinds)

    @property
    def n_pages(self) -> int:
        return len(self.pages)


def heading_title(info: str) -> str:
    """A heading's title as a chunk carries it: cut at :data:`~explorer.limits.MAX_HEADING_CHARS`."""
    return info if len(info) <= MAX_HEADING_CHARS else info[: MAX_HEADING_CHARS - 1] + "…"


def heading_reason(h: Block, kind: str) -> str:
    """Why a chunk ends before heading ``h`` of a ``kind`` document, every strategy's words for it.

    Markdown's reads ``next heading: ## Title``: the marks its text writes. A PDF's headings are
    read from its fonts, so "##" would name marks its text does not hold: ``next heading: Title
    (level 2)``, the level in words.
    """
    title, level = heading_title(h.info), max(h.level, 1)
    if kind == "markdown":
        return f"{HEADING}: {'#' * level} {title}".rstrip()
    return f"{HEADING}: {title} (level {level})" if title else f"{HEADING}: level {level}"


#: A block kind in words, as cut reasons name the block that comes next ("next block is a table").
BLOCK_LABELS = {
    "code": "a code block",
    "table": "a table",
    "list": "a list",
    "paragraph": "a paragraph",
    "heading": "a heading",
    "blockquote": "a quote",
    "html": "an HTML block",
    "hr": "a rule",
    "front_matter": "front matter",
    "text": "text",
}


def block_label(kind: str) -> str:
    """``kind`` in words (:data:`BLOCK_LABELS`; an unknown kind as it is)."""
    return BLOCK_LABELS.get(kind, kind)
