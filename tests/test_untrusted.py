"""Deep or huge JSON from users: one clear error, never a RecursionError or a traceback."""

from __future__ import annotations

import pytest

from explorer import ParamError
from explorer.documents.loaders import load_path
from explorer.errors import LoadError
from explorer.evaluation.questions import load_questions
from explorer.export.data import configs_from_json
from explorer.untrusted import depth, loads
from tests.cli.test_hostile_cli import ROOT, assert_one_error_line, run_cli

DEEP = "[" * 5_000 + "]" * 5_000


def test_depth_counts_brackets_outside_strings():
    assert depth('{"a": [1, {"b": "[[[[ not counted ]]]]"}]}') == 3
    assert depth('"\\"[" [[]]') == 2
    assert depth(DEEP) == 5_000
    assert depth("") == 0


def test_loads_refuses_deep_nesting_with_the_callers_error():
    with pytest.raises(ParamError, match="separators is nested more than 32 levels"):
        loads(DEEP, "separators", ParamError)
    with pytest.raises(LoadError, match=r"q\.json is not valid JSON \(column 4: expecting value\)$"):
        loads("[1,", "q.json", LoadError)
    assert loads('{"a": [[1]]}', "x", ParamError) == {"a": [[1]]}


def test_deep_json_everywhere_in_the_core(tmp_path):
    from explorer import chunk_document
    from explorer.documents.document import Document

    with pytest.raises(ParamError, match="nested more than"):
        chunk_document(Document("a.txt", "text", "some text"), "recursive", {"separators": DEEP})
    with pytest.raises(ParamError, match="nested more than"):
        configs_from_json(DEEP)
    doc = load_path(ROOT / "explorer" / "documents" / "samples" / "guide.md")
    for name, content in (("q.json", DEEP), ("q.jsonl", '{"question": ' + DEEP + "}")):
        path = tmp_path / name
        path.write_text(content)
        with pytest.raises(LoadError, match="nested more than"):
            load_questions(path, [doc])


def test_cli_deep_json_is_one_error_line(tmp_path):
    guide = str(ROOT / "explorer" / "documents" / "samples" / "guide.md")
    proc = run_cli("chunk", guide, "--strategy", "recursive", "--set", f"separators={DEEP}", cwd=tmp_path)
    assert_one_error_line(proc, "separators=", "nested more than")
    assert proc.returncode == 2
    (tmp_path / "deep.jsonl").write_text('{"question": ' + DEEP + "}\n")
    (tmp_path / "deep.json").write_text(DEEP)
    for q in ("deep.jsonl", "deep.json"):
        proc = run_cli("evaluate", "--corpus", guide, "--questions", q, "--retriever", "bm25", cwd=tmp_path)
        assert_one_error_line(proc, "nested more than")
        assert proc.returncode == 2


def test_loads_makes_lone_surrogates_whole_characters():
    """JSON's "\\ud800" decodes to a lone surrogate, which no UTF-8 encoder takes: one in a
    link's configuration crashed every page that wrote it back to the address or showed it."""
    value = loads(r'{"q": "a\ud800b", "\udfff": ["\ud83d\ude00", {"x": "\udc00"}]}', "x", ParamError)
    assert value == {"q": "a\ufffdb", "\ufffd": ["\U0001f600", {"x": "\ufffd"}]}
    assert value["\ufffd"][0] == "😀"  # an escaped pair is one character, kept


def test_loads_names_a_number_with_too_many_digits_in_plain_words():
    with pytest.raises(ParamError, match=r"^the link holds a number with too many digits \(over 4,300\)$"):
        loads('{"p": ' + "9" * 5_001 + "}", "the link", ParamError)


def test_too_many_separators_are_refused_before_the_splitter_recurses():
    """The recursive splitter recurses once per separator it falls back to: 500 separators in
    a link raised RecursionError on every page showing the configuration."""
    from explorer import chunk_document
    from explorer.documents.document import Document
    from explorer.limits import MAX_SEPARATORS

    doc = Document("a.txt", "text", "some text without the separators " * 40)
    with pytest.raises(ParamError, match=f"separators has 500 entries; the limit is {MAX_SEPARATORS}"):
        chunk_document(doc, "recursive", {"separators": ["x"] * 500})
    never = [f"#{i}#" for i in range(MAX_SEPARATORS - 1)] + [""]
    assert chunk_document(doc, "recursive", {"separators": never, "chunk_size": 100, "chunk_overlap": 0})


def test_a_separator_typed_as_json_holds_no_lone_surrogate():
    """The separators box reads quoted lines as JSON: "\\ud800" typed there became a lone
    surrogate, which no UTF-8 encoder takes (the address, the Export page)."""
    from pages.ui.paramwidgets import text_to_separators

    assert text_to_separators('"\\ud800"\n"\\n\\n"\nplain') == ["\ufffd", "\n\n", "plain"]
    with pytest.raises(ParamError, match=r"line 1 .* is not a valid JSON string"):
        text_to_separators('"open')
