"""A link the server will read back: what :func:`pages.ui.url.sync` writes is kept under
:data:`MAX_LINK_CHARS` (the last kept questions left out first, then the last uploads, then
the question's answer and the question clipped), and the visitor is told once.

Why: Tornado answers a request line over about 128 KB with HTTP 400, so a session that kept ten
questions with long Japanese answers (each character nine in the address) wrote a link that
neither a reload nor a colleague could open.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlencode

from streamlit.runtime.state.query_params import (
    CLIENT_STATE_QUERY_STRING_MAX_FIELDS,
    CLIENT_STATE_QUERY_STRING_MAX_LENGTH,
)

from explorer.text.wording import plural
from pages.ui.deeplinks import TOO_LONG

#: The longest query string written (characters, percent-encoded): well under the server's limit.
MAX_LINK_CHARS = 60_000
#: What may be left out of a link, last values first, in this order: kept questions, then the
#: uploads past the first (each a short reference: only a very long list needs it).
_TRIMMED = (("kq", "kept question"), ("up", "uploaded file"))


def link_chars(want: dict[str, Any]) -> int:
    return len(urlencode(want, doseq=True))


def fit_link(want: dict[str, Any], limit: int = MAX_LINK_CHARS) -> tuple[dict[str, Any], str]:
    """``want`` cut to at most ``limit`` characters once encoded, and what was left out
    ("3 kept questions"), or "" when everything fits. The question being asked and its answer
    are clipped last (they are one box each)."""
    if link_chars(want) <= limit:
        return want, ""
    out = dict(want)
    dropped: list[str] = []
    for key, what in _TRIMMED:
        values = list(out.get(key) or [])
        n = 0
        while values and link_chars(out) > limit:
            values.pop()
            n += 1
            out[key] = values
        if not values:
            out.pop(key, None)
        if n:
            dropped.append(plural(n, what))
    for key in ("qa", "q"):  # the answer, then the question: clipped, not dropped
        value = str(out.get(key) or "")
        if link_chars(out) > limit and value and link_chars({**out, key: ""}) <= limit:
            out[key] = value[: _longest_fit(out, key, value, limit)]
            dropped.append("part of the question's answer" if key == "qa" else "part of the question")
    return out, ", ".join(dropped)


def _longest_fit(want: dict[str, Any], key: str, value: str, limit: int) -> int:
    """The longest start of ``value`` that keeps ``want`` (with it at ``key``) within ``limit``
    once encoded: a CJK character is nine characters in the address, a Latin letter one."""
    lo, hi = 0, len(value)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if link_chars({**want, key: value[:mid]}) <= limit:
            lo = mid
        else:
            hi = mid - 1
    return lo


def too_long_notice(raw: str | None) -> str:
    """What to say of a link Streamlit read none of (``serve.py`` sends it on as
    ``toolong=<values>-<characters>``, an untrusted value: only its two numbers are read), or ""."""
    if raw is None:
        return ""
    m = re.fullmatch(r"(\d{1,9})-(\d{1,12})", raw)
    said = f" ({int(m[1]):,} values, {int(m[2]):,} characters)" if m else ""
    return (
        f"The link was too long to be read{said}: the server reads at most "
        f"{CLIENT_STATE_QUERY_STRING_MAX_FIELDS:,} values and {CLIENT_STATE_QUERY_STRING_MAX_LENGTH:,} "
        "characters. The app opens with its default view."
    )


def restore_too_long(qp: Any, notices: list[str]) -> None:
    """Add :func:`too_long_notice` of the link to ``notices``."""
    said = too_long_notice(qp.get(TOO_LONG))
    if said:
        notices.append(said)
