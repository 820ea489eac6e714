"""Markdown sections: cut before headings, keep code fences and tables whole.

1. The document is cut into sections before every heading of level <= ``max_heading_level``
   (``doc.blocks``, from markdown-it-py: a ``#`` in a code fence is no heading; code nested in lists
   and quotes is there too; a PDF's blocks are its headings, read from its fonts, the text between
   two one block of prose). Each chunk's heading path comes from the same blocks.
2. A section that fits in ``chunk_size`` is one chunk. A section holding only its heading is
   joined to the next one when that is a sub-section (a heading alone is a poor chunk). With
   ``merge_small_sections``, runs of consecutive sections that fit together become one chunk
   (never with overlap across a heading).
3. A bigger section is packed block by block (paragraphs, lists, code, tables...): blocks are
   added to a chunk while the whole chunk, measured as one text, still fits, so a code fence
   (one in a list or quote too) or a table is never cut inside. A block bigger than ``chunk_size``
   on its own is split by ``recursive``'s splitter with separators suited to it (lines for code
   and tables; paragraphs, lines, sentences, words for prose). Headings stick to what follows them: when the next
   block does not fit beside its heading, the block (unless it is code or a table) is split so
   that its first part opens with the heading. ``chunk_overlap`` repeats whole trailing blocks
   and overlaps the pieces of a split block. (In token units a piece of a long block can come
   out a token over, as with ``recursive``, whose size bookkeeping it uses; its reason says so.)

Reasons: ``next heading: ## Title``, ``size limit: next block is a code block``, the recursive splitter's
reasons inside a long block (``separator '\\n': inside a code block larger than chunk_size``), ``end of text``.

A document without block structure (plain text, a PDF without headings) is split exactly as
``recursive`` with its default separators would.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate, pairwise

from explorer.documents.document import Block, Document, heading_title
from explorer.strategies.base import OVERLAP_BELOW_SIZE, PeerKit, Strategy, check_size_overlap, trim
from explorer.strategies.params import BOOL, CHUNK_OVERLAP, CHUNK_SIZE, INT, LENGTH, Param, declare
from explorer.strategies.registry import register
from explorer.strategies.splitting import Piece, RecursiveSplitter, pieces_to_spans, token_counter
from explorer.text.chunk import HEADING, SIZE_LIMIT, UNBREAKABLE, Span, inside_any
from explorer.text.length import Length

#: Blocks never cut inside unless bigger than chunk_size.
PROTECTED = ("code", "table")
#: Separators (and where the separator goes) for a block too big to be one chunk.
BLOCK_SEPARATORS: dict[str, tuple[tuple[str, ...], str]] = {
    "code": (("\n\n", "\n", " ", ""), "end"),
    "table": (("\n", " ", ""), "end"),
}
PROSE_SEPARATORS = (("\n\n", "\n", ". ", " ", ""), "end")
LABELS = {
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


def label(kind: str) -> str:
    return LABELS.get(kind, kind)


def heading_reason(h: Block) -> str:
    """Why a chunk ends before heading ``h``: the heading, its title cut as a heading path's is."""
    return f"{HEADING}: {'#' * max(h.level, 1)} {heading_title(h.info)}".rstrip()


@dataclass(frozen=True)
class MarkdownParams:
    max_heading_level: int = declare(
        Param(
            "max_heading_level",
            INT,
            3,
            "Cut before headings of this level or higher (1 = only #, 3 = #, ## and ###).",
            min=1,
            max=6,
            step=1,
        )
    )
    chunk_size: int = declare(CHUNK_SIZE)
    chunk_overlap: int = declare(
        CHUNK_OVERLAP.with_default(0, note="Used only inside a section bigger than chunk_size.")
    )
    merge_small_sections: bool = declare(
        Param(
            "merge_small_sections",
            BOOL,
            False,
            "Merge consecutive small sections into one chunk while they fit in chunk_size.",
        )
    )
    length: str = declare(LENGTH)


