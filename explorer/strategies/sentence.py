"""Groups of N sentences, with sentence overlap and an optional size cap.

Sentences come from :func:`explorer.text.sentences.sentence_spans` (offsets by construction);
the cap is held with :mod:`explorer.strategies.packing`, which measures every group whole. A
lead-in (a sentence of at most 200 characters ending in ":", :mod:`explorer.strategies.lead_ins`)
right before a fenced code block or a table opens the group of that block rather than ending the
one before, when the two fit in one group (in sentences and under the cap), or, for a table longer
than a group, when it fits with the table's first row (and a block over the cap, with its first piece).

Code blocks and tables (:mod:`explorer.strategies.block_units`): a code block is one unit, a table
row is one (its header and delimiter rows one with its first row), so a group never ends inside a
row or after a table's header; the overlap never repeats them (a row without its header, a whole
block twice). A unit over the cap is cut at line ends as ``markdown`` cuts a block
(:class:`~explorer.strategies.block_split.BlockSplitter`).

Headings (Markdown's, a PDF's read from its fonts): a heading is one unit, whatever the sentence
splitter made of it; a group that would end on headings ends before them (unless they are all
its new sentences), and a group that opens with a heading repeats no sentence from before it.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

from explorer.documents.document import Document, block_label
from explorer.errors import ParamError
from explorer.strategies.base import PeerKit, Strategy, check_token_room
from explorer.strategies.block_split import BlockSplitter
from explorer.strategies.block_units import (
    HEADING_MAX_CHARS,
    block_units,
    heading_start,
    heading_units,
    split_at_headings,
)
from explorer.strategies.lead_ins import unit_lead_ins
from explorer.strategies.packing import Packer, long_unit_spans
from explorer.strategies.params import CHUNK_SIZE, INT, LENGTH, BelowSize, Param, declare
from explorer.strategies.registry import register
from explorer.strategies.splitting import token_counter
from explorer.text.chunk import END_OF_TEXT, SENTENCE_END, SIZE_LIMIT, Span
from explorer.text.length import Length
from explorer.text.markdown_parse import fenced_code
from explorer.text.sentences import sentence_spans
from explorer.text.wording import plural


@dataclass(frozen=True)
class SentenceParams:
    sentences_per_chunk: int = declare(
        Param("sentences_per_chunk", INT, 5, "Sentences per chunk.", min=1, max=200, step=1)
    )
    overlap_sentences: int = declare(
        Param(
            "overlap_sentences",
            INT,
            1,
            "Sentences the next chunk repeats from the end of the previous one (< sentences_per_chunk).",
            min=0,
            max=199,
            step=1,
        )
    )
    chunk_size: int = declare(
        CHUNK_SIZE.with_default(0, min=0, note="0 = no cap; a group over the cap is closed early.")
    )
    length: str = declare(LENGTH)


@register
class SentenceStrategy(Strategy[SentenceParams]):
    name = "sentence"
    description = (
        "Groups of sentences_per_chunk whole sentences, the next group repeating the last "
        "overlap_sentences; an optional chunk_size cap closes a group early, and a single sentence "
        "over the cap is split at words. A code block counts as one sentence and a table row as one (its "
        "header rows go with the first), never repeated as overlap; one over the cap is cut at line ends. "
        "A group ends before a heading rather than on it, and repeats nothing over a heading that opens "
        "the next. A short sentence ending in ':' goes with the code block or table after it."
    )
    Params = SentenceParams
    rules = (BelowSize("overlap_sentences", "sentences_per_chunk"),)

    def check(self, p: SentenceParams) -> None:
        if p.overlap_sentences >= p.sentences_per_chunk:
            raise ParamError(
                f"overlap_sentences={p.overlap_sentences} must be smaller than "
                f"sentences_per_chunk={p.sentences_per_chunk}"
            )
        check_token_room("chunk_size", p.chunk_size, p.length)

    def size_cap(self, p: SentenceParams) -> int:
        return p.chunk_size

    def split(self, doc, p: SentenceParams, ctx) -> list[Span]:
        text = doc.text
        headings = [(h.start, h.end) for h in doc.headings if h.end - h.start <= HEADING_MAX_CHARS]
        sents = split_at_headings(text, sentence_spans(text), headings)
        code_and_tables = _code_and_tables(doc)
        sents, kinds = block_units(text, sents, code_and_tables)
        n = len(sents)
        if n == 0:
            return []
        per, overlap, size = p.sentences_per_chunk, p.overlap_sentences, p.chunk_size
        length = ctx.length(p.length)
        packer = Packer(text, sents, length, size) if size else None
        blocks = _block_splitter(text, size, length) if packer and _any_big(packer, kinds) else None
        at = unit_lead_ins(text, sents, code_and_tables)
        leads = _LeadIns(at, per, packer, tuple(sorted(at)), sents, kinds, blocks)
        heads = heading_units(sents, headings)
        spans: list[Span] = []
        covered = 0  # sentences [0, covered) are in a chunk already
        prev_first = -1  # first sentence of the previous group
        while covered < n:
            big = leads.opens_big(covered)  # a lead-in, then a block over the cap: split it
            if big or (packer and packer.lens[covered] > size):  # one sentence over the cap
                covered += 2 if big else 1
                lead = sents[covered - 2][0] if big else None
                unit, kind = sents[covered - 1], kinds[covered - 1]
                spans += _split_unit(text, unit, kind, covered == n, length, size, blocks, lead)
                prev_first = covered - 1
                continue
            first = covered if heads[covered] else max(covered - overlap, prev_first + 1, 0)  # none over a heading
            first = _overlap_start(kinds, covered, first)
            reach = leads.fits(covered) or covered + 1  # a lead-in: through its block
            while first < covered and (reach - first > per or (packer and not packer.fits(first, reach))):
                first += 1  # drop overlap sentences until the new ones fit
            limit = min(first + per, n)
            j = packer.extend(first, reach, limit) if packer else limit
            j, why = _group_end(leads, heads, covered, first, j, _reason(j - first, j == n, per))
            if _headings_before_big(heads, kinds, packer, first, j):  # they open its first piece
                spans += _split_unit(text, (sents[first][0], sents[j][1]), "", j + 1 == n, length, size, blocks, None)
                prev_first, covered = j, j + 1
                continue
            spans.append(Span(sents[first][0], sents[j - 1][1], why))
            prev_first, covered = first, j
        return spans

    def peer_code(self, p: SentenceParams, kit: PeerKit) -> dict[str, str]:
        note = "# closest: SentenceSplitter packs whole sentences up to chunk_size (not a sentence count)"
        return {
            "langchain": kit.none("langchain", self.name),
            "llamaindex": kit.li_sentences(note, p.chunk_size, 0, p.length),
            "chonkie": kit.chonkie_sentences(p.chunk_size, p.sentences_per_chunk, p.length),
        }


@dataclass(frozen=True)
class _LeadIns:
    """Lead-in sentences (``{i: (m, kind)}``, see :func:`unit_lead_ins`) and whether each fits
    with its block, sentences i..m-1, in one group."""

    at: dict[int, tuple[int, str]]
    per: int
    packer: Packer | None
    order: tuple[int, ...]  # the keys of ``at``, sorted
    units: Sequence[tuple[int, int]]
    kinds: Sequence[str]
    blocks: BlockSplitter | None

    def fits(self, i: int) -> int | None:
        """m, the end of the block sentence i leads in to, if the two fit in one group; for a
        block longer than a group, i + 2 if the lead-in fits with the block's first unit."""
        if i not in self.at:
            return None
        m = self.at[i][0]
        if m - i <= self.per and (self.packer is None or self.packer.fits(i, m)):
            return m
        if m > i + 2 and self.per > 1 and (self.packer is None or self.packer.fits(i, i + 2)):
            return i + 2
        return None

    def opens_big(self, i: int) -> bool:
        """Whether lead-in i opens the first piece of the next unit, a code block or table row
        over the cap (:meth:`BlockSplitter.first_after`)."""
        if i not in self.at or self.packer is None or self.blocks is None or self.per < 2:
            return False
        k = i + 1
        if self.packer.lens[k] <= self.packer.size or not self.kinds[k]:
            return False
        (s, e), lead = self.units[k], self.units[i][0]
        return self.blocks.first_after(lead, s, self.kinds[k], e) is not None

    def cut_before(self, covered: int, j: int) -> int | None:
        """The lead-in to end the group of sentences ..j-1 before: the last one among its new
        sentences (from ``covered`` on, never the first) whose block does not end in the group,
        when they fit in one."""
        k = bisect_left(self.order, j) - 1
        i = self.order[k] if k >= 0 else -1
        return i if i > covered and self.at[i][0] > j and (self.fits(i) or self.opens_big(i)) else None

    def label(self, i: int) -> str:
        return block_label(self.at[i][1])


