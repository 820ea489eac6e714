"""The CLI: every subcommand, --set grouping, output formats, and one-line errors (exit 2)."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from explorer import Context, get_strategy
from explorer.cli import inputs as cli_inputs
from explorer.cli.main import main
from explorer.cli.output import ProgressLine
from explorer.documents.loaders import load_path
from explorer.embedding.fake import FakeEmbedder
from explorer.text.length import get_length

ROOT = Path(__file__).resolve().parents[2]
TEXT = "Hello world. This is a test.\n\nSecond paragraph here, with more words. Été « déjà »."


@pytest.fixture
def txt(tmp_path) -> Path:
    p = tmp_path / "doc.txt"
    p.write_text(TEXT, encoding="utf-8")
    return p


@pytest.fixture
def fake_ctx(monkeypatch):
    """In-process runs use the fake embedder (the real model has its own tests below)."""
    emb = FakeEmbedder(dim=128)

    def make_context(model, progress=None, quantize=False, backend="auto"):
        emb.asked_int8 = quantize
        return Context(model=model, embedder=emb, progress=progress, quantize=quantize)

    monkeypatch.setattr(cli_inputs, "make_context", make_context)
    return emb


def run_main(capsysbinary, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsysbinary.readouterr()
    return rc, out.decode("utf-8"), err.decode("utf-8")


def run_proc(*argv: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONIOENCODING": "ascii"}  # output must not depend on it
    return subprocess.run(
        [sys.executable, "-m", "explorer", *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=300,
        input=stdin,
    )


# -- strategies / text ---------------------------------------------------------------------------
def test_strategies_json(capsysbinary):
    rc, out, _ = run_main(capsysbinary, "strategies")
    assert rc == 0
    data = json.loads(out)
    names = [s["name"] for s in data]
    assert "fixed" in names and "recursive" in names
    for s in data:
        assert {"name", "description", "params"} <= set(s)
        for p in s["params"]:
            assert {"name", "type", "default", "min", "max", "choices", "help"} <= set(p)
    rec = next(s for s in data if s["name"] == "recursive")
    seps = next(p for p in rec["params"] if p["name"] == "separators")
    assert seps["default"] == ["\n\n", "\n", " ", ""]


def test_text_prints_exact_utf8_without_newline(tmp_path):
    p = tmp_path / "crlf.txt"
    p.write_bytes("Line one\r\nÉté 日本\r\n".encode())
    r = run_proc("text", str(p))
    assert r.returncode == 0, r.stderr
    assert r.stdout == "Line one\nÉté 日本\n".encode()  # CRLF normalised, UTF-8 even with an ascii locale


# -- chunk ------------------------------------------------------------------------------------------
def test_chunk_jsonl_default(capsysbinary, txt):
    rc, out, _ = run_main(
        capsysbinary,
        "chunk",
        str(txt),
        "--strategy",
        "recursive",
        "--set",
        "chunk_size=40",
        "--set",
        "chunk_overlap=0",
    )
    assert rc == 0
    rows = [json.loads(x) for x in out.splitlines()]
    assert len(rows) > 1
    for r in rows:
        assert {"index", "start", "end", "text", "chars", "length", "pages", "headings", "reason"} <= set(r)
        assert TEXT[r["start"] : r["end"]] == r["text"]
        assert r["length"] <= 40


def test_chunk_list_param_takes_json_and_set_before_strategy(capsysbinary, txt):
    rc, out, _ = run_main(
        capsysbinary,
        "chunk",
        str(txt),
        "--set",
        'separators=["\\n\\n"]',
        "--strategy",
        "recursive",
        "--set",
        "chunk_size=60",
        "--set",
        "chunk_overlap=0",
        "--format",
        "json",
    )
    assert rc == 0
    rows = json.loads(out)
    # split only at the blank line: the first paragraph, then the second
    assert [r["text"] for r in rows] == TEXT.split("\n\n")
    assert rows[0]["reason"] == "separator '\\n\\n'"


def test_chunk_csv_several_files(capsysbinary, txt, tmp_path):
    other = tmp_path / "b.md"
    other.write_text("# Title\n\n=1+1 is not a formula here.\n")
    rc, out, _ = run_main(
        capsysbinary,
        "chunk",
        str(txt),
        str(other),
        "--strategy",
        "fixed",
        "--set",
        "chunk_size=500",
        "--format",
        "csv",
    )
    assert rc == 0
    rows = list(csv.DictReader(io.StringIO(out, newline="")))
    assert [r["document"] for r in rows] == ["doc.txt", "b.md"]
    assert rows[1]["headings"] == "Title"
    assert rows[1]["text"].startswith("# Title")


def test_chunk_check_and_stats(capsysbinary, txt):
    rc, out, err = run_main(
        capsysbinary, "chunk", str(txt), "--strategy", "fixed", "--set", "chunk_size=20", "--check", "--stats"
    )
    assert rc == 0 and "invariant" not in err
    stats = json.loads(out)
    assert stats["strategy"] == "fixed(chunk_size=20)"
    assert stats["count"] > 1 and stats["coverage"] == 1.0
    assert stats["chars"]["max"] <= 20
    assert stats["mid_word"] > 0  # 20-character windows cut words


def test_chunk_cleanup_option(capsysbinary, tmp_path):
    p = tmp_path / "blank.txt"
    p.write_text("a\n\n\n\n\nb\n")
    rc, out, _ = run_main(capsysbinary, "text", str(p), "--cleanup", "collapse_blank_lines")
    assert rc == 0 and out == "a\n\nb\n"


# -- compare / evaluate / sweep (fake embedder in process) --------------------------------------------
def test_the_same_text_twice_is_counted_once_and_said(capsysbinary, txt, tmp_path, fake_ctx):
    """Two files with one text (a document's id is its text's hash): one warning line, and its
    chunks are indexed once, so no hit is repeated."""
    copy = tmp_path / "copy of doc.md"
    copy.write_bytes(txt.read_bytes())
    rc, out, err = run_main(capsysbinary, "compare", str(txt), str(copy), "--question", "second paragraph", "-q")
    assert rc == 0
    assert err.splitlines() == ["warning: copy of doc.md: the same text as doc.txt: counted once"]
    for result in json.loads(out):
        spans = [(h["document"], h["start"]) for h in result["hits"]]
        assert {d for d, _ in spans} == {"doc.txt"} and len(spans) == len(set(spans)) == result["chunks"]


def test_compare_groups_sets_per_strategy(capsysbinary, txt, fake_ctx):
    rc, out, _ = run_main(
        capsysbinary,
        "compare",
        str(txt),
        "--question",
        "second paragraph words",
        "--strategy",
        "recursive",
        "--set",
        "chunk_size=30",
        "--set",
        "chunk_overlap=0",
        "--strategy",
        "recursive",
        "--set",
        "chunk_size=200",
        "--set",
        "chunk_overlap=0",
        "--strategy",
        "fixed",
        "--k",
        "2",
        "-q",
    )
    assert rc == 0
    data = json.loads(out)
    assert [d["strategy"] for d in data] == [
        "recursive(chunk_overlap=0, chunk_size=30)",
        "recursive(chunk_overlap=0, chunk_size=200)",
        "fixed",
    ]
    assert data[0]["config"]["params"]["chunk_size"] == 30
    assert data[1]["config"]["params"]["chunk_size"] == 200
    assert len(data[0]["hits"]) == 2 and len(data[1]["hits"]) == 1  # one chunk holds everything
    for d in data:
        for i, h in enumerate(d["hits"], 1):
            assert h["rank"] == i
            assert {"rank", "score", "document", "start", "end", "text", "matched"} <= set(h)
            assert TEXT[h["start"] : h["end"]] == h["text"]
            # the question's words in the hit, at their offsets in the document
            words = [TEXT[s:e].lower() for s, e in h["matched"]]
            assert all(h["start"] <= s < e <= h["end"] for s, e in h["matched"])
            assert set(words) <= {"second", "paragraph", "paragraphs", "words", "word"}, words
    assert any(h["matched"] for d in data for h in d["hits"])


def _questions(tmp_path) -> Path:
    q = tmp_path / "q.jsonl"
    q.write_text(
        json.dumps({"question": "second paragraph words", "answer": "more words"})
        + "\n"
        + json.dumps(
            {"question": "hello world", "references": [{"document": "doc.txt", "start": 0, "end": 11}]}
        )
        + "\n"
    )
    return q


def _scoring(command: str, txt: Path, q: Path, *rest: str) -> list[str]:
    """``evaluate`` or ``sweep`` of ``txt`` against the questions ``q``, recursive first."""
    return [command, "--corpus", str(txt), "--questions", str(q), "--strategy", "recursive", *rest]


def test_a_corpus_folder_that_holds_the_questions_file_leaves_it_out(capsysbinary, txt, tmp_path, fake_ctx):
    """``--corpus docs/ --questions docs/q.jsonl``: the questions file is not a document (indexed,
    it took hits and lowered every score), and a note says so."""
    q = _questions(tmp_path)  # beside doc.txt, in the folder given as the corpus
    args = ["evaluate", "--corpus", str(tmp_path), "--questions", str(q), "--set", "chunk_size=30", "--set", "chunk_overlap=0"]
    rc, out, err = run_main(capsysbinary, *args, "--format", "json", "-q")
    assert rc == 0, err
    assert f"note: --corpus: {q} is the questions file, left out of the documents" in err.splitlines()
    alone = run_main(capsysbinary, *[str(txt) if a == str(tmp_path) else a for a in args], "--format", "json", "-q")
    assert json.loads(out)[0]["chunks"] == json.loads(alone[1])[0]["chunks"]  # the same corpus as doc.txt alone


def test_evaluate_json_and_table(capsysbinary, txt, tmp_path, fake_ctx):
    q = _questions(tmp_path)
    recursive = ["--set", "chunk_size=30", "--set", "chunk_overlap=0"]
    args = _scoring("evaluate", txt, q, *recursive, "--strategy", "fixed", "--k", "1")
    rc, out, err = run_main(capsysbinary, *args, "--format", "json", "--per-question")
    assert rc == 0
    data = json.loads(out)
    assert len(data) == 2
    for d in data:
        for m in ("recall", "precision", "iou", "precision_omega", "hit_rate", "mrr"):
            assert 0 <= d[m] <= 1 and d[f"{m}_std"] >= 0
        assert d["questions"] == 2 and d["mean_chars"] > 0 and d["chunks"] >= 1
        assert len(d["per_question"]) == 2
        assert [r["question"] for r in d["per_question"]] == ["second paragraph words", "hello world"]
        assert all(r["recall"] == round(r["recall"], 6) for r in d["per_question"])
    # fixed (500 chars) is one chunk holding everything: recall 1, precision = Σ|e| / |chunk|
    fixed = data[1]
    assert fixed["recall"] == 1.0 and fixed["chunks"] == 1
    assert fixed["precision"] == pytest.approx((10 / len(TEXT) + 11 / len(TEXT)) / 2, abs=1e-6)
    assert "recursive" in err  # the step lines go to stderr
    rc, out, _ = run_main(capsysbinary, *args, "--format", "table", "-q")
    assert rc == 0
    lines = out.splitlines()
    assert lines[0].startswith("| Strategy") and "Recall %" in lines[0] and "Precision_Ω %" in lines[0]
    assert "100.0 ± 0.0" in lines[3]  # fixed's recall
    assert "2 questions, top 1" in out


def test_piece_chars_reach_evaluate_and_compare(capsysbinary, txt, tmp_path, fake_ctx, monkeypatch):
    """``--piece-chars N`` gets to the index: each run builds the documents' pieces of N characters."""
    from explorer.retrieval import search

    seen = []
    real = search.piece_vectors
    monkeypatch.setattr(search, "piece_vectors", lambda ctx, docs, chunks, options, *a: seen.append(options.piece_chars) or real(ctx, docs, chunks, options, *a))
    q = _questions(tmp_path)
    args = _scoring("evaluate", txt, q, "--set", "chunk_size=60", "--set", "chunk_overlap=0", "-q", "--format", "json")
    rc, out, _ = run_main(capsysbinary, *args, "--piece-chars", "100")
    assert rc == 0 and json.loads(out)[0]["questions"] == 2 and seen == [100]
    rc, out, _ = run_main(capsysbinary, "compare", str(txt), "--question", "second paragraph", "--piece-chars", "200", "-q")
    assert rc == 0 and json.loads(out)[0]["hits"] and seen == [100, 200]
    for h in json.loads(out)[0]["hits"]:  # each hit names its best piece, as the app's card does
        piece = h["best_piece"]
        assert 0 < piece["end"] - piece["start"] <= 200 and 2 * (min(piece["end"], h["end"]) - max(piece["start"], h["start"])) >= piece["end"] - piece["start"]
        assert -1 <= piece["cosine"] <= 1 and -1 <= piece["chunk_cosine"] <= 1 and h["doc_id"]
        assert h["evidence"]["cosine"] == pytest.approx((piece["cosine"] + piece["chunk_cosine"]) / 2, abs=1e-5)  # the mix
    rc, out, _ = run_main(capsysbinary, *args)
    assert rc == 0 and seen == [100, 200]  # off by default
    table = [a for a in args if a not in ("--format", "json")]
    rc, out, _ = run_main(capsysbinary, *table, "--piece-chars", "100")
    assert rc == 0 and "hybrid retrieval, scored with pieces of 100 characters;" in out  # the note says so


