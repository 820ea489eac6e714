"""What the commands read: documents (with the ``--cleanup`` steps), strategy configurations
from the ``--strategy``/``--set`` groups, and the context that holds the model; and the exit
statuses.

Why a module of its own: every command reads its input the same way, and the tests put a fake
embedder behind :func:`make_context` here (the commands look it up on this module).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import fields
from typing import Any

from explorer.cli.terminal import say_line
from explorer.errors import ParamError

EXIT_BAD_INPUT = 2
EXIT_CHECK_FAILED = 1
DEFAULT_STRATEGY = "recursive"
#: The note: and warning: lines of the running ``main()`` held until every input is read (None
#: outside one: written at once). A context variable: each call, and each thread, has its own.
_PENDING: ContextVar[list[str] | None] = ContextVar("cli_notes", default=None)


def say(line: str) -> None:
    """A ``note:``/``warning:`` line about the input, written once all of it is read (the
    documents and questions): input that is refused gets its one ``error:`` line and nothing else."""
    pending = _PENDING.get()
    if pending is None:
        say_line(line)
    else:
        pending.append(line)


def flush_notes(keep: bool = True) -> None:
    """Write the held lines (``keep``) or drop them (the input was refused)."""
    pending = _PENDING.get() or []
    if keep:
        for line in pending:
            say_line(line)
    pending.clear()


@contextmanager
def held_notes() -> Iterator[None]:
    """Hold :func:`say`'s lines for one command: written when its input is read or it ends,
    dropped when it is refused (:func:`flush_notes` with ``keep=False`` first)."""
    token = _PENDING.set([])
    try:
        yield
    finally:
        flush_notes()
        _PENDING.reset(token)


def parse_set(item: str) -> tuple[str, str]:
    name, sep, value = item.partition("=")
    if not sep or not name.strip():
        raise ParamError(f"--set {item!r}: expected PARAM=VALUE")
    return name.strip(), value


def configs_from_args(args: argparse.Namespace, many: bool) -> list:
    """StrategyConfigs from the ``--strategy``/``--set`` groups (adapted, see
    :func:`adapted_config`; ParamError on a conflict)."""
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
        configs.append(adapted_config(name, params))
    return configs


def user_set_names(args: argparse.Namespace) -> set[str]:
    """The parameters the user set with ``--set`` (every group, loose ones included)."""
    return set().union(*user_sets(args))


def user_sets(args: argparse.Namespace) -> list[set[str]]:
    """Per ``--strategy`` group, in the order of :func:`configs_from_args`'s configurations, the
    parameters the user set with ``--set`` (the loose ones belong to the first group)."""
    groups = list(getattr(args, "groups", None) or []) or [(DEFAULT_STRATEGY, [])]
    loose = list(getattr(args, "loose_sets", None) or [])
    return [{parse_set(item)[0] for item in (loose if i == 0 else []) + list(sets)} for i, (_, sets) in enumerate(groups)]


def adapted_config(name: str, params: dict[str, Any], label: str = ""):
    """The StrategyConfig of ``name`` with ``params`` as the user set them (``--set``, a
    configuration file): a parameter they did not set follows the ones they did, with a
    ``note:`` line on stderr (``--set chunk_size=100`` lowers recursive's default overlap of
    200); a value they set that conflicts is refused with the message ``parse`` gives."""
    from explorer.strategies import get_strategy
    from explorer.strategies.config import StrategyConfig

    strategy = get_strategy(name)
    got = strategy.adapt(params, params.keys())
    if not got.ok:
        StrategyConfig.make(name, params, label)  # raises today's message for the values as given
        raise ParamError(next(iter(got.conflicts.values())))
    for note in got.notes:
        say(f"note: {name}: {note}")
    return StrategyConfig.make(name, got.values, label)


def parse_cleanup(spec: str):
    from explorer.documents.cleanup import Cleanup

    names = [s.strip() for s in (spec or "").split(",") if s.strip() and s.strip() != "none"]
    valid = [f.name for f in fields(Cleanup)]
    for n in names:
        if n not in valid:
            raise ParamError(f"--cleanup {n!r} is not a clean-up step; choose from {', '.join(valid)}")
    return Cleanup(**{n: True for n in names})


def load_docs(paths: Sequence[str], cleanup_spec: str = "", samples: Sequence[str] = (), *, last: bool = True) -> list:
    """The files, then the bundled samples (``--sample``: file or display name), cleaned up;
    ``last``: no other input is read after them, so the notes held so far are written now."""
    from explorer.documents.document import repeats
    from explorer.documents.loaders import load_path
    from explorer.documents.samples import SAMPLES, load_sample

    if not paths and not samples:
        raise ParamError(f"no documents: give file paths or --sample NAME ({', '.join(SAMPLES.values())})")
    cleanup = parse_cleanup(cleanup_spec)
    docs = [load_path(p, cleanup) for p in paths] + [load_sample(n, cleanup) for n in samples]
    for d in docs:
        for w in d.warnings:
            say(f"warning: {d.name}: {w}")
    twins = repeats(docs)
    for i, j in twins.items():
        say(f"warning: {docs[i].name}: the same text as {docs[j].name}: counted once")
    if last:
        flush_notes()
    return [d for i, d in enumerate(docs) if i not in twins]


def embed_options(args: argparse.Namespace, say_unused: bool = False):
    """What is embedded for a chunk, from ``--prepend-headings``, ``--context-chars`` and
    ``--piece-chars`` (those a command has not: off). ``say_unused``: a note on stderr when
    ``--retriever bm25`` embeds nothing, so that these (and ``--preview``) change nothing."""
    from explorer.retrieval.vectors import EmbedOptions

    given = {
        "--prepend-headings": getattr(args, "prepend_headings", False),
        "--context-chars": getattr(args, "context_chars", 0),
        "--piece-chars": getattr(args, "piece_chars", 0),
        "--preview": getattr(args, "preview", None),
    }
    unused = [flag for flag, value in given.items() if value]
    if say_unused and unused and getattr(args, "retriever", "") == "bm25":
        verb = "changes" if len(unused) == 1 else "change"
        say(f"note: --retriever bm25 embeds nothing: {', '.join(unused)} {verb} nothing here")
    return EmbedOptions(
        prepend_headings=bool(given["--prepend-headings"]),
        context_chars=given["--context-chars"],
        piece_chars=given["--piece-chars"],
    )


def make_context(model: str | None, progress: Any = None, quantize: bool = False, backend: str = "auto"):
    from explorer.models.paths import resolve_model_path
    from explorer.strategies.context import Context

    if model:
        resolve_model_path(model)  # a clear ModelError now, not after chunking
    return Context(model=model, progress=progress, quantize=quantize, backend=backend)
