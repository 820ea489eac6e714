"""The corpus run: stream every document through an engine, keep what the index needs, write a
line per finished document, resume from those lines, and score every configuration at the end.

Why a module of its own: the order of things is what makes a run resumable and exact. Documents
are added to the indexes in corpus order (the tie rule of the rankings depends on it), whether
they come from the engine or, finished by an earlier run, from the chunk cache; a document
counts as finished only once its cache file and its line are written. A finished document is
done again only if its file changed (size or modification time) or its cache file is gone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from explorer.errors import LoadError, ParamError
from explorer.evaluation.corpus.index import CorpusIndex, score
from explorer.evaluation.corpus.sources import Source
from explorer.evaluation.corpus.store import ChunkCache, ResultsFile, document_line, run_key
from explorer.evaluation.corpus.work import DocWork, WorkSpec, local_documents, query_vectors
from explorer.evaluation.evaluate import StrategyResult
from explorer.evaluation.questions import Question
from explorer.retrieval.ranking import check_retriever
from explorer.retrieval.vectors import check_mode, check_preview_mode
from explorer.strategies.context import Context

ENGINES = ("local", "ray")


@dataclass
class RunStats:
    """Where a run stands: ``done`` of ``documents`` (``processed`` by this run, ``resumed`` from
    the results file), chunks indexed (all configurations), time since the start."""

    documents: int
    done: int = 0
    processed: int = 0
    resumed: int = 0
    chunks: int = 0
    started: float = field(default_factory=time.perf_counter)
    #: when the first document of this run was processed (its time holds the start-up)
    first: float = 0.0

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.started

    def eta(self) -> float | None:
        """Seconds left at this run's pace since its first processed document (None before the
        second one)."""
        if self.processed < 2:
            return None
        pace = (time.perf_counter() - self.first) / (self.processed - 1)
        return pace * (self.documents - self.done)


class LocalEngine:
    """Every document in this process (:func:`~explorer.evaluation.corpus.work.local_documents`)."""

    def __init__(self, ctx: Context, spec: WorkSpec) -> None:
        self.ctx, self.spec = ctx, spec

    def documents(self, todo: Sequence[Source]) -> Iterator[DocWork]:
        return local_documents(todo, self.spec, self.ctx)

    def queries(self, texts: list[str]) -> Any:
        return query_vectors(self.ctx, texts)

    def close(self) -> None:
        pass


def make_engine(name: str, ctx: Context, spec: WorkSpec, address: str | None = None) -> Any:
    if name not in ENGINES:
        raise ParamError(f"engine {name!r} is not one of {', '.join(ENGINES)}")
    if name == "ray":
        from explorer.evaluation.corpus.ray_engine import RayEngine

        return RayEngine(ctx, spec, address)
    if address:
        raise ParamError("--address is the Ray cluster's: use it with --engine ray")
    return LocalEngine(ctx, spec)


def check_run(spec: WorkSpec, ctx: Context, k: int, force_preview: bool = False) -> None:
    """What :func:`~explorer.evaluation.evaluate.evaluate` checks before it starts."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ParamError(f"k={k!r} must be a whole number of at least 1")
    if not spec.configs:
        raise ParamError("no strategy to evaluate")
    check_retriever(spec.retriever)
    check_mode(spec.mode)
    if spec.mode == "preview" and spec.embeds:
        check_preview_mode(ctx, spec.options, force_preview)


@dataclass
class _Run:
    """The state of a run between documents."""

    spec: WorkSpec
    sources: Sequence[Source]
    indexes: list[CorpusIndex]
    results: ResultsFile | None
    cache: ChunkCache | None
    stats: RunStats
    doc_ids: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    outcomes: list[list] = field(default_factory=list)

    def add(self, work: DocWork) -> None:
        share = work.embed_seconds / len(self.indexes)
        for index, part in zip(self.indexes, work.parts, strict=True):
            index.add(work.n, part, share)
        self.doc_ids.append(work.doc_id)
        self.names.append(work.name)
        self.outcomes.append(work.outcomes)
        self.stats.done += 1
        self.stats.chunks += work.chunks


def _finished(run: _Run, source: Source) -> dict | None:
    """The earlier line of ``source`` if it can be reused as it is."""
    if run.results is None or run.cache is None:
        return None
    line = run.results.finished.get(source.key)
    if line is None or len(line.get("chunks", ())) != len(run.spec.configs):
        return None
    if (line.get("size"), line.get("mtime_ns")) != source.stat() or not run.cache.has(line["sha"]):
        return None
    return line


