"""Questions with gold answers: question files read against the loaded documents (JSONL, a
JSON list, or Chroma's ``questions_df.csv``), quoted answers located as exact character spans
(:mod:`explorer.evaluation.answers`), and questions written back as a file the CLI reads.

Why a module of its own: every problem in a question file is the user's to fix, so each is a
:class:`~explorer.errors.LoadError` naming the line and the question; scoring does not care
where a question came from.
"""

from __future__ import annotations

import csv
import io
import re
import stat
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from explorer import untrusted
from explorer.documents.decoding import split_bom
from explorer.documents.document import Document
from explorer.errors import LoadError, ParamError
from explorer.evaluation.answers import AnswerNotFound, locate_answer
from explorer.text.wording import plural

#: Largest question file accepted (bytes).
MAX_QUESTION_FILE_BYTES = 20 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Question:
    """A question and its gold excerpts as (document id, start, end) into ``Document.text``."""

    text: str
    references: tuple[tuple[str, int, int], ...]


class NotLoaded(LoadError):
    """A question names a document that is not loaded (``name``, as the file spells it)."""

    def __init__(self, message: str, name: str) -> None:
        super().__init__(message)
        self.name = name


def several_documents(where: str, name: str, n: int, ids: Sequence[str] = ()) -> LoadError:
    """A question's document name that more than one loaded document answers to (two files of
    one name from two folders, say): the id tells them apart, so say so."""
    which = ", ".join(ids) if ids else "the doc_id that `chunk` prints"
    return LoadError(f"{where}: document {name!r} matches {n:,} loaded documents: name it by its id instead ({which})")


class _Docs:
    """Find a document by the name a question file uses: file name, stem, or id."""

    def __init__(self, docs: Sequence[Document]) -> None:
        self.docs = list(docs)
        self._by: dict[str, list[Document]] = {}
        for d in self.docs:
            keys = {d.name, Path(d.name).name, Path(d.name).stem, d.id}
            for key in keys:
                self._by.setdefault(key, []).append(d)

    def get(self, name: Any, where: str) -> Document:
        if name is None:
            if len(self.docs) == 1:
                return self.docs[0]
            raise LoadError(
                f"{where}: no document named, and {len(self.docs)} documents are loaded: "
                'add "document": "<file name>" to each reference'
            )
        found = self._by.get(str(name), [])
        if len(found) == 1:
            return found[0]
        names = ", ".join(repr(d.name) for d in self.docs) or "none"
        if not found:
            raise NotLoaded(f"{where}: document {name!r} is not loaded (loaded: {names})", str(name))
        raise several_documents(where, str(name), len(found), [d.id for d in found])


def _check_span(doc: Document, start: Any, end: Any, where: str) -> tuple[str, int, int]:
    if (
        isinstance(start, bool)
        or isinstance(end, bool)
        or not isinstance(start, int)
        or not isinstance(end, int)
    ):
        raise LoadError(f"{where}: start and end must be whole numbers, got {start!r} and {end!r}")
    if not 0 <= start < end <= len(doc.text):
        raise LoadError(
            f"{where}: span {start}:{end} is not inside {doc.name!r} (0:{len(doc.text)}) or is empty"
        )
    return (doc.id, start, end)


def _clip(s: str, n: int = 60) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


@dataclass(frozen=True, slots=True)
class RecordParts:
    """A question record with its shape checked, before any document is looked up (shared by
    :func:`load_questions` and the corpus runner's plan)."""

    text: str  #: the question, stripped
    where: str  #: where it is, naming the question (for messages)
    references: list | None  #: the raw references (non-empty), when the record has them
    answers: list | None  #: the answers (a non-empty list), when it has no references


