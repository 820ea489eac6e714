"""Blank-line paragraphs merged greedily up to chunk_size; over-size paragraphs split by sentences.

A chunk holds as many whole consecutive paragraphs as fit in ``chunk_size`` (measured whole in
the length unit). A paragraph over the size on its own is cut into runs of whole sentences that
fit, and a sentence over the size is cut at words (see ``sentence.split_long``).
"""

from __future__ import annotations

from typing import Any

from explorer.strategies.base import LENGTH_PARAM, Param, Strategy
from explorer.strategies.registry import register
from explorer.strategies.sentence import Packer, check_token_size, long_unit_spans, pack
from explorer.text.chunk import END_OF_TEXT, PARAGRAPH_END, SENTENCE_END, Span
from explorer.text.length import Length
from explorer.text.sentences import paragraph_spans, sentence_spans

#: Reason of a chunk cut at a sentence end inside a paragraph that is over chunk_size.
SENTENCE_IN_LONG_PARAGRAPH = f"{SENTENCE_END} (paragraph over size)"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


@register
class ParagraphStrategy(Strategy):
    name = "paragraph"
    description = (
        "Whole paragraphs (separated by blank lines) merged greedily up to chunk_size; a paragraph "
        "over the size is split by sentences, and a sentence over the size by words."
    )
    params = (
        Param("chunk_size", "int", 1000, "Largest chunk, in the length unit.", min=1, max=100_000, step=10),
        LENGTH_PARAM,
    )

    def check(self, p: dict[str, Any]) -> None:
        check_token_size(p, p["chunk_size"])

    def split(self, doc, p, ctx) -> list[Span]:
        text, size, unit = doc.text, p["chunk_size"], p["length"]
        length = ctx.length(unit)
        paras = paragraph_spans(text)
        n = len(paras)
        if n == 0:
            return []
        packer = Packer(text, paras, length, size)
        spans: list[Span] = []
        i = 0
        while i < n:
            last = END_OF_TEXT if i == n - 1 else PARAGRAPH_END
            if packer.lens[i] > size:
                spans += _split_paragraph(text, *paras[i], length, size, unit, last)
                i += 1
                continue
            j = packer.extend(i, i + 1, n)
            why = END_OF_TEXT if j == n else PARAGRAPH_END
            spans.append(Span(paras[i][0], paras[j - 1][1], f"{why}: {_plural(j - i, 'paragraph')}"))
            i = j
        return spans


def _split_paragraph(
    text: str, ps: int, pe: int, length: Length, size: int, unit: str, last: str
) -> list[Span]:
    """Runs of whole sentences of an over-size paragraph; over-size sentences cut at words."""
    sents = sentence_spans(text, ps, pe)
    packer = Packer(text, sents, length, size)
    runs = pack(packer)
    spans: list[Span] = []
    for k, (i, j) in enumerate(runs):
        why = last if k == len(runs) - 1 else SENTENCE_IN_LONG_PARAGRAPH
        if j - i == 1 and packer.lens[i] > size:
            spans += long_unit_spans(text, *sents[i], length, size, unit, "sentence", why)
        else:
            spans.append(Span(sents[i][0], sents[j - 1][1], why))
    return spans
