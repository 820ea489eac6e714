"""Structural metrics of one strategy's chunks, no gold answers needed: sizes, flags, coverage,
redundancy and expansion (:func:`chunk_stats`), and the cohesion and separation of their
sentence vectors (:func:`semantic_stats`, which embeds text).

Why apart from the retrieval metrics: these describe the chunks themselves, the app shows
them for any document, while retrieval metrics need questions.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from explorer.documents.document import Document
from explorer.evaluation.flags import (
    DEFAULT_MAX_TOKENS,
    FLAGS,
    Docs,
    count_tokens,
    docs_map,
    flag_chunks,
    tiny_threshold,
)
from explorer.evaluation.intervals import Interval, by_doc, merge
from explorer.evaluation.stats import SizeStats
from explorer.text.chunk import Chunk

if TYPE_CHECKING:
    from explorer.embedding.base import Embedder
    from explorer.text.length import Length


@dataclass(frozen=True)
class ChunkStats:
    """Structural metrics of one strategy's chunks. Counts are ints; ``share(...)`` gives fractions.

    - ``coverage``: share of the documents' non-space characters inside at least one chunk.
    - ``redundancy``: characters inside more than one chunk / all characters of the documents.
    - ``expansion``: characters of all chunks added up / all characters of the documents
      (1.0 without overlap; what overlap costs in embedding work and storage).
    """

    count: int
    chars: SizeStats
    tokens: SizeStats
    max_tokens: int
    tiny_chars: int
    over_limit: int
    mid_sentence: int
    mid_word: int
    tiny: int
    duplicate: int
    coverage: float
    redundancy: float
    expansion: float

    def share(self, flag: str) -> float:
        if flag not in FLAGS:
            raise KeyError(flag)
        return getattr(self, flag) / self.count if self.count else 0.0

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "count": self.count,
            "chars": self.chars.to_dict(),
            "tokens": self.tokens.to_dict(),
            "max_tokens": self.max_tokens,
            "tiny_chars": self.tiny_chars,
        }
        for flag in FLAGS:
            d[flag] = getattr(self, flag)
            d[f"{flag}_share"] = self.share(flag)
        d.update(coverage=self.coverage, redundancy=self.redundancy, expansion=self.expansion)
        return d


def _depth_lengths(intervals: Sequence[Interval]) -> tuple[int, int]:
    """(characters covered at least once, characters covered more than once) — a sweep line."""
    events: list[tuple[int, int]] = []
    for s, e in intervals:
        if e > s:
            events.append((s, 1))
            events.append((e, -1))
    events.sort()
    once = twice = depth = 0
    prev = 0
    for pos, delta in events:
        if depth >= 1:
            once += pos - prev
        if depth >= 2:
            twice += pos - prev
        depth += delta
        prev = pos
    return once, twice


def _non_space(text: str) -> int:
    return len("".join(text.split()))


def chunk_stats(
    chunks: Sequence[Chunk],
    docs: Docs,
    token_length: Length | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    tiny_chars: int | None = None,
    *,
    token_counts: Sequence[int] | None = None,
) -> ChunkStats:
    """Structural metrics of ``chunks`` (of one or several documents, all present in ``docs``).

    Token sizes are the embedding model's word pieces incl. [CLS]/[SEP] (``token_length``, the
    bundled model's tokenizer by default), so ``over_limit`` means "would be truncated".
    Coverage and redundancy are over every document in ``docs``.
    """
    by_id = docs_map(docs)
    if token_counts is None:
        token_counts = count_tokens(chunks, token_length)
    char_sizes = [c.chars for c in chunks]
    if tiny_chars is None:
        tiny_chars = tiny_threshold(char_sizes)
    flags = flag_chunks(
        chunks, by_id, token_counts=token_counts, max_tokens=max_tokens, tiny_chars=tiny_chars
    )
    counts = Counter(f for fl in flags for f in fl)

    per_doc = by_doc((c.doc_id, c.start, c.end) for c in chunks)
    all_chars = sum(len(d.text) for d in by_id.values())
    all_non_space = covered_non_space = twice = 0
    for doc_id, doc in by_id.items():
        ivs = per_doc.get(doc_id, [])
        all_non_space += _non_space(doc.text)
        covered_non_space += sum(_non_space(doc.text[s:e]) for s, e in merge(ivs))
        twice += _depth_lengths(ivs)[1]
    return ChunkStats(
        count=len(chunks),
        chars=SizeStats.of(char_sizes),
        tokens=SizeStats.of(list(token_counts)),
        max_tokens=max_tokens,
        tiny_chars=tiny_chars,
        over_limit=counts["over_limit"],
        mid_sentence=counts["mid_sentence"],
        mid_word=counts["mid_word"],
        tiny=counts["tiny"],
        duplicate=counts["duplicate"],
        coverage=covered_non_space / all_non_space if all_non_space else 1.0,
        redundancy=twice / all_chars if all_chars else 0.0,
        expansion=sum(char_sizes) / all_chars if all_chars else 0.0,
    )


@dataclass(frozen=True, slots=True)
class SemanticStats:
    """``cohesion``: mean, over chunks of two or more sentences, of the mean cosine similarity of
    each sentence to its chunk's mean sentence vector (higher = each chunk is about one thing).
    Single-sentence chunks are left out: they would score 1.0 by construction.
    ``separation``: mean cosine similarity of adjacent chunks of the same document (lower =
    neighbours differ more). ``None`` where nothing could be measured."""

    cohesion: float | None
    separation: float | None
    cohesion_chunks: int
    separation_pairs: int


def _sentence_pieces(doc: Document, chunk: Chunk) -> list[str]:
    """The chunk's sentences, clipped at the chunk's boundaries (a chunk may cut a sentence)."""
    from explorer.text.sentences import sentence_spans

    return [doc.text[s:e] for s, e in sentence_spans(doc.text, chunk.start, chunk.end)]


def semantic_stats(
    chunks: Sequence[Chunk],
    docs: Docs,
    embedder: Embedder,
    progress: Any = None,
) -> SemanticStats:
    """Cohesion and separation of ``chunks`` with ``embedder`` (vectors are L2-normalised, so a
    dot product is a cosine). Every distinct text is embedded once (and cached by the embedder)."""
    import numpy as np

    by_id = docs_map(docs)
    pieces = [_sentence_pieces(by_id[c.doc_id], c) for c in chunks]
    texts = list(dict.fromkeys([t for ps in pieces if len(ps) > 1 for t in ps] + [c.text for c in chunks]))
    if not texts:
        return SemanticStats(None, None, 0, 0)
    vecs = np.asarray(embedder.encode(texts, progress=progress), dtype=np.float32)
    row = {t: i for i, t in enumerate(texts)}

    cohesions = []
    for ps in pieces:
        if len(ps) < 2:
            continue
        m = vecs[[row[t] for t in ps]]
        mean = m.mean(axis=0)
        norm = float(np.linalg.norm(mean))
        if norm == 0.0:
            continue
        cohesions.append(float((m @ (mean / norm)).mean()))
    seps = []
    for a, b in pairwise(chunks):
        if a.doc_id == b.doc_id:
            seps.append(float(vecs[row[a.text]] @ vecs[row[b.text]]))
    return SemanticStats(
        cohesion=math.fsum(cohesions) / len(cohesions) if cohesions else None,
        separation=math.fsum(seps) / len(seps) if seps else None,
        cohesion_chunks=len(cohesions),
        separation_pairs=len(seps),
    )
