"""Retrieval metrics against gold spans, with the definitions of Chroma's report *Evaluating
Chunking Strategies for Retrieval* (see ``../shared/benchmarks/chroma/README.md``): recall,
precision, IoU and precision_Ω, plus hit rate and MRR, all counted in characters.

Why apart from the structural metrics: these score a ranking against questions; the evaluation
runs (:mod:`explorer.evaluation.evaluate`) and the app's retrieval page use them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from explorer.evaluation.intervals import ChunkSpans, Ref, by_doc, intersect, merge, subtract, total
from explorer.evaluation.stats import Stat


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
    e_by_doc = {d: merge(ivs) for d, ivs in by_doc(references).items()}
    r_by_doc = {d: merge(ivs) for d, ivs in by_doc(r for r in retrieved if r[0] in e_by_doc).items()}
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


def precision_omega(references: Sequence[Ref], chunks: ChunkSpans) -> float:
    """Chroma's precision_Ω of one question: the best precision any retrieval could reach with
    these chunks. C = every chunk touching an excerpt: |(∪C) ∩ (∪E)| / |(∪C) ∪ (∪E \\ ∪C)|.

    "Touching" includes a chunk that ends exactly where an excerpt starts (or starts where it
    ends), as the report's code counts an empty intersection ``(s, s)`` as one. On the report's
    Recursive 250/0 row this gives its 26.7 %; counting only chunks that share a character
    gives 27.5 %.
    """
    e_by_doc = {d: merge(ivs) for d, ivs in by_doc(references).items()}
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
