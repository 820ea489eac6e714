"""Typed text found in a document the way a person reads it, mapped back to exact offsets.

A gold answer is typed or pasted: a sentence copied from a PDF viewer has a space where the
text has a line break, or ``superintendent`` where the text has ``superin-`` at a line end. Both
the document and the answer are read through a *view* that

* turns every run of whitespace (spaces, tabs, line breaks) into one space;
* drops a hyphen between two letters, alone, at a line end or before spaces (``superin-\\ntendent``
  reads ``superintendent``; ``well-\\nknown``, ``well-known`` and ``wellknown`` read the same), since a
  line-end hyphen may be the word's own or the typesetter's, and a PDF viewer copies the line
  end as a space (``superin- tendent``);
* folds typographic quotes to plain ones and compatibility characters to their plain form
  (NFKC: the ``ﬁ`` ligature is ``fi``); a soft hyphen, a zero-width space, a word joiner
  and a byte-order mark are nothing;

and remembers, for every character of the view, where it comes from in the original text, so a
match maps back to exact ``start``/``end`` offsets of ``Document.text``. Case and everything
else must match, unless the caller asks for case to be set aside (the app does for a typed
answer that matches nowhere with its case).

Why a module of its own: it is pure string work with its own property test, used by
:mod:`explorer.evaluation.questions` (question files, the app's expected answers).
"""

from __future__ import annotations

import re
import sys
import unicodedata
from array import array
from dataclasses import dataclass

from explorer import limits
from explorer.lru import per_text

_LETTER = r"[^\W\d_]"
#: One token the view rewrites: a hyphen between letters (perhaps at a line end), a whitespace
#: run, a soft hyphen or an invisible space (zero-width space, word joiner, byte-order mark: text
#: copied from a page carries them; the app's own messages put word joiners in escaped text).
_TOKEN = re.compile(
    rf"(?P<hy>(?<={_LETTER})[-\u2010\u00ad](?:[ \t]*(?:\r\n|\r|\n)[ \t]*|[ \t]+)?(?={_LETTER}))"
    r"|(?P<ws>\s+)|(?P<soft>[\u00ad\u200b\u2060\ufeff])"
)
_QUOTES = {"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201c": '"', "\u201d": '"', "\u201e": '"'}


@dataclass(frozen=True)
class View:
    """A normalised text and, for each of its characters, its offset in the original."""

    text: str
    where: array


def _fold(c: str) -> str:
    return _QUOTES.get(c) or unicodedata.normalize("NFKC", c)


def _copy(segment: str, at: int, out: list[str], where: array) -> None:
    if segment.isascii():
        out.append(segment)
        where.extend(range(at, at + len(segment)))
        return
    for i, c in enumerate(segment):
        f = _fold(c)
        out.append(f)
        where.extend([at + i] * len(f))


@per_text(limits.MATCH_VIEW_BYTES, lambda v: sys.getsizeof(v.text) + v.where.itemsize * len(v.where))
def view(text: str) -> View:
    """The view of ``text`` (see the module)."""
    out: list[str] = []
    where = array("i")  # 4 bytes a character: texts stay under 2**31 characters
    last = 0
    for m in _TOKEN.finditer(text):
        _copy(text[last : m.start()], last, out, where)
        if m.lastgroup == "ws":
            out.append(" ")
            where.append(m.start())
        last = m.end()
    _copy(text[last:], last, out, where)
    return View("".join(out), where)


def needle(answer: str) -> str:
    """What is searched for ``answer``: its view, without spaces at either end."""
    return view(answer).text.strip(" ")


def find_tolerant(answer: str, text: str, limit: int = 20, *, fold_case: bool = False) -> list[tuple[int, int]]:
    """Where ``answer`` occurs in ``text`` as read through the view, as exact (start, end)
    offsets of ``text``, in order, at most ``limit``; with ``fold_case``, case aside too."""
    n = needle(answer)
    if not n:
        return []
    v = view(text)
    hay = _lower(v.text) if fold_case else v.text
    n = _lower(n) if fold_case else n
    found = []
    pos = hay.find(n)
    while pos != -1 and len(found) < limit:
        found.append((v.where[pos], v.where[pos + len(n) - 1] + 1))
        pos = hay.find(n, pos + 1)
    return found


def _lower(text: str) -> str:
    """``text`` in lower case character by character, so offsets into it stay those of ``text``
    (a character whose lower case is longer, "İ", stays as it is). Not memoised: it is a last
    resort, and a copy of each document kept would cost memory on every server."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)


def same_text(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` read the same (equal through the view)."""
    return a == b or needle(a) == needle(b)


def other_forms(text: str) -> list[str]:
    """``text`` in its other Unicode forms (accents composed, or decomposed as e + U+0301): a
    document saved one way and an answer typed the other hold the same letters."""
    return sorted({unicodedata.normalize(f, text) for f in ("NFC", "NFD")} - {text})
