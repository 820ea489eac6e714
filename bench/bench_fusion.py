"""Hybrid retrieval against the alternatives tried for issue 10, on every question set here.

Questions hit in the top 5 (a retrieved chunk overlaps an answer) by the app's own hybrid
(``retrieve``) and by three alternatives computed from the same cosines and BM25 scores:

- ``min-max (again)``: the app's fusion re-computed here, a check that the others start from it;
- ``no hub penalty``: the same without taking half of each chunk's mean cosine to its 10 nearest
  chunks off its cosine (:mod:`explorer.retrieval.hubs`; the app's hybrid before 2026-12-06);
- ``z-scores, BM25 0.4``: each score standardised over every chunk, weights 0.6 / 0.4;
- ``pieces 300``: the app's hybrid and dense with ``piece_chars=300`` (each chunk's cosine
  averaged with the best cosine of the ~300-character pieces of its document that lie at least
  half inside it, :mod:`explorer.retrieval.pieces`), and the same mix re-computed here from the
  pieces' own vectors (a check of the app's).

Sets: the French set and the second French set (``bench/data/french*``), Chroma's 472 questions
(``../shared/benchmarks/chroma``, skipped when absent), Vim's tutorial in German, Spanish,
Japanese and Chinese; ``recursive`` at 1000/200 (the app's default) and 500/0. Why a script: a
change of fusion is judged on all of them at once, not on the set it was tuned on.

    cd bench && ../.venv/bin/python bench_fusion.py --model multilingual-e5-small --backend onnx
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from common import CHROMA, ROOT, table

from explorer.documents.document import Document
from explorer.documents.loaders import load_path
from explorer.embedding.embedder import get_embedder
from explorer.evaluation.questions import Question, load_questions
from explorer.retrieval.hubs import HUB_WEIGHT
from explorer.retrieval.pieces import PIECE_WEIGHT, SUGGESTED_PIECE_CHARS
from explorer.retrieval.ranking import HYBRID_BM25_WEIGHT, HYBRID_CANDIDATES, HYBRID_FIRST_SLOTS, retrieve
from explorer.retrieval.search import StrategyIndex, build_index
from explorer.retrieval.vectors import EmbedOptions
from explorer.strategies.config import StrategyConfig
from explorer.strategies.context import Context

K = 5
CONFIGS = ((1000, 200), (500, 0))
PIECE_CHARS = SUGGESTED_PIECE_CHARS


@dataclass(frozen=True)
class QuestionSet:
    name: str
    docs: list[Document]
    questions: list[Question]


def question_sets() -> list[QuestionSet]:
    """Every set with its documents, in a fixed order."""
    data = ROOT / "bench" / "data"
    out = []
    for name in ("french", "french-dev"):
        docs = [load_path(p) for p in sorted((data / name).glob("*.txt"))]
        out.append(QuestionSet(name, docs, load_questions(data / name / "questions.jsonl", docs)))
    if (CHROMA / "questions_df.csv").exists():
        docs = [load_path(p) for p in sorted((CHROMA / "corpora").glob("*.md"))]
        out.append(QuestionSet("chroma", docs, load_questions(CHROMA / "questions_df.csv", docs)))
    for folder, lang in (("european", "de"), ("european", "es"), ("cjk", "ja"), ("cjk", "zh")):
        docs = [load_path(data / folder / f"vim-tutor-{lang}.txt")]
        out.append(
            QuestionSet(f"vim-{lang}", docs, load_questions(data / folder / f"questions-{lang}.jsonl", docs))
        )
    return out


@dataclass(frozen=True)
class Scores:
    """Per question, over every chunk of one index: cosines, BM25 scores, answer overlap."""

    cosines: np.ndarray
    bm25: np.ndarray
    answers: np.ndarray
    #: per chunk, its mean cosine to its nearest chunks (what hybrid takes HUB_WEIGHT of off)
    hubs: np.ndarray


def scores_of(index: StrategyIndex, qset: QuestionSet, query_vectors: np.ndarray) -> Scores:
    chunks = index.chunks
    answers = np.array(
        [
            [any(c.doc_id == d and c.start < e and s < c.end for d, s, e in q.references) for c in chunks]
            for q in qset.questions
        ]
    )
    bm25 = np.stack([index.lexical.scores(q.text) for q in qset.questions])
    return Scores(query_vectors @ index.vectors.T, bm25, answers, index.hubs(np.arange(len(chunks))))


def piece_maxima(index: StrategyIndex, query_vectors: np.ndarray) -> np.ndarray:
    """Per question and chunk, the best cosine of the pieces the chunk holds (its own cosine
    where it holds none), from the app's pieces but without its mixing code."""
    pieces = index.pieces
    cos = query_vectors @ pieces.vectors.T
    out = query_vectors @ index.vectors.T
    for i, (lo, hi) in enumerate(zip(pieces.layout.lo.tolist(), pieces.layout.hi.tolist(), strict=True)):
        if hi > lo:
            out[:, i] = cos[:, lo:hi].max(axis=1)
    return out


