"""Many users at once without a browser: the app runs each session's script in its own thread,
so whatever the core loads lazily must be complete for every thread.

Found by the multi-session browser test: on a fresh server, a session whose first script run
overlapped another's saw a half-filled strategy registry (``fixed`` alone), so its default
configurations were wrong, and ``get_strategy("recursive")`` could fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_THREADS = textwrap.dedent(
    """
    import json, sys, threading
    sys.path.insert(0, {root!r})
    from explorer.strategies import get_strategy, strategy_names
    n = 12
    barrier = threading.Barrier(n)
    seen, errors = [], []
    def look():
        barrier.wait()
        try:
            seen.append(strategy_names())
            get_strategy("recursive")
            get_strategy("hybrid")
        except Exception as err:
            errors.append(repr(err))
    threads = [threading.Thread(target=look) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({{"seen": seen, "errors": errors}}))
    """
)


def test_first_lookups_from_many_threads_see_every_strategy():
    """A fresh interpreter each time (the registry loads once per process)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    code = _THREADS.format(root=str(ROOT))
    for _ in range(3):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
        )
        assert out.returncode == 0, out.stderr
        result = json.loads(out.stdout)
        assert not result["errors"], result["errors"]
        first = result["seen"][0]
        assert {"fixed", "recursive", "sentence", "markdown", "hybrid"} <= set(first), first
        assert all(names == first for names in result["seen"]), result["seen"]


def test_sessions_opening_the_same_pdf_at_once_extract_it_once(monkeypatch):
    """Two sessions uploading one PDF at the same moment (a class given the same file) each
    extracted it, holding two copies while they ran: the second now waits for the first's."""
    import threading

    from explorer.documents import loaders
    from pages.ui import compute

    data = (ROOT / "explorer" / "documents" / "samples" / "handbook.pdf").read_bytes()
    real, calls = loaders.load_bytes, []

    def counted(*args, **kwargs):
        calls.append(1)
        threading.Event().wait(0.3)  # extraction takes a while: both sessions ask meanwhile
        return real(*args, **kwargs)

    monkeypatch.setattr(loaders, "load_bytes", counted)
    compute._DOCS.clear()
    start, got = threading.Barrier(3), []

    def open_it() -> None:
        start.wait()
        got.append(compute.load_upload("digest-shared", "handbook.pdf", (False,) * 3, data))

    threads = [threading.Thread(target=open_it) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(calls) == 1 and len(got) == 3
    assert got[0][0] is not None and all(doc is got[0][0] for doc, _ in got)
    compute._DOCS.clear()
