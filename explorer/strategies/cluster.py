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
A group of punctuation only (the splitter keeps each "." at the start of the piece after it, so a
paragraph's last "." can be a piece alone) joins a neighbouring group where they fit in
``chunk_size`` (then past the ``pieces`` rule's count: a "." is no chunk).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from explorer import limits
from explorer.errors import LimitError, ParamError
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

    def min_chunks(self, doc: Document, p: ClusterParams, ctx: Context | None = None) -> int:
        _check_chars(doc)  # first: it needs no tokenizer
        return super().min_chunks(doc, p, ctx)

    def split(self, doc: Document, p: ClusterParams, ctx: Context) -> list[Span]:
        text = doc.text
        length = ctx.length(p.length)
        _check_text(doc, p, ctx)
        pieces = split_range(
            text, 0, len(text), length, p.piece_size, PIECE_SEPARATORS, doc_name=doc.name, param="piece_size"
        )
        if len(pieces) <= 1:
            return [
                Span(s.start, s.end, END_OF_TEXT if i == len(pieces) - 1 else s.reason)
                for i, s in enumerate(pieces)
            ]
        reach, budget = _reach(text, pieces, p, length)
        _check_pieces(doc, p, reach)
        vecs = ctx.get_embedder().encode([text[s.start : s.end] for s in pieces], progress=ctx.progress)
        starts = np.array([s.start for s in pieces], dtype=np.int64)
        groups = optimal_groups(vecs, starts, starts, None, budget, reach=reach)
        groups = _enforce_size(text, pieces, vecs, groups, p.chunk_size, length)
        groups = _merge_punctuation(text, pieces, groups, p.chunk_size, length)
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


def _check_chars(doc: Document) -> None:
    """Refuse a document over the characters embedded at most (:data:`explorer.limits.MAX_EMBED_CHARS`)."""
    if len(doc.text) > limits.MAX_EMBED_CHARS:
        raise LimitError(
            f"cluster would embed {len(doc.text):,} characters of {doc.name!r}, over the limit of "
            f"{limits.MAX_EMBED_CHARS:,} characters per document (about three minutes of embedding on "
            "2 CPU cores): split the document or use a strategy that does not embed"
        )


def _check_text(doc: Document, p: ClusterParams, ctx: Context) -> None:
    """Refuse, before cutting pieces, a document over :func:`_check_chars` or sure to make more
    pieces than :data:`explorer.limits.MAX_CLUSTER_PIECES` (a lower bound: every word is at
    least one unit)."""
    _check_chars(doc)
    floor = _pieces_floor(doc.text, p.piece_size, ctx.length(p.length))
    if floor > limits.MAX_CLUSTER_PIECES:
        raise LimitError(_too_many_pieces(doc, p, f"at least {floor:,}"))


def _pieces_floor(text: str, size: int, length: Length) -> int:
    """A lower bound on the pieces of at most ``size`` units (0 when it cannot pass the limit):
    a piece holds at most ``size`` non-space characters, or at most ``size`` minus the special
    tokens words (every word is at least one unit of words or tokens)."""
    most = limits.MAX_CLUSTER_PIECES
    if length.name == "chars":
        return -(-sum(map(len, text.split())) // size) if len(text) > most * size else 0
    room = size - length.special
    if room <= 0 or (len(text) // 2 + 1) <= most * room:  # words <= chars / 2 (+1)
        return 0
    return -(-len(text.split()) // room)


def _too_many_pieces(doc: Document, p: ClusterParams, how_many: str) -> str:
    return (
        f"cluster would embed {how_many} pieces of {doc.name!r} (piece_size={p.piece_size} {p.length}), "
        f"over the limit of {limits.MAX_CLUSTER_PIECES:,} pieces per document: use a larger piece_size "
        "or split the document"
    )


def _check_pieces(doc: Document, p: ClusterParams, reach: np.ndarray) -> None:
    """Refuse, before embedding, too many pieces or a grouping that compares too many pairs."""
    n = len(reach)
    if n > limits.MAX_CLUSTER_PIECES:
        raise LimitError(_too_many_pieces(doc, p, f"{n:,}"))
    pairs = int(np.arange(n).sum() - reach.sum())
    if pairs > limits.MAX_CLUSTER_PAIRS:
        raise LimitError(
            f"cluster would compare {pairs:,} pairs of pieces of {doc.name!r} ({n:,} pieces, chunk_size="
            f"{p.chunk_size} over piece_size={p.piece_size}), over the limit of "
            f"{limits.MAX_CLUSTER_PAIRS:,}: use a larger piece_size or a smaller chunk_size"
        )


def _reach(text: str, pieces: list[Span], p: ClusterParams, length: Length) -> tuple[np.ndarray, int]:
    """``group_reach`` under the size rule (see the module docstring), and the budget."""
    starts = np.array([s.start for s in pieces], dtype=np.int64)
    ends = np.array([s.end for s in pieces], dtype=np.int64)
    if p.size_rule == "pieces":
        most = max(1, p.chunk_size // p.piece_size)
        return group_reach(starts, ends, np.ones(len(pieces), dtype=np.int64), most), most
    sizes = None
    if p.length != "chars":
        sizes = np.array([length(text[s.start : s.end]) - length.special for s in pieces], dtype=np.int64)
    budget = p.chunk_size - length.special
    return group_reach(starts, ends, sizes, budget), budget


def group_reach(starts: np.ndarray, ends: np.ndarray, sizes: np.ndarray | None, budget: int) -> np.ndarray:
    """``reach[b]``: the first piece a that can share a group with piece b (pieces a..b fit).

    A group fits if its character span (``sizes is None``) or the sum of its piece sizes is at
    most ``budget``; a single piece always fits.
    """
    n = len(starts)
    if sizes is None:
        reach = np.searchsorted(starts, ends - budget, side="left")
    else:
        cum = np.concatenate(([0], np.cumsum(sizes)))
        reach = np.searchsorted(cum, cum[1:] - budget, side="left")
    return np.minimum(reach, np.arange(n))


def optimal_groups(
    vecs: np.ndarray,
    starts: np.ndarray,
    ends: np.ndarray,
    sizes: np.ndarray | None,
    budget: int,
    *,
    reach: np.ndarray | None = None,
) -> list[tuple[int, int]]:
    """Best contiguous grouping ``[(a, b), ...]`` (pieces a..b-1) under the size budget
    (:func:`group_reach`, or ``reach`` computed by it). Rewards use similarities minus their
    mean over all pairs; the band of pairs is computed row by row (memory O(n · max group),
    time O(pairs in the band), bounded by :data:`explorer.limits.MAX_CLUSTER_PAIRS`).
    """
    n = vecs.shape[0]
    v = vecs.astype(np.float64)
    total = v.sum(axis=0)
    pair_sum = (float(total @ total) - float(np.einsum("ij,ij->", v, v))) / 2
    mean = pair_sum / (n * (n - 1) / 2) if n > 1 else 0.0
    if reach is None:
        reach = group_reach(starts, ends, sizes, budget)
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


def _merge_punctuation(
    text: str, pieces: list[Span], groups: list[tuple[int, int]], size: int, length: Length
) -> list[tuple[int, int]]:
    """A group of punctuation only (the "." that ends a paragraph: the piece splitter keeps each
    "." at the start of the piece after it, so a last one can be a piece of its own) joins the
    group before it, or else the one after, or else takes the last piece of the group before,
    where the result fits in ``size``: a lone "." is no chunk. (So a group can hold more pieces
    than the ``pieces`` rule's count, never more than ``size``.)"""

    def fits(a: int, b: int) -> bool:
        return length(text[pieces[a].start : pieces[b - 1].end]) <= size

    out: list[tuple[int, int]] = []
    pending: int | None = None  # first piece of a fragment that opens the next group
    for k, (a, b) in enumerate(groups):
        if pending is not None:
            a, pending = pending, None
        if not _punctuation_only(text[pieces[a].start : pieces[b - 1].end]):
            out.append((a, b))
        elif out and fits(out[-1][0], b):
            out[-1] = (out[-1][0], b)
        elif k + 1 < len(groups) and fits(a, groups[k + 1][1]):
            pending = a
        elif out and out[-1][1] - out[-1][0] > 1 and fits(a - 1, b):
            out[-1] = (out[-1][0], a - 1)
            out.append((a - 1, b))
        else:
            out.append((a, b))
    return out


def _punctuation_only(s: str) -> bool:
    return all(unicodedata.category(ch).startswith("P") for ch in s if not ch.isspace())
