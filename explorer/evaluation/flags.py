"""What is wrong with a chunk, without gold answers: over the model's limit, cut mid-sentence or
mid-word, tiny, or an exact duplicate (:data:`FLAGS`).

Why a module of its own: the app marks flagged chunks one by one, and the structural metrics
(:mod:`explorer.evaluation.chunk_metrics`) count them.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from explorer.documents.document import Document
from explorer.models.registry import get_spec
from explorer.text.chunk import Chunk
from explorer.text.words import cut_in_word

if TYPE_CHECKING:
    from explorer.text.length import Length

#: Input limit of the default embedding model (word pieces incl. its special tokens).
DEFAULT_MAX_TOKENS = get_spec(None).token_limit
#: A chunk is *tiny* when shorter than ``min(TINY_MAX_CHARS, TINY_SHARE_OF_MEDIAN × median)``
#: characters: too small to carry meaning on its own (a stray heading, a lone "."), *and* much
#: smaller than its peers, so a deliberately small chunk size does not flag every chunk.
TINY_MAX_CHARS = 50
TINY_SHARE_OF_MEDIAN = 0.25

FLAGS = ("over_limit", "mid_sentence", "mid_word", "tiny", "duplicate")

#: The documents a metric is given: one, a sequence, or a mapping (its values are used).
Docs = Document | Mapping[str, Document] | Sequence[Document]


def docs_map(docs: Docs) -> dict[str, Document]:
    if isinstance(docs, Document):
        return {docs.id: docs}
    if isinstance(docs, Mapping):
        return {d.id: d for d in docs.values()}
    return {d.id: d for d in docs}


class _DocFacts:
    """What flagging needs from a document, computed once: sentence ends and the text's end."""

    __slots__ = ("last_nonspace", "sentence_ends")

    def __init__(self, doc: Document) -> None:
        from explorer.text.sentences import sentence_spans

        self.sentence_ends = frozenset(e for _, e in sentence_spans(doc.text))
        self.last_nonspace = len(doc.text.rstrip())


_FACTS: OrderedDict[tuple[str, int], _DocFacts] = OrderedDict()
_FACTS_MAX = 32


def _facts(doc: Document) -> _DocFacts:
    """Per-document facts, cached by the text's hash (documents are immutable)."""
    key = (doc.id, len(doc.text))
    facts = _FACTS.get(key)
    if facts is None:
        facts = _FACTS[key] = _DocFacts(doc)
        if len(_FACTS) > _FACTS_MAX:
            _FACTS.popitem(last=False)
    else:
        _FACTS.move_to_end(key)
    return facts


def _mid_word(text: str, start: int, end: int) -> bool:
    """A boundary of the chunk falls between two word characters."""
    return cut_in_word(text, start) or cut_in_word(text, end)


def _mid_sentence(text: str, start: int, end: int, facts: _DocFacts) -> bool:
    """The chunk's last non-space character is not a sentence end (the text's end excepted)."""
    e = end
    while e > start and text[e - 1].isspace():
        e -= 1
    if e >= facts.last_nonspace:
        return False
    return e not in facts.sentence_ends


def tiny_threshold(char_sizes: Sequence[int]) -> int:
    """Characters under which a chunk counts as tiny, for this set of chunks (see TINY_MAX_CHARS)."""
    if not char_sizes:
        return TINY_MAX_CHARS
    ordered = sorted(char_sizes)
    median = ordered[len(ordered) // 2]
    return max(1, min(TINY_MAX_CHARS, math.ceil(TINY_SHARE_OF_MEDIAN * median)))


def count_tokens(chunks: Sequence[Chunk], token_length: Length | None = None) -> list[int]:
    """Model tokens (incl. [CLS]/[SEP]) per chunk: what the embedder would see before truncation."""
    if token_length is None:
        from explorer.text.length import get_length

        token_length = get_length("tokens")
    return list(token_length.count_batch([c.text for c in chunks]))


def chunk_flags(
    chunk: Chunk,
    doc: Document,
    *,
    tokens: int | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    tiny_chars: int = TINY_MAX_CHARS,
    duplicate: bool = False,
) -> frozenset[str]:
    """Flags of one chunk (a subset of :data:`FLAGS`).

    ``tokens`` is the chunk's model-token count (counted if omitted); ``duplicate`` says whether
    an earlier chunk has the same text (only the caller, who sees all chunks, knows).
    Sentence ends are computed once per document and cached, so calling this for every chunk
    of a 10k-chunk document stays cheap.
    """
    text = doc.text
    facts = _facts(doc)
    if tokens is None:
        tokens = count_tokens([chunk])[0]
    out = []
    if tokens > max_tokens:
        out.append("over_limit")
    if _mid_sentence(text, chunk.start, chunk.end, facts):
        out.append("mid_sentence")
    if _mid_word(text, chunk.start, chunk.end):
        out.append("mid_word")
    if chunk.end - chunk.start < tiny_chars:
        out.append("tiny")
    if duplicate:
        out.append("duplicate")
    return frozenset(out)


def duplicate_mask(chunks: Sequence[Chunk]) -> list[bool]:
    """True for every chunk whose exact text appeared in an earlier chunk (repeats, not originals)."""
    seen: set[str] = set()
    out = []
    for c in chunks:
        out.append(c.text in seen)
        seen.add(c.text)
    return out


def flag_chunks(
    chunks: Sequence[Chunk],
    docs: Docs,
    token_length: Length | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    tiny_chars: int | None = None,
    *,
    token_counts: Sequence[int] | None = None,
) -> list[frozenset[str]]:
    """:func:`chunk_flags` for every chunk, batching token counts and duplicate detection."""
    by_id = docs_map(docs)
    if token_counts is None:
        token_counts = count_tokens(chunks, token_length)
    if tiny_chars is None:
        tiny_chars = tiny_threshold([c.chars for c in chunks])
    dups = duplicate_mask(chunks)
    return [
        chunk_flags(c, by_id[c.doc_id], tokens=t, max_tokens=max_tokens, tiny_chars=tiny_chars, duplicate=d)
        for c, t, d in zip(chunks, token_counts, dups, strict=True)
    ]
