"""The CLI on hostile files and hostile parameters, run as a user runs it (a subprocess).

Bad input: a non-zero exit, nothing on stdout, exactly one line on stderr that starts with
``error:`` and says what is wrong, never a traceback. Good input (including the loadable
hostile files): exit 0, and every chunk is the slice of ``explorer text``'s output that its
offsets say (``--check`` also runs the invariants inside the CLI).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.hostile_inputs import BY_ID, CASES, Case, write_case

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
