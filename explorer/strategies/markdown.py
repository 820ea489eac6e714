"""Markdown sections: cut before headings, keep code fences and tables whole.

1. The document is cut into sections before every heading of level <= ``max_heading_level``
   (headings come from ``doc.blocks``, which the loader fills from markdown-it-py, so a ``#``
   inside a code fence is not a heading; code blocks and tables nested in lists and quotes are
   there too; a PDF's blocks are its headings, read from its fonts, the text between two one
   block of prose). Each chunk's heading path comes from the same blocks.
2. A section that fits in ``chunk_size`` is one chunk. A section holding only its heading is
   joined to the next one when that is a sub-section (a heading alone is a poor chunk). With
   ``merge_small_sections``, runs of consecutive sections that fit together become one chunk
   (never with overlap across a heading).
3. A bigger section is packed block by block (paragraphs, lists, code, tables...): blocks are
   added to a chunk while the whole chunk, measured as one text, still fits, so a code fence
   or a table (one in a list or quote too) is never cut inside. A block bigger than ``chunk_size``
   on its own is split by ``recursive``'s splitter with separators suited to it (lines for code
   and tables; paragraphs, lines, sentences, words for prose). Headings stick to what follows them: when the next
   block does not fit beside its heading, the block (unless it is code or a table) is split so
   that its first part opens with the heading. A lead-in sticks to the code block or table right
   after it: a paragraph, list item or quoted paragraph of at most 200 characters ending in ":"
   ("Run the installer:", "Lancez l'installateur :", a list item's "1. Create the file:" over
   its nested fence) opens the block's chunk rather than ending the previous one, when the two
   fit in one chunk, or, for a block bigger than ``chunk_size``, when it leaves a quarter of a
   chunk to the block's first piece, which it opens (otherwise, or when headings over the
   lead-in do not fit with them too, the cut is where it would be without the rule). ``chunk_overlap`` repeats whole trailing blocks
   (leaving room for a heading or lead-in and the block it goes with) and overlaps the pieces of
   a split block. (In token units a piece of a long block can come out a token over, as with
   ``recursive``, whose size bookkeeping it uses; its reason says so.)

Reasons: ``next heading: ## Title`` (a PDF's: ``next heading: Title (level 2)``, see
:func:`~explorer.documents.document.heading_reason`), ``size limit: next block is a code block`` (``..., with its
lead-in`` when the chunk ends before the block's lead-in), the recursive splitter's
reasons inside a long block (``separator '\\n': inside a code block larger than chunk_size``), ``end of text``.

A document without block structure (plain text, a PDF without headings) is split exactly as
``recursive`` with its default separators would.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.strategies.base import OVERLAP_BELOW_SIZE, PeerKit, Strategy, check_size_overlap
from explorer.strategies.markdown_packing import SectionPacker
from explorer.strategies.params import BOOL, CHUNK_OVERLAP, CHUNK_SIZE, INT, LENGTH, Param, declare
from explorer.strategies.registry import register
from explorer.strategies.splitting import RecursiveSplitter, pieces_to_spans, token_counter
from explorer.text.chunk import Span


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
        "chunk carrying the path of the deepest heading over its content; code fences and tables (also those "
        "inside a list item or a quote) stay whole unless bigger than chunk_size; long sections are packed "
        "block by block, a short lead-in ending in ':' (\"Run the installer:\") going with the code block or "
        "table after it. Plain text, and a PDF without headings, falls back to recursive."
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
        packer = SectionPacker(doc, p.chunk_size, p.chunk_overlap, length)
        return pieces_to_spans(packer.run(p.max_heading_level, p.merge_small_sections))

    def peer_code(self, p: MarkdownParams, kit: PeerKit) -> dict[str, str]:
        tok = kit.chonkie_tokenizer(p.length)
        return {
            "langchain": _langchain(p, kit),
            "llamaindex": kit.llamaindex(
                ["# closest: split before every heading (no size limit, no heading-level choice)"],
                ["from llama_index.core.node_parser import MarkdownNodeParser"],
                ["parser = MarkdownNodeParser()"],
            ),
            "chonkie": kit.chonkie(
                [
                    "# closest: RecursiveChunker's Markdown recipe (splits at headings first, no heading path;",
                    "# Chonkie downloads the recipe from the Hugging Face hub on first use)",
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
