"""The Export page's CLI line runs as given, in a fresh shell, outside the repository: samples are
named with ``--sample``, uploads by their real file names, and the project is installed into its
venv (``make run`` / ``make test``), so ``.venv/bin/python -m explorer`` works from any folder."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.app.test_app_pages import fake_embedder, ok, start  # noqa: F401  (fake_embedder: autouse)

ROOT = Path(__file__).resolve().parents[2]
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"
NOTES = "# My notes\n\nThe pumps are checked every morning. The filters are backwashed weekly.\n"


def cli_lines(at) -> list[str]:
    """The ``chunk`` lines of the Export page's CLI tab (the compare line needs a question)."""
    (cli,) = [c.value for c in at.code if c.language == "bash"]
    return [ln for ln in cli.splitlines() if ln.startswith("python -m explorer chunk ")]


def run_in_fresh_shell(line: str, folder: Path) -> subprocess.CompletedProcess:
    """``line`` with the venv's python, run by ``bash -c`` in ``folder``, with no PYTHONPATH:
    only an installed ``explorer`` can be found."""
    if not VENV_PYTHON.exists():
        pytest.skip(f"{VENV_PYTHON} is missing (make test creates it)")
    command = shlex.quote(str(VENV_PYTHON)) + line.removeprefix("python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return subprocess.run(
        ["bash", "-c", command], cwd=folder, env=env, capture_output=True, text=True, timeout=300
    )


def output_rows(line: str, done: subprocess.CompletedProcess, folder: Path) -> list[dict]:
    """The chunks a ``chunk`` line wrote: to the file it sends them to (``> chunks-1-….jsonl``,
    one file per configuration when there are several), else to its output."""
    words = shlex.split(line)
    out = (folder / words[-1]).read_text(encoding="utf-8") if words[-2] == ">" else done.stdout
    return [json.loads(x) for x in out.splitlines()]


def test_the_exported_cli_line_for_a_sample_runs_in_a_fresh_shell(tmp_path):
    at = start("export", query={"samples": "Plant operations handbook (PDF, 6 pages)"})
    ok(at)
    lines = cli_lines(at)
    assert lines and all("--sample handbook.pdf" in ln for ln in lines), lines
    assert not (tmp_path / "handbook.pdf").exists()
    for line in lines:
        done = run_in_fresh_shell(line, tmp_path)
        assert done.returncode == 0, (line, done.stderr[-2000:])
        rows = output_rows(line, done, tmp_path)
        assert rows and {r["document"] for r in rows} == {"handbook.pdf"}
        assert all(r["text"] for r in rows)


def test_the_exported_cli_line_names_an_upload_by_its_file_name(tmp_path):
    name = "my notes (v2).md"
    at = start("documents", query={"samples": "none"})
    at.file_uploader[0].set_value((name, NOTES.encode(), "text/markdown")).run()
    ok(at)
    at.switch_page("pages/export.py").run()
    ok(at)
    lines = cli_lines(at)
    assert lines and all(shlex.quote(name) in ln and "--sample" not in ln for ln in lines), lines
    (tmp_path / name).write_text(NOTES, encoding="utf-8")  # the user's own copy of the file
    done = run_in_fresh_shell(lines[0], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = output_rows(lines[0], done, tmp_path)
    assert "".join(r["text"] for r in rows).startswith("# My notes")
    peers = " ".join(c.value for c in at.code if c.language == "python")
    assert "PyPDFLoader" not in peers and "rapport_annuel" not in peers and repr(name) in peers