def _min_max(x: np.ndarray) -> np.ndarray:
    span = np.ptp(x)
    return (x - x.min()) / span if span > 0 else np.zeros_like(x)


def _standard(x: np.ndarray) -> np.ndarray:
    sd = x.std()
    return (x - x.mean()) / sd if sd > 0 else np.zeros_like(x)


def fused_top(
    cosines: np.ndarray,
    bm25: np.ndarray,
    hubs: np.ndarray,
    standard: bool = False,
    weight: float = HYBRID_BM25_WEIGHT,
    hub_weight: float = HUB_WEIGHT,
) -> list[int]:
    """The app's hybrid on one question's scores (candidates, hub penalty, fusion, BM25's first
    hit kept in the first five); ``standard``: standard scores over every chunk instead of
    min-max over the candidates."""
    fetch = min(len(cosines), HYBRID_CANDIDATES)
    lexical = [int(i) for i in np.argsort(-bm25, kind="stable")[:fetch] if bm25[i] > 0]
    rows = np.array(sorted(set(np.argsort(-cosines, kind="stable")[:fetch].tolist()) | set(lexical)))
    dense = cosines - hub_weight * hubs
    if standard:
        fused = ((1 - weight) * _standard(dense) + weight * _standard(bm25))[rows]
    else:
        fused = (1 - weight) * _min_max(dense[rows]) + weight * _min_max(bm25[rows])
    order = rows[np.argsort(-fused, kind="stable")].tolist()
    if lexical and order.index(lexical[0]) >= HYBRID_FIRST_SLOTS:
        order.insert(HYBRID_FIRST_SLOTS - 1, order.pop(order.index(lexical[0])))
    return order[:K]


def hits(scores: Scores, top: Callable[[int], list[int]]) -> int:
    return sum(bool(scores.answers[q, top(q)].any()) for q in range(len(scores.answers)))


def run_setting(
    qset: QuestionSet, size: int, overlap: int, ctx: Context, vectors: np.ndarray
) -> dict[str, int]:
    config = StrategyConfig.make("recursive", {"chunk_size": size, "chunk_overlap": overlap})
    index = build_index(qset.docs, config, ctx)
    with_pieces = build_index(qset.docs, config, ctx, EmbedOptions(piece_chars=PIECE_CHARS))
    s = scores_of(index, qset, vectors)
    texts = [q.text for q in qset.questions]
    position = index.positions

    def app(idx: StrategyIndex, retriever: str) -> int:
        found = retrieve(idx, texts, K, retriever, query_vectors=vectors)
        return hits(s, lambda q: [position[(h.chunk.doc_id, h.chunk.start)] for h in found[q]])

    mixed = (1 - PIECE_WEIGHT) * s.cosines + PIECE_WEIGHT * piece_maxima(with_pieces, vectors)
    return {
        "app's hybrid": app(index, "hybrid"),
        "min-max (again)": hits(s, lambda q: fused_top(s.cosines[q], s.bm25[q], s.hubs)),
        "no hub penalty": hits(s, lambda q: fused_top(s.cosines[q], s.bm25[q], s.hubs, hub_weight=0)),
        "z-scores, BM25 0.4": hits(
            s, lambda q: fused_top(s.cosines[q], s.bm25[q], s.hubs, standard=True, weight=0.4)
        ),
        f"app's hybrid, pieces {PIECE_CHARS}": app(with_pieces, "hybrid"),
        f"pieces {PIECE_CHARS} (again)": hits(s, lambda q: fused_top(mixed[q], s.bm25[q], s.hubs)),
        "app's dense": app(index, "dense"),
        f"app's dense, pieces {PIECE_CHARS}": app(with_pieces, "dense"),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="multilingual-e5-small")
    ap.add_argument("--backend", default="auto")
    args = ap.parse_args()
    embedder = get_embedder(args.model, backend=args.backend)
    ctx = Context(model=embedder.name, embedder=embedder)
    columns, results = [], []
    for qset in question_sets():
        vectors = embedder.encode_queries([q.text for q in qset.questions])
        for size, overlap in CONFIGS:
            columns.append(f"{qset.name} {size}/{overlap} (of {len(qset.questions)})")
            results.append(run_setting(qset, size, overlap, ctx, vectors))
            print(f"{columns[-1]}: {results[-1]}", flush=True)
    print(
        f"\n{args.model} ({embedder.backend}), questions hit in the top {K}; last column: net against the app"
    )
    rows = []
    for variant in results[0]:
        got = [r[variant] for r in results]
        net = sum(got) - sum(r["app's hybrid"] for r in results)
        rows.append([variant, *got, f"{net:+d}"])
    print(table(["variant", *columns, "net"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
