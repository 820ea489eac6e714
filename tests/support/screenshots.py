"""Refresh the README's screenshots from the running app (real model, Debian's Chromium).

Run: .venv/bin/python tests/support/screenshots.py [--out docs/screenshots]

Not a test (pytest does not collect it): it starts the app on a free port with its own
embedding cache, opens each page on the bundled handbook, and saves what a visitor sees.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.support import browser_util as bu


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=bu.ROOT / "docs" / "screenshots")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with bu.streamlit_server() as srv, bu.chromium() as browser:
        _, pg = bu.new_page(browser, width=1600, height=1000)
        pg.goto(srv.url)
        bu.settle(pg)

        bu.nav(pg, "Explore")
        pg.screenshot(path=str(args.out / "explore.png"))
        # a selection: which chunks hold it (the README's selection screenshot)
        box = pg.locator(".ce-view span.ce-s[data-c='1']").first
        box.scroll_into_view_if_needed()
        r = box.bounding_box()
        pg.mouse.move(r["x"] + 60, r["y"] + 12)
        pg.mouse.down()
        pg.mouse.move(r["x"] + 420, r["y"] + 12, steps=10)
        pg.mouse.up()
        bu.settle(pg)
        pg.screenshot(path=str(args.out / "explore-selection.png"))

        bu.nav(pg, "Compare")
        pg.screenshot(path=str(args.out / "compare.png"))

        bu.nav(pg, "Semantic")
        pg.screenshot(path=str(args.out / "semantic.png"))

        bu.nav(pg, "Retrieve")
        pg.get_by_label("Question").fill("How often are the filters backwashed?")
        pg.get_by_label("Expected answer (optional)").fill("or after 72 hours in service")
        pg.get_by_role("button", name="Search").click()
        bu.settle(pg)
        pg.mouse.move(5, 5)  # no tooltip over the results
        pg.wait_for_timeout(800)  # the tooltip fades out
        pg.screenshot(path=str(args.out / "retrieve.png"))
        # pieces: each card names and tints its chunk's best piece
        sidebar = pg.locator('[data-testid="stSidebar"]')
        sidebar.get_by_text("What is embedded").first.click()
        bu.settle(pg)
        pieces = sidebar.get_by_label("Score with pieces of", exact=True)
        pieces.scroll_into_view_if_needed()
        pieces.click()
        pg.get_by_role("option", name="300 characters").click()
        bu.settle(pg)
        pg.get_by_role("button", name="Search").click()
        bu.settle(pg)
        pg.locator(".ce-snip").first.scroll_into_view_if_needed()
        pg.mouse.move(5, 5)
        pg.wait_for_timeout(800)
        pg.screenshot(path=str(args.out / "retrieve-pieces.png"))
        pieces.scroll_into_view_if_needed()
        pieces.click()
        pg.get_by_role("option", name="off").click()  # the pages after this one as a visitor first sees them
        bu.settle(pg)

        bu.nav(pg, "Documents")
        pg.screenshot(path=str(args.out / "documents.png"))
        bu.nav(pg, "Evaluate")
        pg.get_by_role("button", name=re.compile("Use the sample questions")).click()
        bu.settle(pg)
        pg.get_by_role("button", name="Run evaluation").click()
        bu.settle(pg)
        pg.mouse.move(5, 5)
        pg.wait_for_timeout(800)  # the tooltip fades out
        pg.screenshot(path=str(args.out / "evaluate.png"))
        pg.get_by_role("button", name="Run sweep").click()
        bu.settle(pg)
        pg.locator('[data-testid="stPlotlyChart"]').last.scroll_into_view_if_needed()
        pg.mouse.move(5, 5)
        pg.wait_for_timeout(800)  # the tooltip fades out
        pg.screenshot(path=str(args.out / "evaluate-sweep.png"))
        errors = [ln for ln in srv.log_tail(50_000).splitlines() if re.search(r"Traceback|Error", ln)]
    print("\n".join(errors) or f"saved to {args.out}")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
