"""Exports: chunk files, configuration JSON, and code that really reproduces the chunks."""

from __future__ import annotations

import ast
import csv
import io
import json

import pytest

from explorer import Document, ParamError, chunk_document
from explorer.export.code import config_to_code
from explorer.export.data import (
    chunks_to_csv,
    chunks_to_json,
    chunks_to_jsonl,
    config_to_json,
    configs_from_json,
    export_chunks,
    safe_cell,
)
from explorer.strategies import all_strategies
from explorer.strategies.config import StrategyConfig

TEXT = (
    "# Guide\n\nIntro paragraph with some words. Another sentence here!\n\n"
    "=SUM(A1:A9) looks like a formula.\n\n- a list item\n- another item\n\n"
    "@mention and +plus and a very long paragraph " + "word " * 60 + "\n\nÉté « déjà » 日本語。"
)


@pytest.fixture
def doc():
    return Document("guide.md", "markdown", TEXT)


@pytest.fixture
def chunks(doc):
    return chunk_document(doc, "recursive", {"chunk_size": 60, "chunk_overlap": 10})


def test_jsonl_and_json_round_trip(chunks):
    lines = chunks_to_jsonl(chunks).splitlines()
    assert len(lines) == len(chunks)
    rows = [json.loads(x) for x in lines]
    assert [(r["start"], r["end"], r["text"]) for r in rows] == [(c.start, c.end, c.text) for c in chunks]
    assert json.loads(chunks_to_json(chunks)) == rows
    assert "日本語" in chunks_to_jsonl(chunks)  # UTF-8 kept, not \\u escapes


def test_jsonl_lines_survive_a_reader_that_splits_at_unicode_line_breaks():
    """JSON allows U+2028, U+2029 and NEL raw in a string; str.splitlines() breaks at them, and
    cut a chunk's record in two. They are written as escapes; the text reads back the same."""
    text = "One\u2028two\u2029three\x85four. " * 5
    doc = Document("breaks.txt", "text", text)
    chunks = chunk_document(doc, "recursive", {"chunk_size": 40, "chunk_overlap": 0})
    lines = chunks_to_jsonl(chunks).splitlines()
    assert len(lines) == len(chunks)
    assert [json.loads(x)["text"] for x in lines] == [c.text for c in chunks]
    assert [r["text"] for r in json.loads(chunks_to_json(chunks))] == [c.text for c in chunks]


def test_csv_is_spreadsheet_safe(chunks, doc):
    rows = list(csv.DictReader(io.StringIO(chunks_to_csv(chunks), newline="")))
    assert len(rows) == len(chunks)
    for row, c in zip(rows, chunks, strict=True):
        assert int(row["start"]) == c.start and int(row["end"]) == c.end
        if c.text.startswith(("=", "+", "-", "@")):
            assert row["text"] == "'" + c.text
        else:
            assert row["text"] == c.text
    texts = [r["text"] for r in rows]
    assert any(t.startswith("'=SUM") for t in texts)
    assert any(t.startswith("'- a list") for t in texts)
    assert not any(t[:1] in "=+-@" for t in texts)
    assert safe_cell("-1") == "'-1" and safe_cell(5) == 5 and safe_cell("a=b") == "a=b"


def test_export_chunks_dispatch(chunks):
    assert export_chunks(chunks, "jsonl") == chunks_to_jsonl(chunks)
    with pytest.raises(ParamError, match="'xml'"):
        export_chunks(chunks, "xml")


def test_config_json_round_trip():
    configs = [
        StrategyConfig.make("recursive", {"chunk_size": 250, "separators": ["\n\n", ". "]}),
        StrategyConfig.make("fixed", {"chunk_size": 100, "length": "words"}),
    ]
    text = config_to_json(configs, ["a.pdf"], model=None, cleanup=["collapse_blank_lines"])
    d = json.loads(text)
    assert d["documents"] == ["a.pdf"] and d["cleanup"] == ["collapse_blank_lines"]
    assert d["strategies"][0]["params"]["separators"] == ["\n\n", ". "]
    assert configs_from_json(text) == configs
    with pytest.raises(ParamError, match="not valid JSON"):
        configs_from_json("{nope")
    with pytest.raises(ParamError, match="strategies"):
        configs_from_json('{"a": 1}')


