"""Semantic chunking: cut where the meaning of adjacent sentence windows changes most.

Breakpoints follow LangChain's ``SemanticChunker`` (langchain-experimental), on the distance
curve of :mod:`explorer.strategies.curve`. The speed trick: LangChain embeds every window's
joined text, so each sentence goes through the model 2 × buffer_size + 1 times. By default
(``window_embedding="contextual"``) every token goes through the model once: consecutive
sentences share a packed sequence in which each sentence's tokens attend to the sentences
within ``buffer_size`` of it, as they would inside the joined window, and a window's vector is
the mean of its sentences' token vectors. On 100 KB of each Chroma corpus this tracks
LangChain's distance curve better than pooling isolated sentences (``"pooled"``, the fallback
for models the packed pass does not reproduce); ``bench/bench_semantic.py`` prints the speed-up
and how many of LangChain's breakpoints each reproduces. ``window_embedding="joined"`` embeds
the joined window texts as LangChain does (same chunks as LangChain on the same sentences).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from explorer.errors import ParamError
from explorer.strategies.base import PeerKit, Strategy, check_token_room
from explorer.strategies.curve import (
    DEFAULT_AMOUNT,
    MODES,
    CurvePoint,
    SemanticCurve,
    distance_curve,
    sentence_weights,
)
from explorer.strategies.params import CHOICE, FLOAT, INT, LENGTH, AtLeast, Param, ScopedBy, declare
from explorer.strategies.registry import get_strategy, register
from explorer.strategies.splitting import split_range
from explorer.text.chunk import END_OF_TEXT, SEMANTIC, UNBREAKABLE, Span

if TYPE_CHECKING:
    from collections.abc import Sequence

    from explorer.documents.document import Document
    from explorer.strategies.context import Context
    from explorer.text.chunk import Chunk
    from explorer.text.length import Length

#: Valid ``breakpoint_amount`` range per mode, and what the amount means there.
AMOUNT_RANGE = {
    "percentile": (0.0, 100.0, "a percentile of the distances"),
    "standard_deviation": (0.0, 10.0, "standard deviations above the mean distance"),
    "interquartile": (0.0, 10.0, "interquartile ranges above the mean distance"),
    "gradient": (0.0, 100.0, "a percentile of the distance gradient"),
    "threshold": (-1.0, 1.0, "a cosine similarity below which a break is made"),
}


@dataclass(frozen=True)
class SemanticParams:
    breakpoint_mode: str = declare(
        Param(
            "breakpoint_mode",
            CHOICE,
            "percentile",
            "How the threshold is set: a percentile of the distances, mean + N standard "
            "deviations, mean + N interquartile ranges, a percentile of the distance gradient, "
            "or an absolute similarity threshold.",
            choices=MODES,
        )
    )
    breakpoint_amount: float | None = declare(
        Param(
            "breakpoint_amount",
            FLOAT,
            None,
            "The mode's amount (empty = the mode's default): percentile 95 (0-100), "
            "standard_deviation 3 (0-10), interquartile 1.5 (0-10), gradient 95 (0-100), "
            "threshold 0.5 = cut where similarity < 0.5 (-1 to 1).",
            step=0.5,
        )
    )
    buffer_size: int = declare(
        Param(
            "buffer_size",
            INT,
            1,
            "Sentences on each side that form each sentence's window before comparing neighbours.",
            min=0,
            max=10,
        )
    )
    window_embedding: str = declare(
        Param(
            "window_embedding",
            CHOICE,
            "contextual",
            "How a window becomes a vector. 'contextual': every token goes through the model once, "
            "seeing the buffer_size sentences on each side as it would in the joined window, and a "
            "window is the mean of its tokens (about 3x faster than LangChain; models other than "
            "mean-pooling BERT fall back to 'pooled'). 'pooled': each sentence embedded alone, "
            "window = token-weighted sum. 'joined': each window's joined text embedded, exactly "
            "like LangChain's SemanticChunker.",
            choices=("contextual", "pooled", "joined"),
        )
    )
    min_chunk_size: int = declare(
        Param(
            "min_chunk_size",
            INT,
            0,
            "Chunks shorter than this (in `length` units) are merged into their most similar neighbour (0 = off).",
            min=0,
            max=100_000,
            step=10,
            measured=True,
        )
    )
    max_chunk_size: int = declare(
        Param(
            "max_chunk_size",
            INT,
            256,
            "Chunks longer than this are split with the recursive strategy (0 = no limit). The "
            "default, 256 tokens, fits every registered model's input (all-MiniLM-L6-v2 reads 256, "
            "multilingual-e5-small 512): no chunk is cut when embedded.",
            min=0,
            max=100_000,
            step=10,
            measured=True,
        )
    )
    length: str = declare(LENGTH.with_default("tokens"))


@register
class SemanticStrategy(Strategy[SemanticParams]):
    name = "semantic"
    description = (
        "Embeds a window of buffer_size sentences on each side of every sentence (each token "
        "once, seeing its window) and cuts where the cosine distance between adjacent windows "
        "jumps (LangChain's SemanticChunker breakpoints). Chunks are capped at 256 tokens by "
        "default, within every registered model's input (max_chunk_size; 0 = LangChain's "
        "uncapped chunks)."
    )
    needs_embedder = True
    Params = SemanticParams
    rules = (ScopedBy("breakpoint_amount", "breakpoint_mode"), AtLeast("max_chunk_size", "min_chunk_size"))

    def complete(self, p: SemanticParams) -> SemanticParams:
        if p.breakpoint_amount is None:
            return replace(p, breakpoint_amount=DEFAULT_AMOUNT[p.breakpoint_mode])
        return p

    def check(self, p: SemanticParams) -> None:
        mode, amount = p.breakpoint_mode, p.breakpoint_amount
        lo, hi, meaning = AMOUNT_RANGE[mode]
        if not lo <= amount <= hi:
            raise ParamError(
                f"breakpoint_amount={amount:g} is outside {lo:g}..{hi:g} for breakpoint_mode={mode!r} "
                f"(there it is {meaning})"
            )
        mn, mx = p.min_chunk_size, p.max_chunk_size
        if mx and mn > mx:
            raise ParamError(f"min_chunk_size={mn} must not exceed max_chunk_size={mx}")
        check_token_room("max_chunk_size", mx, p.length)

    def split(self, doc: Document, p: SemanticParams, ctx: Context) -> list[Span]:
        curve = _curve(doc, p, ctx)
        sents = curve.sentences
        if not sents:
            return []
        # groups of sentences [first, last]; a group ends at a breakpoint or at the last sentence
        groups: list[tuple[int, int]] = []
        first = 0
        for i in curve.breaks:
            groups.append((first, i))
            first = i + 1
        groups.append((first, len(sents) - 1))
        length = ctx.length(p.length)
        if p.min_chunk_size > 0 and len(groups) > 1:
            weights = sentence_weights(doc, ctx, p.buffer_size, curve.window_embedding)
            groups = _merge_small(doc.text, sents, weights, groups, p.min_chunk_size, length)
        spans: list[Span] = []
        for a, b in groups:
            start, end = sents[a][0], sents[b][1]
            if b == len(sents) - 1:
                reason, meta = END_OF_TEXT, ()
            else:
                reason, meta = _break_reason(curve.points[b], p.breakpoint_mode, p.breakpoint_amount)
            mx = p.max_chunk_size
            if mx and length(doc.text[start:end]) > mx:
                parts = split_range(
                    doc.text, start, end, length, mx, doc_name=doc.name, param="max_chunk_size"
                )
                tail = parts[-1]
                if not tail.reason.startswith(UNBREAKABLE):
                    parts[-1] = Span(tail.start, tail.end, reason, meta)
                spans.extend(parts)
            else:
                spans.append(Span(start, end, reason, meta))
        return spans

    def peer_code(self, p: SemanticParams, kit: PeerKit) -> dict[str, str]:
        return {
            "langchain": _langchain(p, kit),
            "llamaindex": _llamaindex(p, kit),
            "chonkie": _chonkie(p, kit),
        }


def size_cap_cuts(chunks: Sequence[Chunk]) -> list[int]:
    """Where ``max_chunk_size`` cut inside a group of sentences: the ends of the chunks that end
    neither at a breakpoint nor at the text's end (the curve marks them apart from breakpoints)."""
    return [c.end for c in chunks if not c.reason.startswith((SEMANTIC, END_OF_TEXT))]