def test_sweep_table_and_json(capsysbinary, txt, tmp_path, fake_ctx):
    q = _questions(tmp_path)
    vary = ["--vary", "chunk_size=10:50:20"]
    args = _scoring("sweep", txt, q, "--set", "chunk_overlap=20", *vary, "--k", "1", "-q")
    rc, out, _ = run_main(capsysbinary, *args)
    assert rc == 0
    lines = out.splitlines()
    assert lines[0].startswith("| chunk_size")
    assert lines[2].startswith("| 10 ") and "skipped: chunk_overlap=20 must be smaller" in lines[2]
    assert lines[3].startswith("| 30 ") and lines[4].startswith("| 50 ")
    rc, out, _ = run_main(capsysbinary, *args, "--format", "json")
    rows = json.loads(out)
    assert [r["value"] for r in rows] == [10, 30, 50]
    assert "error" in rows[0] and rows[1]["chunks"] > rows[2]["chunks"]


def test_a_sweep_value_out_of_bounds_is_a_skipped_row_and_all_of_them_one_error(capsysbinary, txt, tmp_path, fake_ctx):
    """``--vary max_heading_level=0:3:1`` stopped the whole run on its 0 (below the minimum 1),
    where a value in conflict with another setting is a skipped row: now it is one too, naming the
    value and the range allowed. Values none of which can run are one ``error:`` line (exit 2);
    values that are not numbers still are."""
    q = _questions(tmp_path)

    def sweep(vary: str, *rest: str) -> tuple[int, str, str]:
        args = _scoring("sweep", txt, q, *rest, "--vary", vary, "--k", "1", "-q", "--retriever", "bm25")
        return run_main(capsysbinary, *[a.replace("recursive", "markdown") for a in args])

    rc, out, err = sweep("max_heading_level=0:3:1")
    assert rc == 0, err
    lines = out.splitlines()
    assert lines[2].startswith("| 0 ") and "skipped: max_heading_level=0 is out of range (allowed: 1 to 6)" in lines[2]
    assert [line.split("|")[1].strip() for line in lines[3:6]] == ["1", "2", "3"] and "skipped" not in "".join(lines[3:6])
    for vary, said in (
        ("max_heading_level=7,8", "no value can run: max_heading_level=7 is out of range (allowed: 1 to 6); max_heading_level=8"),
        ("max_heading_level=a:b:c", "START, STOP and STEP must be numbers"),
        ("max_heading_level=1,x", "max_heading_level='x' is not a valid int"),
    ):
        rc, out, err = sweep(vary)
        assert rc == 2 and out == "" and err.count("\n") == 1 and err.startswith("error: "), err
        assert said in err, err
    rc, out, err = sweep("chunk_size=100,200", "--set", "chunk_overlap=300")  # conflicts alone, too
    assert rc == 2 and err.count("\n") == 1 and "no value can run: chunk_overlap=300 must be smaller" in err
    # a huge value is written in brief in its cell too, as in its reason (in full it widened the table)
    rc, out, err = sweep("max_heading_level=2," + "9" * 300)
    assert rc == 0 and max(map(len, out.splitlines())) < 300, err
    assert "| 1e+300 " in out and "skipped: max_heading_level=1e+300 is out of range" in out


