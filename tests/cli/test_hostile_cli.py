"""The CLI on hostile files and hostile parameters, run as a user runs it (a subprocess).

Bad input: a non-zero exit, nothing on stdout, exactly one line on stderr that starts with
``error:`` and says what is wrong, never a traceback. Good input (including the loadable
hostile files): exit 0, and every chunk is the slice of ``explorer text``'s output that its
offsets say (``--check`` also runs the invariants inside the CLI).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.hostile_inputs import BY_ID, CASES, Case, raw_pdf, write_case

ROOT = Path(__file__).resolve().parents[2]

#: Loadable cases the CLI must chunk (one of each family: PDF quirks, encodings, controls,
#: scripts, Markdown oddities, a lying extension, HTML/script text).
GOOD = [
    "pdf-encrypted-empty-password",
    "pdf-bad-startxref",
    "pdf-lying-page-count",
    "pdf-broken-font-some-pages",
    "pdf-named-txt",
    "text-nul-and-controls",
    "text-invalid-utf8",
    "text-utf16-le-no-bom",
    "text-cp1252",
    "text-mixed-scripts",
    "text-crlf-and-cr",
    "text-html-script",
    "md-unclosed-fence",
    "md-html-blocks",
    "md-front-matter",
]
#: Refused cases, all of them except the slow bomb (its loader test covers it).
BAD = [c.id for c in CASES if c.error is not None and not c.slow]


#: What a terminal acts on (escape sequences, a line break in a name, a bidirectional override).
CONTROLS = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def run_cli(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[bytes]:
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "CHUNK_EXPLORER_CACHE": str(cwd / "cache"),
    }
    return subprocess.run(
        [sys.executable, "-m", "explorer", *args], cwd=cwd, env=env, capture_output=True, timeout=timeout
    )


def assert_one_error_line(proc: subprocess.CompletedProcess[bytes], *fragments: str) -> str:
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode != 0, (proc.returncode, err)
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("error: "), lines[0]
    assert not CONTROLS.search(lines[0]), lines[0]  # nothing a terminal would act on
    assert proc.stdout == b"", proc.stdout[:200]
    for f in fragments:
        assert f in lines[0], (f, lines[0])
    return lines[0]


def test_subsets_exist():
    for cid in GOOD:
        assert BY_ID[cid].error is None, cid
    assert len(BAD) >= 15


@pytest.mark.parametrize("case_id", BAD)
@pytest.mark.parametrize("command", ["chunk", "text"])
def test_refused_file_gives_one_error_line(case_id: str, command: str, tmp_path: Path):
    case: Case = BY_ID[case_id]
    path = write_case(case, tmp_path)
    proc = run_cli(command, path.name, cwd=tmp_path)
    assert case.error is not None
    line = assert_one_error_line(proc, case.error)
    assert proc.returncode == 2
    assert repr(path.name) in line, "the message names the file"


@pytest.mark.parametrize("case_id", GOOD)
def test_loadable_file_chunks_on_its_text(case_id: str, tmp_path: Path):
    path = write_case(BY_ID[case_id], tmp_path)
    text_proc = run_cli("text", path.name, cwd=tmp_path)
    assert text_proc.returncode == 0, text_proc.stderr
    text = text_proc.stdout.decode("utf-8")
    proc = run_cli(
        "chunk", path.name, "--strategy", "recursive", "--set", "chunk_size=60",
        "--set", "chunk_overlap=10", "--check", cwd=tmp_path,
    )  # fmt: skip
    err = proc.stderr.decode("utf-8")
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert all(line.startswith("warning: ") for line in err.splitlines()), err
    rows = [json.loads(line) for line in proc.stdout.decode("utf-8").splitlines()]
    assert rows
    for row in rows:
        assert text[row["start"] : row["end"]] == row["text"]
        assert row["chars"] == row["end"] - row["start"] and row["chars"] <= 60


THRESHOLD_2 = ["--set", "breakpoint_amount=2"]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("cli")
    (d / "report.txt").write_text("The pump was inspected. Readings were logged.\n\n" * 30, encoding="utf-8")
    (d / "big.txt").write_text("word " * 210_000, encoding="utf-8")
    (d / "dir.txt").mkdir()
    return d


@pytest.mark.parametrize(
    ("args", "fragments"),
    [
        (["chunk", "report.txt", "--strategy", "magic"], ["'magic'", "fixed"]),
        (["chunk", "report.txt", "--set", "chunk_sise=10"], ["'chunk_sise'"]),
        (["chunk", "report.txt", "--set", "chunk_size=0"], ["chunk_size=0", "minimum"]),
        (["chunk", "report.txt", "--set", "chunk_size=-5"], ["chunk_size=-5"]),
        (["chunk", "report.txt", "--set", "chunk_size=abc"], ["chunk_size='abc'"]),
        (
            ["chunk", "report.txt", "--set", "chunk_size=100", "--set", "chunk_overlap=100"],
            ["chunk_overlap=100"],
        ),
        (
            ["chunk", "report.txt", "--set", "chunk_size=100", "--set", "chunk_overlap=500"],
            ["chunk_overlap=500"],
        ),
        (["chunk", "report.txt", "--set", "separators=[]"], ["separators=[]"]),
        (["chunk", "report.txt", "--set", "separators=not json"], ["separators="]),
        (
            ["chunk", "report.txt", "--set", 'separators=["(a+)+$"]', "--set", "is_separator_regex=true"],
            ["capturing group"],
        ),
        (
            ["chunk", "report.txt", "--set", 'separators=["(?:a+)+$"]', "--set", "is_separator_regex=true"],
            ["catastrophic backtracking"],
        ),
        (
            ["chunk", "report.txt", "--set", 'separators=["["]', "--set", "is_separator_regex=true"],
            ["not a valid regular expression"],
        ),
        # re reads "[[:alpha:]]" as "[:alph" then "]", the regex module as any letter: refused, and
        # Python's FutureWarning lines (its source file and line) no longer reach stderr
        (
            ["chunk", "report.txt", "--set", 'separators=["[[:alpha:]]"]', "--set", "is_separator_regex=true"],
            ["'[[:alpha:]]' is ambiguous", "nested set"],
        ),
        (
            ["chunk", "report.txt", "--strategy", "semantic", "--set", "breakpoint_amount=150"],
            ["breakpoint_amount=150", "0..100"],
        ),
        (
            [
                "chunk",
                "report.txt",
                "--strategy",
                "semantic",
                "--set",
                "breakpoint_mode=threshold",
                *THRESHOLD_2,
            ],
            ["-1..1"],
        ),
        (["chunk", "report.txt", "--model", "no-such-model"], ["'no-such-model'", "not found"]),
        (["chunk", "big.txt", "--strategy", "fixed", "--set", "chunk_size=1"], ["200,000", "big.txt"]),
        (
            [
                "chunk",
                "big.txt",
                "--strategy",
                "recursive",
                "--set",
                "chunk_size=1",
                "--set",
                "chunk_overlap=0",
            ],
            ["200,000"],
        ),
        (["chunk", "missing.txt"], ["missing.txt"]),
        (["chunk", "dir.txt"], ["dir.txt"]),
        (["text", "report.txt", "--cleanup", "bleach"], ["'bleach'"]),
        (["chunk", "report.txt", "--set", "x"], ["--set 'x'"]),
        (["chunk", "report.txt", "--format", "xml"], ["--format"]),
        (["chunk", "report.txt", "--bogus"], ["--bogus"]),
        # refused as the arguments are read, before any file: a note of another option stays unsaid
        (["evaluate", "--corpus", "report.txt", "--questions", "q.jsonl", "--k", "9" * 400], ["k=1e+400", "1,000"]),
        (["evaluate", "--corpus", "report.txt", "--questions", "q.jsonl", "--k", "0"], ["k=0"]),
        (["compare", "report.txt", "--question", "pump?", "--k", "1001"], ["k=1001"]),
        (
            ["evaluate", "--corpus", "report.txt", "--questions", "q.jsonl", "--retriever", "bm25", "--piece-chars", "-5"],
            ["piece_chars=-5"],
        ),
        (["evaluate", "--corpus", "report.txt", "--questions", "q.jsonl", "--context-chars", "99999"], ["10,000"]),
        # a question file that is not a regular file is not read without end
        (["evaluate", "--corpus", "report.txt", "--questions", "/dev/zero"], ["'/dev/zero' is not a file"]),
        (["evaluate", "--corpus", "report.txt", "--questions", "dir.txt"], ["is not a file"]),
    ],
)
def test_bad_parameters_give_one_error_line(files: Path, args: list[str], fragments: list[str]):
    assert_one_error_line(run_cli(*args, cwd=files), *fragments)


def test_a_pipe_as_question_file_is_refused_not_waited_on(files: Path, tmp_path: Path):
    fifo = tmp_path / "questions.jsonl"
    os.mkfifo(fifo)
    assert_one_error_line(
        run_cli("evaluate", "--corpus", "report.txt", "--questions", str(fifo), cwd=files, timeout=60), "is not a file"
    )


def test_million_chunk_request_is_refused_quickly(files: Path):
    """Not a timing assertion: it must end well inside the subprocess timeout."""
    for strategy in ("fixed", "sentence", "paragraph", "markdown", "hybrid"):
        proc = run_cli(
            "chunk", "big.txt", "--strategy", strategy, "--set", "chunk_size=1", cwd=files, timeout=60
        )
        assert_one_error_line(proc, "at least 840,000 chunks")


#: A PDF whose content stream names a filter holding escape sequences (clear the screen, set the
#: window title): the reader's own message quotes it.
ESCAPING_PDF = raw_pdf([
    b"<< /Type /Catalog /Pages 2 0 R >>",
    b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>",
    b"<< /Length 4 /Filter /X#1b#5b2J#1b#5d0;pwned#07 >>\nstream\nBT\nendstream",
])  # fmt: skip


def test_what_the_input_holds_reaches_the_terminal_escaped(tmp_path: Path):
    """An error or warning line quotes the input: a file name, a PDF reader's message, an
    argument. Their control characters are written as escapes, so the line cannot clear the
    screen, retitle the window or split into two lines; results on stdout stay the user's text."""
    (tmp_path / "esc.pdf").write_bytes(ESCAPING_PDF)
    line = assert_one_error_line(run_cli("chunk", "esc.pdf", cwd=tmp_path), "esc.pdf")
    assert "\\x1b[2J" in line and "\\x07" in line, line

    line = assert_one_error_line(run_cli("text", "esc.pdf", "\x1b[31mRED\u202e", cwd=tmp_path), "unrecognized")
    assert "\\x1b[31mRED\\u202e" in line, line

    name = "notes\x1b]0;pwned\x07\nfake.txt"
    (tmp_path / name).write_text("A line.\x00 Another line.\n")  # the NUL is removed, with a warning
    proc = run_cli("chunk", name, cwd=tmp_path)
    err = proc.stderr.decode()
    assert proc.returncode == 0 and err.count("\n") == 1 and err.startswith("warning: "), err
    assert not CONTROLS.search(err.rstrip("\n")) and "\\x1b]0;pwned\\x07\\x0afake.txt" in err, err
    assert json.loads(proc.stdout.decode().splitlines()[0])["text"] == "A line. Another line."