def record_parts(rec: Any, where: str) -> RecordParts:
    """Check a record's shape: a question, then references (a non-empty list, or JSON text of
    one) or answers (a string or a non-empty list). Raises LoadError naming the record."""
    if not isinstance(rec, Mapping):
        raise LoadError(f"{where}: expected an object with a question, got {type(rec).__name__}")
    text = rec.get("question")
    if not isinstance(text, str) or not text.strip():
        raise LoadError(f'{where}: "question" is missing or empty')
    where = f"{where} (question {_clip(text)!r})"
    if "references" in rec:
        raw = rec["references"]
        if isinstance(raw, str):
            raw = untrusted.loads(raw, f"{where}: references", LoadError)
        if not isinstance(raw, list) or not raw:
            raise LoadError(f"{where}: references must be a non-empty list")
        return RecordParts(text.strip(), where, raw, None)
    if "answer" in rec:
        answers = rec["answer"]
        answers = [answers] if isinstance(answers, str) else answers
        if not isinstance(answers, list) or not answers:
            raise LoadError(f'{where}: "answer" must be a string or a list of strings')
        for i, a in enumerate(answers, 1):  # ["pumps", 3] was "the answer is empty"
            if not isinstance(a, str):
                raise LoadError(f"{where}: answer {i} must be a string, got {_clip(repr(a))}")
        return RecordParts(text.strip(), where, None, answers)
    raise LoadError(f'{where}: needs "references" (start/end spans) or "answer" (exact text)')


def _question_from_record(rec: Any, docs: _Docs, where: str) -> Question:
    parts = record_parts(rec, where)
    where = parts.where
    refs: list[tuple[str, int, int]] = []
    if parts.references is not None:
        for i, r in enumerate(parts.references):
            w = f"{where}, reference {i + 1}"
            if not isinstance(r, Mapping):
                raise LoadError(f"{w}: expected an object with start and end")
            doc = docs.get(r.get("document", rec.get("document")), w)
            start = r.get("start", r.get("start_index"))
            end = r.get("end", r.get("end_index"))
            ref = _check_span(doc, start, end, w)
            content = r.get("content")
            if isinstance(content, str) and doc.text[ref[1] : ref[2]] != content:
                raise LoadError(
                    f"{w}: the text at {start}:{end} of {doc.name!r} is not the reference's content "
                    "(was the document cleaned up or changed?)"
                )
            refs.append(ref)
    elif rec.get("document") is not None:
        refs = [locate_answer(a, [docs.get(rec["document"], where)], where) for a in parts.answers or ()]
    else:
        try:
            refs = [locate_answer(a, docs.docs, where) for a in parts.answers or ()]
        except AnswerNotFound as err:  # its document, which the record does not name, may not be loaded
            raise NotLoaded(str(err), NOWHERE) from None
    return Question(parts.text, tuple(refs))


def questions_to_jsonl(questions: Sequence[Question], docs: Sequence[Document]) -> str:
    """A question file :func:`load_questions` reads back: one JSON object per line, each gold
    span as document name, start, end and its text (``content``, checked on loading), so a set
    of questions built in the app runs the same from the CLI."""
    by_id = {d.id: d for d in docs}
    lines = []
    for q in questions:
        refs = []
        for doc_id, start, end in q.references:
            doc = by_id.get(doc_id)
            if doc is None:
                raise LoadError(f"question {_clip(q.text)!r}: its document is not loaded")
            refs.append({"document": doc.name, "start": start, "end": end, "content": doc.text[start:end]})
        lines.append(untrusted.dumps({"question": q.text, "references": refs}))
    return "".join(line + "\n" for line in lines)


@dataclass(frozen=True)
class QuestionSet:
    """The questions of a file that could be scored, and, per document the file names but that
    is not loaded, how many questions were left out for it (when asked to skip those)."""

    questions: tuple[Question, ...]
    unloaded: tuple[tuple[str, int], ...] = ()  #: (document name as the file gives it, questions)

    @property
    def left_out(self) -> int:
        return sum(n for _, n in self.unloaded)


#: Document names a message lists at most.
MAX_NAMES_SAID = 5


#: What :attr:`QuestionSet.unloaded` names the questions by whose answer (a quote, no document
#: named) is in no loaded document: its document may be one that is not loaded.
NOWHERE = ""


def unloaded_names(unloaded: Sequence[tuple[str, int]]) -> str:
    """``'a.txt' (12), 'b.txt' (3)`` for a message: the first :data:`MAX_NAMES_SAID`, each clipped."""
    said = ", ".join(
        f"{c} whose quoted answer is in no loaded document" if n == NOWHERE else f"{_clip(n, 60)!r} ({c})"
        for n, c in unloaded[:MAX_NAMES_SAID]
    )
    more = len(unloaded) - MAX_NAMES_SAID
    return said + (f" and {more} more" if more > 0 else "")