def test_sweep_of_a_parameter_alone_tries_values_around_the_configurations_own(capsysbinary, txt, tmp_path, fake_ctx):
    q = _questions(tmp_path)
    args = _scoring("sweep", txt, q, "--set", "chunk_size=40", "--set", "chunk_overlap=10")
    rc, out, _ = run_main(capsysbinary, *args, "--vary", "chunk_size", "--k", "1", "-q", "--format", "json")
    assert rc == 0
    assert [r["value"] for r in json.loads(out)] == [20, 40, 60, 80]  # 10: not above the overlap
    assert all("error" not in r for r in json.loads(out))


def test_a_sweep_says_what_else_each_value_changed(capsysbinary, txt, tmp_path, fake_ctx):
    """A swept size moves the overlap the user did not set with it (the default 1000/200 keeps
    20 % at every size: it was shrunk below 200 and kept whole above, 95 % of 210): said under
    the table and in the JSON, so the curve is not read as the size's effect alone. An overlap
    the user set stays, and a size it does not fit is skipped."""
    q = _questions(tmp_path)
    args = _scoring("sweep", txt, q, "--vary", "chunk_size=100,300", "--k", "1", "-q")
    rc, out, _ = run_main(capsysbinary, *args)
    assert rc == 0
    # one line for the move all steps made, its numbers listed (a line per step repeated it)
    assert "Adjusted with the value:\nchunk_size=100, 300: chunk_overlap 20, 60 (20 % of chunk_size" in out
    rows = json.loads(run_main(capsysbinary, *args, "--format", "json")[1])
    assert [r["config"]["params"]["chunk_overlap"] for r in rows] == [20, 60], rows
    assert rows[0]["adjusted"][0].startswith("chunk_overlap 20 (20 %")
    rc, out, _ = run_main(capsysbinary, *args, "--set", "chunk_overlap=200", "--format", "json")
    rows = json.loads(out)
    assert rows[0]["error"] and rows[1]["config"]["params"]["chunk_overlap"] == 200 and "adjusted" not in rows[1]


