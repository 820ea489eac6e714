"""Cluster semantic chunking, after the ClusterSemanticChunker of Chroma's chunking report.

The text is cut into small pieces (recursive, ~50 tokens), each piece is embedded, and
contiguous pieces are grouped into chunks of at most ``chunk_size`` so that the total
similarity inside the groups is as large as possible. Dynamic programming finds the best
grouping exactly: ``best[b] = max_a best[a] + reward(a, b)`` over groups ``[a, b)`` that fit.

Reward of a group = sum over its pairs of pieces of (similarity − mean similarity of all
pairs in the document), as in the report: pairs more alike than usual pull pieces together,
pairs less alike push them apart, and a single piece scores 0. The mean is computed without
the n × n matrix, and only the band of pairs that can share a chunk is ever computed, so
memory stays linear.

Two size rules (``size_rule``): ``pieces`` (default) is the report's rule, at most
``chunk_size // piece_size`` pieces per chunk; ``length`` holds each chunk to ``chunk_size`` in
``length`` units measured on the chunk itself, which lets the DP glue more of the pieces that
do not fill their size, and so makes larger chunks. On Chroma's benchmark the report's rule
with the report's units (``length=cl100k``) reproduces its Cluster rows (README), and its
precision and IoU, the best there, need it: the length rule loses about a point of each.
Defaults are the report's: pieces of 50 cl100k tokens cut with Chroma's separators, at most 5
per chunk (on the benchmark no chunk came out over all-MiniLM-L6-v2's 256-token input).
Pieces in the model's own tokens (``length=tokens``) are smaller: higher precision, lower recall.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from explorer.errors import ParamError
from explorer.strategies.base import PeerKit, Strategy, check_token_room
from explorer.strategies.params import CHOICE, CHUNK_SIZE, INT, LENGTH, BelowSize, Param, declare
from explorer.strategies.registry import register
from explorer.strategies.splitting import split_range
from explorer.text.chunk import END_OF_TEXT, SEMANTIC, SIZE_LIMIT, UNBREAKABLE, Span

if TYPE_CHECKING:
    from explorer.documents.document import Document
    from explorer.strategies.context import Context
    from explorer.text.length import Length

#: Separators of the report's piece splitter.
PIECE_SEPARATORS = ("\n\n", "\n", ".", "?", "!", " ", "")


@dataclass(frozen=True)
class ClusterParams:
    chunk_size: int = declare(CHUNK_SIZE.with_default(250))
    piece_size: int = declare(
        Param(
            "piece_size",
            INT,
            50,
            "Size of the pieces that are grouped (in `length` units, <= chunk_size).",
            min=1,
            max=100_000,
            step=5,
            measured=True,
        )
    )
    size_rule: str = declare(
        Param(
            "size_rule",
            CHOICE,
            "pieces",
            "How chunk_size limits a chunk: 'pieces' = at most chunk_size // piece_size pieces (the "
            "rule of Chroma's ClusterSemanticChunker, best precision there); 'length' = its real "
            "length in `length` units (larger chunks).",
            choices=("pieces", "length"),
        )
    )
    length: str = declare(LENGTH.with_default("cl100k"))


@register
class ClusterStrategy(Strategy[ClusterParams]):
    name = "cluster"
    description = (
        "Cuts the text into small pieces (piece_size), embeds them, and groups neighbouring "
        "pieces into chunks of at most chunk_size that maximise within-chunk similarity "
        "(dynamic programming; Chroma's ClusterSemanticChunker)."
    )
    needs_embedder = True
    Params = ClusterParams
    rules = (BelowSize("piece_size", "chunk_size", strict=False, least=1, token_room=True),)

    def check(self, p: ClusterParams) -> None:
        if p.piece_size > p.chunk_size:
            raise ParamError(f"piece_size={p.piece_size} must not exceed chunk_size={p.chunk_size}")
        check_token_room("piece_size", p.piece_size, p.length)

    def size_cap(self, p: ClusterParams) -> int:
        return p.chunk_size

    def split(self, doc: Document, p: ClusterParams, ctx: Context) -> list[Span]:
        text = doc.text
        length = ctx.length(p.length)
        pieces = split_range(
            text, 0, len(text), length, p.piece_size, PIECE_SEPARATORS, doc_name=doc.name, param="piece_size"
        )
        if len(pieces) <= 1:
            return [
                Span(s.start, s.end, END_OF_TEXT if i == len(pieces) - 1 else s.reason)
                for i, s in enumerate(pieces)
            ]
        vecs = ctx.get_embedder().encode([text[s.start : s.end] for s in pieces], progress=ctx.progress)
        groups = _enforce_size(
            text, pieces, vecs, _groups(text, pieces, vecs, p, length), p.chunk_size, length
        )
        sims_next = np.einsum("ij,ij->i", vecs[:-1], vecs[1:])
        spans: list[Span] = []
        for gi, (a, b) in enumerate(groups):  # pieces [a, b)
            start, end = pieces[a].start, pieces[b - 1].end
            if gi == len(groups) - 1:
                reason, meta = END_OF_TEXT, ()
            elif b - a == 1 and pieces[a].reason.startswith(UNBREAKABLE):
                reason, meta = pieces[a].reason, ()
            else:
                s_next = float(sims_next[b - 1])
                meta = (("similarity_next", round(s_next, 6)),)
                if p.size_rule == "pieces":  # the next piece would make one too many
                    full = b - a + 1 > max(1, p.chunk_size // p.piece_size)
                else:
                    full = length(text[start : pieces[b].end]) > p.chunk_size
                if full:
                    reason = f"{SIZE_LIMIT}: the next piece would not fit (similarity {s_next:.3f})"
                else:
                    reason = f"{SEMANTIC}: cluster boundary, similarity to the next piece {s_next:.3f}"
            spans.append(Span(start, end, reason, meta))
        return spans

    def peer_code(self, p: ClusterParams, kit: PeerKit) -> dict[str, str]:
        why = "the original is ClusterSemanticChunker in Chroma's chunking_evaluation package"
        return {**super().peer_code(p, kit), "chonkie": kit.none("chonkie", self.name, why)}


def _groups(
    text: str, pieces: list[Span], vecs: np.ndarray, p: ClusterParams, length: Length
) -> list[tuple[int, int]]:
    """The DP's grouping under the size rule (see the module docstring)."""
    starts = np.array([s.start for s in pieces], dtype=np.int64)
    ends = np.array([s.end for s in pieces], dtype=np.int64)
    if p.size_rule == "pieces":
        most = max(1, p.chunk_size // p.piece_size)
        return optimal_groups(vecs, starts, ends, np.ones(len(pieces), dtype=np.int64), most)
    sizes = None
    if p.length != "chars":
        sizes = np.array([length(text[s.start : s.end]) - length.special for s in pieces], dtype=np.int64)
    return optimal_groups(vecs, starts, ends, sizes, p.chunk_size - length.special)


def optimal_groups(
    vecs: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    sizes: np.ndarray | None,
    budget: int,
) -> list[tuple[int, int]]:
    """Best contiguous grouping ``[(a, b), ...]`` (pieces a..b-1) under the size budget.

    A group fits if its character span (``sizes is None``) or the sum of its piece sizes is at
    most ``budget``; a single piece always fits. Rewards use similarities minus their mean over
    all pairs; the band of pairs is computed row by row (memory O(n · max group)).
    """
    n = vecs.shape[0]
    v = vecs.astype(np.float64)
    total = v.sum(axis=0)
    pair_sum = (float(total @ total) - float(np.einsum("ij,ij->", v, v))) / 2
    mean = pair_sum / (n * (n - 1) / 2) if n > 1 else 0.0
    # reach[b] = smallest a such that pieces a..b fit together
    if sizes is None:
        reach = np.searchsorted(starts, ends - budget, side="left")
    else:
        cum = np.concatenate(([0], np.cumsum(sizes)))
        reach = np.searchsorted(cum, cum[1:] - budget, side="left")
    reach = np.minimum(reach, np.arange(n))
    best = np.full(n + 1, -np.inf)
    best[0] = 0.0
    choice = np.zeros(n + 1, dtype=np.int64)
    # row[a] holds sum_{j=a+1..b} (sim(a, j) - mean) for the current b
    row = np.zeros(n, dtype=np.float64)
    for b in range(n):
        a0 = int(reach[b])
        if b > a0:
            row[a0:b] += v[a0:b] @ v[b] - mean
        # reward(a, b) = sum_{i=a..b} row[i] (row[b] = 0)
        rewards = np.cumsum(row[a0 : b + 1][::-1])[::-1]
        cand = best[a0 : b + 1] + rewards
        k = int(np.argmax(cand))
        best[b + 1] = cand[k]
        choice[b + 1] = a0 + k
    groups = []
    b = n
    while b > 0:
        a = int(choice[b])
        groups.append((a, b))
        b = a
    groups.reverse()
    return groups


def _enforce_size(
    text: str, pieces: list[Span], vecs: np.ndarray, groups: list[tuple[int, int]], size: int, length: Length
) -> list[tuple[int, int]]:
    """Token counts are not exactly additive: re-measure each group and split any that is
    over ``size`` at its least similar adjacent pair until it fits."""
    out: list[tuple[int, int]] = []
    todo = list(reversed(groups))
    while todo:
        a, b = todo.pop()
        if b - a > 1 and length(text[pieces[a].start : pieces[b - 1].end]) > size:
            sims = np.einsum("ij,ij->i", vecs[a : b - 1], vecs[a + 1 : b])
            cut = a + 1 + int(np.argmin(sims))
            todo.extend([(cut, b), (a, cut)])
            continue
        out.append((a, b))
    return out