def _group_end(leads: _LeadIns, heads: Sequence[bool], covered: int, first: int, j: int, why: str) -> tuple[int, str]:
    """Where the group of sentences first..j-1 ends, and why: before the last lead-in among its
    new sentences whose block does not end in it (:meth:`_LeadIns.cut_before`), the headings
    over the lead-in going with it; else before the headings that would end it (a heading at the
    end of a chunk, its text in the next); never before ``covered``, its first new sentence."""
    lead = leads.cut_before(covered, j)
    if lead is not None:
        t = heading_start(heads, covered, lead)
        if t > covered:
            return t, f"{SENTENCE_END}: {plural(t - first, 'sentence')}, the next leads in to {leads.label(lead)}"
    t = heading_start(heads, covered, j) if j < len(heads) else j
    if covered < t < j:
        return t, f"{SENTENCE_END}: {plural(t - first, 'sentence')}, the next is a heading"
    return j, why


def _overlap_start(kinds: Sequence[str], covered: int, first: int) -> int:
    """``first`` moved past the code blocks and table rows among the overlap sentences
    first..covered-1: a row repeated in the next group is a row without its header, the same
    cells twice, and a code block repeated is a whole block twice, not the context of a cut."""
    for k in range(covered - 1, first - 1, -1):
        if kinds[k]:
            return k + 1
    return first


