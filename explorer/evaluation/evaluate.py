"""Score strategies against gold answers: pooled retrieval per strategy, and sweeps of one
parameter.

All chunks of all documents go into one index per strategy (as in Chroma's report), every
question retrieves its top k from that pooled index (dense, BM25 or hybrid: see
:data:`explorer.retrieval.ranking.RETRIEVERS`), and the hits are scored in characters against
the gold spans with :mod:`explorer.evaluation.retrieval_metrics`. Questions come from
:mod:`explorer.evaluation.questions`.

``mode="preview"`` pools chunk vectors from each document's token vectors, read once by the
model (:mod:`explorer.embedding.late`): every configuration after the first, and every sweep
step, costs no model call. Approximate: refused for a model whose measured gap to exact
embedding is over the registry's limit unless forced; results carry ``mode``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from explorer.documents.document import Document
from explorer.errors import ParamError
from explorer.evaluation.cost import Cost, cost_of
from explorer.evaluation.intervals import ChunkSpans
from explorer.evaluation.questions import Question, check_questions
from explorer.evaluation.retrieval_metrics import (
    METRIC_NAMES,
    RetrievalSummary,
    precision_omega,
    retrieval_scores,
)
from explorer.evaluation.sweep_plan import sweep_steps
from explorer.retrieval.ranking import DEFAULT_RETRIEVER, Hit, check_retriever, ranked_hits, retrieve
from explorer.retrieval.search import StrategyIndex, build_index
from explorer.retrieval.vectors import EmbedOptions, check_mode, check_preview_mode, preview_vectors
from explorer.strategies.config import StrategyConfig
from explorer.strategies.context import Context
from explorer.text.wording import plural

Progress = Callable[[int, int], Any]


# ---------------------------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class StrategyResult:
    """One strategy's scores over all questions (fractions), plus its chunk sizes."""

    config: StrategyConfig
    k: int
    scores: RetrievalSummary
    chunk_count: int
    mean_chars: float
    mean_tokens: float
    seconds: float
    retriever: str = DEFAULT_RETRIEVER
    #: "exact", or "preview" (approximate: pooled from one-pass token vectors).
    mode: str = "exact"
    #: Vectors, index size, embedding time and LLM tokens at top k (:mod:`.cost`).
    cost: Cost | None = None

    @property
    def name(self) -> str:
        return self.config.display

    def to_dict(self, per_question: bool = False) -> dict[str, Any]:
        d: dict[str, Any] = {
            "strategy": self.name,
            "config": self.config.to_dict(),
            "k": self.k,
            "retriever": self.retriever,
            "mode": self.mode,
            "questions": len(self.scores.questions),
        }
        for m in METRIC_NAMES:
            st = getattr(self.scores, m)
            d[m] = _num(st.mean)
            d[f"{m}_std"] = _num(st.std)
        d.update(
            chunks=self.chunk_count,
            mean_chars=round(self.mean_chars, 1),
            mean_tokens=round(self.mean_tokens, 1),
            seconds=round(self.seconds, 2),
        )
        if self.cost is not None:
            d["cost"] = self.cost.to_dict()
        if per_question:
            d["per_question"] = [
                {
                    "recall": _num(q.recall),
                    "precision": _num(q.precision),
                    "iou": _num(q.iou),
                    "precision_omega": _num(o),
                    "hit": _num(q.hit),
                    "rr": _num(q.rr),
                }
                for q, o in zip(self.scores.questions, self.scores.omegas, strict=True)
            ]
        return d


def _num(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 6)


def evaluate(
    docs: Sequence[Document],
    configs: Sequence[StrategyConfig],
    questions: Sequence[Question],
    k: int = 5,
    ctx: Context | None = None,
    options: Any = None,
    progress: Progress | None = None,
    on_step: Callable[[str], Any] | None = None,
    retriever: str = DEFAULT_RETRIEVER,
    mode: str = "exact",
    force_preview: bool = False,
) -> list[StrategyResult]:
    """Score every config on ``questions``: one pooled index per config over all ``docs``.

    ``retriever`` ranks the chunks (dense, bm25 or hybrid; bm25 embeds nothing).
    ``mode="preview"`` pools the chunk vectors from one-pass token vectors (approximate; see
    :func:`explorer.retrieval.search.build_index`; ``force_preview`` runs it for a model outside the
    measured gap); questions are embedded exactly either way.
    ``progress(done, total)`` follows the embedding of chunks; ``on_step(label)`` is told which
    step starts (for a progress line or bar).
    """
    ctx, options, preview = _checked(
        docs, configs, questions, k, ctx, options, retriever, mode, force_preview
    )
    texts = [q.text for q in questions]
    qvecs = None
    if retriever != "bm25":  # BM25 alone never builds the model (its first build takes a minute)
        if on_step:
            on_step(f"embedding {plural(len(questions), 'question')}")
        qvecs = ctx.get_embedder().encode_queries(texts, progress=progress)
    prebuilt = _preview_indexes(docs, configs, ctx, options, progress, on_step) if preview else []
    results = []
    for n_config, config in enumerate(configs):
        t0 = time.perf_counter()
        if on_step:
            on_step(config.display)
        if prebuilt:
            index, shared_s = prebuilt[n_config]
            t0 -= shared_s
        else:
            index = build_index(docs, config, ctx, options, progress, retriever=retriever, mode=mode)
        hits = (
            ranked_hits(index, qvecs, k)
            if retriever == "dense"
            else retrieve(index, texts, k, retriever, qvecs)
        )
        results.append(_result(config, index, questions, hits, ctx.count_tokens, k, retriever, mode, t0))
    return results


