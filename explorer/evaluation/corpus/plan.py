"""Questions of a corpus that is never loaded whole: the question file is read first, each
document is matched against it as it streams by, and the gold spans are settled at the end,
with the rules and messages of :func:`explorer.evaluation.questions.load_questions`.

Why apart from :mod:`explorer.evaluation.questions`: that module resolves a file against
documents in memory. Here a reference is checked on its document when that one is loaded
(span inside the text, ``content`` equal), an ``answer`` is looked for in each document it may
be in (exact occurrences anywhere win over tolerant ones, as in
:func:`~explorer.evaluation.answers.find_answer`), and what was found is small and
JSON-ready, so it goes into the results file with its document and a resumed run reads it back
instead of loading the document again. A mistake that can be blamed on one document (a span
outside it, an answer missing from the document named) stops the run when that document comes;
one that needs the whole corpus (an answer found nowhere, or twice) stops it at the end.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from explorer.documents.document import Document
from explorer.errors import LoadError
from explorer.evaluation.answers import CLI_HINT, MAX_OCCURRENCES, find_answer, only_place
from explorer.evaluation.questions import (
    NotLoaded,
    Question,
    _check_span,
    question_records,
    read_question_file,
    record_parts,
    several_documents,
    unloaded_names,
)

#: What a document id looks like (:func:`explorer.documents.document.text_id`): a reference
#: naming no file of the corpus may still name a document by its id, known once it is loaded.
_ID = re.compile(r"[0-9a-f]{16}")
#: One document's findings: ``["r", question, reference, start, end]`` or ``["r", q, r,
#: "error"]``, and ``["a", question, answer, exact (0/1), [[start, end], ...]]``.
Outcome = list


@dataclass(frozen=True, slots=True)
class _Ref:
    key: str | None
    start: Any
    end: Any
    content: Any
    where: str


@dataclass(frozen=True, slots=True)
class _Planned:
    text: str
    where: str
    refs: tuple[_Ref, ...] = ()
    answers: tuple[str, ...] = ()
    scope: str | None = None
    is_answer: bool = False


def _planned(rec: Any, where: str) -> _Planned:
    """One record checked for its shape (the document lookups come later)."""
    parts = record_parts(rec, where)
    text, where = parts.text, parts.where
    if parts.references is not None:
        refs = []
        for i, r in enumerate(parts.references):
            w = f"{where}, reference {i + 1}"
            if not isinstance(r, Mapping):
                raise LoadError(f"{w}: expected an object with start and end")
            key = r.get("document", rec.get("document"))
            start, end = r.get("start", r.get("start_index")), r.get("end", r.get("end_index"))
            refs.append(_Ref(None if key is None else str(key), start, end, r.get("content"), w))
        return _Planned(text, where, refs=tuple(refs))
    answers = parts.answers or []
    for a in answers:
        if not isinstance(a, str) or not a.strip():
            raise LoadError(f"{where}: the answer is empty")
    scope = None if rec.get("document") is None else str(rec["document"])
    return _Planned(text, where, answers=tuple(answers), scope=scope, is_answer=True)


def _keys(name: str) -> set[str]:
    return {name, Path(name).name, Path(name).stem}


class QuestionPlan:
    """The questions of a file, to be matched against the documents ``names`` (file names, in
    corpus order) one at a time. Picklable: the Ray engine sends it to its workers."""

    def __init__(self, planned: Sequence[_Planned], names: Sequence[str]) -> None:
        self.questions = list(planned)
        self.n_docs = len(names)
        self._names = list(names)
        by_name: dict[str, list[int]] = {}
        for n, name in enumerate(names):
            for k in _keys(name):
                by_name.setdefault(k, []).append(n)
        self._by_name = by_name
        self._refs: dict[str | None, list[tuple[int, int]]] = {}
        self._scoped: dict[str, list[int]] = {}
        self._everywhere: list[int] = []
        #: document → references and answers that can only be about it (checked when it comes)
        self._certain: dict[int, list[tuple[int, int]]] = {}
        for qi, q in enumerate(self.questions):
            if q.is_answer:
                if q.scope is None:
                    self._everywhere.append(qi)
                else:
                    self._scoped.setdefault(q.scope, []).append(qi)
                    self._plan_key(q.scope, q.where, (qi, -1))
            for ri, r in enumerate(q.refs):
                self._refs.setdefault(r.key, []).append((qi, ri))
                self._plan_key(r.key, r.where, (qi, ri))

    #: (document name, questions) left out by ``skip_unloaded``, most first.
    unloaded: tuple[tuple[str, int], ...] = ()

    @classmethod
    def read(cls, source: str | Path, names: Sequence[str], *, skip_unloaded: bool = False) -> QuestionPlan:
        """The plan of the question file ``source``; with ``skip_unloaded`` a question that names
        a document that is not in ``names`` (nor a document id) is left out and counted, as
        :func:`~explorer.evaluation.questions.read_questions` does in memory."""
        path = Path(source)
        data = read_question_file(path)
        planned = [_planned(rec, where) for where, rec in question_records(data, path.name)]
        if not planned:
            raise LoadError(f"{path.name!r} holds no questions")
        unloaded: Counter[str] = Counter()
        if skip_unloaded:
            known = {k for n in names for k in _keys(n)}
            kept = []
            for q in planned:
                named = [r.key for r in q.refs] + [q.scope]
                missing = next((k for k in named if k is not None and k not in known and not _ID.fullmatch(k)), None)
                if missing is None:
                    kept.append(q)
                else:
                    unloaded[missing] += 1
            if not kept:
                raise LoadError(
                    f"{path.name!r}: none of its {unloaded.total()} questions is about a document given "
                    f"(it names {unloaded_names(unloaded.most_common())})"
                )
            planned = kept
        plan = cls(planned, names)
        plan.unloaded = tuple(unloaded.most_common())
        return plan

    def _loaded(self) -> str:
        shown = ", ".join(repr(n) for n in self._names[:5])
        more = f", … ({self.n_docs:,} in all)" if self.n_docs > 5 else ""
        return (shown + more) or "none"

    def _plan_key(self, key: str | None, where: str, item: tuple[int, int]) -> None:
        """Refuse now a document name that can match no document, or several; remember the one
        document a name can only mean."""
        if key is None:
            if self.n_docs != 1:
                raise LoadError(
                    f"{where}: no document named, and {self.n_docs} documents are loaded: "
                    'add "document": "<file name>" to each reference'
                )
            self._certain.setdefault(0, []).append(item)
            return
        found = self._by_name.get(key, [])
        if len(found) > 1:
            raise several_documents(where, key, len(found))
        if not found and not _ID.fullmatch(key):
            raise NotLoaded(f"{where}: document {key!r} is not loaded (loaded: {self._loaded()})", key)
        if found and not _ID.fullmatch(key):
            self._certain.setdefault(found[0], []).append(item)

    # -- in the workers: one document ---------------------------------------------------------
    def match(self, doc: Document, n: int) -> list[Outcome]:
        """What document ``n`` says about the questions: its references checked, the answers
        that may be in it looked for (only the ones found are listed)."""
        out: list[Outcome] = []
        keys = _keys(doc.name) | {doc.id}
        ref_items = [it for k in keys for it in self._refs.get(k, [])]
        if self.n_docs == 1:
            ref_items += self._refs.get(None, [])
        for qi, ri in sorted(set(ref_items)):
            r = self.questions[qi].refs[ri]
            try:
                _, s, e = _check_span(doc, r.start, r.end, r.where)
                if isinstance(r.content, str) and doc.text[s:e] != r.content:
                    raise LoadError(
                        f"{r.where}: the text at {r.start}:{r.end} of {doc.name!r} is not the "
                        "reference's content (was the document cleaned up or changed?)"
                    )
                out.append(["r", qi, ri, s, e])
            except LoadError as err:
                out.append(["r", qi, ri, str(err)])
        answer_qs = sorted({*self._everywhere, *(qi for k in keys for qi in self._scoped.get(k, []))})
        for qi in answer_qs:
            for ai, a in enumerate(self.questions[qi].answers):
                found = find_answer(a, [doc])
                if found:
                    exact = int(doc.text[found[0][1] : found[0][2]] == a)
                    out.append(["a", qi, ai, exact, [[s, e] for _, s, e in found]])
        return out

    # -- on the driver --------------------------------------------------------------------------
    def check(self, n: int, outcomes: Sequence[Outcome]) -> None:
        """Stop now (LoadError) on a mistake that can only be about document ``n``."""
        certain = self._certain.get(n)
        if not certain:
            return
        refs = {(o[1], o[2]): o for o in outcomes if o[0] == "r"}
        answers: dict[tuple[int, int], list] = {(o[1], o[2]): o[4] for o in outcomes if o[0] == "a"}
        for qi, ri in certain:
            if ri >= 0:
                o = refs.get((qi, ri))
                if o is not None and len(o) == 4:
                    raise LoadError(o[3])
                continue
            for ai, a in enumerate(self.questions[qi].answers):
                _settle_answer(a, [(n, s, e) for s, e in answers.get((qi, ai), [])], self.questions[qi].where)

    def resolve(self, doc_ids: Sequence[str], outcomes: Sequence[Sequence[Outcome]]) -> list[Question]:
        """The questions with their gold spans, from every document's outcomes (in corpus order)."""
        by_id: dict[str, list[int]] = {}
        for n, d in enumerate(doc_ids):
            by_id.setdefault(d, []).append(n)
        refs: dict[tuple[int, int, int], Outcome] = {}
        exact: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
        tolerant: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
        for n, outs in enumerate(outcomes):
            for o in outs:
                if o[0] == "r":
                    refs[(o[1], o[2], n)] = o
                else:
                    (exact if o[3] else tolerant).setdefault((o[1], o[2]), []).extend(
                        (n, s, e) for s, e in o[4]
                    )
        out = []
        for qi, q in enumerate(self.questions):
            spans: list[tuple[str, int, int]] = []
            if q.is_answer:
                scope = None if q.scope is None else self._target(q.scope, by_id, q.where)
                for ai, a in enumerate(q.answers):
                    ex, tol = (
                        [f for f in d.get((qi, ai), []) if scope in (None, f[0])] for d in (exact, tolerant)
                    )
                    found = ex or tol
                    n, s, e = _settle_answer(a, found, q.where)
                    spans.append((doc_ids[n], s, e))
            for ri, r in enumerate(q.refs):
                n = self._target(r.key, by_id, r.where)
                o = refs.get((qi, ri, n))
                if o is None or len(o) == 4:
                    raise LoadError(o[3] if o is not None else f"{r.where}: its document was not read")
                spans.append((doc_ids[n], o[3], o[4]))
            out.append(Question(q.text, tuple(spans)))
        return out

    def _target(self, key: str | None, by_id: Mapping[str, list[int]], where: str) -> int:
        if key is None:
            return 0  # a single document (checked when the file was read)
        found = sorted(set(self._by_name.get(key, [])) | set(by_id.get(key, [])))
        if len(found) == 1:
            return found[0]
        if not found:
            raise NotLoaded(f"{where}: document {key!r} is not loaded (loaded: {self._loaded()})", key)
        raise several_documents(where, key, len(found))


def _settle_answer(answer: str, found: list[tuple[int, int, int]], where: str) -> tuple[int, int, int]:
    """The one place of ``answer`` (as :func:`~explorer.evaluation.answers.locate_answer`)."""
    return only_place(answer, found[:MAX_OCCURRENCES], where, CLI_HINT)
