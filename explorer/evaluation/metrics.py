"""Chunk metrics: structural ones (no gold answers needed) and retrieval ones against gold spans.

Everything is counted in characters of the documents' text, with interval arithmetic (sorted,
merged ``[start, end)`` intervals) rather than per-character sets, so scoring hundreds of
questions over megabytes of text stays fast.

Retrieval metrics follow the definitions of Chroma's report *Evaluating Chunking Strategies for
Retrieval* (see ``../shared/benchmarks/chroma/README.md``): recall, precision, IoU and
precision_Ω, plus hit rate and MRR.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections import Counter, OrderedDict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from explorer.documents.document import Document
from explorer.models.registry import get_spec
from explorer.text.chunk import Chunk

if TYPE_CHECKING:
    from explorer.embedding.embedder import Embedder
    from explorer.text.length import Length

Interval = tuple[int, int]
#: A character span of one document: (document key, start, end). The key is usually ``doc.id``.
Ref = tuple[Hashable, int, int]

#: Input limit of the default embedding model (word pieces incl. its special tokens).
DEFAULT_MAX_TOKENS = get_spec(None).token_limit
#: A chunk is *tiny* when shorter than ``min(TINY_MAX_CHARS, TINY_SHARE_OF_MEDIAN × median)``
#: characters: too small to carry meaning on its own (a stray heading, a lone "."), *and* much
#: smaller than its peers, so a deliberately small chunk size does not flag every chunk.
TINY_MAX_CHARS = 50
TINY_SHARE_OF_MEDIAN = 0.25

FLAGS = ("over_limit", "mid_sentence", "mid_word", "tiny", "duplicate")


# ---------------------------------------------------------------------------------------------
# Interval arithmetic
# ---------------------------------------------------------------------------------------------
def merge(intervals: Iterable[Interval]) -> list[Interval]:
    """Sort and merge ``[start, end)`` intervals; empty ones are dropped, touching ones joined."""
    out: list[Interval] = []
    for s, e in sorted(iv for iv in intervals if iv[1] > iv[0]):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def total(merged: Iterable[Interval]) -> int:
    """Characters covered by already merged (disjoint) intervals."""
    return sum(e - s for s, e in merged)


def intersect(a: Sequence[Interval], b: Sequence[Interval]) -> list[Interval]:
    """Intersection of two merged interval lists (two-pointer walk, O(len a + len b))."""
    out: list[Interval] = []
    i = j = 0
    while i < len(a) and j < len(b):
        s = max(a[i][0], b[j][0])
        e = min(a[i][1], b[j][1])
        if s < e:
            out.append((s, e))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def subtract(a: Sequence[Interval], b: Sequence[Interval]) -> list[Interval]:
    """``a`` minus ``b``, both merged."""
    out: list[Interval] = []
    j = 0
    for s, e in a:
        cur = s
        while j < len(b) and b[j][1] <= cur:
            j += 1
        k = j
        while k < len(b) and b[k][0] < e:
            if b[k][0] > cur:
                out.append((cur, b[k][0]))
            cur = max(cur, b[k][1])
            k += 1
        if cur < e:
            out.append((cur, e))
    return out


def _by_doc(spans: Iterable[Ref]) -> dict[Hashable, list[Interval]]:
    out: dict[Hashable, list[Interval]] = {}
    for doc, s, e in spans:
        out.setdefault(doc, []).append((s, e))
    return out


# ---------------------------------------------------------------------------------------------
# Summary statistics
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Stat:
    """Mean and population standard deviation (ddof=0, as Chroma's report) of per-item values."""

    mean: float
    std: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Stat:
        if not values:
            return cls(math.nan, math.nan)
        n = len(values)
        mean = math.fsum(values) / n
        var = math.fsum((v - mean) ** 2 for v in values) / n
        return cls(mean, math.sqrt(var))

    def pct(self, digits: int = 1) -> str:
        """``"78.5 ± 30.1"``: the fraction shown in percent."""
        return f"{100 * self.mean:.{digits}f} ± {100 * self.std:.{digits}f}"


@dataclass(frozen=True, slots=True)
class SizeStats:
    """Distribution of chunk sizes in one unit. ``cv`` = std / mean (0 when empty)."""

    mean: float
    median: float
    min: int
    max: int
    std: float
    cv: float

    @classmethod
    def of(cls, sizes: Sequence[int]) -> SizeStats:
        if not sizes:
            return cls(0.0, 0.0, 0, 0, 0.0, 0.0)
        st = Stat.of(sizes)
        ordered = sorted(sizes)
        n = len(ordered)
        median = ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
        return cls(
            st.mean, float(median), ordered[0], ordered[-1], st.std, st.std / st.mean if st.mean else 0.0
        )

    def to_dict(self) -> dict[str, float]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


# ---------------------------------------------------------------------------------------------
# Structural metrics (no gold answers)
# ---------------------------------------------------------------------------------------------
def _docs_map(docs: Document | Mapping[str, Document] | Sequence[Document]) -> dict[str, Document]:
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


def _no_space_script(ch: str) -> bool:
    """Scripts written without spaces between words (CJK, kana, Thai...): a cut between two of
    their letters is not a cut inside a word we could detect."""
    o = ord(ch)
    return (
        0x2E80 <= o <= 0x9FFF  # CJK radicals, kana, CJK unified ideographs (incl. ext. A)
        or 0xF900 <= o <= 0xFAFF
        or 0xFF66 <= o <= 0xFF9F
        or 0x20000 <= o <= 0x3FFFF
        or 0x0E00 <= o <= 0x0EFF  # Thai, Lao
        or 0x1000 <= o <= 0x109F  # Myanmar
        or 0x1780 <= o <= 0x17FF  # Khmer
    )


def _is_word(ch: str) -> bool:
    return (ch.isalnum() or ch == "_") and not _no_space_script(ch)


def _mid_word(text: str, start: int, end: int) -> bool:
    """A boundary of the chunk falls between two word characters."""
    if 0 < start < len(text) and _is_word(text[start - 1]) and _is_word(text[start]):
        return True
    return 0 < end < len(text) and _is_word(text[end - 1]) and _is_word(text[end])


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
    texts = [c.text for c in chunks]
    batch = getattr(token_length, "count_batch", None)
    if batch is not None:
        return list(batch(texts))
    return [token_length(t) for t in texts]


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
    docs: Document | Mapping[str, Document] | Sequence[Document],
    token_length: Length | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    tiny_chars: int | None = None,
    *,
    token_counts: Sequence[int] | None = None,
) -> list[frozenset[str]]:
    """:func:`chunk_flags` for every chunk, batching token counts and duplicate detection."""
    by_id = _docs_map(docs)
    if token_counts is None:
        token_counts = count_tokens(chunks, token_length)
    if tiny_chars is None:
        tiny_chars = tiny_threshold([c.chars for c in chunks])
    dups = duplicate_mask(chunks)
    return [
        chunk_flags(c, by_id[c.doc_id], tokens=t, max_tokens=max_tokens, tiny_chars=tiny_chars, duplicate=d)
        for c, t, d in zip(chunks, token_counts, dups, strict=True)
    ]


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
    docs: Document | Mapping[str, Document] | Sequence[Document],
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
    by_id = _docs_map(docs)
    if token_counts is None:
        token_counts = count_tokens(chunks, token_length)
    char_sizes = [c.chars for c in chunks]
    if tiny_chars is None:
        tiny_chars = tiny_threshold(char_sizes)
    flags = flag_chunks(
        chunks, by_id, token_counts=token_counts, max_tokens=max_tokens, tiny_chars=tiny_chars
    )
    counts = Counter(f for fl in flags for f in fl)

    per_doc = _by_doc((c.doc_id, c.start, c.end) for c in chunks)
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