def _checked(
    docs: Sequence[Document],
    configs: Sequence[StrategyConfig],
    questions: Sequence[Question],
    k: int,
    ctx: Context | None,
    options: Any,
    retriever: str,
    mode: str,
    force_preview: bool,
) -> tuple[Context, Any, bool]:
    """Every argument of :func:`evaluate` checked (ParamError, or ModelError from the preview
    gate); the context and options to use, and whether vectors are pooled in preview mode."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ParamError(f"k={k!r} must be a whole number of at least 1")
    if not configs:
        raise ParamError("no strategy to evaluate")
    check_retriever(retriever)
    check_mode(mode)
    check_questions(questions, docs)
    ctx = ctx or Context.default()
    options = options if options is not None else EmbedOptions()
    preview = mode == "preview" and retriever != "bm25"
    if preview:
        check_preview_mode(ctx, options, force_preview)
    return ctx, options, preview


def _preview_indexes(
    docs: Sequence[Document],
    configs: Sequence[StrategyConfig],
    ctx: Context,
    options: Any,
    progress: Progress | None,
    on_step: Callable[[str], Any] | None,
) -> list[tuple[StrategyIndex, float]]:
    """Chunk every config, then read each document once and pool every config's chunks: the
    indexes, each with its share of the time taken."""
    t0 = time.perf_counter()
    built = [build_index(docs, c, ctx, options, retriever="bm25", mode="preview") for c in configs]
    if on_step:
        on_step(f"reading {len(docs)} document(s) once (preview: approximate vectors)")
    vectors = preview_vectors(ctx, docs, [b.chunks for b in built], options, progress)
    share = (time.perf_counter() - t0) / len(configs)
    prebuilt = []
    for b, v in zip(built, vectors, strict=True):
        b.set_vectors(v)
        b.embed_seconds = share  # the documents were read once for every configuration
        prebuilt.append((b, share))
    return prebuilt


def _result(
    config: StrategyConfig,
    index: StrategyIndex,
    questions: Sequence[Question],
    hits: Sequence[Sequence[Hit]],
    count_tokens: Callable[[list[str]], list[int]],
    k: int,
    retriever: str,
    mode: str,
    t0: float,
) -> StrategyResult:
    """Score the hits of every question against its gold spans (time counted from ``t0``)."""
    spans = ChunkSpans.of_chunks(index.chunks)
    scores = []
    omegas = []
    for q, qhits in zip(questions, hits, strict=True):
        retrieved = [(h.chunk.doc_id, h.chunk.start, h.chunk.end) for h in qhits]
        scores.append(retrieval_scores(q.references, retrieved))
        omegas.append(precision_omega(q.references, spans))
    n = len(index.chunks)
    tokens = count_tokens([c.text for c in index.chunks]) if n else []
    return StrategyResult(
        config=config,
        k=k,
        scores=RetrievalSummary.of(scores, omegas),
        chunk_count=n,
        mean_chars=sum(c.chars for c in index.chunks) / n if n else 0.0,
        mean_tokens=sum(tokens) / n if n else 0.0,
        seconds=time.perf_counter() - t0,
        retriever=retriever,
        mode=mode,
        cost=cost_of(index, hits, k, retriever=retriever),
    )


# ---------------------------------------------------------------------------------------------
# Sweeps
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SweepRow:
    """One value of the swept parameter: its result, or why that value could not run."""

    param: str
    value: Any
    result: StrategyResult | None
    error: str = ""
    #: what else this value changed (a size below the overlap lowers the overlap), as notes
    adjusted: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"param": self.param, "value": self.value}
        if self.result is not None:
            d.update(self.result.to_dict())
        else:
            d["error"] = self.error
        if self.adjusted:
            d["adjusted"] = list(self.adjusted)
        return d


def sweep(
    docs: Sequence[Document],
    base: StrategyConfig,
    param: str,
    values: Sequence[Any],
    questions: Sequence[Question],
    k: int = 5,
    ctx: Context | None = None,
    options: Any = None,
    progress: Progress | None = None,
    on_step: Callable[[str], Any] | None = None,
    retriever: str = DEFAULT_RETRIEVER,
    mode: str = "exact",
    force_preview: bool = False,
    user_set: Collection[str] | None = None,
) -> list[SweepRow]:
    """:func:`evaluate` ``base`` with ``param`` set to each of ``values`` (each ranked with
    ``retriever``; ``mode`` and ``force_preview`` as in :func:`evaluate`: in preview mode each
    document is read by the model once for the whole sweep).

    ``user_set`` names the parameters the user set (None: all of ``base``'s): the others follow
    each value as in :meth:`Strategy.adapt` (a size swept below the default overlap lowers the
    overlap). A value out of the parameter's bounds, or one that still makes an invalid
    combination (e.g. below an overlap the user set), gives a row with the error instead of
    stopping the whole sweep (:func:`explorer.evaluation.sweep_plan.sweep_steps`).
    """
    check_retriever(retriever)
    steps = sweep_steps(base, param, values, user_set)
    configs = [s.config for s in steps if s.config is not None]
    results = iter(
        evaluate(docs, configs, questions, k, ctx, options, progress, on_step, retriever, mode, force_preview)
        if configs
        else []
    )
    return [
        SweepRow(param, s.value, next(results) if s.config is not None else None, s.error, s.adjusted) for s in steps
    ]