def test_code_snippets_for_every_strategy_are_valid_python():
    """Every strategy gives a snippet per library: Python that parses, or a comment saying there
    is no equivalent; the CLI line names the strategy."""
    for s in all_strategies():
        config = StrategyConfig.make(s.name, {})
        code = config_to_code([config], ["report.pdf"])
        assert set(code) == {"cli", "python", "langchain", "llamaindex", "chonkie"}
        assert f"--strategy {s.name}" in code["cli"]
        for key in ("python", "langchain", "llamaindex", "chonkie"):
            ast.parse(code[key])
            assert code[key].strip(), key


@pytest.mark.parametrize("name", ["report.pdf", "notes.md", "notes.txt"])
def test_code_snippets_import_before_anything_else(name):
    """The reading lines bring imports of their own: they join the snippet's, above its code."""
    for s in all_strategies():
        for key, code in config_to_code([StrategyConfig.make(s.name, {"length": "tokens"})], [name]).items():
            if key == "cli":
                continue
            body = ast.parse(code).body
            kinds = [isinstance(node, ast.Import | ast.ImportFrom) for node in body]
            assert kinds == sorted(kinds, reverse=True), (s.name, key, code)
            assert "\n\n\n" not in code, (s.name, key)


def test_code_quotes_hostile_values():
    config = StrategyConfig.make("recursive", {"separators": ["'; import os; os.system('x') #", "\n"]})
    code = config_to_code([config], ["it's a file.txt"])
    tree = ast.parse(code["langchain"])
    calls = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "RecursiveCharacterTextSplitter"
    ]
    (call,) = calls
    seps = next(k.value for k in call.keywords if k.arg == "separators")
    assert ast.literal_eval(seps) == ["'; import os; os.system('x') #", "\n"]
    assert "'it'\"'\"'s a file.txt'" in code["cli"]  # shlex-quoted


def test_no_equivalent_is_a_comment():
    code = config_to_code([StrategyConfig.make("cluster", {})], ["a.txt"])
    assert code["langchain"].startswith("# LangChain has no equivalent")
    assert "ClusterSemanticChunker" in code["chonkie"]


def _run_langchain(code: str, path) -> list[str]:
    code = code.replace(repr("FILE"), repr(str(path)))
    ns: dict = {}
    exec(compile(code, "<langchain snippet>", "exec"), ns)  # our own generated code, test only
    return ns["chunks"]


@pytest.mark.parametrize(
    "params",
    [
        {"chunk_size": 60, "chunk_overlap": 10},
        {"chunk_size": 120, "chunk_overlap": 0, "separators": ["\n\n", "\n", ".", "?", "!", " ", ""]},
        {"chunk_size": 40, "chunk_overlap": 5, "keep_separator": "end"},
        {"chunk_size": 50, "chunk_overlap": 0, "separators": ["\n\n", " "], "keep_separator": "false"},
        {"chunk_size": 15, "chunk_overlap": 3, "length": "words"},
    ],
)
def test_generated_langchain_code_reproduces_recursive(tmp_path, params):
    pytest.importorskip("langchain_text_splitters")
    # no runs of two spaces: with keep_separator="false" LangChain re-joins such runs with one
    # separator (not a slice of the text), a documented deviation of `recursive`
    text = TEXT + "\n\nCode:\n\n```python\ndef f(x):\n\treturn x * 2\n```\n" + "x" * 130
    path = tmp_path / "doc.md"
    path.write_text(text, encoding="utf-8")
    doc = Document("doc.md", "markdown", text)
    config = StrategyConfig.make("recursive", params)
    code = config_to_code([config], [])["langchain"]
    assert "RecursiveCharacterTextSplitter(" in code
    ours = [c.text for c in chunk_document(doc, "recursive", config.param_dict)]
    assert _run_langchain(code, path) == ours