def test_compare_echoes_window_embedding_only_where_it_applied_or_was_set(capsysbinary, txt, monkeypatch):
    """With the onnx backend (no contextual pass) semantic's windows are pooled from sentence
    vectors, and compare still echoed ``"window_embedding": "contextual"``, a default the user
    never set: it is left out there, kept where it ran, and kept as set when the user set it."""

    class NoContext(FakeEmbedder):
        def __init__(self, dim: int) -> None:
            super().__init__(dim)
            self.model_id += "-pooled"  # the curves' cache is per model: not the contextual ones

        def contextual_sums(self, sentences, band, progress=None):
            return None  # as the onnx backend: the semantic strategy pools sentence vectors

    def params(emb: FakeEmbedder, *sets: str) -> dict:
        monkeypatch.setattr(cli_inputs, "make_context", lambda model, progress=None, quantize=False, backend="auto": Context(model=model, embedder=emb, progress=progress))
        rc, out, err = run_main(capsysbinary, "compare", str(txt), "--question", "second", "--strategy", "semantic", *sets, "--k", "1", "-q")
        assert rc == 0, err
        return json.loads(out)[0]["config"]["params"]

    assert params(FakeEmbedder(dim=64))["window_embedding"] == "contextual"  # it ran contextual
    pooled = params(NoContext(dim=64))
    assert "window_embedding" not in pooled and pooled["buffer_size"] == 1
    assert params(NoContext(dim=64), "--set", "window_embedding=contextual")["window_embedding"] == "contextual"
    assert params(NoContext(dim=64), "--set", "window_embedding=pooled")["window_embedding"] == "pooled"


