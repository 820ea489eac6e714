"""Score strategies against gold answers: question files, pooled retrieval per strategy, sweeps.

All chunks of all documents go into one index per strategy (as in Chroma's report), every
question retrieves its top k from that pooled index (dense, BM25 or hybrid: see
:data:`explorer.retrieval.search.RETRIEVERS`), and the hits are scored in characters against the gold
spans with :mod:`explorer.evaluation.metrics`.

``mode="preview"`` pools chunk vectors from each document's token vectors, read once by the
model (:mod:`explorer.embedding.late`): every configuration after the first, and every sweep
step, costs no model call. Approximate: refused for a model whose measured gap to exact
embedding is over the registry's limit unless forced; results carry ``mode``.
"""

from __future__ import annotations

import csv
import io
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from explorer import untrusted
from explorer.documents.document import Document
from explorer.errors import LimitError, LoadError, ParamError
from explorer.evaluation.metrics import (
    METRIC_NAMES,
    ChunkSpans,
    RetrievalSummary,
    precision_omega,
    retrieval_scores,
)
from explorer.retrieval.search import check_retriever, ranked_hits, retrieve
from explorer.strategies import get_strategy
from explorer.strategies.config import StrategyConfig
from explorer.strategies.context import Context

Progress = Callable[[int, int], Any]
#: Most values one sweep may try (each one chunks and embeds the whole corpus).
MAX_SWEEP_VALUES = 50
#: Largest question file accepted (bytes).
MAX_QUESTION_FILE_BYTES = 20 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Question:
    """A question and its gold excerpts as (document id, start, end) into ``Document.text``."""

    text: str
    references: tuple[tuple[str, int, int], ...]


# ---------------------------------------------------------------------------------------------
# Question files
# ---------------------------------------------------------------------------------------------
class _Docs:
    """Find a document by the name a question file uses: file name, stem, or id."""

    def __init__(self, docs: Sequence[Document]) -> None:
        self.docs = list(docs)
        self._by: dict[str, list[Document]] = {}
        for d in self.docs:
            keys = {d.name, Path(d.name).name, Path(d.name).stem, d.id}
            for key in keys:
                self._by.setdefault(key, []).append(d)

    def get(self, name: Any, where: str) -> Document:
        if name is None:
            if len(self.docs) == 1:
                return self.docs[0]
            raise LoadError(
                f"{where}: no document named, and {len(self.docs)} documents are loaded: "
                'add "document": "<file name>" to each reference'
            )
        found = self._by.get(str(name), [])
        if len(found) == 1:
            return found[0]
        names = ", ".join(repr(d.name) for d in self.docs) or "none"
        if not found:
            raise LoadError(f"{where}: document {name!r} is not loaded (loaded: {names})")
        raise LoadError(f"{where}: document {name!r} matches several loaded documents ({names})")


def _check_span(doc: Document, start: Any, end: Any, where: str) -> tuple[str, int, int]:
    if (
        isinstance(start, bool)
        or isinstance(end, bool)
        or not isinstance(start, int)
        or not isinstance(end, int)
    ):
        raise LoadError(f"{where}: start and end must be whole numbers, got {start!r} and {end!r}")
    if not 0 <= start < end <= len(doc.text):
        raise LoadError(
            f"{where}: span {start}:{end} is not inside {doc.name!r} (0:{len(doc.text)}) or is empty"
        )
    return (doc.id, start, end)


def locate_answer(answer: str, docs: Sequence[Document], where: str = "answer") -> tuple[str, int, int]:
    """The one place ``answer`` occurs verbatim in ``docs``.

    Plain ``str.find`` is right here: this locates a *gold answer* the user typed, not a chunk.
    No occurrence or several occurrences are errors, since the score would be meaningless.
    """
    if not isinstance(answer, str) or not answer.strip():
        raise LoadError(f"{where}: the answer is empty")
    found: list[tuple[str, int, int]] = []
    for d in docs:
        pos = d.text.find(answer)
        while pos != -1 and len(found) < 2:
            found.append((d.id, pos, pos + len(answer)))
            pos = d.text.find(answer, pos + 1)
    if not found:
        raise LoadError(
            f"{where}: answer {_clip(answer)!r} is not an exact substring of any loaded document "
            "(compare with the text `python -m explorer text FILE` prints)"
        )
    if len(found) > 1:
        raise LoadError(
            f"{where}: answer {_clip(answer)!r} occurs more than once; give a longer answer or "
            "its start and end offsets"
        )
    return found[0]


