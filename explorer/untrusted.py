"""JSON from users and links, parsed with bounds: depth and size are checked before decoding.

Why: ``json.loads`` recurses once per nesting level, so 3,000 ``[`` in a link, a ``--set``
value or a question file raise RecursionError (a traceback in the CLI, a crashed page in the
app). Everything untrusted goes through :func:`loads`, which refuses such input with the
caller's error class and a message that names what was being read.
"""

from __future__ import annotations

import json
import re
import sys
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
        return _whole_characters(json.loads(text))
    except json.JSONDecodeError as err:  # the parser's words, made a plain place and reason
        where = f"column {err.colno}" if err.lineno == 1 else f"line {err.lineno}, column {err.colno}"
        raise error(f"{what} is not valid JSON ({where}: {err.msg[:1].lower() + err.msg[1:]})") from None
    except (ValueError, RecursionError) as err:
        if "digits" in str(err):  # Python's guard on int("9" * 5000), in its own words otherwise
            raise error(f"{what} holds a number with too many digits (over {_MAX_DIGITS:,})") from None
        raise error(f"{what} is not valid JSON: {err}") from None


_MAX_DIGITS = sys.get_int_max_str_digits() or 4300
#: UTF-16 surrogates: JSON's ``"\ud800"`` decodes to one alone, which no UTF-8 encoder takes.
_SURROGATES = re.compile("[\ud800-\udfff]")


def _whole_characters(value: Any) -> Any:
    """``value`` with every lone surrogate in its strings (keys included) made U+FFFD, as a
    browser decodes the same bytes percent-encoded. Why: one in a link's configuration crashed
    every page of the session where its text was written back to the address or shown.
    Recursion is bounded by :data:`MAX_DEPTH`, checked before decoding."""
    if isinstance(value, str):
        return _SURROGATES.sub("\ufffd", value)
    if isinstance(value, list):
        return [_whole_characters(v) for v in value]
    if isinstance(value, dict):
        return {_whole_characters(k): _whole_characters(v) for k, v in value.items()}
    return value


def dumps(value: Any, indent: int | None = None) -> str:
    """JSON text with non-ASCII kept, but NEL (U+0085) and the line and paragraph separators
    U+2028 and U+2029 written as escapes: JSON allows them raw in strings, and a reader that
    splits lines with Python's ``str.splitlines()`` cut a JSONL record holding one in two."""
    return _LINE_BREAKS.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False, indent=indent))


#: What ``str.splitlines()`` breaks at that ``json.dumps`` leaves raw (it escapes controls below 0x20).
_LINE_BREAKS = re.compile("[\x85\u2028\u2029]")

