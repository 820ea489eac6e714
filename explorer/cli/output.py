"""What the commands write: results to stdout as UTF-8 whatever the locale, progress to stderr
(:class:`ProgressLine`), and Markdown tables.

Why a module of its own: results and progress go to different streams with different rules
(a result is the user's text, offsets count it; progress is rewritten in place on a terminal).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import TextIO

from explorer.cli import inputs
from explorer.cli.terminal import for_terminal


def write(text: str, stream: TextIO | None = None) -> None:
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
        self.label = for_terminal(label)
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


def progress_line(args: argparse.Namespace) -> ProgressLine:
    return ProgressLine(quiet=getattr(args, "quiet", False))


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]

    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), sep, *(line(r) for r in rows)]) + "\n"


def say_left_out(unloaded: Sequence[tuple[str, int]]) -> None:
    """The note of ``--skip-unloaded`` on stderr: how many questions, about which documents."""
    from explorer.evaluation.questions import left_out_note

    if unloaded:
        inputs.say(f"note: --skip-unloaded: {left_out_note(unloaded, 'not given')}")
    inputs.flush_notes()  # the questions were read last: what was said of the input is told now


#: Appended to a "document ... is not loaded" error of evaluate and sweep.
SKIP_HINT = " (--skip-unloaded scores the questions about the documents given)"
