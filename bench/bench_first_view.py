"""Explore's first view in a real browser: how long a visitor waits for the chunks.

For each server entry (``app.py`` alone, ``serve.py`` as ``make run`` serves it, with its
start-up warm-up), a fresh server is started with its own empty cache; the first visitor
arrives 8 s after the server answers (someone opening a link just shared), then more new
visitors one after the other, each in a fresh browser context. A visit is timed from
``goto`` until Explore shows "Chunk 0 of" and no script run or placeholder is left
(``browser_util.settle``: its calm polls add about 1.6 s to every figure). Medians; nothing
asserted. Needs Debian's Chromium (``make browser``) and the derived models (``make run`` builds
them).

Run: .venv/bin/python bench/bench_first_view.py [--rounds 2] [--visitors 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "support")]

import browser_util as bu  # noqa: E402

ENTRIES = ("app.py", "serve.py")
#: Seconds between the server answering and the first visitor.
ARRIVAL_S = 8.0


def visit(browser, base: str) -> float:
    context, page = bu.new_page(browser, 1400, 900)
    try:
        start = time.monotonic()
        page.goto(base + "/")
        page.wait_for_function('document.body.innerText.includes("Chunk 0 of")', timeout=120_000)
        bu.settle(page, timeout=120)
        return time.monotonic() - start
    finally:
        context.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=2, help="fresh servers per entry (alternating)")
    ap.add_argument("--visitors", type=int, default=3, help="new visitors after the first, per server")
    args = ap.parse_args()
    times: dict[tuple[str, str], list[float]] = {}
    with bu.chromium() as browser, tempfile.TemporaryDirectory(prefix="first-view-") as tmp:
        for rnd in range(args.rounds):
            for entry in ENTRIES:
                with bu.streamlit_server(Path(tmp) / f"{entry}-{rnd}", entry=entry) as server:
                    base = server.url.rstrip("/")
                    time.sleep(ARRIVAL_S)
                    for i in range(1 + args.visitors):
                        times.setdefault((entry, "first" if i == 0 else "later"), []).append(visit(browser, base))
                print(f"round {rnd + 1} {entry}: load {os.getloadavg()[0]:.1f}", flush=True)
    print("| entry | fresh server's first visitor | later new visitors |")
    print("|---|---|---|")
    for entry in ENTRIES:
        first, later = times[(entry, "first")], times[(entry, "later")]
        print(f"| {entry} | {statistics.median(first):.1f} s (n={len(first)}) | "
              f"{statistics.median(later):.1f} s (n={len(later)}) |")


if __name__ == "__main__":
    main()