def test_closed_standard_streams_give_no_traceback(tmp_path: Path):
    """Started with stdout closed (``>&-``): one error line, not an AttributeError's traceback;
    with stderr closed (``2>&-``) good input still succeeds."""
    (tmp_path / "a.txt").write_text("One line of text.\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CHUNK_EXPLORER_CACHE": str(tmp_path / "cache")}
    cmd = [sys.executable, "-m", "explorer", "chunk", "a.txt"]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          timeout=120, preexec_fn=lambda: os.close(1))  # fmt: skip
    assert proc.returncode == 2 and proc.stderr.decode() == (
        "error: standard output is closed: the results have nowhere to go\n"
    ), proc.stderr
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          timeout=120, preexec_fn=lambda: os.close(2))  # fmt: skip
    assert proc.returncode == 0 and b"One line of text." in proc.stdout


def test_a_file_name_that_is_not_utf8_is_written_as_valid_utf8(tmp_path: Path):
    """A Latin-1 file name on a UTF-8 system ("café.txt" written by an old archiver): its chunks
    and its CSV name it with U+FFFD, so what reads stdout as UTF-8 (json, jq, a spreadsheet)
    takes it (the name's lone surrogates had been written as bytes no UTF-8 reader accepts)."""
    name = os.fsdecode(b"caf\xe9.txt")
    (tmp_path / name).write_text("A line of text.\n")
    for fmt in ("jsonl", "csv"):
        proc = run_cli("chunk", name, "--format", fmt, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        out = proc.stdout.decode("utf-8")  # strict: raised on the surrogates' bytes
        assert "caf\ufffd.txt" in out, out
    proc = run_cli("chunk", name, cwd=tmp_path)
    assert json.loads(proc.stdout.decode("utf-8"))["document"] == "caf\ufffd.txt"