@register
class MarkdownStrategy(Strategy[MarkdownParams]):
    name = "markdown"
    description = (
        "Sections cut before headings (Markdown's, or a PDF's read from its font sizes; up to a level), each "
        "chunk carrying the path of the deepest heading over its content; code fences (also those inside a "
        "list item or a quote) and tables stay whole unless bigger than chunk_size; long sections are packed "
        "block by block. Plain text, and a PDF without headings, falls back to recursive."
    )
    Params = MarkdownParams
    rules = (OVERLAP_BELOW_SIZE,)

    def check(self, p: MarkdownParams) -> None:
        check_size_overlap(p.chunk_size, p.chunk_overlap, p.length)

    def size_cap(self, p: MarkdownParams) -> int:
        return p.chunk_size

    def split(self, doc, p: MarkdownParams, ctx) -> list[Span]:
        length = ctx.length(p.length)
        if not doc.blocks:
            splitter = RecursiveSplitter(
                doc.text,
                chunk_size=p.chunk_size,
                chunk_overlap=p.chunk_overlap,
                length=length,
                span_length=token_counter(doc.text, length),
            )
            return pieces_to_spans(splitter.split(), lengths=splitter.lengths)
        packer = _Packer(doc, p.chunk_size, p.chunk_overlap, length)
        return pieces_to_spans(packer.run(p.max_heading_level, p.merge_small_sections))

    def peer_code(self, p: MarkdownParams, kit: PeerKit) -> dict[str, str]:
        tok = kit.chonkie_tokenizer(p.length)
        return {
            "langchain": _langchain(p, kit),
            "llamaindex": kit.llamaindex(
                ["# split before every heading (no size limit, no heading-level choice)"],
                ["from llama_index.core.node_parser import MarkdownNodeParser"],
                ["parser = MarkdownNodeParser()"],
            ),
            "chonkie": kit.chonkie(
                [
                    "# closest: RecursiveChunker's Markdown recipe (splits at headings first, no heading path)",
                    "from chonkie import RecursiveChunker",
                ],
                [
                    f"chunker = RecursiveChunker.from_recipe('markdown', tokenizer={tok}, "
                    f"chunk_size={p.chunk_size})"
                ],
            ),
        }


def _langchain(p: MarkdownParams, kit: PeerKit) -> str:
    headers = [("#" * i, f"h{i}") for i in range(1, p.max_heading_level + 1)]
    setup, length_kw = kit.lc_length(p.length)
    tik = p.length in ("cl100k", "o200k")
    make = ".from_tiktoken_encoder(encoding_name=" + repr(p.length + "_base") + ", " if tik else "("
    return kit.code(
        [
            "# closest: split before headings, then by size inside each section",
            "from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter",
            *setup,
            "",
            f"by_heading = MarkdownHeaderTextSplitter(headers_to_split_on={headers!r}, strip_headers=False)",
            kit.read,
            "sections = by_heading.split_text(text)",
            f"by_size = RecursiveCharacterTextSplitter{make}chunk_size={p.chunk_size}, "
            f"chunk_overlap={p.chunk_overlap}{length_kw})",
            "chunks = [d.page_content for d in by_size.split_documents(sections)]",
        ]
    )


