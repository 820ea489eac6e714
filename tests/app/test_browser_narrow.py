"""An 800 px window (a laptop with the sidebar open, half a wide screen): no control's label is
cut with an ellipsis. Streamlit truncates a toggle's or a button's label in a column too narrow
for it: "Chu…" (Explore's chunk-number toggle), "Collapse bl…" (the clean-up toggles),
"Download JS…" and "Downlo…" (Export's download buttons) left a user guessing."""

from __future__ import annotations

import pytest

from tests.support import browser_util as bu

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: Labels of the main area's toggles and buttons whose text overflows into an ellipsis.
CUT_LABELS_JS = """() => [...document.querySelectorAll(
    '[data-testid="stMain"] :is([data-testid="stCheckbox"], [data-testid="stButton"], [data-testid="stDownloadButton"]) *')]
  .filter(e => e.offsetParent && e.scrollWidth > e.clientWidth + 1 && getComputedStyle(e).textOverflow === 'ellipsis')
  .map(e => e.innerText)"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    bu.require_browser()
    with bu.streamlit_server(tmp_path_factory.mktemp("narrow-cache"), fake_embedder=True) as srv:
        yield srv


def test_no_control_label_is_cut_in_an_800_px_window(server):
    with bu.chromium() as browser:
        _, page = bu.new_page(browser, width=800, height=1000)
        page.goto(server.url)
        bu.settle(page)
        cut = {}
        for title in ("Documents", "Explore", "Export"):
            bu.nav(page, title)
            cut[title] = page.evaluate(CUT_LABELS_JS)
        bu.screenshot(page, "narrow-export.png")
        assert not any(cut.values()), cut
