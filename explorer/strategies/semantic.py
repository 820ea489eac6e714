"""Semantic chunking: cut where the meaning of adjacent sentence windows changes most.

Definitions follow LangChain's ``SemanticChunker`` (langchain-experimental): a window of
``buffer_size`` sentences on each side of sentence i, cosine distance between the windows of
i and i + 1, and a breakpoint wherever that distance exceeds a threshold computed from all the
distances (``percentile``, ``standard_deviation``, ``interquartile``, ``gradient``) or given
as an absolute similarity (``threshold``).

The speed trick: LangChain embeds every window's joined text, so each sentence goes through
the model 2 × buffer_size + 1 times. By default (``window_embedding="contextual"``) every token
goes through the model once: consecutive sentences share a packed sequence in which each
sentence's tokens attend to the sentences within ``buffer_size`` of it, as they would inside
the joined window, and a window's vector is the mean of its sentences' token vectors
(:mod:`explorer.embedding.packed`). On 100 KB of each Chroma corpus this tracks LangChain's distance
curve better than pooling isolated sentences (``"pooled"``, the fallback for models the packed
pass does not reproduce); ``bench/bench_semantic.py`` prints the speed-up and how many of
LangChain's breakpoints each reproduces. Where LangChain's exact breakpoints matter more than
speed, ``window_embedding="joined"`` embeds the joined window texts as LangChain does (same
chunks as LangChain on the same sentences; tested). Vectors come from the content-hash cache
(and a small per-document LRU here), so moving the threshold or changing the mode embeds
nothing; a new ``buffer_size`` changes what each sentence sees and is embedded once.
"""

from __future__ import annotations

import heapq
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from explorer.documents.document import Document
from explorer.errors import LimitError, ParamError
from explorer.limits import MAX_CHUNKS
from explorer.strategies.base import LENGTH_PARAM, Param, Strategy, trim
from explorer.strategies.registry import get_strategy, register
from explorer.text.chunk import END_OF_TEXT, SEMANTIC, SIZE_LIMIT, UNBREAKABLE, Span
from explorer.text.sentences import sentence_spans

if TYPE_CHECKING:
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
#: Valid ``breakpoint_amount`` range per mode, and what the amount means there.
AMOUNT_RANGE = {
    "percentile": (0.0, 100.0, "a percentile of the distances"),
    "standard_deviation": (0.0, 10.0, "standard deviations above the mean distance"),
    "interquartile": (0.0, 10.0, "interquartile ranges above the mean distance"),
    "gradient": (0.0, 100.0, "a percentile of the distance gradient"),
    "threshold": (-1.0, 1.0, "a cosine similarity below which a break is made"),
}


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

    sentences: tuple[tuple[int, int], ...]
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
_LRU_SIZE = 8
_lru: OrderedDict[tuple, Any] = OrderedDict()
_lru_lock = threading.Lock()


def clear_sentence_cache() -> None:
    """Forget per-document sentence matrices (the embedding cache still has the vectors)."""
    with _lru_lock:
        _lru.clear()


@dataclass(frozen=True)
class SentenceVectors:
    """Sentences of a document, one unit vector each, and the tokens the model pooled for each."""

    spans: tuple[tuple[int, int], ...]
    vectors: np.ndarray  # (n, dim) float32, unit rows
    weights: np.ndarray  # (n,) token counts, capped at the model's input limit


def sentence_vectors(doc: Document, ctx: Context) -> SentenceVectors:
    """Sentence spans of ``doc`` and their vectors (each sentence embedded once, cached)."""
    embedder = ctx.get_embedder()
    key = (doc.id, embedder.model_id)
    with _lru_lock:
        hit = _lru.get(key)
        if hit is not None:
            _lru.move_to_end(key)
            return hit
    spans = tuple(sentence_spans(doc.text))
    texts = [doc.text[s:e] for s, e in spans]
    vecs = embedder.encode(texts, progress=ctx.progress)
    vecs.setflags(write=False)
    weights = np.minimum(np.array(embedder.count_tokens(texts), dtype=np.float64), embedder.max_seq_length)
    weights.setflags(write=False)
    sv = SentenceVectors(spans, vecs, weights)
    with _lru_lock:
        _lru[key] = sv
        while len(_lru) > _LRU_SIZE:
            _lru.popitem(last=False)
    return sv


