"""The truncation audit: what the embedding model never reads of each chunk.

A model reads at most ``limit`` word pieces per input, its special tokens ([CLS] and [SEP], or
``<s>`` and ``</s>``) and its passage instruction (e5 reads ``passage: `` before every text)
included; the tokenizer drops the rest before the model sees it. For each chunk this finds the
character offset where the model stops reading, from the tokenizer's own offset mapping (the
end of the last word piece it reads: exactly what tokenising with truncation keeps), and per
configuration how many chunks are cut, how many characters go unread, and which share of the
document no chunk's vector reads at all.

Why a module of its own: Explore draws each chunk's unread tail and its inspector says how much
is lost, Compare sums it per configuration; all of them need the same exact offsets. Pure: a
``tokenizers.Tokenizer`` in, numbers out (:func:`model_setup` finds the model's own).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from explorer.evaluation.intervals import merge, total
from explorer.text.chunk import Chunk
from explorer.text.tokenizing import COUNT_BATCH

#: Word pieces a prefix may add to a text's own count when the two are tokenised together
#: beyond the prefix's own pieces (a piece merged or split at the junction): the margin of
#: :func:`maybe_truncated`. Measured 0 for MiniLM and -1 for e5's ``passage: ``; 4 to be safe.
JUNCTION_MARGIN = 4


@dataclass(frozen=True, slots=True)
class Reading:
    """How much of one text the model reads.

    ``tokens``: word pieces of the model's whole input (special tokens and prefix included,
    before truncation); ``limit``: the most it reads; ``chars``: characters of the text;
    ``read_chars``: the model reads ``text[:read_chars]`` (all of it unless truncated)."""

    tokens: int
    limit: int
    chars: int
    read_chars: int

    @property
    def truncated(self) -> bool:
        return self.tokens > self.limit

    @property
    def read_tokens(self) -> int:
        return min(self.tokens, self.limit)

    @property
    def unread_chars(self) -> int:
        return self.chars - self.read_chars

    def sentence(self) -> str:
        """"The model reads N of M tokens; the last K characters are never embedded." (plain text)"""
        if not self.truncated:
            return f"The model reads all {self.tokens:,} tokens (limit {self.limit:,}): nothing is cut."
        k = self.unread_chars
        return (
            f"The model reads {self.read_tokens:,} of {self.tokens:,} tokens; the last {k:,} "
            f"character{'s' if k != 1 else ''} of this chunk {'are' if k != 1 else 'is'} never embedded."
        )


def special_count(tokenizer: Any) -> int:
    """Special tokens the tokenizer adds around one text ([CLS] and [SEP]: 2)."""
    post = tokenizer.post_processor
    return post.num_special_tokens_to_add(False) if post is not None else 0


def readings(texts: Sequence[str], tokenizer: Any, limit: int, prefix: str = "") -> list[Reading]:
    """How much of each text a model with this tokenizer, input ``limit`` (word pieces, special
    tokens included) and passage ``prefix`` reads. Exact: the tokenizer truncates
    ``prefix + text`` to ``limit - specials`` pieces before adding its specials, so the model
    reads up to the end offset of the last piece kept. ``tokenizer`` must not truncate itself
    (:func:`explorer.models.paths.shared_tokenizer` does not). Texts go in batches of
    :data:`~explorer.text.length.COUNT_BATCH`."""
    special = special_count(tokenizer)
    room = max(0, int(limit) - special)  # pieces of prefix + text the model reads
    out: list[Reading] = []
    for k in range(0, len(texts), COUNT_BATCH):
        part = list(texts[k : k + COUNT_BATCH])
        encs = tokenizer.encode_batch([prefix + t for t in part], add_special_tokens=False)
        for text, enc in zip(part, encs, strict=True):
            n = len(enc.ids) + special
            read = len(text)
            if n > limit:
                end = max((e for _, e in enc.offsets[:room]), default=0)
                read = min(max(end - len(prefix), 0), len(text))
            out.append(Reading(n, int(limit), len(text), read))
    return out


def maybe_truncated(counts: Sequence[int], limit: int, prefix_pieces: int) -> list[int]:
    """Positions whose text may be cut, from each text's own word pieces (``counts``, special
    tokens included, as the app counts them) and the prefix's (``prefix_pieces``, without
    specials): the others are certainly read whole, so only these need :func:`readings`."""
    slack = prefix_pieces + JUNCTION_MARGIN
    return [i for i, n in enumerate(counts) if n + slack > limit]


def prefix_pieces(tokenizer: Any, prefix: str) -> int:
    """Word pieces of ``prefix`` on its own (no special tokens)."""
    return len(tokenizer.encode(prefix, add_special_tokens=False).ids) if prefix else 0


@dataclass(frozen=True, slots=True)
class TruncationSummary:
    """One configuration's truncation: chunks, chunks cut, characters they lose (summed over
    chunks: a tail another chunk also holds counts in both), and the document characters that
    chunks hold but no chunk's vector reads (``never_read``, of ``doc_chars``)."""

    chunks: int
    truncated: int
    unread_chars: int
    never_read: int
    doc_chars: int

    @property
    def share_never_read(self) -> float:
        return self.never_read / self.doc_chars if self.doc_chars else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "chunks": self.chunks,
            "truncated": self.truncated,
            "unread_chars": self.unread_chars,
            "never_read_chars": self.never_read,
            "never_read_share": round(self.share_never_read, 6),
        }