def test_generated_langchain_code_reproduces_recursive_on_a_pdf(tmp_path):
    """PyPDFLoader's pages joined as explorer joins them (stripped, one blank line between): the
    same chunks on the bundled handbook; with clean-up on, the snippet says it does none."""
    pytest.importorskip("langchain_community")
    from explorer.documents.loaders import load_path
    from explorer.documents.samples import sample_bytes

    path = tmp_path / "handbook.pdf"
    path.write_bytes(sample_bytes("handbook.pdf")[1])
    config = StrategyConfig.make("recursive", {"chunk_size": 600, "chunk_overlap": 200})
    code = config_to_code([config], ["FILE.pdf"])["langchain"].replace(repr("FILE.pdf"), repr("FILE"))
    ours = [c.text for c in chunk_document(load_path(path), "recursive", config.param_dict)]
    assert _run_langchain(code, path) == ours
    cleaned = config_to_code([config], ["handbook.pdf"], cleanup=["collapse_blank_lines"])
    for peer in ("langchain", "llamaindex", "chonkie"):
        assert "explorer cleaned the text up first (collapse_blank_lines): not done here" in cleaned[peer]


@pytest.mark.model
def test_generated_langchain_code_reproduces_recursive_in_model_tokens(tmp_path):
    """length='tokens' becomes a Hugging Face tokenizer length function counting [CLS]/[SEP]."""
    pytest.importorskip("transformers")
    from explorer.export.code import HUB_DEFAULT_MODEL
    from explorer.models.paths import resolve_model_path

    text = TEXT * 3
    path = tmp_path / "doc.md"
    path.write_text(text, encoding="utf-8")
    config = StrategyConfig.make("recursive", {"chunk_size": 40, "chunk_overlap": 0, "length": "tokens"})
    code = config_to_code([config], [])["langchain"]
    # offline here: point the hub name at the bundled copy of the same model
    code = code.replace(repr(HUB_DEFAULT_MODEL), repr(str(resolve_model_path(None))))
    ours = [
        c.text for c in chunk_document(Document("doc.md", "markdown", text), "recursive", config.param_dict)
    ]
    assert _run_langchain(code, path) == ours


def test_python_snippet_runs(tmp_path):
    text = "Hello world. " * 50
    path = tmp_path / "a.txt"
    path.write_text(text)
    config = StrategyConfig.make("fixed", {"chunk_size": 100, "chunk_overlap": 20})
    code = config_to_code([config], [str(path)])["python"]
    ns: dict = {}
    exec(compile(code, "<python snippet>", "exec"), ns)
    ours = chunk_document(Document("a.txt", "text", text), "fixed", config.param_dict)
    assert [(c.start, c.end) for c in ns["chunks_0"]] == [(c.start, c.end) for c in ours]


def test_cli_snippet_round_trips_through_the_parser():
    from explorer.cli.inputs import configs_from_args
    from explorer.cli.parser import build_parser

    configs = [
        StrategyConfig.make(
            "recursive", {"chunk_size": 250, "separators": ["\n\n", ". "], "length": "tokens"}
        ),
        StrategyConfig.make("fixed", {"chunk_size": 100}),
    ]
    import shlex

    code = config_to_code(configs, ["my doc.txt"])["cli"]
    compare_line = next(ln for ln in code.splitlines() if " compare " in ln)
    argv = shlex.split(compare_line)[3:]  # drop "python -m explorer"
    args = build_parser().parse_args(argv)
    assert args.paths == ["my doc.txt"]
    assert configs_from_args(args, many=True) == configs
    chunk_lines = [ln for ln in code.splitlines() if " chunk " in ln]  # each to its own file
    assert [shlex.split(ln)[-2:] for ln in chunk_lines] == [[">", "chunks-1-recursive.jsonl"], [">", "chunks-2-fixed.jsonl"]]
    assert configs_from_args(build_parser().parse_args(shlex.split(chunk_lines[1])[3:-2]), many=False) == configs[1:]
    assert ">" not in config_to_code(configs[:1], ["my doc.txt"])["cli"]  # one: to the screen