def joined_window_vectors(doc: Document, ctx: Context, buffer_size: int) -> np.ndarray:
    """LangChain's way: embed the text of every window (its sentences joined by a space).
    Each window text goes through the content-hash cache, so only a new buffer re-embeds."""
    embedder = ctx.get_embedder()
    key = (doc.id, embedder.model_id, "joined", buffer_size)
    with _lru_lock:
        hit = _lru.get(key)
        if hit is not None:
            _lru.move_to_end(key)
            return hit
    spans = sentence_spans(doc.text)
    sents = [doc.text[s:e] for s, e in spans]
    n = len(sents)
    texts = [" ".join(sents[max(0, i - buffer_size) : i + buffer_size + 1]) for i in range(n)]
    win = embedder.encode(texts, progress=ctx.progress).astype(np.float64)
    win.setflags(write=False)
    with _lru_lock:
        _lru[key] = win
        while len(_lru) > _LRU_SIZE:
            _lru.popitem(last=False)
    return win


def contextual_vectors(doc: Document, ctx: Context, band: int) -> np.ndarray | None:
    """Per sentence of ``doc``, the sum of its token vectors with ``band`` sentences of context
    on each side (:meth:`Embedder.contextual_sums`), or None where the embedder cannot."""
    embedder = ctx.get_embedder()
    key = (doc.id, embedder.model_id, "context", band)
    with _lru_lock:
        hit = _lru.get(key)
        if hit is not None:
            _lru.move_to_end(key)
            return hit
    spans = sentence_spans(doc.text)
    sums = embedder.contextual_sums([doc.text[s:e] for s, e in spans], band, progress=ctx.progress)
    if sums is None:
        return None
    sums = sums.astype(np.float64)
    sums.setflags(write=False)
    with _lru_lock:
        _lru[key] = sums
        while len(_lru) > _LRU_SIZE:
            _lru.popitem(last=False)
    return sums


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


def _resolved(p: dict[str, Any]) -> tuple[str, float]:
    mode = p["breakpoint_mode"]
    amount = p.get("breakpoint_amount")
    return mode, float(DEFAULT_AMOUNT[mode] if amount is None else amount)


def semantic_curve(doc: Document, params: dict[str, Any] | None, ctx: Context | None = None) -> SemanticCurve:
    """The distance curve of ``doc`` under ``params`` (validated): what the app plots."""
    from explorer.strategies.context import Context

    ctx = ctx or Context.default()
    p = get_strategy("semantic").validate(params or {})
    return _curve(doc, p, ctx)


def _curve(doc: Document, p: dict[str, Any], ctx: Context) -> SemanticCurve:
    mode, amount = _resolved(p)
    spans, win, used = _windows(doc, p, ctx)
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
    return SemanticCurve(spans, points, thr, mode, amount, p["buffer_size"], model_id, used)


def _windows(
    doc: Document, p: dict[str, Any], ctx: Context
) -> tuple[tuple[tuple[int, int], ...], np.ndarray, str]:
    """Sentence spans, one unit vector per sentence window as ``window_embedding`` says, and the
    method used ('contextual' falls back to 'pooled' for a model the packed pass cannot run)."""
    buffer = p["buffer_size"]
    if p["window_embedding"] == "joined":
        return tuple(sentence_spans(doc.text)), joined_window_vectors(doc, ctx, buffer), "joined"
    if p["window_embedding"] == "contextual":
        sums = contextual_vectors(doc, ctx, buffer)
        if sums is not None:
            return tuple(sentence_spans(doc.text)), window_vectors(sums, buffer), "contextual"
    sv = sentence_vectors(doc, ctx)
    return sv.spans, window_vectors(sv.vectors, buffer, sv.weights), "pooled"