class _Packer:
    """Greedy packing of trimmed pieces into chunks, measured as whole texts (exact sizes)."""

    def __init__(self, doc: Document, size: int, overlap: int, length: Length):
        self.doc = doc
        self.text = doc.text
        self.size = size
        self.overlap = overlap
        self.length = length
        self.chars = length.name == "chars"
        self._cache: dict[tuple[int, int], int] = {}
        self._fast = None if self.chars else token_counter(self.text, length)
        self._blocks = sorted(doc.blocks, key=lambda b: (b.start, -b.end))
        self._block_starts = [b.start for b in self._blocks]
        self._block_ends = list(accumulate((b.end for b in self._blocks), max))  # non-decreasing
        self.out: list[Piece] = []

    def measure(self, s: int, e: int) -> int:
        if self.chars:
            return e - s
        n = self._cache.get((s, e))
        if n is None:
            n = self._fast([s], [e])[0] if self._fast is not None else self.length(self.text[s:e])
            self._cache[(s, e)] = n
        return n

    def trim(self, s: int, e: int) -> tuple[int, int]:
        return trim(self.text, s, e)

    # -- sections --------------------------------------------------------------------------
    def run(self, max_level: int, merge_small: bool) -> list[Piece]:
        text = self.text
        heads = [h for h in self.doc.headings if h.level <= max_level and 0 < h.start < len(text)]
        cuts = [0, *(h.start for h in heads), len(text)]
        heading_at = {h.start: h for h in heads}
        if cuts[0] < len(text) and self.doc.headings and self.doc.headings[0].start == 0:
            heading_at[0] = self.doc.headings[0]
        sections: list[tuple[int, int]] = []
        after: list[str | None] = []
        open_at: int | None = None  # start of heading-only sections joined to the next one
        for i in range(len(cuts) - 1):
            s, e = self.trim(cuts[i], cuts[i + 1])
            if s >= e:
                continue
            nxt = heads[i] if i < len(heads) else None
            h = heading_at.get(s)
            if h is not None and h.end >= e and nxt is not None and nxt.level > h.level:
                # only a heading, and a sub-heading follows: a heading alone is a poor chunk
                open_at = s if open_at is None else open_at
                continue
            sections.append((s if open_at is None else open_at, e))
            after.append(heading_reason(nxt) if nxt is not None else None)
            open_at = None
        if merge_small:
            self.pack(sections, after, 0, lambda _k, a, b, _lead: self.split_section(a, b))
        else:
            for sec, why in zip(sections, after, strict=True):
                self.pack([sec], [why], 0, lambda _k, a, b, _lead: self.split_section(a, b))
        return self.out

    def split_section(self, s: int, e: int) -> None:
        """A section bigger than size: pieces start at block starts (and after protected blocks)."""
        lo = bisect_left(self._block_ends, s)  # blocks ending before s come before lo
        hi = bisect_left(self._block_starts, e)
        blocks = [b for b in self._blocks[lo:hi] if b.end > s and b.start < e]
        inside = inside_any([(b.start, b.end) for b in blocks if b.kind in PROTECTED])
        cuts = {s, e}
        kind_at: dict[int, str] = {}
        outer: Block | None = None  # the last block that may hold a nested code block
        for b in blocks:
            for c in (b.start, b.end):
                if s < c < e and not inside(c):
                    cuts.add(c)
            if b.kind in PROTECTED or b.start not in kind_at:  # a fence opening a list is code
                kind_at[b.start] = b.kind
            if b.kind not in PROTECTED:
                outer = b
            elif outer is not None and outer.start <= b.start and b.end < outer.end:
                kind_at.setdefault(b.end, outer.kind)  # the rest of the list or quote
        pieces: list[tuple[int, int]] = []
        kinds: list[str] = []
        bounds = sorted(cuts)
        for a, b in pairwise(bounds):
            ps, pe = self.trim(a, b)
            if ps < pe:
                pieces.append((ps, pe))
                kinds.append(kind_at.get(ps) or kind_at.get(a, "text"))
        between: list[str | None] = [f"{SIZE_LIMIT}: next block is {label(k)}" for k in kinds[1:]]
        between.append(None)
        self.pack(
            pieces,
            between,
            self.overlap,
            lambda k, a, b, lead: self.split_block(a, b, kinds[k], lead),
            [k == "heading" for k in kinds],
            [k not in PROTECTED and k != "heading" for k in kinds],
        )

    def split_block(self, s: int, e: int, kind: str, lead: int | None = None) -> None:
        """One block bigger than size: the recursive splitter inside it.

        ``lead`` is the start of the heading(s) just before the block: they open the first
        chunk, which then gets only the room the heading leaves (a heading alone is a poor chunk).
        """
        seps, keep = BLOCK_SEPARATORS.get(kind, PROSE_SEPARATORS)
        where = f"inside {label(kind)} larger than chunk_size" if kind in PROTECTED else ""

        def pieces(a: int, room: int) -> list[Piece]:
            return RecursiveSplitter(
                self.text,
                chunk_size=room,
                chunk_overlap=min(self.overlap, room - 1),
                separators=seps,
                keep_separator=keep,
                length=self.length,
                span_length=self._fast,
            ).split(a, e)

        start = s
        if lead is not None:
            first = self._first_after_heading(lead, s, pieces)
            if first is None:
                self.out.append((*self.trim(lead, s), f"{SIZE_LIMIT}: next block is {label(kind)}"))
            else:
                self.out.append((lead, first[1], self._where(first[2], where)))
                start = first[1]
        for ps, pe, why in pieces(start, self.size):
            self.out.append((ps, pe, self._where(why, where)))

    def _first_after_heading(
        self, lead: int, s: int, pieces: Callable[[int, int], list[Piece]]
    ) -> Piece | None:
        """First chunk of the block split with the room the heading leaves, if it fits with it."""
        room = self.size - self.measure(lead, s)
        for _ in range(3):  # token counts are not additive: shrink and retry
            if room < max(1, self.size // 4):  # too little left: the heading goes alone
                return None
            first = pieces(s, room)[0]
            if first[2] is None or (first[2] or "").startswith(UNBREAKABLE):
                return None
            over = self.measure(lead, first[1]) - self.size
            if over <= 0:
                return first
            room -= over
        return None

    @staticmethod
    def _where(why: str | None, where: str) -> str | None:
        if not where or why is None:
            return why
        return f"{why}; {where}" if why.startswith(UNBREAKABLE) else f"{why}: {where}"

    # -- greedy packing --------------------------------------------------------------------
    def pack(
        self,
        pieces: list[tuple[int, int]],
        between: list[str | None],
        overlap: int,
        on_big: Callable[[int, int, int, int | None], None],
        sticky: list[bool] | None = None,
        splittable: list[bool] | None = None,
    ) -> None:
        """Chunks of consecutive pieces while the whole fits.

        ``between[i]`` is the reason of a chunk ending after piece i (None: the caller's
        boundary). A piece over size goes to ``on_big(k, start, end, lead)``. ``sticky`` pieces
        (headings) open the next chunk rather than end one: they go with the next piece, and if
        that piece does not fit with them but is ``splittable`` (prose, not a code block or a
        table), it is split to take them (``lead`` = where the headings start). With overlap,
        a new chunk starts with the previous chunk's last pieces that fit in ``overlap`` and
        leave room for the next piece.
        """
        size, measure, out = self.size, self.measure, self.out
        n = len(pieces)
        sticky = sticky or [False] * n
        splittable = splittable or [False] * n
        i: int | None = None  # first piece of the open chunk
        for k, (s, e) in enumerate(pieces):
            big = measure(s, e) > size
            if i is not None and not big and measure(pieces[i][0], e) <= size:
                continue  # piece k joins the open chunk
            lead = None
            if i is not None:  # close the open chunk before piece k
                t = k
                while t - 1 >= i and sticky[t - 1]:
                    t -= 1
                if t < k and not big and measure(pieces[t][0], e) > size:
                    if splittable[k]:
                        big = True  # headings + piece k: split piece k to take the headings
                    else:
                        t = k  # a code block or table is not cut for them: they stay where they are
                if t > i:
                    self._emit(pieces[i][0], pieces[t - 1][1], between[t - 1])
                if big:
                    lead = pieces[t][0] if t < k else None
                    i = None
                else:
                    j = self._overlap_start(pieces, i, t, e, overlap)
                    i = j if j < k else None
            if big:
                n0 = len(out)
                on_big(k, s, e, lead)
                if len(out) > n0 and out[-1][2] is None:
                    out[-1] = (out[-1][0], out[-1][1], between[k])
            elif i is None:
                i = k
        if i is not None:
            self._emit(pieces[i][0], pieces[n - 1][1], between[n - 1])

    def _overlap_start(self, pieces: list[tuple[int, int]], i: int, t: int, e: int, overlap: int) -> int:
        """First piece of the next chunk: the closed chunk's (pieces i..t-1) last pieces that fit
        in ``overlap`` and leave room for the piece ending at ``e``."""
        j = t
        while (
            overlap
            and j - 1 > i
            and self.measure(pieces[j - 1][0], pieces[t - 1][1]) <= overlap
            and self.measure(pieces[j - 1][0], e) <= self.size
        ):
            j -= 1
        return j

    def _emit(self, s: int, e: int, why: str | None) -> None:
        self.out.append((s, e, why))