def test_int8_travels_into_the_code_and_the_json():
    """The int8 option set in the app comes out in every snippet that can carry it."""
    from explorer.cli.parser import build_parser

    configs = [StrategyConfig.make("semantic", {}), StrategyConfig.make("fixed", {"chunk_size": 100})]
    code = config_to_code(configs, ["a.txt"], quantize=True)
    compare_line = next(ln for ln in code["cli"].splitlines() if " compare " in ln)
    import shlex

    assert build_parser().parse_args(shlex.split(compare_line)[3:]).int8 is True
    assert "Context(quantize=True)" in code["python"]
    compile(code["python"], "<python snippet>", "exec")
    assert json.loads(config_to_json(configs, quantize=True))["int8"] is True
    plain = config_to_code(configs, ["a.txt"])
    assert "--int8" not in plain["cli"] and "Context()" in plain["python"]


def test_the_model_and_backend_travel_by_name_never_as_a_path():
    """A registered model is named (``--model``, ``Context(model=...)``, its hub name elsewhere);
    a folder under $CHUNK_EXPLORER_MODELS is that variable joined with its name, whatever path
    the caller passed; the default and ``auto`` are left out."""
    import shlex

    from explorer.cli.parser import build_parser

    configs = [
        StrategyConfig.make("recursive", {"chunk_size": 100, "chunk_overlap": 0, "length": "tokens"}),
        StrategyConfig.make("semantic", {}),
    ]
    code = config_to_code(configs, ["a.txt"], model="minilm", backend="onnx")
    compare_line = next(ln for ln in code["cli"].splitlines() if " compare " in ln)
    args = build_parser().parse_args(shlex.split(compare_line)[3:])
    assert (args.model, args.backend) == ("all-MiniLM-L6-v2", "onnx")
    assert "Context(model='all-MiniLM-L6-v2', backend='onnx')" in code["python"]
    assert "'sentence-transformers/all-MiniLM-L6-v2'" in code["langchain"]
    d = json.loads(config_to_json(configs, model="minilm", backend="onnx"))
    assert (d["model"], d["backend"]) == ("all-MiniLM-L6-v2", "onnx")

    default = config_to_code(configs, ["a.txt"], model="multilingual-e5-small")
    assert "--model" not in default["cli"] and "--backend" not in default["cli"]
    assert "Context()" in default["python"] and "'intfloat/multilingual-e5-small'" in default["langchain"]

    folder = config_to_code(configs, ["a.txt"], model="/srv/secret/models/my model")
    everything = "\n".join(folder.values())
    assert "/srv" not in everything and "secret" not in everything
    assert """--model "$CHUNK_EXPLORER_MODELS"/'my model'""" in folder["cli"]
    for key in ("python", "langchain", "llamaindex", "chonkie"):
        ast.parse(folder[key])
        if "os.environ" in folder[key]:
            assert folder[key].startswith("import os\n"), key
    assert "os.path.join(os.environ['CHUNK_EXPLORER_MODELS'], 'my model')" in folder["python"]
    assert json.loads(config_to_json(configs, model="/srv/secret/models/my model"))["model"] == "my model"


@pytest.mark.parametrize(
    ("name", "langchain", "llamaindex", "chonkie"),
    [
        (
            "report.pdf",
            "PyPDFLoader('report.pdf')",
            "SimpleDirectoryReader(input_files=['report.pdf'])",
            "PdfReader",
        ),
        ("notes.md", "open('notes.md'", "Path('notes.md').read_text", "open('notes.md'"),
        (
            "notes.txt",
            "open('notes.txt'",
            "Path('notes.txt').read_text(encoding=",
            "open('notes.txt'",
        ),
    ],
)
def test_peer_snippets_load_each_kind_with_their_own_loader(name, langchain, llamaindex, chonkie):
    """Not always open('…').read(): a PDF goes through each library's PDF loader."""
    configs = [StrategyConfig.make("recursive", {}), StrategyConfig.make("semantic", {})]
    code = config_to_code(configs, [name])
    assert langchain in code["langchain"] and llamaindex in code["llamaindex"] and chonkie in code["chonkie"]
    if name.endswith(".pdf"):
        assert "open('report.pdf'" not in "".join(code.values())
    for key in ("langchain", "llamaindex", "chonkie"):
        ast.parse(code[key])
    assert "get_nodes_from_documents(documents)" in code["llamaindex"]