def _split_unit(
    text: str, unit: tuple[int, int], kind: str, at_end: bool, length: Length, size: int,
    blocks: BlockSplitter | None, lead: int | None,
) -> list[Span]:
    """One unit over the cap: a sentence split at words; a code block at its line ends and a
    table's rows between them (as ``markdown`` splits them), ``lead`` (a lead-in) opening the
    first piece."""
    s, e = unit
    if not kind or blocks is None:
        last = END_OF_TEXT if at_end else f"{SENTENCE_END}: 1 sentence (split at words)"
        return long_unit_spans(text, s, e, length, size, "sentence", last)
    what = block_label(kind) if kind == "code" else "a table row"
    last = END_OF_TEXT if at_end else f"{SENTENCE_END}: end of {what} longer than chunk_size"
    return [Span(ps, pe, last if why is None else why) for ps, pe, why in blocks.split(s, e, kind, lead)]


def _headings_before_big(
    heads: Sequence[bool], kinds: Sequence[str], packer: Packer | None, first: int, j: int
) -> bool:
    """Whether the group first..j-1 is only headings and sentence j, over the cap, is cut at
    words: the headings then open its first piece rather than make a chunk of their own
    ("# Tidepool user guide" alone in guide.md at 100 characters)."""
    return (
        packer is not None
        and j < len(heads)
        and not kinds[j]
        and packer.lens[j] > packer.size
        and all(heads[first:j])
    )


def _any_big(packer: Packer, kinds: Sequence[str]) -> bool:
    """Whether a code block or table unit is over the cap (else no splitter is needed, nor the
    document's token index it reads)."""
    return any(kind and n > packer.size for kind, n in zip(kinds, packer.lens, strict=True))


def _block_splitter(text: str, size: int, length: Length) -> BlockSplitter:
    """The splitter of code blocks and table rows over the cap ``size``, without overlap."""
    fast = token_counter(text, length)
    if length.name == "chars":
        measure = lambda s, e: e - s  # noqa: E731
    elif fast is not None:
        measure = lambda s, e: fast([s], [e])[0]  # noqa: E731
    else:
        measure = lambda s, e: length(text[s:e])  # noqa: E731
    return BlockSplitter(text, size, 0, length, fast, measure)


def _code_and_tables(doc: Document) -> list[tuple[str, int, int]]:
    """The code blocks and tables a lead-in goes with: the Markdown blocks, and the fences the
    sentence splitter keeps whole in any text."""
    blocks = [(b.kind, b.start, b.end) for b in doc.blocks_of("code", "table")]
    return blocks + [("code", s, e) for s, e in fenced_code(doc.text)]


def _reason(count: int, at_end: bool, per: int) -> str:
    if at_end:
        return f"{END_OF_TEXT}: {plural(count, 'sentence')}"
    if count == per:
        return f"{SENTENCE_END}: {plural(count, 'sentence')}"
    return f"{SIZE_LIMIT}: {plural(count, 'sentence')}, the next would exceed chunk_size"