def _clip(s: str, n: int = 60) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def _question_from_record(rec: Any, docs: _Docs, where: str) -> Question:
    if not isinstance(rec, Mapping):
        raise LoadError(f"{where}: expected an object with a question, got {type(rec).__name__}")
    text = rec.get("question")
    if not isinstance(text, str) or not text.strip():
        raise LoadError(f'{where}: "question" is missing or empty')
    where = f"{where} (question {_clip(text)!r})"
    refs: list[tuple[str, int, int]] = []
    if "references" in rec:
        raw = rec["references"]
        if isinstance(raw, str):
            raw = untrusted.loads(raw, f"{where}: references", LoadError)
        if not isinstance(raw, list) or not raw:
            raise LoadError(f"{where}: references must be a non-empty list")
        for i, r in enumerate(raw):
            w = f"{where}, reference {i + 1}"
            if not isinstance(r, Mapping):
                raise LoadError(f"{w}: expected an object with start and end")
            doc = docs.get(r.get("document", rec.get("document")), w)
            start = r.get("start", r.get("start_index"))
            end = r.get("end", r.get("end_index"))
            ref = _check_span(doc, start, end, w)
            content = r.get("content")
            if isinstance(content, str) and doc.text[ref[1] : ref[2]] != content:
                raise LoadError(
                    f"{w}: the text at {start}:{end} of {doc.name!r} is not the reference's content "
                    "(was the document cleaned up or changed?)"
                )
            refs.append(ref)
    elif "answer" in rec:
        answers = rec["answer"]
        answers = [answers] if isinstance(answers, str) else answers
        if not isinstance(answers, list) or not answers:
            raise LoadError(f'{where}: "answer" must be a string or a list of strings')
        scope = [docs.get(rec["document"], where)] if rec.get("document") is not None else docs.docs
        refs = [locate_answer(a, scope, where) for a in answers]
    else:
        raise LoadError(f'{where}: needs "references" (start/end spans) or "answer" (exact text)')
    return Question(text.strip(), tuple(refs))


