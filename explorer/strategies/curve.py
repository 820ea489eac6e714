"""The semantic distance curve: sentence windows embedded, neighbours compared, breakpoints set.

Definitions follow LangChain's ``SemanticChunker``: a window of ``buffer_size`` sentences on
each side of sentence i, the cosine distance between the windows of i and i + 1, and a
breakpoint wherever that distance exceeds a threshold computed from all the distances or given
as a similarity. ``semantic`` cuts at the breakpoints and the app plots the curve, so both
read the same points. Sentence vectors are kept per document (a small LRU over the
content-hash cache), so moving the threshold or changing the mode embeds nothing.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from explorer import limits
from explorer.errors import LimitError, ParamError
from explorer.lru import ByteLRU
from explorer.text.sentences import sentence_spans

if TYPE_CHECKING:
    from explorer.documents.document import Document
    from explorer.strategies.context import Context

MODES = ("percentile", "standard_deviation", "interquartile", "gradient", "threshold")
#: Default ``breakpoint_amount`` per mode (LangChain's defaults; ``threshold`` is a similarity).
DEFAULT_AMOUNT = {
    "percentile": 95.0,
    "standard_deviation": 3.0,
    "interquartile": 1.5,
    "gradient": 95.0,
    "threshold": 0.5,
}
Spans = tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class CurvePoint:
    """The gap between two adjacent sentences.

    ``position`` is where the right sentence starts (where a chunk would begin). ``score`` is
    the value compared with ``threshold``: the distance, or its gradient in ``gradient`` mode.
    """

    position: int
    left: tuple[int, int]
    right: tuple[int, int]
    distance: float
    similarity: float
    score: float
    threshold: float
    is_break: bool


@dataclass(frozen=True)
class SemanticCurve:
    """Everything the app draws: sentences, one point per adjacent pair, and the threshold
    (in the space of ``CurvePoint.score``; NaN when there are too few sentences)."""

    sentences: Spans
    points: tuple[CurvePoint, ...]
    threshold: float
    mode: str
    amount: float
    buffer_size: int
    model_id: str
    window_embedding: str = "contextual"  # the method actually used

    @property
    def distances(self) -> np.ndarray:
        return np.array([p.distance for p in self.points], dtype=np.float64)

    @property
    def breaks(self) -> list[int]:
        """Indexes i of the points (gap after sentence i) that are breakpoints."""
        return [i for i, p in enumerate(self.points) if p.is_break]


# -- sentence vectors, cached per document ------------------------------------------------------
#: Per-document sentence matrices, bounded by bytes (see explorer.limits).
_lru: ByteLRU[Any] = ByteLRU(limits.SENTENCE_VECTORS_BYTES, lambda v: _nbytes(v))


def _nbytes(value: Any) -> int:
    if isinstance(value, SentenceVectors):
        return value.vectors.nbytes + value.weights.nbytes + 72 * len(value.spans)
    return int(value.nbytes)


def clear_sentence_cache() -> None:
    """Forget per-document sentence matrices (the embedding cache still has the vectors)."""
    _lru.clear()


def _cached(key: tuple, compute: Callable[[], Any]) -> Any:
    """``compute()`` once per key while it is kept; None is never kept."""
    return _lru.get_or_make(key, compute)


@dataclass(frozen=True)
class SentenceVectors:
    """Sentences of a document, one unit vector each, and the tokens the model pooled for each."""

    spans: Spans
    vectors: np.ndarray  # (n, dim) float32, unit rows
    weights: np.ndarray  # (n,) token counts, capped at the model's input limit


def sentence_vectors(doc: Document, ctx: Context) -> SentenceVectors:
    """Sentence spans of ``doc`` and their vectors (each sentence embedded once, cached)."""
    embedder = ctx.get_embedder()

    def compute() -> SentenceVectors:
        spans = tuple(sentence_spans(doc.text))
        texts = [doc.text[s:e] for s, e in spans]
        vecs = embedder.encode(texts, progress=ctx.progress)
        vecs.setflags(write=False)
        counts = np.array(embedder.count_tokens(texts), dtype=np.float64)
        weights = np.minimum(counts, embedder.max_seq_length)
        weights.setflags(write=False)
        return SentenceVectors(spans, vecs, weights)

    return _cached((doc.id, embedder.model_id), compute)


def joined_window_vectors(doc: Document, ctx: Context, buffer_size: int) -> np.ndarray:
    """LangChain's way: embed the text of every window (its sentences joined by a space).
    Each window text goes through the content-hash cache, so only a new buffer re-embeds."""
    embedder = ctx.get_embedder()

    def compute() -> np.ndarray:
        sents = [doc.text[s:e] for s, e in sentence_spans(doc.text)]
        texts = [" ".join(sents[max(0, i - buffer_size) : i + buffer_size + 1]) for i in range(len(sents))]
        win = embedder.encode(texts, progress=ctx.progress).astype(np.float64)
        win.setflags(write=False)
        return win

    return _cached((doc.id, embedder.model_id, "joined", buffer_size), compute)


def contextual_vectors(doc: Document, ctx: Context, band: int) -> np.ndarray | None:
    """Per sentence of ``doc``, the sum of its token vectors with ``band`` sentences of context
    on each side (``Embedder.contextual_sums``), or None where the embedder cannot."""
    embedder = ctx.get_embedder()

    def compute() -> np.ndarray | None:
        spans = sentence_spans(doc.text)
        sums = embedder.contextual_sums([doc.text[s:e] for s, e in spans], band, progress=ctx.progress)
        if sums is None:
            return None
        sums = sums.astype(np.float64)
        sums.setflags(write=False)
        return sums

    return _cached((doc.id, embedder.model_id, "context", band), compute)


def window_vectors(vecs: np.ndarray, buffer_size: int, weights: np.ndarray | None = None) -> np.ndarray:
    """Normalised (weighted) sum of sentences [i - buffer, i + buffer] for every i, with one
    cumulative sum: O(n · dim) whatever the buffer."""
    n = vecs.shape[0]
    if n == 0:
        return vecs
    cs = np.zeros((n + 1, vecs.shape[1]), dtype=np.float64)
    np.cumsum(vecs if weights is None else vecs * weights[:, None], axis=0, out=cs[1:])
    idx = np.arange(n)
    hi = np.minimum(n, idx + buffer_size + 1)
    lo = np.maximum(0, idx - buffer_size)
    win = cs[hi] - cs[lo]
    norms = np.linalg.norm(win, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return win / norms


def breakpoint_scores(distances: np.ndarray, mode: str, amount: float) -> tuple[np.ndarray, float]:
    """(scores, threshold) as LangChain defines them; a break is ``score > threshold``."""
    d = np.asarray(distances, dtype=np.float64)
    if d.size == 0:
        return d, math.nan
    if mode == "percentile":
        return d, float(np.percentile(d, amount))
    if mode == "standard_deviation":
        return d, float(np.mean(d) + amount * np.std(d))
    if mode == "interquartile":
        q1, q3 = np.percentile(d, [25, 75])
        return d, float(np.mean(d) + amount * (q3 - q1))
    if mode == "gradient":
        if d.size < 2:
            return np.zeros_like(d), math.nan
        g = np.gradient(d, np.arange(d.size))
        return g, float(np.percentile(g, amount))
    if mode == "threshold":
        return d, 1.0 - amount
    raise ParamError(f"breakpoint_mode={mode!r} is not one of {', '.join(MODES)}")


def distance_curve(
    doc: Document, ctx: Context, mode: str, amount: float, buffer_size: int, window_embedding: str
) -> SemanticCurve:
    """The curve of ``doc``: one point per pair of adjacent sentence windows."""
    check_work(doc, buffer_size, window_embedding)
    spans, win, used = _windows(doc, ctx, buffer_size, window_embedding)
    sims = np.einsum("ij,ij->i", win[:-1], win[1:]) if len(spans) > 1 else np.zeros(0)
    sims = np.clip(sims, -1.0, 1.0)
    dist = 1.0 - sims
    scores, thr = breakpoint_scores(dist, mode, amount)
    breaks = scores > thr if not math.isnan(thr) else np.zeros(len(scores), dtype=bool)
    points = tuple(
        CurvePoint(
            position=spans[i + 1][0],
            left=spans[i],
            right=spans[i + 1],
            distance=float(dist[i]),
            similarity=float(sims[i]),
            score=float(scores[i]),
            threshold=thr,
            is_break=bool(breaks[i]),
        )
        for i in range(len(dist))
    )
    model_id = ctx.get_embedder().model_id
    return SemanticCurve(spans, points, thr, mode, amount, buffer_size, model_id, used)


#: The longest input of a registered model (e5: 512 tokens) in characters, at about 4 a token: a
#: joined window longer than this is cut by the model, so it costs no more to embed.
WINDOW_CHARS_CAP = 2048


def check_work(doc: Document, buffer_size: int, window_embedding: str) -> None:
    """Refuse, before anything is embedded, a document over the embedding limits: its
    characters (:data:`explorer.limits.MAX_EMBED_CHARS`; with ``window_embedding='joined'``
    every window's text counts, each sentence being in 2 x buffer_size + 1 of them) and its
    sentences (:data:`explorer.limits.MAX_SEMANTIC_SENTENCES`). The character count costs
    nothing; the sentences are split once (and kept for the curve)."""
    limit = limits.MAX_EMBED_CHARS
    if len(doc.text) > limit:
        raise LimitError(
            f"semantic would embed {len(doc.text):,} characters of {doc.name!r}, over the limit of "
            f"{limit:,} characters per document (about three minutes of embedding on 2 CPU cores): "
            "split the document or use a strategy that does not embed"
        )
    spans = sentence_spans(doc.text)
    if len(spans) > limits.MAX_SEMANTIC_SENTENCES:
        raise LimitError(
            f"semantic would embed {len(spans):,} sentences of {doc.name!r}, over the limit of "
            f"{limits.MAX_SEMANTIC_SENTENCES:,} sentences per document: split the document or use a "
            "strategy that does not embed (markdown, sentence, recursive)"
        )
    if window_embedding == "joined" and buffer_size and spans:
        chars = joined_chars(spans, buffer_size)
        if chars > limit:
            raise LimitError(
                f"semantic with window_embedding='joined' and buffer_size={buffer_size} embeds each sentence "
                f"in {2 * buffer_size + 1} windows: {chars:,} characters of {doc.name!r} in all, over the "
                f"limit of {limit:,}: use window_embedding='contextual', a smaller buffer_size, or split "
                "the document"
            )


def joined_chars(spans: Spans | list[tuple[int, int]], buffer_size: int) -> int:
    """Characters of all the joined windows, each counted up to :data:`WINDOW_CHARS_CAP`."""
    starts = np.fromiter((s for s, _ in spans), dtype=np.int64, count=len(spans))
    ends = np.fromiter((e for _, e in spans), dtype=np.int64, count=len(spans))
    idx = np.arange(len(spans))
    lo = np.maximum(idx - buffer_size, 0)
    hi = np.minimum(idx + buffer_size, len(spans) - 1)
    return int(np.minimum(ends[hi] - starts[lo], WINDOW_CHARS_CAP).sum())


def _windows(doc: Document, ctx: Context, buffer: int, method: str) -> tuple[Spans, np.ndarray, str]:
    """Sentence spans, one unit vector per sentence window as ``method`` says, and the method
    used ('contextual' falls back to 'pooled' for a model the packed pass cannot run)."""
    if method == "joined":
        return tuple(sentence_spans(doc.text)), joined_window_vectors(doc, ctx, buffer), "joined"
    if method == "contextual":
        sums = contextual_vectors(doc, ctx, buffer)
        if sums is not None:
            return tuple(sentence_spans(doc.text)), window_vectors(sums, buffer), "contextual"
    sv = sentence_vectors(doc, ctx)
    return sv.spans, window_vectors(sv.vectors, buffer, sv.weights), "pooled"


def sentence_weights(doc: Document, ctx: Context, buffer: int, used: str) -> np.ndarray:
    """One vector per sentence whose sums over a group stand for the group (merging fragments),
    from what the curve used."""
    if used == "joined":  # no sentence vectors: use the windows
        return joined_window_vectors(doc, ctx, buffer)
    if used == "contextual":
        sums = contextual_vectors(doc, ctx, buffer)
        assert sums is not None  # it was used for the curve
        return sums
    sv = sentence_vectors(doc, ctx)
    return sv.vectors * sv.weights[:, None]