def semantic_curve(doc: Document, params: dict[str, Any] | None, ctx: Context | None = None) -> SemanticCurve:
    """The distance curve of ``doc`` under ``params`` (validated): what the app plots."""
    from explorer.strategies.context import Context

    p = get_strategy("semantic").parse(params or {})
    return _curve(doc, p, ctx or Context.default())


def _curve(doc: Document, p: SemanticParams, ctx: Context) -> SemanticCurve:
    assert p.breakpoint_amount is not None  # completed
    return distance_curve(doc, ctx, p.breakpoint_mode, p.breakpoint_amount, p.buffer_size, p.window_embedding)


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


def _merge_small(
    text: str,
    sents: tuple[tuple[int, int], ...],
    vecs: np.ndarray,
    groups: list[tuple[int, int]],
    min_size: int,
    length: Length,
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


def _langchain(p: SemanticParams, kit: PeerKit) -> str:
    if p.breakpoint_mode == "threshold":
        return kit.none(
            "langchain", "semantic", "SemanticChunker has no absolute similarity threshold; use percentile"
        )
    return kit.code(
        [
            "# closest: LangChain's SemanticChunker, whose breakpoint rules explorer's `semantic` uses; with",
            "# window_embedding='joined' it finds the same breakpoints, its faster default windows",
            "# agree on most of them (min/max chunk size have no LangChain equivalent)",
            "from langchain_experimental.text_splitter import SemanticChunker",
            "from langchain_huggingface import HuggingFaceEmbeddings",
            "",
            f"embeddings = HuggingFaceEmbeddings(model_name={kit.hub})",
            f"splitter = SemanticChunker(embeddings, buffer_size={p.buffer_size}, "
            f"breakpoint_threshold_type={p.breakpoint_mode!r}, breakpoint_threshold_amount={p.breakpoint_amount!r})",
            kit.read,
            "chunks = splitter.split_text(text)",
        ]
    )


def _llamaindex(p: SemanticParams, kit: PeerKit) -> str:
    if p.breakpoint_mode != "percentile":
        why = f"SemanticSplitterNodeParser only has percentile breakpoints, not {p.breakpoint_mode}"
        return kit.none("llamaindex", "semantic", why)
    return kit.llamaindex(
        [
            "# closest: the same percentile rule over LlamaIndex's own sentence splitting\n"
            "# (min/max chunk size have no LlamaIndex equivalent)"
        ],
        [
            "from llama_index.core.node_parser import SemanticSplitterNodeParser",
            "from llama_index.embeddings.huggingface import HuggingFaceEmbedding",
        ],
        [
            f"embed_model = HuggingFaceEmbedding(model_name={kit.hub})",
            f"parser = SemanticSplitterNodeParser(embed_model=embed_model, buffer_size={p.buffer_size}, "
            f"breakpoint_percentile_threshold={p.breakpoint_amount or 95!r})",
        ],
    )


def _chonkie(p: SemanticParams, kit: PeerKit) -> str:
    if p.breakpoint_mode != "threshold":
        why = f"its SemanticChunker uses an absolute similarity threshold, not {p.breakpoint_mode}"
        return kit.none("chonkie", "semantic", why)
    return kit.chonkie(
        [
            "# closest: Chonkie's SemanticChunker cuts where similarity drops below the threshold",
            "from chonkie import SemanticChunker",
        ],
        [
            f"chunker = SemanticChunker(embedding_model={kit.hub}, threshold={p.breakpoint_amount!r}, "
            f"chunk_size={p.max_chunk_size or 2048}, similarity_window={p.buffer_size})"
        ],
    )