# ---------------------------------------------------------------------------------------------
# Cohesion and separation (these embed text)
# ---------------------------------------------------------------------------------------------
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
    docs: Document | Mapping[str, Document] | Sequence[Document],
    embedder: Embedder,
    progress: Any = None,
) -> SemanticStats:
    """Cohesion and separation of ``chunks`` with ``embedder`` (vectors are L2-normalised, so a
    dot product is a cosine). Every distinct text is embedded once (and cached by the embedder)."""
    import numpy as np

    by_id = _docs_map(docs)
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


# ---------------------------------------------------------------------------------------------
# Retrieval metrics against gold spans (Chroma's definitions)
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class QuestionScores:
    """Scores of one question's top-k retrieval (fractions; ``rr`` = 1/rank of the first hit)."""

    recall: float
    precision: float
    iou: float
    hit: float
    rr: float


def retrieval_scores(references: Sequence[Ref], retrieved: Sequence[Ref]) -> QuestionScores:
    """Score one question. ``references`` are the gold excerpts E, ``retrieved`` the top-k chunks
    R in rank order; both as (document, start, end).

    With I = (∪ R_c) ∩ (∪ E), R_c the retrieved chunks of an excerpt's document:
    recall = |I| / Σ|e|; precision = |I| / Σ_{r∈R} |r| (every retrieved character counts, also
    chunks of other documents and overlap counted again); IoU = |I| / (Σ|r| + Σ_e |e \\ ∪R_c|).
    A hit is a retrieved chunk sharing at least one character with an excerpt.
    """
    if not references:
        raise ValueError("a question needs at least one reference span")
    e_by_doc = {d: merge(ivs) for d, ivs in _by_doc(references).items()}
    r_by_doc = {d: merge(ivs) for d, ivs in _by_doc(r for r in retrieved if r[0] in e_by_doc).items()}
    inter = 0
    for d, ivs in r_by_doc.items():
        inter += total(intersect(ivs, e_by_doc[d]))
    ref_total = sum(e - s for _, s, e in references)
    ret_total = sum(e - s for _, s, e in retrieved)
    unused = 0
    for d, s, e in references:
        unused += total(subtract([(s, e)], r_by_doc.get(d, [])))
    rr = 0.0
    for rank, (d, s, e) in enumerate(retrieved, 1):
        if d in e_by_doc and intersect([(s, e)], e_by_doc[d]):
            rr = 1.0 / rank
            break
    return QuestionScores(
        recall=inter / ref_total if ref_total else 0.0,
        precision=inter / ret_total if ret_total else 0.0,
        iou=inter / (ret_total + unused) if ret_total + unused else 0.0,
        hit=1.0 if rr else 0.0,
        rr=rr,
    )


