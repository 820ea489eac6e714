"""Hybrid retrieval against the alternatives tried for issue 10, on every question set here.

Questions hit in the top 5 (a retrieved chunk overlaps an answer) by the app's own hybrid
(``retrieve``) and by three alternatives computed from the same cosines and BM25 scores:

- ``min-max (again)``: the app's fusion re-computed here, a check that the others start from it;
- ``z-scores, BM25 0.4``: each score standardised over every chunk, weights 0.6 / 0.4;
- ``pieces 300``: each chunk's cosine averaged with the best cosine of the ~300-character pieces
  of its document that lie mostly inside it (pieces cut once per document, embedded once), then
  fused as the app does.

Sets: the French set and the second French set (``bench/data/french*``), Chroma's 472 questions
(``../shared/benchmarks/chroma``, skipped when absent), Vim's tutorial in German, Spanish,
Japanese and Chinese; ``recursive`` at 1000/200 (the app's default) and 500/0. Why a script: a
change of fusion is judged on all of them at once, not on the set it was tuned on.

    .venv/bin/python bench/bench_fusion.py --model multilingual-e5-small --backend onnx
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
from explorer.retrieval.ranking import HYBRID_BM25_WEIGHT, HYBRID_CANDIDATES, HYBRID_FIRST_SLOTS, retrieve
from explorer.retrieval.search import StrategyIndex, build_index
from explorer.strategies.config import StrategyConfig
from explorer.strategies.context import Context

K = 5
CONFIGS = ((1000, 200), (500, 0))
PIECE_CHARS = 300


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


def piece_spans(text: str, size: int = PIECE_CHARS) -> list[tuple[int, int]]:
    """Consecutive pieces of about ``size`` characters, cut at a blank line, else a line end,
    else a space, in the last two thirds of the window; pieces of only whitespace are skipped."""
    out, start, n = [], 0, len(text)
    while start < n:
        end = min(n, start + size)
        if end < n:
            window = text[start:end]
            cuts = (window.rfind(sep) for sep in ("\n\n", "\n", " "))
            cut = next((c for c in cuts if c > size // 3), -1)
            end = start + cut + 1 if cut > 0 else end
        if text[start:end].strip():
            out.append((start, end))
        start = end
    return out


@dataclass(frozen=True)
class Scores:
    """Per question, over every chunk of one index: cosines, BM25 scores, answer overlap."""

    cosines: np.ndarray
    bm25: np.ndarray
    answers: np.ndarray


def scores_of(index: StrategyIndex, qset: QuestionSet, query_vectors: np.ndarray) -> Scores:
    chunks = index.chunks
    answers = np.array(
        [
            [any(c.doc_id == d and c.start < e and s < c.end for d, s, e in q.references) for c in chunks]
            for q in qset.questions
        ]
    )
    bm25 = np.stack([index.lexical.scores(q.text) for q in qset.questions])
    return Scores(query_vectors @ index.vectors.T, bm25, answers)


def piece_maxima(
    index: StrategyIndex, docs: list[Document], ctx: Context, query_vectors: np.ndarray
) -> np.ndarray:
    """Per question and chunk, the best cosine of the document's pieces that lie at least half
    inside the chunk (the chunk's own cosine where none does)."""
    doc_of, starts, ends, texts = [], [], [], []
    for d in docs:
        for s, e in piece_spans(d.text):
            doc_of.append(d.id), starts.append(s), ends.append(e), texts.append(d.text[s:e])
    cos = query_vectors @ ctx.get_embedder().encode(texts).T
    doc_of, starts, ends = np.array(doc_of), np.array(starts), np.array(ends)
    out = query_vectors @ index.vectors.T
    for i, c in enumerate(index.chunks):
        inside = (doc_of == c.doc_id) & (
            (np.minimum(ends, c.end) - np.maximum(starts, c.start)) * 2 >= ends - starts
        )
        if inside.any():
            out[:, i] = cos[:, inside].max(axis=1)
    return out


def _min_max(x: np.ndarray) -> np.ndarray:
    span = np.ptp(x)
    return (x - x.min()) / span if span > 0 else np.zeros_like(x)


def _standard(x: np.ndarray) -> np.ndarray:
    sd = x.std()
    return (x - x.mean()) / sd if sd > 0 else np.zeros_like(x)


def fused_top(
    cosines: np.ndarray, bm25: np.ndarray, standard: bool = False, weight: float = HYBRID_BM25_WEIGHT
) -> list[int]:
    """The app's hybrid on one question's scores (candidates, fusion, BM25's first hit kept in
    the first five); ``standard``: standard scores over every chunk instead of min-max over the
    candidates."""
    fetch = min(len(cosines), HYBRID_CANDIDATES)
    lexical = [int(i) for i in np.argsort(-bm25, kind="stable")[:fetch] if bm25[i] > 0]
    rows = np.array(sorted(set(np.argsort(-cosines, kind="stable")[:fetch].tolist()) | set(lexical)))
    if standard:
        fused = ((1 - weight) * _standard(cosines) + weight * _standard(bm25))[rows]
    else:
        fused = (1 - weight) * _min_max(cosines[rows]) + weight * _min_max(bm25[rows])
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
    s = scores_of(index, qset, vectors)
    app = retrieve(index, [q.text for q in qset.questions], K, "hybrid", query_vectors=vectors)
    position = {(c.doc_id, c.start): i for i, c in enumerate(index.chunks)}
    pieces = piece_maxima(index, qset.docs, ctx, vectors)
    mixed = (s.cosines + pieces) / 2
    return {
        "app's hybrid": hits(s, lambda q: [position[(h.chunk.doc_id, h.chunk.start)] for h in app[q]]),
        "min-max (again)": hits(s, lambda q: fused_top(s.cosines[q], s.bm25[q])),
        "z-scores, BM25 0.4": hits(
            s, lambda q: fused_top(s.cosines[q], s.bm25[q], standard=True, weight=0.4)
        ),
        f"pieces {PIECE_CHARS}": hits(s, lambda q: fused_top(mixed[q], s.bm25[q])),
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
