"""``evaluate`` and ``sweep`` over a corpus too big to load at once: the corpus runner
(:mod:`explorer.evaluation.corpus`) behind the same options, plus ``--engine``, ``--address``,
``--out`` and ``--resume``, with a progress line per document on stderr.

Why a module of its own: :mod:`explorer.cli.scores` keeps the commands and their tables; this
module decides whether a run streams (:func:`use_runner`), runs it, and says on stderr how far it
got. ``--corpus`` folders and glob patterns are expanded here for both paths.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from explorer.cli import inputs
from explorer.cli.terminal import say_line
from explorer.errors import LoadError, ParamError
from explorer.text.wording import plural

#: Above this many documents ``evaluate``/``sweep`` stream even without --out or --engine.
STREAM_OVER = 200


def use_runner(args: argparse.Namespace) -> bool:
    """Expand ``--corpus`` folders and patterns (in place); whether the corpus runner runs this:
    with ``--engine``, ``--out`` or ``--resume``, or a corpus of more than :data:`STREAM_OVER`
    documents."""
    from explorer.evaluation.corpus.sources import expand_paths

    out = getattr(args, "out", None)
    engine = getattr(args, "engine", None)
    if getattr(args, "address", None) and engine != "ray":
        raise ParamError("--address is a Ray cluster's: use it with --engine ray")
    if getattr(args, "resume", False) and not out:
        raise ParamError("--resume continues the run of an --out file: give --out FILE")
    found = expand_paths(args.corpus, [out, f"{out}.chunks"] if out else [])
    questions = getattr(args, "questions", None)
    if isinstance(questions, str) and os.path.isfile(questions):  # found in a folder or by a pattern,
        named = {os.path.abspath(i) for i in args.corpus if os.path.isfile(i)}  # not named: left out
        drop = {os.path.abspath(questions)} - named
        if any(os.path.abspath(f) in drop for f in found):
            say_line(f"note: --corpus: {questions} is the questions file, left out of the documents")
            found = [f for f in found if os.path.abspath(f) not in drop]
    args.corpus = found
    many = len(args.corpus) + len(args.samples) > STREAM_OVER
    return bool(engine or out or many)


class DocProgress:
    """``documents 1,234/10,000 (200 resumed), 6,170 chunks, 41 s, eta 5 min 12 s`` on stderr:
    rewritten in place on a terminal, a line every ``every_s`` seconds otherwise."""

    def __init__(self, stream: TextIO | None = None, quiet: bool = False, every_s: float = 10.0) -> None:
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.every_s = 0.2 if self.tty else every_s
        self._last = -float("inf")
        self._open = False

    def __call__(self, stats: Any) -> None:
        if self.quiet:
            return
        now = time.monotonic()
        last = stats.done >= stats.documents
        if not last and stats.done > 1 and now - self._last < self.every_s:
            return
        self._last = now
        resumed = f" ({stats.resumed:,} resumed)" if stats.resumed else ""
        eta = stats.eta()
        left = f", eta {_duration(eta)}" if eta is not None and not last else ""
        msg = f"documents {stats.done:,}/{stats.documents:,}{resumed}, {plural(stats.chunks, 'chunk')}, {_duration(stats.seconds)}{left}"
        if self.tty:
            self.stream.write("\r" + msg + "\x1b[K")
            self._open = True
            if last:
                self.close()
        else:
            self.stream.write(msg + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False


def _duration(s: float) -> str:
    if s < 60:
        return f"{s:.0f} s"
    m, s = divmod(int(s), 60)
    return f"{m} min {s:02d} s" if m < 60 else f"{m // 60} h {m % 60:02d} min"


def _questions_sha(path: str) -> str:
    from explorer.evaluation.questions import read_question_file

    return hashlib.sha256(read_question_file(Path(path))).hexdigest()


def _streamed_options(args: argparse.Namespace) -> Any:
    """What is embedded for a chunk in a streamed run, once ``--k`` and ``--piece-chars`` are
    checked (pieces need every piece's vector at once: a streamed run keeps only the chunks')."""
    if args.k < 1:
        raise ParamError(f"--k {args.k} must be at least 1")
    if args.piece_chars:
        raise ParamError(
            f"--piece-chars {args.piece_chars} is not available in a streamed run (--engine, --out, --resume, "
            f"or more than {STREAM_OVER} documents): it keeps only the chunks' vectors"
        )
    return inputs.embed_options(args)


def run(args: argparse.Namespace, configs: Sequence[Any]) -> tuple[list, list]:
    """Run ``configs`` over the corpus of ``args``: (results, questions) as ``evaluate`` gives."""
    from explorer.cli.output import SKIP_HINT, say_left_out
    from explorer.evaluation.corpus.plan import QuestionPlan
    from explorer.evaluation.corpus.runner import run_corpus
    from explorer.evaluation.corpus.sources import list_sources
    from explorer.evaluation.corpus.work import WorkSpec
    from explorer.evaluation.questions import NotLoaded

    options = _streamed_options(args)
    ctx = inputs.make_context(args.model, None, args.int8, args.backend)
    sources = list_sources(args.corpus, args.samples)
    if not sources:
        raise ParamError("no documents: give --corpus FILES, FOLDERS or PATTERNS, or --sample NAME")
    try:
        plan = QuestionPlan.read(args.questions, [s.name for s in sources], skip_unloaded=args.skip_unloaded)
    except NotLoaded as err:
        raise LoadError(f"{err}{SKIP_HINT}") from None
    say_left_out(plan.unloaded)
    mode = "preview" if args.preview else "exact"
    spec = WorkSpec(tuple(configs), plan, options, inputs.parse_cleanup(args.cleanup), args.retriever, mode)
    engine = args.engine or "local"
    header = {
        "command": args.command,
        "engine": engine,
        "strategies": [c.display for c in configs],
        "retriever": args.retriever,
        "mode": mode,
        "questions_file": str(args.questions),
    }
    progress = DocProgress(quiet=args.quiet)
    stats: list[Any] = []
    try:
        results, questions, done = run_corpus(
            sources, spec, ctx, args.k, engine=engine, address=args.address, out=args.out,
            resume=args.resume, questions_sha=_questions_sha(args.questions), header=header,
            force_preview=args.preview == "force", progress=progress, on_document=_keep(stats),
            warn=say_line,
        )  # fmt: skip
    except KeyboardInterrupt:
        progress.close()
        if args.out and stats:
            s = stats[0]
            say_line(
                f"note: stopped at {s.done:,} of {s.documents:,} documents; the finished ones are in "
                f"{args.out}: run the same command with --resume to go on"
            )
        raise
    progress.close()
    if not args.quiet:
        where = f"; results in {args.out}" if args.out else ""
        say_line(
            f"note: {plural(done.documents, 'document')} on the {engine} engine ({done.processed:,} processed, "
            f"{done.resumed:,} resumed), {plural(done.chunks, 'chunk')} in {_duration(done.seconds)}{where}"
        )
    return results, questions


def _keep(box: list) -> Any:
    def hook(stats: Any) -> None:
        box[:] = [stats]

    return hook


def sweep_rows(args: argparse.Namespace, base: Any, param: str, values: Sequence[Any]) -> tuple[list, list]:
    """:func:`explorer.evaluation.evaluate.sweep` on the corpus runner: every value's configuration
    in one pass over the documents (rows, questions)."""
    from explorer.evaluation.evaluate import SweepRow
    from explorer.evaluation.sweep_plan import sweep_steps

    steps = sweep_steps(base, param, values, inputs.user_set_names(args))
    configs = [s.config for s in steps if s.config is not None]
    results, questions = run(args, configs) if configs else ([], [])
    it = iter(results)
    rows = [SweepRow(param, s.value, next(it) if s.config is not None else None, s.error, s.adjusted) for s in steps]
    return rows, questions