def questions_to_jsonl(questions: Sequence[Question], docs: Sequence[Document]) -> str:
    """A question file :func:`load_questions` reads back: one JSON object per line, each gold
    span as document name, start, end and its text (``content``, checked on loading), so a set
    of questions built in the app runs the same from the CLI."""
    by_id = {d.id: d for d in docs}
    lines = []
    for q in questions:
        refs = []
        for doc_id, start, end in q.references:
            doc = by_id.get(doc_id)
            if doc is None:
                raise LoadError(f"question {_clip(q.text)!r}: its document is not loaded")
            refs.append({"document": doc.name, "start": start, "end": end, "content": doc.text[start:end]})
        lines.append(json.dumps({"question": q.text, "references": refs}, ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


def load_questions(
    source: str | Path | bytes, docs: Sequence[Document], name: str | None = None
) -> list[Question]:
    """Read a question file against the loaded ``docs``.

    Formats (detected from the content): JSONL (or a JSON list) of
    ``{"question", "references": [{"document"?, "start", "end"}]}`` or
    ``{"question", "answer": "exact substring", "document"?}``; or Chroma's ``questions_df.csv``
    (columns ``question``, ``references``, ``corpus_id``; ``corpus_id`` is a document's file
    stem). Any problem raises :class:`LoadError` naming the line and the question.
    """
    if not docs:
        raise LoadError("load the documents before the questions")
    if isinstance(source, bytes | bytearray):
        data = bytes(source)
        name = name or "questions"
    else:
        path = Path(source)
        name = name or path.name
        try:
            if path.stat().st_size > MAX_QUESTION_FILE_BYTES:
                raise LoadError(f"{name!r} is over {MAX_QUESTION_FILE_BYTES // 2**20} MB")
            data = path.read_bytes()
        except OSError as err:
            raise LoadError(f"cannot read question file {str(path)!r}: {err.strerror or err}") from None
    if len(data) > MAX_QUESTION_FILE_BYTES:
        raise LoadError(f"{name!r} is over {MAX_QUESTION_FILE_BYTES // 2**20} MB")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise LoadError(f"{name!r} is not UTF-8 text (byte {err.start})") from None
    lookup = _Docs(docs)
    head = text.lstrip()[:1]
    if not head:
        raise LoadError(f"{name!r} is empty")
    if head == "[":
        records = untrusted.loads(text, repr(name), LoadError)
        if not isinstance(records, list):
            raise LoadError(f"{name!r}: expected a list of questions")
        out = [_question_from_record(r, lookup, f"{name} item {i + 1}") for i, r in enumerate(records)]
    elif head == "{":
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            rec = untrusted.loads(line, f"{name} line {n}", LoadError)
            out.append(_question_from_record(rec, lookup, f"{name} line {n}"))
    else:
        out = _load_csv(text, lookup, name)
    if not out:
        raise LoadError(f"{name!r} holds no questions")
    return out


def _load_csv(text: str, docs: _Docs, name: str) -> list[Question]:
    """Chroma's ``questions_df.csv``: question, references (JSON list), corpus_id."""
    csv.field_size_limit(MAX_QUESTION_FILE_BYTES)
    reader = csv.DictReader(io.StringIO(text, newline=""))
    cols = reader.fieldnames or []
    missing = {"question", "references"} - set(cols)
    if missing:
        raise LoadError(
            f"{name!r} is neither JSONL nor a CSV with columns question, references, corpus_id "
            f"(missing: {', '.join(sorted(missing))})"
        )
    out = []
    try:
        for row in reader:
            rec: dict[str, Any] = {"question": row.get("question"), "references": row.get("references")}
            if row.get("corpus_id"):
                rec["document"] = row["corpus_id"]
            out.append(_question_from_record(rec, docs, f"{name} line {reader.line_num}"))
    except csv.Error as err:
        raise LoadError(f"{name} line {reader.line_num}: {err}") from None
    return out


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
    retriever: str = "dense"
    #: "exact", or "preview" (approximate: pooled from one-pass token vectors).
    mode: str = "exact"

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
        if per_question:
            d["per_question"] = [
                {
                    "recall": q.recall,
                    "precision": q.precision,
                    "iou": q.iou,
                    "precision_omega": o,
                    "hit": q.hit,
                    "rr": q.rr,
                }
                for q, o in zip(self.scores.questions, self.scores.omegas, strict=True)
            ]
        return d


def _num(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 6)


def _check_questions(questions: Sequence[Question], docs: Sequence[Document]) -> None:
    if not questions:
        raise ParamError("no questions to evaluate")
    ids = {d.id for d in docs}
    for q in questions:
        for doc_id, _, _ in q.references:
            if doc_id not in ids:
                raise ParamError(f"question {_clip(q.text)!r} refers to a document that is not loaded")


def evaluate(
    docs: Sequence[Document],
    configs: Sequence[StrategyConfig],
    questions: Sequence[Question],
    k: int = 5,
    ctx: Context | None = None,
    options: Any = None,
    progress: Progress | None = None,
    on_step: Callable[[str], Any] | None = None,
    retriever: str = "dense",
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
    from explorer.retrieval.search import (
        EmbedOptions,
        build_index,
        check_mode,
        check_preview_mode,
        preview_vectors,
    )

    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ParamError(f"k={k!r} must be a whole number of at least 1")
    if not configs:
        raise ParamError("no strategy to evaluate")
    check_retriever(retriever)
    check_mode(mode)
    _check_questions(questions, docs)
    ctx = ctx or Context.default()
    options = options if options is not None else EmbedOptions()
    preview = mode == "preview" and retriever != "bm25"
    if preview:
        check_preview_mode(ctx, options, force_preview)
    embedder = ctx.get_embedder()  # for token counts; the model itself loads only to embed
    texts = [q.text for q in questions]
    qvecs = None
    if retriever != "bm25":
        if on_step:
            on_step(f"embedding {len(questions)} questions")
        qvecs = embedder.encode_queries(texts, progress=progress)
    prebuilt: list[Any] = []
    if preview:  # chunk every config, then read each document once and pool every config's chunks
        t0 = time.perf_counter()
        built = [build_index(docs, c, ctx, options, retriever="bm25", mode="preview") for c in configs]
        if on_step:
            on_step(f"reading {len(docs)} document(s) once (preview: approximate vectors)")
        vectors = preview_vectors(ctx, docs, [b.chunks for b in built], options, progress)
        share = (time.perf_counter() - t0) / len(configs)
        for b, v in zip(built, vectors, strict=True):
            b._set_vectors(v)
            prebuilt.append((b, share))
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
        spans = ChunkSpans.of_chunks(index.chunks)
        scores = []
        omegas = []
        for q, qhits in zip(questions, hits, strict=True):
            retrieved = [(h.chunk.doc_id, h.chunk.start, h.chunk.end) for h in qhits]
            scores.append(retrieval_scores(q.references, retrieved))
            omegas.append(precision_omega(q.references, spans))
        n = len(index.chunks)
        tokens = embedder.count_tokens([c.text for c in index.chunks]) if n else []
        results.append(
            StrategyResult(
                config=config,
                k=k,
                scores=RetrievalSummary.of(scores, omegas),
                chunk_count=n,
                mean_chars=sum(c.chars for c in index.chunks) / n if n else 0.0,
                mean_tokens=sum(tokens) / n if n else 0.0,
                seconds=time.perf_counter() - t0,
                retriever=retriever,
                mode=mode,
            )
        )
    return results


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

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"param": self.param, "value": self.value}
        if self.result is not None:
            d.update(self.result.to_dict())
        else:
            d["error"] = self.error
        return d


def parse_values(spec: str, strategy: str) -> tuple[str, list[Any]]:
    """``"chunk_size=100:800:100"`` (inclusive range) or ``"threshold=0.2,0.4,0.6"`` → name, values.

    Values are checked against the parameter's type and bounds (ParamError naming the value).
    """
    name, sep, rest = spec.partition("=")
    name = name.strip()
    if not sep or not name or not rest.strip():
        raise ParamError(f"--vary {spec!r}: expected PARAM=START:STOP:STEP or PARAM=V1,V2,...")
    param = get_strategy(strategy).param(name)
    rest = rest.strip()
    if ":" in rest:
        if param.type not in ("int", "float"):
            raise ParamError(f"--vary {spec!r}: a range needs a number parameter; {name} is {param.type}")
        parts = rest.split(":")
        if len(parts) != 3:
            raise ParamError(f"--vary {spec!r}: a range is START:STOP:STEP")
        try:
            start, stop, step = (float(p) for p in parts)
        except ValueError:
            raise ParamError(f"--vary {spec!r}: START, STOP and STEP must be numbers") from None
        if not all(math.isfinite(x) for x in (start, stop, step)) or step <= 0 or stop < start:
            raise ParamError(f"--vary {spec!r}: need START <= STOP and STEP > 0")
        count = math.floor((stop - start) / step + 1e-9) + 1
        if count > MAX_SWEEP_VALUES:
            raise LimitError(f"--vary {spec!r} gives {count} values; at most {MAX_SWEEP_VALUES}")
        digits = max(0, -math.floor(math.log10(step))) + 3 if param.type == "float" else 0
        raw = [round(start + i * step, digits) for i in range(count)]
    else:
        raw = [p.strip() for p in rest.split(",") if p.strip()]
        if len(raw) > MAX_SWEEP_VALUES:
            raise LimitError(f"--vary {spec!r} gives {len(raw)} values; at most {MAX_SWEEP_VALUES}")
    values = [param.coerce(v) for v in raw]
    if not values:
        raise ParamError(f"--vary {spec!r}: no values")
    return name, values


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
    retriever: str = "dense",
    mode: str = "exact",
    force_preview: bool = False,
) -> list[SweepRow]:
    """:func:`evaluate` ``base`` with ``param`` set to each of ``values`` (each ranked with
    ``retriever``; ``mode`` and ``force_preview`` as in :func:`evaluate`: in preview mode each
    document is read by the model once for the whole sweep).

    A value that makes an invalid combination (e.g. overlap >= size) gives a row with the
    error instead of stopping the whole sweep.
    """
    get_strategy(base.strategy).param(param)  # unknown parameter -> ParamError now
    check_retriever(retriever)
    if len(values) > MAX_SWEEP_VALUES:
        raise LimitError(f"a sweep of {len(values)} values is over the limit of {MAX_SWEEP_VALUES}")
    made: list[tuple[Any, StrategyConfig | None, str]] = []
    for v in values:
        try:
            made.append((v, StrategyConfig.make(base.strategy, {**base.param_dict, param: v}), ""))
        except ParamError as err:
            made.append((v, None, str(err)))
    configs = [c for _, c, _ in made if c is not None]
    results = iter(
        evaluate(docs, configs, questions, k, ctx, options, progress, on_step, retriever, mode, force_preview)
        if configs
        else []
    )
    return [SweepRow(param, v, next(results) if c is not None else None, err) for v, c, err in made]