def _per_sentence(doc: Document, p: dict[str, Any], ctx: Context, used: str) -> np.ndarray:
    """One vector per sentence whose sums over a group stand for the group (merging fragments)."""
    if used == "joined":  # no sentence vectors: use the windows
        return joined_window_vectors(doc, ctx, p["buffer_size"])
    if used == "contextual":
        sums = contextual_vectors(doc, ctx, p["buffer_size"])
        assert sums is not None  # it was used for the curve
        return sums
    sv = sentence_vectors(doc, ctx)
    return sv.vectors * sv.weights[:, None]


def _break_reason(pt: CurvePoint, mode: str, amount: float) -> tuple[str, tuple[tuple[str, Any], ...]]:
    d, t = round(pt.distance, 6), round(pt.threshold, 6)
    meta: tuple[tuple[str, Any], ...] = (("distance", d), ("threshold", t), ("mode", mode))
    if mode == "threshold":
        why = f"similarity {pt.similarity:.3f} < threshold {amount:.3f} (distance {pt.distance:.3f})"
        meta += (("similarity", round(pt.similarity, 6)),)
    elif mode == "gradient":
        why = f"distance gradient {pt.score:.3f} > threshold {pt.threshold:.3f} (distance {pt.distance:.3f})"
        meta += (("gradient", round(pt.score, 6)),)
    else:
        why = f"distance {pt.distance:.3f} > threshold {pt.threshold:.3f}"
    return f"{SEMANTIC}: {why}", meta