def test_samples_are_named_with_sample_and_peer_code_says_how_to_get_them():
    import shlex

    from explorer.cli.parser import build_parser

    code = config_to_code([StrategyConfig.make("fixed", {})], ["my notes.md"], samples=["handbook.pdf"])
    line = code["cli"].splitlines()[0]
    assert line.startswith("python -m explorer chunk 'my notes.md' --sample handbook.pdf")
    args = build_parser().parse_args(shlex.split(line)[3:])
    assert (args.paths, args.samples) == (["my notes.md"], ["handbook.pdf"])
    assert "load_sample(s) for s in ['handbook.pdf']" in code["python"]
    only_sample = config_to_code([StrategyConfig.make("fixed", {})], [], samples=["handbook.pdf"])
    assert "sample_bytes('handbook.pdf')" in only_sample["langchain"]
    assert "PyPDFLoader('handbook.pdf')" in only_sample["langchain"]
    ns: dict = {}
    exec(compile(only_sample["python"], "<python snippet>", "exec"), ns)  # our own generated code
    assert ns["chunks_0"] and ns["docs"][0].name == "handbook.pdf"


def test_peer_snippets_tell_how_to_read_the_other_documents_by_their_kind():
    """After the first document, those of another kind get their own reading (open() reads no
    PDF), those read alike are listed to load the same way, and a bundled sample says how to
    get its file."""
    config = StrategyConfig.make("recursive", {})
    code = config_to_code([config], ["notes.txt", "report.pdf", "b.txt"], samples=["handbook.pdf"])
    lc = code["langchain"]
    same = next(ln for ln in lc.splitlines() if "to load the same way" in ln)
    assert "'b.txt'" in same and ".pdf" not in same
    assert "#   pages = PyPDFLoader('report.pdf').load()" in lc and "'handbook.pdf'" in lc
    assert "sample_bytes('handbook.pdf')" in lc
    assert "PdfReader('report.pdf')" in code["chonkie"]
    for key in ("langchain", "llamaindex", "chonkie"):
        ast.parse(code[key])


@pytest.mark.parametrize(
    ("name", "encode"),
    [
        ("latin.txt", lambda t: t.encode("cp1252")),
        ("wide.md", lambda t: t.encode("utf-16")),  # with its byte-order mark
        ("plain.txt", lambda t: t.encode("utf-8")),
    ],
)
def test_peer_snippets_read_a_text_file_in_the_encoding_explorer_read_it_in(tmp_path, name, encode):
    """A Latin-1 or UTF-16 file, which explorer reads, made the peers' UTF-8 readers raise
    UnicodeDecodeError: the snippet reads it as explorer did, and LangChain's chunks are ours."""
    pytest.importorskip("langchain_text_splitters")
    from explorer.documents.loaders import load_bytes
    from explorer.export.readers import python_codec

    text = "Le café coûte 3,50 € à Noël. Les élèves étudient près de la forêt; où est l'hôpital ?\n" * 8
    data = encode(text)
    (tmp_path / name).write_bytes(data)
    doc = load_bytes(data, name)
    config = StrategyConfig.make("recursive", {"chunk_size": 120, "chunk_overlap": 0})
    code = config_to_code([config], [name], encodings={name: doc.encoding})
    codec = python_codec(doc.encoding)
    assert (codec == "utf-8-sig") == name.startswith("plain")
    for key in ("langchain", "llamaindex", "chonkie"):
        if codec == "utf-8-sig":
            assert 'encoding="utf-8-sig"' in code[key] and "not UTF-8" not in code[key]
        else:
            assert f'encoding="{codec}"' in code[key] and "utf-8-sig" not in code[key], code[key]
    ours = [c.text for c in chunk_document(doc, "recursive", config.param_dict)]
    assert _run_langchain(code["langchain"].replace(repr(name), repr(str(tmp_path / name))), tmp_path / name) == ours