def _stream(
    run: _Run, engine: Any, on_document: Callable | None, progress: Callable | None, warn: Callable
) -> None:
    """Every document into the indexes, in corpus order."""
    reuse = {s.n: line for s in run.sources if (line := _finished(run, s)) is not None}
    todo = [s for s in run.sources if s.n not in reuse]
    fresh = engine.documents(todo) if todo else iter(())
    for source in run.sources:
        line = reuse.get(source.n)
        if line is not None:
            assert run.cache is not None
            parts = run.cache.load(line["sha"], len(run.spec.configs), line["chars"])
            work = DocWork(
                source.n, line["name"], line["doc_id"], line["sha"], line["chars"], parts, line["questions"]
            )
            work.embed_seconds = float(line.get("embed_seconds") or 0.0)
            run.spec.plan.check(work.n, work.outcomes)
            run.stats.resumed += 1
        else:
            work = next(fresh)
            if work.n != source.n:
                raise RuntimeError(f"the engine gave document {work.n} where {source.n} was due")
            for w in work.warnings:
                warn(f"warning: {work.name}: {w}")
            run.spec.plan.check(work.n, work.outcomes)
            if run.cache is not None and run.results is not None:
                run.cache.save(work)
                run.results.write(document_line(source.key, source.stat(), work))
            run.stats.processed += 1
            if run.stats.processed == 1:
                run.stats.first = time.perf_counter()
        run.add(work)
        if progress is not None:
            progress(run.stats)
        if on_document is not None:
            on_document(run.stats)


def run_corpus(
    sources: Sequence[Source],
    spec: WorkSpec,
    ctx: Context,
    k: int = 5,
    *,
    engine: str = "local",
    address: str | None = None,
    out: str | Path | None = None,
    resume: bool = False,
    questions_sha: str = "",
    header: Mapping[str, Any] | None = None,
    force_preview: bool = False,
    progress: Callable[[RunStats], Any] | None = None,
    on_document: Callable[[RunStats], Any] | None = None,
    warn: Callable[[str], Any] = lambda _msg: None,
) -> tuple[list[StrategyResult], list[Question], RunStats]:
    """Evaluate ``spec.configs`` over ``sources`` with ``engine``: the results of
    :func:`~explorer.evaluation.evaluate.evaluate` on the same documents and questions.

    With ``out``, each finished document is a line of that JSONL file and a file of its cache
    folder (``<out>.chunks``); ``resume`` continues the run the file holds (refused if its
    settings differ). ``progress(stats)`` follows the documents; ``on_document(stats)`` too (a
    hook for tests: raising there stops the run as a kill would)."""
    check_run(spec, ctx, k, force_preview)
    if resume and out is None:
        raise ParamError("--resume continues the run of an --out file: give --out")
    if not sources:
        raise LoadError("no documents")
    key = run_key(spec, ctx.model_key(), questions_sha)
    results = cache = None
    if out is not None:
        results = ResultsFile(out, key, dict(header or {}, documents=len(sources)), resume)
        cache = ChunkCache(f"{out}.chunks", key)
    stats = RunStats(len(sources))
    run = _Run(spec, sources, [CorpusIndex(c, spec.lexical) for c in spec.configs], results, cache, stats)
    try:
        eng = make_engine(engine, ctx, spec, address)
        try:
            _stream(run, eng, on_document, progress, warn)
            questions = spec.plan.resolve(run.doc_ids, run.outcomes)
            qvecs = eng.queries([q.text for q in questions]) if spec.embeds else None
        finally:
            eng.close()
        out_results = _score_all(run, questions, qvecs, k)
        if results is not None:
            for r in out_results:
                results.write({"kind": "result", **r.to_dict()})
            results.write({"kind": "done", "documents": stats.documents, "processed": stats.processed,
                           "resumed": stats.resumed, "chunks": stats.chunks, "seconds": round(stats.seconds, 2)})  # fmt: skip
    finally:
        if results is not None:
            results.close()
    return out_results, questions, stats


def _score_all(run: _Run, questions: list[Question], qvecs: Any, k: int) -> list[StrategyResult]:
    """Every configuration scored, one index at a time (each is dropped once scored); a result's
    time is its share of the streaming plus its own scoring."""
    share = run.stats.seconds / len(run.indexes)
    out = []
    for index in run.indexes:
        t0 = time.perf_counter() - share
        frozen = index.freeze(run.doc_ids, run.names)
        out.append(score(frozen, questions, qvecs, k, run.spec.retriever, run.spec.mode, t0))
        del frozen
    return out