@register
class SemanticStrategy(Strategy):
    name = "semantic"
    description = (
        "Embeds a window of buffer_size sentences on each side of every sentence (each token "
        "once, seeing its window) and cuts where the cosine distance between adjacent windows "
        "jumps (LangChain's SemanticChunker breakpoints). Chunks are capped at 256 tokens by "
        "default, within every registered model's input (max_chunk_size; 0 = LangChain's "
        "uncapped chunks)."
    )
    needs_embedder = True
    params = (
        Param(
            "breakpoint_mode",
            "choice",
            "percentile",
            "How the threshold is set: a percentile of the distances, mean + N standard "
            "deviations, mean + N interquartile ranges, a percentile of the distance gradient, "
            "or an absolute similarity threshold.",
            choices=MODES,
        ),
        Param(
            "breakpoint_amount",
            "float",
            None,
            "The mode's amount (empty = the mode's default): percentile 95 (0-100), "
            "standard_deviation 3 (0-10), interquartile 1.5 (0-10), gradient 95 (0-100), "
            "threshold 0.5 = cut where similarity < 0.5 (-1 to 1).",
            step=0.5,
        ),
        Param(
            "buffer_size",
            "int",
            1,
            "Sentences on each side that form each sentence's window before comparing neighbours.",
            min=0,
            max=10,
        ),
        Param(
            "window_embedding",
            "choice",
            "contextual",
            "How a window becomes a vector. 'contextual': every token goes through the model once, "
            "seeing the buffer_size sentences on each side as it would in the joined window, and a "
            "window is the mean of its tokens (about 3x faster than LangChain; models other than "
            "mean-pooling BERT fall back to 'pooled'). 'pooled': each sentence embedded alone, "
            "window = token-weighted sum. 'joined': each window's joined text embedded, exactly "
            "like LangChain's SemanticChunker.",
            choices=("contextual", "pooled", "joined"),
        ),
        Param(
            "min_chunk_size",
            "int",
            0,
            "Chunks shorter than this (in `length` units) are merged into their most similar neighbour (0 = off).",
            min=0,
            max=100_000,
            step=10,
        ),
        Param(
            "max_chunk_size",
            "int",
            256,
            "Chunks longer than this are split with the recursive strategy (0 = no limit). The "
            "default, 256 tokens, fits every registered model's input (all-MiniLM-L6-v2 reads 256, "
            "multilingual-e5-small 512): no chunk is cut when embedded.",
            min=0,
            max=100_000,
            step=10,
        ),
        replace(LENGTH_PARAM, default="tokens"),
    )

    def check(self, p: dict[str, Any]) -> None:
        mode = p["breakpoint_mode"]
        if p.get("breakpoint_amount") is None:
            p["breakpoint_amount"] = DEFAULT_AMOUNT[mode]
        amount = p["breakpoint_amount"]
        lo, hi, meaning = AMOUNT_RANGE[mode]
        if not lo <= amount <= hi:
            raise ParamError(
                f"breakpoint_amount={amount:g} is outside {lo:g}..{hi:g} for breakpoint_mode={mode!r} "
                f"(there it is {meaning})"
            )
        mn, mx = p["min_chunk_size"], p["max_chunk_size"]
        if mx and mn > mx:
            raise ParamError(f"min_chunk_size={mn} must not exceed max_chunk_size={mx}")
        if mx and p["length"] == "tokens" and mx <= 2:
            raise ParamError(
                f"max_chunk_size={mx} tokens leaves no room beside [CLS] and [SEP]; use 3 or more"
            )

    def split(self, doc: Document, p: dict[str, Any], ctx: Context) -> list[Span]:
        curve = _curve(doc, p, ctx)
        sents = curve.sentences
        if not sents:
            return []
        mode, amount = _resolved(p)
        # groups of sentences [first, last]; a group ends at a breakpoint or at the last sentence
        cuts = curve.breaks
        groups: list[tuple[int, int]] = []
        first = 0
        for i in cuts:
            groups.append((first, i))
            first = i + 1
        groups.append((first, len(sents) - 1))
        length = ctx.length(p["length"])
        if p["min_chunk_size"] > 0 and len(groups) > 1:
            per_sentence = _per_sentence(doc, p, ctx, curve.window_embedding)
            groups = _merge_small(doc.text, sents, per_sentence, groups, p["min_chunk_size"], length)
        spans: list[Span] = []
        last = len(sents) - 1
        for a, b in groups:
            start, end = sents[a][0], sents[b][1]
            if b == last:
                reason, meta = END_OF_TEXT, ()
            else:
                reason, meta = _break_reason(curve.points[b], mode, amount)
            mx = p["max_chunk_size"]
            if mx and length(doc.text[start:end]) > mx:
                parts = split_range(doc, start, end, mx, p["length"], ctx)
                tail = parts[-1]
                if not tail.reason.startswith(UNBREAKABLE):
                    parts[-1] = Span(tail.start, tail.end, reason, meta)
                spans.extend(parts)
            else:
                spans.append(Span(start, end, reason, meta))
        return spans


def _merge_small(
    text: str,
    sents: tuple[tuple[int, int], ...],
    vecs: np.ndarray,
    groups: list[tuple[int, int]],
    min_size: int,
    length,
) -> list[tuple[int, int]]:
    """Merge every group shorter than ``min_size`` into its more similar neighbour, smallest
    first (a heap with lazy invalidation keeps this O(g log g) in the number of groups)."""
    n = len(groups)
    first = [a for a, _ in groups]
    last = [b for _, b in groups]
    cs = np.zeros((len(sents) + 1, vecs.shape[1]), dtype=np.float64)
    np.cumsum(vecs, axis=0, out=cs[1:])
    prev = list(range(-1, n - 1))
    nxt = [*range(1, n), -1]
    alive = [True] * n
    size = [length(text[sents[a][0] : sents[b][1]]) for a, b in groups]
    heap = [(size[g], g) for g in range(n) if size[g] < min_size]
    heapq.heapify(heap)
    remaining = n

    def mean_vec(g: int) -> np.ndarray:
        v = cs[last[g] + 1] - cs[first[g]]
        nv = np.linalg.norm(v)
        return v / nv if nv else v

    while heap and remaining > 1:
        s, g = heapq.heappop(heap)
        if not alive[g] or s != size[g] or s >= min_size:
            continue
        left, right = prev[g], nxt[g]
        if left < 0 and right < 0:
            break
        if left < 0:
            target = right
        elif right < 0:
            target = left
        else:
            vg = mean_vec(g)
            target = left if float(vg @ mean_vec(left)) >= float(vg @ mean_vec(right)) else right
        # merge g into target; the survivor keeps the id ``target``
        first[target] = min(first[target], first[g])
        last[target] = max(last[target], last[g])
        alive[g] = False
        remaining -= 1
        if target == left:
            nxt[left] = right
            if right >= 0:
                prev[right] = left
        else:
            prev[right] = left
            if left >= 0:
                nxt[left] = right
        size[target] = length(text[sents[first[target]][0] : sents[last[target]][1]])
        if size[target] < min_size:
            heapq.heappush(heap, (size[target], target))
    return [(first[g], last[g]) for g in range(n) if alive[g]]