def test_embedding_options_under_bm25_are_said_to_change_nothing(capsysbinary, txt, tmp_path, fake_ctx):
    rc, _, err = run_main(capsysbinary, "compare", str(txt), "--question", "second", "--retriever", "bm25", "--piece-chars", "300", "-q")
    assert rc == 0 and "note: --retriever bm25 embeds nothing: --piece-chars changes nothing here" in err.splitlines()
    q = _questions(tmp_path)
    rc, _, err = run_main(capsysbinary, *_scoring("evaluate", txt, q, "--retriever", "bm25", "--preview", "--prepend-headings", "-q"))
    assert rc == 0 and "note: --retriever bm25 embeds nothing: --prepend-headings, --preview change nothing here" in err
    rc, _, err = run_main(capsysbinary, "compare", str(txt), "--question", "second", "--piece-chars", "300", "-q")
    assert "embeds nothing" not in err  # hybrid embeds


def test_bm25_alone_never_builds_the_model(capsysbinary, txt, tmp_path, monkeypatch):
    """``--retriever bm25`` embeds nothing, and builds nothing either: it called the embedder for
    a cache key and for token counts, and a first build of e5 on a machine takes a minute and
    gigabytes. Token counts come from the model's tokenizer alone (e5's here)."""
    import explorer.embedding.embedder as embedder_module

    def refuse(*args, **kwargs):
        raise AssertionError("BM25 built the embedding model")

    monkeypatch.setattr(embedder_module, "get_embedder", refuse)
    q = _questions(tmp_path)
    runs = [
        ["compare", str(txt), "--question", "second paragraph", "--retriever", "bm25"],
        _scoring("evaluate", txt, q, "--retriever", "bm25", "--format", "json"),
        _scoring("sweep", txt, q, "--retriever", "bm25", "--vary", "chunk_size=20:40:20", "-q"),
        _scoring("evaluate", txt, q, "--retriever", "bm25", "--out", str(tmp_path / "run.jsonl"), "-q"),
    ]
    for argv in runs:
        rc, out, err = run_main(capsysbinary, *argv)
        assert rc == 0, (argv, err)
    rc, out, _ = run_main(capsysbinary, *runs[1])
    assert json.loads(out)[0]["mean_tokens"] == pytest.approx(get_length("tokens").count_batch(
        [c.text for c in get_strategy("recursive").chunk(load_path(txt), {}, Context())]
    )[0])  # fmt: skip


def test_a_second_vary_is_refused(capsysbinary, txt, tmp_path, fake_ctx):
    q = _questions(tmp_path)
    args = _scoring("sweep", txt, q, "--vary", "chunk_size=100", "--vary", "chunk_overlap=0")
    rc, _, err = run_main(capsysbinary, *args)
    assert rc == 2 and err.splitlines() == [
        "error: give one --vary: a sweep varies one parameter (got 'chunk_size=100', 'chunk_overlap=0')"
    ]


