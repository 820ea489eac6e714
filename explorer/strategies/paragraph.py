"""Blank-line paragraphs merged greedily up to chunk_size; over-size paragraphs split by sentences.

A chunk holds as many whole consecutive paragraphs as fit in ``chunk_size`` (measured whole in
the length unit). A paragraph over the size on its own is cut into runs of whole sentences that
fit, and a sentence over the size is cut at words (see :func:`.packing.split_long`).

Headings (Markdown's, a PDF's read from its fonts) are paragraphs of their own, even where no
blank line sets them apart (a PDF's never is), and a chunk that would end on headings ends
before them, unless they are all it holds: a heading opens the chunk of its text, or the first
part of a paragraph over the size after it.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.strategies.base import PeerKit, Strategy, check_token_room
from explorer.strategies.block_units import HEADING_MAX_CHARS, heading_start, heading_units, split_at_headings
from explorer.strategies.packing import Packer, long_unit_spans, pack
from explorer.strategies.params import CHUNK_SIZE, LENGTH, declare
from explorer.strategies.registry import register
from explorer.text.chunk import END_OF_TEXT, PARAGRAPH_END, SENTENCE_END, Span
from explorer.text.length import Length
from explorer.text.sentences import paragraph_spans, sentence_spans
from explorer.text.wording import plural

#: Reason of a chunk cut at a sentence end inside a paragraph that is over chunk_size.
SENTENCE_IN_LONG_PARAGRAPH = f"{SENTENCE_END} (paragraph over size)"


@dataclass(frozen=True)
class ParagraphParams:
    chunk_size: int = declare(CHUNK_SIZE)
    length: str = declare(LENGTH)


@register
class ParagraphStrategy(Strategy[ParagraphParams]):
    name = "paragraph"
    description = (
        "Whole paragraphs (separated by blank lines) merged greedily up to chunk_size; a paragraph "
        "over the size is split by sentences, and a sentence over the size by words. A heading is a "
        "paragraph of its own that opens a chunk rather than ends one."
    )
    Params = ParagraphParams

    def check(self, p: ParagraphParams) -> None:
        check_token_room("chunk_size", p.chunk_size, p.length)

    def size_cap(self, p: ParagraphParams) -> int:
        return p.chunk_size

    def split(self, doc, p: ParagraphParams, ctx) -> list[Span]:
        text, size = doc.text, p.chunk_size
        length = ctx.length(p.length)
        headings = [(h.start, h.end) for h in doc.headings if h.end - h.start <= HEADING_MAX_CHARS]
        paras = split_at_headings(text, paragraph_spans(text), headings)
        heads = heading_units(paras, headings)
        n = len(paras)
        if n == 0:
            return []
        packer = Packer(text, paras, length, size)
        spans: list[Span] = []
        i = 0
        while i < n:
            k = _over_size_after_headings(packer, heads, i)  # headings, then a paragraph over size
            last = END_OF_TEXT if k == n - 1 else PARAGRAPH_END
            if packer.lens[k] > size:  # split with the headings over it opening its first part
                spans += _split_paragraph(text, paras[i][0], paras[k], length, size, last)
                i = k + 1
                continue
            j = packer.extend(i, i + 1, n)
            why = f"{END_OF_TEXT if j == n else PARAGRAPH_END}: {plural(j - i, 'paragraph')}"
            t = heading_start(heads, i, j) if j < n else j
            if i < t < j:  # the headings it would end on open the next chunk
                j, why = t, f"{PARAGRAPH_END}: {plural(t - i, 'paragraph')}, the next is a heading"
            spans.append(Span(paras[i][0], paras[j - 1][1], why))
            i = j
        return spans

    def peer_code(self, p: ParagraphParams, kit: PeerKit) -> dict[str, str]:
        lc_note = (
            "# closest: paragraphs merged up to chunk_size "
            "(explorer also splits an over-long paragraph by sentences)"
        )
        lc_args = f"separator='\\n\\n', chunk_size={p.chunk_size}, chunk_overlap=0"
        li_note = "# closest: SentenceSplitter prefers paragraph breaks, then sentences"
        return {
            "langchain": kit.langchain(lc_note, "CharacterTextSplitter", lc_args, p.length),
            "llamaindex": kit.li_sentences(li_note, p.chunk_size, 0, p.length),
            "chonkie": kit.chonkie_sentences(p.chunk_size, 1, p.length),
        }


def _over_size_after_headings(packer: Packer, heads: list[bool], i: int) -> int:
    """The paragraph over size right after the headings that start at ``i`` (each within size),
    else ``i``."""
    k = i
    while k < len(heads) - 1 and heads[k] and packer.lens[k] <= packer.size:
        k += 1
    return k if packer.lens[k] > packer.size else i


def _split_paragraph(
    text: str, ps: int, para: tuple[int, int], length: Length, size: int, last: str
) -> list[Span]:
    """Runs of whole sentences of an over-size paragraph ``para`` (and the headings over it from
    ``ps``: they open its first run); over-size sentences cut at words. Headings that fit beside
    no whole sentence open the first piece of the sentence cut at words after them, rather than
    make a chunk of their own ("# Tidepool user guide" alone, its text in the next chunk)."""
    sents = sentence_spans(text, ps, para[1])
    packer = Packer(text, sents, length, size)
    runs = pack(packer)
    spans: list[Span] = []
    start = None  # where the headings waiting for the next piece start
    for k, (i, j) in enumerate(runs):
        why = last if k == len(runs) - 1 else SENTENCE_IN_LONG_PARAGRAPH
        big = j - i == 1 and packer.lens[i] > size
        if not big and sents[j - 1][1] <= para[0] and k + 1 < len(runs):
            ni, nj = runs[k + 1]
            if nj - ni == 1 and packer.lens[ni] > size:  # only headings, then a sentence cut at words
                start = sents[i][0]
                continue
        if big:
            first = sents[i][0] if start is None else start
            spans += long_unit_spans(text, first, sents[i][1], length, size, "sentence", why)
        else:
            spans.append(Span(sents[i][0], sents[j - 1][1], why))
        start = None
    return spans
