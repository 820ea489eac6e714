"""Lines for the terminal: what a file, its name or an argument holds, made harmless to print.

Why: an error or warning line quotes the input (a file name, a PDF's own words in the reader's
message, an unrecognised argument), and a terminal acts on the control characters in it: ESC [2J
clears the screen, ESC ]0;… sets the window title, a line break in a file name starts what looks
like a line of its own, and a bidirectional override reorders what follows. Results on stdout
are the user's text and are written as they are; only stderr's lines go through here.
"""

from __future__ import annotations

import re
import sys

#: C0 controls but tab, DEL, C1 controls, and the bidirectional embeddings, overrides and isolates.
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def for_terminal(text: str) -> str:
    """``text`` with every control character a terminal would act on written as an escape
    (``\\x1b``, ``\\u202e``), so the line shows what the input held and does nothing else."""
    return _UNSAFE.sub(_escape, text)


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def say_line(line: str) -> None:
    """Write one line to stderr, made safe for the terminal."""
    sys.stderr.write(f"{for_terminal(line)}\n")