# -- errors: exit 2, one line, no traceback ------------------------------------------------------
@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["chunk", "/nonexistent/x.txt"], "/nonexistent/x.txt"),
        (["chunk", "{txt}", "--strategy", "nope"], "unknown strategy 'nope'"),
        (["chunk", "{txt}", "--set", "nope=1"], "no parameter 'nope'"),
        (["chunk", "{txt}", "--set", "chunk_size=abc"], "chunk_size='abc'"),
        (["chunk", "{txt}", "--set", "chunk_size"], "expected PARAM=VALUE"),
        (["chunk", "{txt}", "--set", "separators=[oops"], "separators="),
        (
            ["chunk", "{txt}", "--set", "chunk_size=10", "--set", "chunk_overlap=10"],
            "chunk_overlap=10 must be smaller",
        ),
        (["chunk", "{pdf}"], "bad.pdf"),
        (["chunk", "{txt}", "--model", "/no/such/model", "--set", "length=tokens"], "/no/such/model"),
        (["chunk", "{txt}", "--cleanup", "scrub"], "'scrub' is not a clean-up step"),
        (["text", "{dir}"], "not a file"),
        (["compare", "{txt}", "--question", "  "], "--question is empty"),
        (["evaluate", "--corpus", "{txt}", "--questions", "{badq}"], "line 1"),
        (["evaluate", "--corpus", "{txt}", "--questions", "{txt}", "--k", "0"], "--k: k=0"),
        (
            ["sweep", "--corpus", "{txt}", "--questions", "{txt}", "--vary", "chunk_size=1:2"],
            "START:STOP:STEP",
        ),
        (["sweep", "--corpus", "{txt}", "--questions", "{txt}", "--vary", "nope"], "no parameter 'nope'"),
        (
            ["sweep", "--corpus", "{txt}", "--questions", "{txt}", "--vary", "separators"],
            "--vary separators: not a number parameter",
        ),
        (["chunk"], "no documents: give file paths or --sample NAME"),
        (["compare", "{txt}", "--question", "q", "--piece-chars", "50"], "piece_chars=50 must be 0 (off)"),
        (
            ["evaluate", "--corpus", "{txt}", "--questions", "{txt}", "--engine", "local", "--piece-chars", "300"],
            "--piece-chars 300 is not available in a streamed run",
        ),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_input_one_line_exit_2(tmp_path, txt, argv, needle):
    pdf = tmp_path / "bad.pdf"
    pdf.write_bytes(b"%PDF-1.4\nthis is not really a pdf\n%%EOF\n")
    badq = tmp_path / "q.jsonl"
    badq.write_text('{"question": "x", "answer": "not in the text"}\n')
    fill = {"{txt}": str(txt), "{pdf}": str(pdf), "{dir}": str(tmp_path), "{badq}": str(badq)}
    r = run_proc(*[fill.get(a, a) for a in argv])
    err = r.stderr.decode("utf-8")
    assert r.returncode == 2, (r.stdout, err)
    lines = [ln for ln in err.splitlines() if not ln.startswith("warning:")]
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    assert needle in lines[0]
    assert "Traceback" not in err


def test_broken_pipe_is_quiet(tmp_path):
    p = tmp_path / "big.txt"
    p.write_text("word " * 200_000)
    r = subprocess.run(
        f"{sys.executable} -m explorer chunk {p} --strategy fixed --set chunk_size=50 | head -n 1",
        shell=True,
        cwd=ROOT,
        capture_output=True,
        timeout=300,
    )
    assert r.stdout.count(b"\n") == 1
    assert b"Traceback" not in r.stderr and b"error" not in r.stderr


# -- progress ------------------------------------------------------------------------------------
class _Stream(io.StringIO):
    def __init__(self, tty: bool):
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def test_progress_line_tty_rewrites_one_line():
    s = _Stream(tty=True)
    p = ProgressLine(s)
    p.step("recursive")
    for done in (0, 256, 512, 600):
        p(done, 600)
    out = s.getvalue()
    assert out.count("\r") == 4 and out.endswith("\n") and out.count("\n") == 1
    assert "recursive: embedding 256/600 texts, eta" in out
    assert "600/600" in out


def test_progress_line_plain_prints_periodic_lines():
    s = _Stream(tty=False)
    p = ProgressLine(s, every_s=3600)
    p.step("fixed")
    for done in (0, 256, 512, 600):
        p(done, 600)
    lines = s.getvalue().splitlines()
    # the step, the first report, nothing in between (interval not reached), the last
    assert lines[0] == "fixed"
    assert lines[1].startswith("fixed: embedding 0/600")
    assert lines[2].startswith("fixed: embedding 600/600") and len(lines) == 3
    q = _Stream(tty=False)
    ProgressLine(q, quiet=True)(5, 10)
    assert q.getvalue() == ""


