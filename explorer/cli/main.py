"""Command line: the same core as the app, for batch use and for checking.

    python -m explorer strategies
    python -m explorer text PATH
    python -m explorer chunk PATH... --strategy NAME [--set P=V ...] [--format jsonl|json|csv]
    python -m explorer compare PATH... --question TEXT [--strategy NAME [--set P=V ...]]... [--k K]
    python -m explorer evaluate --corpus PATH... --questions FILE [--strategy NAME [--set P=V ...]]...
    python -m explorer sweep --corpus PATH... --questions FILE --strategy NAME --vary P=START:STOP:STEP

Wherever files are read, ``--sample NAME`` (repeatable) adds a bundled sample by its file name
(``handbook.pdf``) or display name, e.g. ``python -m explorer chunk --sample handbook.pdf``.

Each ``--set`` belongs to the ``--strategy`` before it, so the same strategy can be compared
with itself under different settings. Bad input (missing file, unknown strategy or parameter,
bad value, unreadable PDF, unknown model) exits with status 2 and one ``error: ...`` line on
stderr; results go to stdout, progress to stderr. The arguments are :mod:`explorer.cli.parser`,
the commands :mod:`explorer.cli.commands` and :mod:`explorer.cli.scores`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from explorer.cli.inputs import EXIT_BAD_INPUT, flush_notes, held_notes
from explorer.cli.parser import build_parser
from explorer.cli.terminal import say_line
from explorer.errors import ExplorerError
from explorer.models.local import offline


def _os_message(err: OSError) -> str:
    what = err.strerror or str(err)
    return f"{what}: {err.filename}" if err.filename else what


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit status. Bad input gives one ``error:`` line, never a traceback;
    anything else is a bug and still raises."""
    offline()
    if sys.stderr is None:  # started with stderr closed (``2>&-``): its lines go nowhere, not a crash
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - for the rest of the process
    if sys.stdout is None:
        say_line("error: standard output is closed: the results have nowhere to go")
        return EXIT_BAD_INPUT
    parser = build_parser()
    args = parser.parse_args(argv)
    with held_notes():  # written as the input is read, or at the end; dropped when it is refused
        return _run(args)


def _run(args: argparse.Namespace) -> int:
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
        sys.stderr.write("\n")
        say_line("error: interrupted")
        return 130
    except ExplorerError as err:
        flush_notes(keep=False)
        say_line(f"error: {_one_line(str(err))}")
        return EXIT_BAD_INPUT
    except OSError as err:
        flush_notes(keep=False)
        say_line(f"error: {_one_line(_os_message(err))}")
        return EXIT_BAD_INPUT


def _one_line(msg: str) -> str:
    return " ".join(msg.split()) or "unknown problem"
