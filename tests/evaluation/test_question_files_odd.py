"""Question files nobody wrote by hand: saved by Windows tools, copied from a PDF viewer, with
values of the wrong type. Good-but-odd input is read; bad input is one LoadError naming it."""

from __future__ import annotations

import json

import pytest

from explorer import Document, LoadError
from explorer.evaluation.questions import load_questions

TEXT = (
    "Le rapport dit\u00a0: «\u00a0la hausse est de 10\u00a0%\u00a0». L’équipe vérifie les pompes.\n"
    "Le superin-\ntendant signe le registre chaque soir.\n"
)


@pytest.fixture
def doc() -> Document:
    return Document("rapport.txt", "text", TEXT)


def _jsonl(records: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


RECORDS = [
    {"question": "Quelle hausse ?", "answer": "la hausse est de 10 %"},  # spaces for no-break spaces
    {"question": "Qui vérifie ?", "answer": "L'équipe vérifie"},  # ' for ’
    {"question": "Qui signe ?", "answer": "Le superintendant signe"},  # the line-end hyphen joined
]


@pytest.mark.parametrize("codec", ["utf-16", "utf-32", "utf-8-sig"])
def test_a_file_saved_with_a_byte_order_mark_is_read(doc, codec):
    """PowerShell's ``>`` and Notepad's "Unicode" save UTF-16 with a byte-order mark: it was
    refused as "not UTF-8 text (byte 0)"."""
    data = _jsonl(RECORDS).replace("\n", "\r\n").encode(codec)
    got = load_questions(data, [doc], "q.jsonl")
    assert [TEXT[s:e] for q in got for _, s, e in q.references] == [
        "la hausse est de 10\u00a0%",
        "L’équipe vérifie",
        "Le superin-\ntendant signe",
    ]


def test_an_answer_copied_from_a_pdf_viewer_keeps_its_hyphen_before_the_line_end_space(doc):
    """A viewer copies ``superin-`` + line end as ``superin- tendant``: it was "not an exact
    substring ... even ignoring ... hyphens at line ends"."""
    record = {"question": "Qui signe ?", "answer": "Le superin- tendant signe"}
    (q,) = load_questions(_jsonl([record]).encode(), [doc])
    ((_, start, end),) = q.references
    assert TEXT[start:end] == "Le superin-\ntendant signe"


def test_a_non_utf8_file_names_its_line_and_byte(doc):
    data = (_jsonl(RECORDS[:1]) + _jsonl([{"question": "Qui vérifie ?", "answer": "pompes"}])).encode("cp1252")
    with pytest.raises(LoadError, match=r"'q\.jsonl' is not UTF-8 text \(line 2, byte \d+: 0xe9\): save it as UTF-8"):
        load_questions(data, [doc], "q.jsonl")


@pytest.mark.parametrize(
    ("answer", "said"),
    [(["pompes", 3], "answer 2 must be a string, got 3"), ([["pompes"]], r"answer 1 must be a string, got \['pompes'\]")],
)
def test_an_answer_that_is_not_a_string_is_named(doc, answer, said):
    """Was "the answer is empty", for an answer that is not empty but a number or a list."""
    with pytest.raises(LoadError, match=r"q\.jsonl line 1 \(question 'q'\): " + said):
        load_questions(_jsonl([{"question": "q", "answer": answer}]).encode(), [doc], "q.jsonl")


def test_a_comma_after_each_jsonl_line_is_named(doc):
    """A JSON list turned into lines by hand keeps its commas: that was "not valid JSON (column
    47: extra data)"."""
    data = "".join(json.dumps(r, ensure_ascii=False) + ",\n" for r in RECORDS).encode()
    with pytest.raises(LoadError, match=r"q\.jsonl line 1 ends with a comma: JSONL holds one object a line"):
        load_questions(data, [doc], "q.jsonl")
    with pytest.raises(LoadError, match=r"line 1 is not valid JSON"):  # a comma inside stays the parser's word
        load_questions(b'{"question": "q", "answer": "pompes",}\n', [doc], "q.jsonl")