# -- real model ------------------------------------------------------------------------------------
@pytest.mark.model
def test_compare_with_the_real_model(txt):
    r = run_proc(
        "compare",
        str(txt),
        "--question",
        "Which paragraph comes second?",
        "--strategy",
        "recursive",
        "--set",
        "chunk_size=40",
        "--set",
        "chunk_overlap=0",
        "--k",
        "3",
    )
    assert r.returncode == 0, r.stderr.decode()
    (d,) = json.loads(r.stdout)
    hits = d["hits"]
    assert [h["rank"] for h in hits] == [1, 2, 3]
    assert hits[0]["score"] >= hits[1]["score"] >= hits[2]["score"]
    assert "Second paragraph" in hits[0]["text"]
    assert "embedding" in r.stderr.decode()  # progress went to stderr, not stdout


def test_readme_strategy_reference_is_the_registry():
    """The README's parameter tables are `strategies --format markdown`: they cannot drift."""
    from explorer.strategies.registry import reference_markdown

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert reference_markdown().strip() in readme, (
        "regenerate: python -m explorer strategies --format markdown"
    )


def test_int8_flag_reaches_the_context(fake_ctx, txt, capsysbinary):
    for argv, want in (
        (("chunk", str(txt), "--strategy", "semantic"), False),
        (("chunk", str(txt), "--strategy", "semantic", "--int8"), True),
    ):
        rc, _out, _err = run_main(capsysbinary, *argv)
        assert rc == 0 and fake_ctx.asked_int8 is want
    # and the real context turns it into the int8 embedder, cached apart (no model load needed)
    assert Context(quantize=True).get_embedder().model_id.endswith("+int8")
    assert not Context().get_embedder().model_id.endswith("+int8")


