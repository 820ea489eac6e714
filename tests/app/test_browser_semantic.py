"""Semantic in a real browser on a ~70 KB upload: the text view reaches the end of the document
(its last sentence shows in the view after moving to the last chunk), the note after the window
moves the window on, and the curve's legend sits clear of the chart's toolbar.

The fake embedder keeps it fast: the curve's values do not matter here, only the navigation.
"""

from __future__ import annotations

import re

import pytest

from tests.support import browser_util as bu

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LAST = "This is the very last sentence of the long report."

#: The first offset shown in the text view, and whether ``needle`` lies inside the view's box
#: (scrolled there by the app, not by the test).
SHOWN_JS = """(needle) => {
  const box = document.querySelector('.ce-view .ce-text');
  const spans = [...box.querySelectorAll('[data-o]')];
  const first = Number(spans[0].dataset.o);
  const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
  let hit = null;
  while (walker.nextNode()) {
    const i = walker.currentNode.data.indexOf(needle);
    if (i >= 0) { hit = document.createRange(); hit.setStart(walker.currentNode, i);
                  hit.setEnd(walker.currentNode, i + needle.length); break; }
  }
  if (!hit) return [first, false];
  const r = hit.getBoundingClientRect(), v = box.getBoundingClientRect();
  return [first, r.top >= v.top - 1 && r.bottom <= v.bottom + 1];
}"""


def long_report() -> str:
    topics = ("The pumps", "The filters", "The budget", "The staff rota", "The reservoir")
    parts = [
        f"{topics[(i // 8) % 5]} were reviewed in meeting {i}, and the notes say the work went well. "
        + ("\n\n" if i % 8 == 7 else "")
        for i in range(900)
    ]
    return "".join(parts) + LAST


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    bu.require_browser()
    with bu.streamlit_server(tmp_path_factory.mktemp("semantic-cache"), fake_embedder=True) as srv:
        yield srv


def test_semantic_reaches_the_end_of_a_70_kb_document(server, tmp_path):
    path = tmp_path / "long-report.txt"
    path.write_text(long_report(), encoding="utf-8")
    assert path.stat().st_size > 70_000
    with bu.chromium() as browser:
        _, page = bu.new_page(browser, width=1440, height=900)
        page.goto(server.url)
        bu.settle(page)
        bu.nav(page, "Documents")
        bu.upload(page, path)
        bu.nav(page, "Semantic")
        page.locator('[data-testid="stSidebar"]').get_by_label("Document").click()
        page.get_by_role("option", name=re.compile("long-report")).click()
        bu.settle(page)
        first, seen = page.evaluate(SHOWN_JS, LAST)
        assert first == 0 and not seen

        page.locator(".ce-view .ce-jump").last.click()  # "… characters after this window …"
        bu.settle(page)
        moved, _ = page.evaluate(SHOWN_JS, LAST)
        assert moved > 20_000

        chunks = page.locator('[data-testid="stMetric"]', has_text="Chunks").locator(
            '[data-testid="stMetricValue"]'
        )
        n = int(chunks.inner_text().replace(",", ""))
        box = page.locator('[data-testid="stMain"]').get_by_label("Chunk", exact=True)
        box.fill(str(n - 1))
        box.press("Enter")
        bu.settle(page)
        page.locator(".ce-view").first.scroll_into_view_if_needed()
        last_start, seen = page.evaluate(SHOWN_JS, LAST)
        assert seen, "the last sentence is not in view after moving to the last chunk"
        assert last_start > moved
        bu.screenshot(page, "semantic-end-of-long-document.png")

        # the curve's legend (threshold included) sits under the chart, clear of both toolbars
        chart = page.locator('[data-testid="stPlotlyChart"]').first
        chart.scroll_into_view_if_needed()
        chart.hover()
        page.wait_for_timeout(500)
        bu.screenshot(page, "semantic-curve.png")
        legend = chart.locator(".legend").first
        assert "threshold" in legend.text_content()
        key = legend.bounding_box()
        bars = page.locator('.modebar, [data-testid="stElementToolbar"]')
        for i in range(bars.count()):
            bar = bars.nth(i).bounding_box()
            if bar and bar["width"] and bar["height"]:
                apart_x = key["x"] + key["width"] <= bar["x"] or bar["x"] + bar["width"] <= key["x"]
                apart_y = key["y"] + key["height"] <= bar["y"] or bar["y"] + bar["height"] <= key["y"]
                assert apart_x or apart_y, (key, bar)

        # a click on the curve shows the chunk at that place of the text
        area = chart.locator(".nsewdrag").first.bounding_box()
        x, y = area["x"] + area["width"] * 0.5, area["y"] + area["height"] * 0.5
        page.mouse.move(x, y - 20)
        page.mouse.click(x, y)
        bu.settle(page)
        picked = int(box.input_value())
        assert 0 < picked < n - 1, picked
        first, _ = page.evaluate(SHOWN_JS, LAST)
        assert 20_000 < first < 50_000  # the middle of the document

        # in an 800-pixel window the histogram wraps under the curve, inside the window (it was
        # cut at the window's edge), and the button under them keeps its words
        page.set_viewport_size({"width": 800, "height": 900})
        page.wait_for_timeout(800)
        curve, hist = (page.locator('[data-testid="stPlotlyChart"]').nth(i).bounding_box() for i in (0, 1))
        assert hist["y"] >= curve["y"] + curve["height"] - 1 and hist["x"] + hist["width"] <= 800, (curve, hist)
        add = page.get_by_role("button", name="Add to the comparison")
        assert add.evaluate("b => b.scrollWidth <= b.clientWidth")
        bu.screenshot(page, "semantic-narrow.png")
    assert not [ln for ln in server.log_tail(20_000).splitlines() if "Traceback" in ln]