def test_peer_snippets_name_the_other_files_own_encodings():
    """The files after the first were said to load "the same way", that is in the first one's
    encoding: a cp1252 file among UTF-8 ones (or the reverse) is now named with its own."""
    from explorer.export.readers import read_lines

    files = ["notes.txt", "latin.txt", "plain.md", "wide.md", "guide.pdf"]
    encodings = {"notes.txt": "utf-8", "latin.txt": "cp1252", "plain.md": "ascii", "wide.md": "utf-16-le (BOM)"}
    for peer in ("langchain", "llamaindex", "chonkie"):
        code = read_lines(peer, files, encodings=encodings)
        assert "'latin.txt' as cp1252" in code and "'wide.md' as utf-16" in code, code
        assert "'plain.md' as" not in code and "'notes.txt' as" not in code and "'guide.pdf' as" not in code
        ast.parse(code)
    latin_first = read_lines("langchain", ["latin.txt", "notes.txt"], encodings=encodings)
    assert "'notes.txt' as utf-8-sig" in latin_first and 'encoding="cp1252"' in latin_first


def test_peer_snippets_say_when_explorer_removed_control_characters(tmp_path):
    """Explorer drops NUL, ESC and the like from a text file; a peer's reader keeps them, so its
    chunks differed with nothing said (a PDF's snippet already said why its text can differ)."""
    from explorer.documents.loaders import load_bytes

    data = b"Pump log\x00 line one.\x1b[0m Valve two.\n" * 3
    doc = load_bytes(data, "log.txt")
    assert doc.changed_controls == 6 and "\x00" not in doc.text
    clean = load_bytes(b"Pump log line one.\n", "clean.txt")
    assert clean.changed_controls == 0
    config = StrategyConfig.make("recursive", {"chunk_size": 120, "chunk_overlap": 0})
    names = [doc.name, clean.name]
    code = config_to_code([config], names, changed={d.name: d.changed_controls for d in (doc, clean)})
    for key in ("langchain", "llamaindex", "chonkie"):
        assert "removed control characters" in code[key] and "6 from 'log.txt'" in code[key], code[key]
        assert "'clean.txt'" not in code[key].split("removed control characters")[1].splitlines()[0]
    pages = load_bytes("Page one.\fPage two.\x85Page three.\n".encode(), "pdftotext.txt")  # a page break per page
    assert pages.changed_controls == 2 and "\f" not in pages.text and not pages.warnings
    form_feeds = config_to_code([config], [pages.name], changed={pages.name: pages.changed_controls})
    assert "2 from 'pdftotext.txt'" in form_feeds["langchain"] and "line ends" in form_feeds["langchain"]
    quiet = config_to_code([config], [clean.name], changed={clean.name: 0})
    assert all("removed control characters" not in quiet[k] for k in ("langchain", "llamaindex", "chonkie"))


def test_the_cli_compare_line_asks_the_sessions_question_quoted_for_the_shell():
    """Export's compare line asked 'YOUR QUESTION' though the session had one; the question is
    the user's text, so it is one shell word whatever it holds."""
    import shlex

    from explorer.export.code import config_to_code
    from explorer.strategies.config import StrategyConfig

    configs = [StrategyConfig.make("recursive", {}), StrategyConfig.make("fixed", {})]
    question = "Qu'est-ce que $(rm -rf ~) ; `id` \"fait\"\n?"
    line = next(x for x in config_to_code(configs, ["a.txt"], question=question)["cli"].splitlines() if " compare " in x)
    words = shlex.split(line)
    assert words[words.index("--question") + 1] == " ".join(question.split())
    placeholder = config_to_code(configs, ["a.txt"])["cli"]
    assert "--question 'YOUR QUESTION'" in placeholder