def test_strategies_come_in_display_order_whatever_was_imported_first():
    code = (
        "import explorer.strategies.semantic, explorer.strategies.cluster\n"
        "from explorer.strategies import all_strategies\n"
        "print(' '.join(s.name for s in all_strategies()))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    from explorer.strategies.registry import BUILTIN_MODULES

    assert out.stdout.split() == list(BUILTIN_MODULES)  # the display order, not the import order


def test_sample_option_loads_a_bundled_sample(capsysbinary, txt):
    rc, out, _ = run_main(capsysbinary, "chunk", "--sample", "handbook.pdf", "--set", "chunk_size=400")
    assert rc == 0
    rows = [json.loads(x) for x in out.splitlines()]
    assert rows and {r["document"] for r in rows} == {"handbook.pdf"}
    rc, out, _ = run_main(
        capsysbinary, "chunk", str(txt), "--sample", "Tidepool guide (Markdown)", "--format", "csv"
    )
    assert rc == 0 and {r["document"] for r in csv.DictReader(io.StringIO(out))} == {"doc.txt", "guide.md"}
    rc, out, _ = run_main(capsysbinary, "text", "--sample", "rapport_annuel.txt")
    assert rc == 0 and out.startswith("MAISON VERNIER")
    rc, _, err = run_main(capsysbinary, "chunk", "--sample", "nope.pdf")
    assert rc == 2 and "unknown sample 'nope.pdf'" in err
    rc, _, err = run_main(capsysbinary, "chunk")
    assert rc == 2 and "--sample" in err and err.count("\n") == 1
    rc, _, err = run_main(capsysbinary, "text", str(txt), "--sample", "guide.md")
    assert rc == 2 and "one document" in err


def test_evaluate_reads_samples_and_tolerant_answers(capsysbinary, tmp_path, fake_ctx):
    q = tmp_path / "q.jsonl"
    answer = "reported to the plant superintendent the same day"  # a line break and a hyphen in the PDF
    q.write_text(json.dumps({"question": "Who is told?", "answer": answer}) + "\n", encoding="utf-8")
    rc, out, err = run_main(
        capsysbinary, "evaluate", "--sample", "handbook.pdf", "--questions", str(q), "--format", "json", "-q"
    )
    assert rc == 0, err
    assert json.loads(out)[0]["questions"] == 1


# -- parameters adapt (issue 13): what the user did not --set follows what they did -------------
def test_a_size_below_the_default_overlap_runs_with_a_note(capsysbinary):
    rc, out, err = run_main(capsysbinary, "chunk", "--sample", "guide.md", "--set", "chunk_size=100", "--stats")
    assert rc == 0, err
    assert err.splitlines() == ["note: recursive: chunk_overlap 200 → 20 to stay below chunk_size 100"]
    assert json.loads(out)["strategy"] == "recursive(chunk_overlap=20, chunk_size=100)"
    rc, out, err = run_main(capsysbinary, "chunk", "--sample", "guide.md", "--set", "chunk_size=100", "--check")
    assert rc == 0 and "invariant" not in err
    assert max(json.loads(x)["length"] for x in out.splitlines()) <= 100


def test_input_refused_after_a_note_gets_its_error_line_alone(capsysbinary, tmp_path):
    missing = str(tmp_path / "missing.txt")
    rc, out, err = run_main(capsysbinary, "chunk", missing, "--set", "chunk_size=1")
    assert rc == 2 and out == ""
    assert err.splitlines() == [f"error: cannot read {missing!r}: No such file or directory"]  # no note first
    rc, out, err = run_main(capsysbinary, "chunk", "--sample", "guide.md", "--set", "chunk_size=1", "--stats")
    assert rc == 0 and err.splitlines() == ["note: recursive: chunk_overlap 200 → 0 to stay below chunk_size 1"]
    missing_questions = str(tmp_path / "missing.jsonl")  # the questions are read after the documents
    rc, out, err = run_main(capsysbinary, "evaluate", "--sample", "guide.md", "--questions", missing_questions, "--set", "chunk_size=100")
    assert rc == 2 and len(err.splitlines()) == 1 and err.startswith("error: cannot read question file")


def test_notes_held_by_one_run_never_reach_the_next(capsysbinary, monkeypatch):
    """A run that ends in a bug (it raises) writes its notes then; the next run in the same
    process says only its own."""

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(cli_inputs, "load_docs", broken)
    with pytest.raises(RuntimeError):
        main(["chunk", "--sample", "guide.md", "--set", "chunk_size=100"])
    assert "chunk_overlap 200 → 20" in capsysbinary.readouterr().err.decode("utf-8")
    monkeypatch.undo()
    rc, _, err = run_main(capsysbinary, "chunk", "--sample", "guide.md", "--strategy", "fixed", "--stats")
    assert rc == 0 and err == ""


def test_a_value_the_user_set_that_conflicts_is_still_refused():
    r = run_proc("chunk", "--sample", "guide.md", "--set", "chunk_size=100", "--set", "chunk_overlap=200")
    err = r.stderr.decode("utf-8")
    assert r.returncode == 2 and r.stdout == b""
    assert err.splitlines() == ["error: chunk_overlap=200 must be smaller than chunk_size=100"]
    # an amount given with a mode it does not fit: both set, so refused (no note, no run)
    r = run_proc(
        "chunk", "--sample", "guide.md", "--strategy", "semantic",
        "--set", "breakpoint_mode=standard_deviation", "--set", "breakpoint_amount=80",
    )  # fmt: skip
    lines = r.stderr.decode("utf-8").splitlines()
    assert r.returncode == 2 and len(lines) == 1
    assert lines[0].startswith("error: breakpoint_amount=80 is outside 0..10")


def test_every_command_adapts_each_strategy_group(capsysbinary, txt, tmp_path, fake_ctx):
    groups = [
        "--strategy", "recursive", "--set", "chunk_size=100",
        "--strategy", "sentence", "--set", "sentences_per_chunk=1",
        "--strategy", "semantic", "--set", "breakpoint_mode=threshold",
    ]  # fmt: skip
    rc, out, err = run_main(capsysbinary, "compare", str(txt), "--question", "second paragraph", *groups, "-q")
    assert rc == 0, err
    params = [d["config"]["params"] for d in json.loads(out)]
    assert params[0]["chunk_overlap"] == 20 and params[1]["overlap_sentences"] == 0
    assert params[2]["breakpoint_amount"] == 0.5  # the mode's default: the amount was not set
    notes = [ln for ln in err.splitlines() if ln.startswith("note: ")]
    assert notes == [
        "note: recursive: chunk_overlap 200 → 20 to stay below chunk_size 100",
        "note: sentence: overlap_sentences 1 → 0 to stay below sentences_per_chunk 1",
    ]
    q = _questions(tmp_path)
    rc, out, err = run_main(capsysbinary, "evaluate", "--corpus", str(txt), "--questions", str(q), *groups[:8],
                            "--format", "json", "-q")  # fmt: skip
    assert rc == 0 and len(json.loads(out)) == 2 and err.count("note: ") == 2
    args = _scoring("sweep", txt, q, "--set", "chunk_size=100", "--vary", "length=chars,words", "-q")
    rc, out, err = run_main(capsysbinary, *args, "--format", "json")
    assert rc == 0 and "chunk_overlap 200 → 20" in err and "error" not in json.loads(out)[0]
