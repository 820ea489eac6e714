"""An answer's place in the loaded documents, as exact character spans: typed text found
verbatim, else ignoring whitespace, line breaks and end-of-line hyphens, else in its other
Unicode form; none or several places are errors the user fixes.

Apart from :mod:`explorer.evaluation.questions` (the files) because Retrieve's typed answer and
the streamed corpus's plan look answers up too, without a question file.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from explorer.documents.document import Document
from explorer.errors import LoadError

T = TypeVar("T")

#: Occurrences of an answer looked for at most (more only tells that it is ambiguous).
MAX_OCCURRENCES = 20
#: What the CLI suggests when an answer is not found.
CLI_HINT = "compare with the text `python -m explorer text FILE` prints"


class AnswerNotFound(LoadError):
    """The answer occurs in no document searched."""


class AmbiguousAnswer(LoadError):
    """The answer occurs in several places: ``occurrences`` holds them (document id, start, end),
    so that a user can pick one."""

    def __init__(self, message: str, occurrences: Sequence[tuple[str, int, int]]) -> None:
        super().__init__(message)
        self.occurrences = tuple(occurrences)


def find_answer(
    answer: str, docs: Sequence[Document], limit: int = MAX_OCCURRENCES, *, fold_case: bool = False, forms: bool = True
) -> list[tuple[str, int, int]]:
    """Where ``answer`` occurs in ``docs`` as (document id, start, end), at most ``limit``.

    Exact occurrences first: when there are any, they are the answer. Else the answer is matched
    like a person reads it (:mod:`explorer.evaluation.matching`: whitespace and line breaks are
    one space, a hyphen at a line end between letters joins the word or stays as a hyphen), and
    each match is mapped back to the exact offsets of the document's text; failing both (and with
    ``forms``), the answer in its other Unicode form (accents composed or not). With ``fold_case``,
    only the tolerant match is made, case aside (a last resort for a typed answer)."""
    from explorer.evaluation.matching import find_tolerant, other_forms

    found: list[tuple[str, int, int]] = []
    if fold_case:
        for d in docs:
            found += [(d.id, s, e) for s, e in find_tolerant(answer, d.text, limit - len(found), fold_case=True)]
        return found[:limit]
    for d in docs:
        pos = d.text.find(answer)
        while pos != -1 and len(found) < limit:
            found.append((d.id, pos, pos + len(answer)))
            pos = d.text.find(answer, pos + 1)
    if found:
        return found
    for d in docs:
        found += [(d.id, s, e) for s, e in find_tolerant(answer, d.text, limit - len(found))]
    others = other_forms(answer) if forms and not found else []  # once: NFD's other form is NFC again
    return (found or next((f for alt in others if (f := find_answer(alt, docs, limit, forms=False))), []))[:limit]


def locate_answer(
    answer: str, docs: Sequence[Document], where: str = "answer", hint: str = CLI_HINT
) -> tuple[str, int, int]:
    """The one place ``answer`` occurs in ``docs`` (:func:`find_answer`: verbatim, else ignoring
    whitespace, line breaks and hyphens at line ends).

    No occurrence or several occurrences are errors (:class:`AmbiguousAnswer` for several),
    since the score would be meaningless; ``hint`` ends the message when there is none.
    """
    if not isinstance(answer, str) or not answer.strip():
        raise LoadError(f"{where}: the answer is empty")
    return only_place(answer, find_answer(answer, docs), where, hint)


def only_place(answer: str, found: Sequence[T], where: str, hint: str = CLI_HINT) -> T:
    """The one place in ``found`` where ``answer`` occurs: LoadError when there is none,
    :class:`AmbiguousAnswer` when there are several (a score would be meaningless)."""
    if not found:
        raise AnswerNotFound(
            f"{where}: answer {_clip(answer)!r} is not an exact substring of any loaded document, "
            f"even ignoring whitespace, line breaks and hyphens at line ends ({hint})"
        )
    if len(found) > 1:
        raise AmbiguousAnswer(
            f"{where}: answer {_clip(answer)!r} occurs more than once; give a longer answer or "
            "its start and end offsets",
            list(found),
        )
    return found[0]


def _clip(s: str, n: int = 60) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"