class ChunkSpans:
    """All chunks of a strategy, per document, for finding the chunks that touch a span fast."""

    def __init__(self, spans: Iterable[Ref]) -> None:
        self._docs: dict[Hashable, tuple[list[int], list[int], int]] = {}
        for d, ivs in _by_doc(spans).items():
            ivs.sort()
            starts = [s for s, _ in ivs]
            ends = [e for _, e in ivs]
            longest = max(e - s for s, e in ivs)
            self._docs[d] = (starts, ends, longest)

    @classmethod
    def of_chunks(cls, chunks: Iterable[Chunk]) -> ChunkSpans:
        return cls((c.doc_id, c.start, c.end) for c in chunks)

    def touching(self, doc: Hashable, start: int, end: int, *, adjacent: bool = False) -> list[Interval]:
        """Chunks of ``doc`` sharing at least one character with ``[start, end)``; with
        ``adjacent``, also those that end where it starts or start where it ends."""
        entry = self._docs.get(doc)
        if entry is None:
            return []
        starts, ends, longest = entry
        lo = bisect_left(starts, start - longest)
        if adjacent:
            hi = bisect_right(starts, end)
            return [(starts[i], ends[i]) for i in range(lo, hi) if ends[i] >= start]
        hi = bisect_left(starts, end)
        return [(starts[i], ends[i]) for i in range(lo, hi) if ends[i] > start]


def precision_omega(references: Sequence[Ref], chunks: ChunkSpans) -> float:
    """Chroma's precision_Ω of one question: the best precision any retrieval could reach with
    these chunks. C = every chunk touching an excerpt: |(∪C) ∩ (∪E)| / |(∪C) ∪ (∪E \\ ∪C)|.

    "Touching" includes a chunk that ends exactly where an excerpt starts (or starts where it
    ends), as the report's code counts an empty intersection ``(s, s)`` as one. On the report's
    Recursive 250/0 row this gives its 26.7 %; counting only chunks that share a character
    gives 27.5 %.
    """
    e_by_doc = {d: merge(ivs) for d, ivs in _by_doc(references).items()}
    num = den = 0
    for d, excerpts in e_by_doc.items():
        touched = merge(iv for s, e in excerpts for iv in chunks.touching(d, s, e, adjacent=True))
        num += total(intersect(touched, excerpts))
        den += total(touched) + total(subtract(excerpts, touched))
    return num / den if den else 0.0


@dataclass(frozen=True)
class RetrievalSummary:
    """Per-question scores of one strategy and their means ± std (all fractions)."""

    recall: Stat
    precision: Stat
    iou: Stat
    precision_omega: Stat
    hit_rate: Stat
    mrr: Stat
    questions: tuple[QuestionScores, ...]
    omegas: tuple[float, ...]

    @classmethod
    def of(cls, scores: Sequence[QuestionScores], omegas: Sequence[float]) -> RetrievalSummary:
        return cls(
            recall=Stat.of([s.recall for s in scores]),
            precision=Stat.of([s.precision for s in scores]),
            iou=Stat.of([s.iou for s in scores]),
            precision_omega=Stat.of(list(omegas)),
            hit_rate=Stat.of([s.hit for s in scores]),
            mrr=Stat.of([s.rr for s in scores]),
            questions=tuple(scores),
            omegas=tuple(omegas),
        )


METRIC_NAMES = ("recall", "precision", "iou", "precision_omega", "hit_rate", "mrr")

#: Short alias used in the shared brief.
flags = chunk_flags