def left_out_note(unloaded: Sequence[tuple[str, int]], absent: str = "not loaded", then: str = "") -> str:
    """What the questions left out are, in sentences: those about documents that are ``absent``,
    by document (followed by ``then``, what the reader can do about them), then those whose quoted
    answer is in no loaded document apart (the answer may be mistyped: a user was told to load
    more documents for a typo in their gold answer)."""
    named = [(n, c) for n, c in unloaded if n != NOWHERE]
    nowhere = sum(c for n, c in unloaded if n == NOWHERE)
    out = []
    if named:
        n = sum(c for _, c in named)
        are = "is" if n == 1 else "are"
        out.append(f"{plural(n, 'question')} about documents {absent} {are} left out: {unloaded_names(named)}.")
        out += [then] if then else []
    if nowhere:
        are = "is" if nowhere == 1 else "are"
        whose = "whose quoted answer is" if nowhere == 1 else "whose quoted answers are"
        out.append(
            f"{plural(nowhere, 'question')} {whose} in no loaded document {are} left out: check "
            f"{'its answer' if nowhere == 1 else 'their answers'} (a typo?) or load the document."
        )
    return " ".join(out)


def read_question_file(path: Path) -> bytes:
    """The bytes of the question file at ``path``: LoadError if it is not a regular file (a device
    or a pipe is read without end), is over :data:`MAX_QUESTION_FILE_BYTES` or cannot be read."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            raise LoadError(f"{str(path)!r} is not a file")
        with path.open("rb") as f:
            data = f.read(MAX_QUESTION_FILE_BYTES + 1)
    except OSError as err:
        raise LoadError(f"cannot read question file {str(path)!r}: {err.strerror or err}") from None
    if len(data) > MAX_QUESTION_FILE_BYTES:
        raise LoadError(f"{path.name!r} is over {MAX_QUESTION_FILE_BYTES // 2**20} MB")
    return data


def load_questions(
    source: str | Path | bytes, docs: Sequence[Document], name: str | None = None
) -> list[Question]:
    """Every question of a file, read against the loaded ``docs`` (:func:`read_questions`; a
    question about a document that is not loaded is an error, so a benchmark never silently
    scores fewer questions)."""
    return list(read_questions(source, docs, name).questions)


def read_questions(
    source: str | Path | bytes, docs: Sequence[Document], name: str | None = None, *, skip_unloaded: bool = False
) -> QuestionSet:
    """Read a question file against the loaded ``docs``.

    Formats (detected from the content): JSONL (or a JSON list) of
    ``{"question", "references": [{"document"?, "start", "end"}]}`` or
    ``{"question", "answer": "exact substring", "document"?}``; or Chroma's ``questions_df.csv``
    (columns ``question``, ``references``, ``corpus_id``; ``corpus_id`` is a document's file
    stem). Any problem raises :class:`LoadError` naming the line and the question.

    ``skip_unloaded``: a question that names a document that is not loaded is left out and
    counted in :attr:`QuestionSet.unloaded` instead (the app, where a user loads a few documents
    of the corpus a question file covers), and so is a question whose quoted answer, its
    document not named, is in no loaded document (under :data:`NOWHERE`); LoadError still when
    no question is left.
    """
    if not docs:
        raise LoadError("load the documents before the questions")
    if isinstance(source, bytes | bytearray):
        data = bytes(source)
        name = name or "questions"
    else:
        path = Path(source)
        name = name or path.name
        data = read_question_file(path)
    lookup = _Docs(docs)
    out: list[Question] = []
    unloaded: Counter[str] = Counter()
    nowhere: NotLoaded | None = None  # the first answer found nowhere, said if no question is left
    for where, rec in question_records(data, name):
        try:
            out.append(_question_from_record(rec, lookup, where))
        except NotLoaded as err:
            if not skip_unloaded:
                raise
            unloaded[err.name] += 1
            nowhere = nowhere or (err if err.name == NOWHERE else None)
    if not out and nowhere is not None and len(unloaded) == 1:
        raise nowhere  # every answer found nowhere: most likely a file about other documents, or a typo
    if not out and unloaded:
        loaded = ", ".join(repr(d.name) for d in docs)
        raise LoadError(
            f"{name!r}: none of its {unloaded.total()} questions is about a loaded document (it names "
            f"{unloaded_names(unloaded.most_common())}; loaded: {loaded})"
        )
    if not out:
        raise LoadError(f"{name!r} holds no questions")
    return QuestionSet(tuple(out), tuple(unloaded.most_common()))


def question_records(data: bytes, name: str) -> Iterator[tuple[str, Any]]:
    """(where, record) of every question of a question file: a JSON list, JSONL, or Chroma's
    ``questions_df.csv`` (question, references as a JSON list, corpus_id)."""
    if len(data) > MAX_QUESTION_FILE_BYTES:
        raise LoadError(f"{name!r} is over {MAX_QUESTION_FILE_BYTES // 2**20} MB")
    text = _decode(data, name)
    head = text.lstrip()[:1]
    if not head:
        raise LoadError(f"{name!r} is empty")
    if head == "[":
        records = untrusted.loads(text, repr(name), LoadError)
        if not isinstance(records, list):
            raise LoadError(f"{name!r}: expected a list of questions")
        yield from ((f"{name} item {i + 1}", r) for i, r in enumerate(records))
    elif head == "{":
        for n, line in enumerate(re.split(r"\r\n|\r|\n", text), 1):  # not splitlines(): U+2028 is in strings
            if line.strip():
                yield f"{name} line {n}", _jsonl_record(line, f"{name} line {n}")
    else:
        csv.field_size_limit(MAX_QUESTION_FILE_BYTES)
        reader = csv.DictReader(io.StringIO(text, newline=""))
        missing = {"question", "references"} - set(reader.fieldnames or [])
        if missing:
            raise LoadError(
                f"{name!r} is neither JSONL nor a CSV with columns question, references, corpus_id "
                f"(missing: {', '.join(sorted(missing))})"
            )
        try:
            for row in reader:
                rec = {"question": row.get("question"), "references": row.get("references")}
                if row.get("corpus_id"):
                    rec["document"] = row["corpus_id"]
                yield f"{name} line {reader.line_num}", rec
        except csv.Error as err:
            raise LoadError(f"{name} line {reader.line_num}: {err}") from None


def _jsonl_record(line: str, where: str) -> Any:
    """One JSONL line's value. A line that would read but for a comma at its end (a JSON list
    turned into lines by hand) says so: "extra data" at the comma's column did not."""
    try:
        return untrusted.loads(line, where, LoadError)
    except LoadError:
        bare = line.rstrip()
        if bare.endswith(",") and bare[:-1].rstrip().endswith("}"):
            raise LoadError(f"{where} ends with a comma: JSONL holds one object a line, nothing between them") from None
        raise


def _decode(data: bytes, name: str) -> str:
    """The file's text: UTF-8, or UTF-16/32 after their byte-order mark (PowerShell's ``>`` and
    Notepad's "Unicode" write UTF-16 with one: it was refused as "not UTF-8 text (byte 0)")."""
    codec, body = split_bom(data) or ("utf-8", data)
    try:
        return body.decode(codec)
    except UnicodeDecodeError as err:
        line = body[: err.start].count(b"\n") + 1 if codec == "utf-8" else 0
        at = f"line {line}, byte {err.start}" if line else f"byte {err.start}"
        raise LoadError(
            f"{name!r} is not {codec.upper()} text ({at}: 0x{body[err.start]:02x}): save it as UTF-8"
        ) from None


def check_questions(questions: Sequence[Question], docs: Sequence[Document]) -> None:
    """ParamError unless there are questions and every one refers to a loaded document."""
    if not questions:
        raise ParamError("no questions to evaluate")
    ids = {d.id for d in docs}
    for q in questions:
        for doc_id, _, _ in q.references:
            if doc_id not in ids:
                raise ParamError(f"question {_clip(q.text)!r} refers to a document that is not loaded")