# -- splitting a range with the recursive strategy (shared with ``cluster``) -------------------
def split_range(
    doc: Document,
    start: int,
    end: int,
    size: int,
    unit: str,
    ctx: Context,
    separators: tuple[str, ...] | None = None,
    param: str = "max_chunk_size",
) -> list[Span]:
    """Spans of at most ``size`` units covering ``doc.text[start:end]``, cut by the recursive
    strategy (a plain word-boundary splitter if that strategy is not available). ``param`` names
    the caller's parameter in the message if the pieces would be too many."""
    sub_text = doc.text[start:end]
    try:
        rec = get_strategy("recursive")
        values: dict[str, Any] = {"chunk_size": size, "chunk_overlap": 0, "length": unit}
        if separators is not None:
            values["separators"] = separators
        p = rec.validate(values)
    except ParamError:
        rec = None
    if rec is not None:
        sub = Document(name=doc.name, kind="text", text=sub_text)
        try:
            pieces = rec.split(sub, p, ctx)
        except LimitError:
            raise LimitError(
                f"{param}={size} {unit} would cut {doc.name!r} into over {MAX_CHUNKS:,} pieces: "
                f"use a larger {param}"
            ) from None
        spans = [Span(s.start + start, s.end + start, s.reason, s.meta) for s in pieces]
    else:
        spans = _fallback_split(doc.text, start, end, size, ctx.length(unit), unit)
    return spans


def _fallback_split(text: str, start: int, end: int, size: int, length, unit: str) -> list[Span]:
    """Greedy windows of ``size`` units that prefer to end at whitespace (used only until the
    recursive strategy is registered)."""
    spans: list[Span] = []
    pos = start
    special = getattr(length, "special", 0)
    while pos < end:
        s, e = trim(text, pos, end)
        if e <= s:
            break
        if length(text[s:e]) <= size:
            spans.append(Span(s, e, END_OF_TEXT))
            break
        if unit == "chars":
            limit = s + size
        else:
            units = length.spans(text[s:e])
            room = max(1, size - special)
            limit = s + units[room][0] if room < len(units) else e
        cut = limit
        ws = max(text.rfind(" ", s + 1, limit + 1), text.rfind("\n", s + 1, limit + 1))
        if ws > s + (limit - s) // 2:
            cut = ws
        a, b = trim(text, s, cut)
        while unit != "chars" and b - a > 1 and length(text[a:b]) > size:
            b = trim(text, a, b - 1)[1]
        reason = SIZE_LIMIT
        if b <= a:  # a single unit over the size
            b = limit if limit > s else s + 1
            a = s
            reason = f"{UNBREAKABLE}: one {unit} unit is longer than the size"
        elif length(text[a:b]) > size:
            reason = f"{UNBREAKABLE}: one {unit} unit is longer than the size"
        spans.append(Span(a, b, reason))
        pos = b
    return spans