def summarise(chunks: Sequence[Chunk], reads: Sequence[Reading], doc_chars: int) -> TruncationSummary:
    """:class:`TruncationSummary` of ``chunks`` (of documents of ``doc_chars`` characters in
    all) given each one's :class:`Reading` (parallel lists)."""
    held: dict[Hashable, list[tuple[int, int]]] = defaultdict(list)
    read: dict[Hashable, list[tuple[int, int]]] = defaultdict(list)
    for c, r in zip(chunks, reads, strict=True):
        held[c.doc_id].append((c.start, c.end))
        read[c.doc_id].append((c.start, c.start + r.read_chars))
    never = sum(total(merge(held[d])) - total(merge(read[d])) for d in held)
    return TruncationSummary(
        chunks=len(chunks),
        truncated=sum(r.truncated for r in reads),
        unread_chars=sum(r.unread_chars for r in reads),
        never_read=never,
        doc_chars=doc_chars,
    )


def unread_offsets(chunks: Sequence[Chunk], reads: Iterable[tuple[int, Reading]]) -> dict[int, int]:
    """Chunk position → document offset where the model stops reading it, for the chunks cut
    (``reads``: ``(position, reading)`` pairs); what :func:`explorer.render.html.render_chunks`
    takes as ``unread``."""
    return {p: chunks[p].start + r.read_chars for p, r in reads if r.truncated}


@dataclass(frozen=True, slots=True)
class ModelReading:
    """What a model reads: its tokenizer, input limit and passage prefix."""

    tokenizer: Any
    limit: int
    prefix: str = ""

    def readings(self, texts: Sequence[str]) -> list[Reading]:
        return readings(texts, self.tokenizer, self.limit, self.prefix)

    def audit(self, chunks: Sequence[Chunk], counts: Sequence[int] | None = None) -> dict[int, Reading]:
        """Chunk position → :class:`Reading`, for every chunk that may be cut: all of them, or
        with ``counts`` (each chunk's own word pieces, special tokens included) only those
        :func:`maybe_truncated` names (the others are read whole)."""
        if counts is None:
            todo = list(range(len(chunks)))
        else:
            todo = maybe_truncated(counts, self.limit, prefix_pieces(self.tokenizer, self.prefix))
        return dict(zip(todo, self.readings([chunks[i].text for i in todo]), strict=True))

    def summary(self, chunks: Sequence[Chunk], audit: dict[int, Reading], doc_chars: int) -> TruncationSummary:
        """:func:`summarise` from an :meth:`audit` (a chunk it left out is read whole)."""
        reads = [audit.get(i) or Reading(0, self.limit, c.chars, c.chars) for i, c in enumerate(chunks)]
        return summarise(chunks, reads, doc_chars)


def model_setup(model: str | None = None) -> ModelReading:
    """The registered model's (or a local folder's) tokenizer, input limit and passage prefix.
    Raises :class:`~explorer.errors.ModelError` for a model without a fast tokenizer."""
    from explorer.models.paths import max_seq_length, shared_tokenizer, tokenizer_file
    from explorer.models.registry import find_spec

    spec = find_spec(model)
    prefix = spec.passage_prefix if spec is not None else ""
    return ModelReading(shared_tokenizer(tokenizer_file(model)), max_seq_length(model), prefix)
