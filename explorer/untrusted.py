"""JSON from users and links, parsed with bounds: depth and size are checked before decoding.

Why: ``json.loads`` recurses once per nesting level, so 3,000 ``[`` in a link, a ``--set``
value or a question file raise RecursionError (a traceback in the CLI, a crashed page in the
app). Everything untrusted goes through :func:`loads`, which refuses such input with the
caller's error class and a message that names what was being read.
"""

from __future__ import annotations

import json
import re
from typing import Any

from explorer.errors import ExplorerError

#: Deepest nesting accepted (a question file needs 3, a configuration 4).
MAX_DEPTH = 32
_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def depth(text: str) -> int:
    """Deepest bracket nesting of ``text``, strings skipped (a linear scan, no recursion)."""
    deepest = level = 0
    for m in _TOKENS.finditer(text):
        tok = m.group()
        if tok in "[{":
            level += 1
            deepest = max(deepest, level)
        elif tok in "]}":
            level -= 1
    return deepest


def loads(text: str | bytes, what: str, error: type[ExplorerError], max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(text)`` or ``error`` ("<what> is not valid JSON: …" / "… nested too deeply")."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if depth(text) > max_depth:
        raise error(f"{what} is nested more than {max_depth} levels deep: not a value this program reads")
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:  # the parser's words, made a plain place and reason
        where = f"column {err.colno}" if err.lineno == 1 else f"line {err.lineno}, column {err.colno}"
        raise error(f"{what} is not valid JSON ({where}: {err.msg[:1].lower() + err.msg[1:]})") from None
    except (ValueError, RecursionError) as err:
        raise error(f"{what} is not valid JSON: {err}") from None


def dumps(value: Any, indent: int | None = None) -> str:
    """JSON text with non-ASCII kept, but NEL (U+0085) and the line and paragraph separators
    U+2028 and U+2029 written as escapes: JSON allows them raw in strings, and a reader that
    splits lines with Python's ``str.splitlines()`` cut a JSONL record holding one in two."""
    return _LINE_BREAKS.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False, indent=indent))


#: What ``str.splitlines()`` breaks at that ``json.dumps`` leaves raw (it escapes controls below 0x20).
_LINE_BREAKS = re.compile("[\x85\u2028\u2029]")

