"""Document text made inert for HTML: escaped, and its bidirectional controls shown, not obeyed.

Why its own module: every view that puts a document's text into markup (the text view, a hit's
snippet) and every plain-text label (a select box, a tooltip) needs the same rule.
"""

from __future__ import annotations

import html
import re
import unicodedata

#: Bidirectional controls (embeddings, overrides, isolates). Obeyed in the text view, one in a
#: document reorders what follows it to the line's end, chunk numbers and boundaries included,
#: so the view no longer shows the text as it was chunked ("Trojan Source"): each is shown as
#: :data:`BIDI_SIGN` instead, one code point for one, so the view's offsets hold.
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")
BIDI_SIGN = "⇄"


def escape_text(s: str) -> str:
    """Document text made inert for HTML: escaped, and each bidirectional control shown as a
    marked sign naming it rather than obeyed."""
    return BIDI_CONTROLS.sub(_bidi_sign, html.escape(s))


def named_controls(s: str) -> str:
    """``s`` with its bidirectional controls named (``<U+202E>``): for plain text such as a
    tooltip, where a sign cannot be marked."""
    return BIDI_CONTROLS.sub(lambda m: f"<U+{ord(m.group()):04X}>", s)


def _bidi_sign(m: re.Match[str]) -> str:
    code = f"U+{ord(m.group()):04X}"
    name = unicodedata.name(m.group(), code).lower()
    tip = f"{code} {name}: a control that reorders the text after it, shown here, not obeyed"
    return f'<span class="ce-bidi" title="{tip}">{BIDI_SIGN}</span>'
