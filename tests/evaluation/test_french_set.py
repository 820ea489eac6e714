"""The French retrieval sets (bench/data/french, the held-out one, and bench/data/french-dev, the
one to tune on): documents load, every gold span is valid.

Fast: no model. The spans are read by the same loader as ``python -m explorer evaluate``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from explorer.documents.loaders import load_path
from explorer.evaluation.questions import load_questions

DATA = Path(__file__).resolve().parents[2] / "bench" / "data"


@pytest.fixture(scope="module", params=["french", "french-dev"])
def folder(request) -> Path:
    return DATA / request.param


@pytest.fixture(scope="module")
def docs(folder):
    paths = sorted(p for p in folder.iterdir() if p.suffix in (".txt", ".md") and p.name != "SOURCES.md")
    return [load_path(p) for p in paths]


@pytest.fixture(scope="module")
def records(folder):
    text = (folder / "questions.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_documents_are_clean_text_of_the_right_size(docs, folder):
    assert len(docs) >= 4
    for d in docs:
        raw = (folder / d.name).read_text(encoding="utf-8")
        assert d.text == raw, f"{d.name}: the loader changed the text, offsets would not match the file"
        assert 15_000 <= len(raw.encode("utf-8")) <= 80_000, d.name
        assert not re.search("[\x08\x1b]", raw), f"{d.name}: backspace overstrike or escape codes"


def test_every_reference_span_is_inside_its_document_and_not_blank(docs, records):
    by_name = {d.name: d for d in docs}
    for rec in records:
        assert rec["question"].strip()
        assert rec["references"], rec["question"]
        for ref in rec["references"]:
            doc = by_name[ref["document"]]
            start, end = ref["start"], ref["end"]
            assert 0 <= start < end <= len(doc.text), rec["question"]
            span = doc.text[start:end]
            assert span.strip(), rec["question"]
            assert span == span.strip(), f"{rec['question']}: span has surrounding white space"
            assert span == ref["content"], f"{rec['question']}: content differs from the text at the offsets"


def test_loads_with_the_evaluate_loader(docs, folder):
    questions = load_questions(folder / "questions.jsonl", docs)
    assert len(questions) >= 30
    assert len({q.text for q in questions}) == len(questions), "duplicate questions"
    per_doc = Counter(doc_id for q in questions for doc_id, _, _ in q.references)
    assert len(per_doc) >= 4
    assert set(per_doc) == {d.id for d in docs}, "every document has questions"


def test_questions_cover_each_document_from_start_to_end(docs, records):
    """Each document has answers in its first third and in its last third."""
    for d in docs:
        starts = [r["start"] for rec in records for r in rec["references"] if r["document"] == d.name]
        assert min(starts) < len(d.text) / 3 and max(starts) > 2 * len(d.text) / 3, d.name


def test_questions_are_paraphrased_not_copied(records):
    """No run of 5 words of a question appears in its answer (the wording is a user's, not the text's)."""

    def words(s: str) -> list[str]:
        return re.findall(r"\w+", s.lower())

    for rec in records:
        q = words(rec["question"])
        answer = " ".join(" ".join(words(r["content"])) for r in rec["references"])
        for i in range(len(q) - 4):
            assert " ".join(q[i : i + 5]) not in answer, rec["question"]
