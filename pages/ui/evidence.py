"""What a hit card and a scored search say of the two rankings behind them: a fused hit's place
in the dense and the BM25 ranking, and the expected answer's (core: explorer.retrieval.ranking)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from explorer.retrieval.hubs import HUB_NEIGHBOURS, HUB_WEIGHT_SHOWN
from explorer.retrieval.ranking import HYBRID_CANDIDATES, HYBRID_FIRST_SLOTS, Evidence, answer_places
from explorer.text.wording import plural


def answer_note(idx: Any, question: str, ref: tuple[str, int, int], dense: bool = True) -> str:
    """The scored caption's tail, " · the answer's chunk: dense #7 · BM25 #23": where the
    rankings this search built place the best chunk that overlaps the expected answer
    (explorer.retrieval.ranking.answer_places), each chunk named when the two rankings' best are
    two chunks that share the answer ("dense #2 (chunk 23) · BM25 #4 (chunk 22)"). Without
    ``dense`` (BM25 results, or keyword stand-ins), the question is not embedded for it."""
    if not question:
        return ""
    qv = idx.ctx.get_embedder().encode_queries([question])[0] if dense and idx.has_vectors else None
    places = answer_places(idx, question, ref, qv)
    if places is None:
        return ""
    ranked = [(name, rank, row) for name, rank, row in (
        ("dense", places.dense_rank, places.dense_chunk), ("BM25", places.bm25_rank, places.bm25_chunk)
    ) if rank]
    two = len({row for _, _, row in ranked}) > 1  # the answer in an overlap: one chunk per ranking
    parts = [f"{name} #{rank}" + (f" (chunk {idx.chunks[row].index})" if two else "") for name, rank, row in ranked]
    if idx.has_lexical and places.bm25_rank is None:
        parts.append("BM25: no question word")
    head = "the answer's chunks" if two else "the answer's chunk"
    return f" · {head}: {' · '.join(parts)}" if parts else ""


#: What a card's "hub" is, in its help: the line itself stays one line in a narrow card.
HUB_HELP = (
    f"**hub**: the chunk's mean cosine to its {HUB_NEIGHBOURS} nearest chunks. Hybrid takes "
    f"{HUB_WEIGHT_SHOWN} of it off the chunk's cosine, so a chunk close to everything (a list of links, "
    "a table of contents) does not crowd the answers out."
)


def evidence_line(ev: Evidence, dense_name: str = "cosine") -> str:
    """A fused hit's place in each ranking, as its card says it: "dense #2 · cosine 0.874 · BM25
    #1 · 7.31" (no place: below the candidates fused, or no question word for BM25); BM25's first hit,
    moved up by hybrid, says so, since its fused score is below the next one's; hybrid's hub
    penalty is shown ("cosine 0.874 − ½ × hub 0.512", :data:`HUB_HELP`). ``dense_name``: what the
    dense score is ("dense score" where pieces mix it)."""
    dense = f"dense #{ev.dense_rank}" if ev.dense_rank else f"dense below #{HYBRID_CANDIDATES}"
    if ev.bm25_rank:
        bm25 = f"BM25 #{ev.bm25_rank} · {ev.bm25:.2f}"
    else:
        bm25 = "BM25: no question word" if ev.bm25 <= 0 else f"BM25 below #{HYBRID_CANDIDATES} · {ev.bm25:.2f}"
    hub = (
        ""
        if ev.neighbours is None
        else f" − {HUB_WEIGHT_SHOWN} × hub {ev.neighbours:.3f}"  # said once in the card's help (HUB_HELP)
    )
    line = f"{dense} · {dense_name} {ev.cosine:.3f}{hub} · {bm25}"
    return f"{line} · kept in the first {HYBRID_FIRST_SLOTS} as BM25's first hit" if ev.raised else line


def best_pieces(idx: Any, question: str, hits: Sequence[Any]) -> dict[int, tuple[str, tuple[int, int] | None]]:
    """Per hit rank, the card's line on its best piece and how its dense score was made, and the
    piece's offsets (tinted in the text), when the index scores chunks with pieces
    (explorer.retrieval.pieces)."""
    if not question or not getattr(idx, "has_vectors", False) or not idx.options.piece_chars:
        return {}
    pieces = idx.pieces
    qv = idx.ctx.get_embedder().encode_queries([question])[0]
    out = {}
    for h in hits:
        row = idx.positions[(h.chunk.doc_id, h.chunk.start)]
        best = pieces.best_piece(qv, row)
        own = float(idx.vectors[row] @ qv)
        if best is None:
            out[h.rank] = (f"no piece inside · cosine {own:.3f}", None)
        else:
            where = _outside(best.start, best.end, h.chunk.start, h.chunk.end)
            line = f"best piece {best.start:,}–{best.end:,} (tinted{where}) · cosine {best.cosine:.3f} (the chunk's own {own:.3f})"
            out[h.rank] = (line, (best.start, best.end))
    return out


def _outside(start: int, end: int, c_start: int, c_end: int) -> str:
    """How much of a piece lies outside its chunk: pieces are cut once per document, and a chunk
    holds those at least half inside it, so one may run past either end (said, not hidden)."""
    parts = [f"{plural(c_start - start, 'character')} before the chunk's start"] if start < c_start else []
    parts += [f"{plural(end - c_end, 'character')} past the chunk's end"] if end > c_end else []
    return f" where inside the chunk; {' and '.join(parts)}" if parts else ""
