"""Parameters adapt, in a real browser (issue 13, problems 2 and 3).

A chunk size moved below the default overlap still shows chunks: the overlap follows, with a
note under the parameters; an overlap the user sets that conflicts is flagged under its slider
while the last valid chunks stay. A strategy switch shows the new strategy's defaults in its
widgets and keeps the view at the same place in the text.

Runs on the app's fake embedder (``CHUNK_EXPLORER_FAKE_EMBEDDER=1``): what is checked here is
the sidebar and the view, not the model. Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import re

import pytest

from tests.support import browser_util as bu

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: The chunk (its number, its start, its end) that holds offset ``place`` in the text view, from
#: the view's offset-carrying spans; null when none does.
HOLDER_JS = """(place) => {
  for (const s of document.querySelectorAll('.ce-view span.ce-s[data-o][data-c]')) {
    const o = Number(s.dataset.o), n = Array.from(s.textContent).length;
    if (o <= place && place < o + n) return Number(s.dataset.c);
  }
  return null;
}"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    bu.require_browser()
    with bu.streamlit_server(tmp_path_factory.mktemp("params-cache"), fake_embedder=True) as srv:
        yield srv


@pytest.fixture()
def page(server):
    with bu.chromium() as browser:
        context, pg = bu.new_page(browser, width=1440, height=1000)
        watch = bu.Watch().attach(context)
        pg.goto(server.url)
        bu.heading(pg, "Explore").wait_for()
        bu.settle(pg)
        yield pg
        watch.assert_clean()
        assert not watch.page_errors, watch.page_errors
        assert "Traceback" not in server.log_tail(20_000)


def widget(pg, name: str, strategy: str = "recursive"):
    """The sidebar element of parameter ``name`` of the first configuration (``st-key-`` class
    of its key, pages.ui.state.W.PARAM)."""
    key = f"st-key-p-1-{strategy}-{name}"  # then "-N" once the app moved its value N times
    return pg.locator(f'[data-testid="stSidebar"] [class*="{key} "], [data-testid="stSidebar"] [class*="{key}-"]').first


def slider_value(pg, name: str, strategy: str = "recursive") -> int:
    return int(widget(pg, name, strategy).locator('input[type="range"]').evaluate("e => e.value"))


def press(pg, name: str, *keys: str) -> None:
    """Move a slider with its keys (Home: the minimum; ArrowRight: one step), as a user can."""
    thumb = widget(pg, name).locator('input[type="range"]')
    thumb.focus()
    for key in keys:
        thumb.press(key)
    bu.settle(pg)


def slide_to(pg, name: str, target: int, step: int = 10) -> None:
    """Move a slider to ``target`` with its arrow keys: a burst of keys, then one key at a time
    until it shows ``target`` (a key pressed while the app reruns may be lost)."""
    now = slider_value(pg, name)
    press(pg, name, *["ArrowRight" if target > now else "ArrowLeft"] * (abs(target - now) // step))
    for _ in range(40):
        now = slider_value(pg, name)
        if now == target:
            return
        press(pg, name, "ArrowRight" if target > now else "ArrowLeft")
    raise AssertionError(f"{name} stays at {now}, not {target}")


def right_under(pg, name: str) -> str:
    """The text of the element right under parameter ``name``'s widget."""
    return widget(pg, name).locator("xpath=following-sibling::*[1]").inner_text()


def chunk_heading(pg) -> str:
    return pg.get_by_role("heading", name=re.compile(r"^Chunk \d+ of \d+")).inner_text()


def chunk_badges(pg) -> int:
    return pg.locator(".ce-view .ce-idx").count()


def test_a_size_below_the_overlap_still_shows_chunks_with_a_note(page):
    before = chunk_badges(page)
    assert before > 1 and slider_value(page, "chunk_overlap") == 200
    press(page, "chunk_size", "Home")  # 10: the minimum
    slide_to(page, "chunk_size", 130)
    assert slider_value(page, "chunk_size") == 130
    main = bu.main_text(page)
    assert "Fix the parameters" not in main
    assert chunk_badges(page) > before  # smaller chunks, drawn
    assert re.match(r"Chunk 0 of \d+", chunk_heading(page))
    assert slider_value(page, "chunk_overlap") == 26  # followed the size
    assert "chunk_overlap 200 → 26 to stay below chunk_size 130" in right_under(page, "chunk_overlap")  # beside it
    bu.screenshot(page, "params-size-below-overlap.png")

    # an overlap the user sets above the size: flagged under its slider, the chunks stay
    shown = chunk_badges(page)
    press(page, "chunk_overlap", "End")
    overlap = slider_value(page, "chunk_overlap")
    assert overlap > 130
    assert f"chunk_overlap={overlap} must be smaller than chunk_size=130" in right_under(page, "chunk_overlap")
    assert chunk_badges(page) == shown  # the last valid view, not a blank page
    assert "Showing the last valid settings" in bu.main_text(page)
    bu.screenshot(page, "params-conflict-flagged.png")


def test_a_strategy_switch_shows_the_new_defaults_and_stays_at_the_same_place(page):
    slide_to(page, "chunk_size", 810)
    assert slider_value(page, "chunk_size") == 810
    chunk = page.locator('[data-testid="stMain"]').get_by_label("Chunk", exact=True)
    chunk.fill("5")
    chunk.press("Enter")
    bu.settle(page)
    assert chunk_heading(page).startswith("Chunk 5 of")
    place = int(page.locator('.ce-view span.ce-s[data-c="5"]').first.get_attribute("data-o"))

    page.locator('[data-testid="stSidebar"]').get_by_label("Strategy", exact=True).click()
    page.get_by_role("option", name="cluster", exact=True).click()
    bu.settle(page)
    page.locator(".ce-view .ce-idx-sel").first.wait_for(timeout=120_000)  # the new chunks, drawn
    bu.settle(page)
    # cluster's own defaults, not recursive's 810 characters
    assert slider_value(page, "chunk_size", "cluster") == 250
    assert widget(page, "length", "cluster").locator('input[role="combobox"]').input_value() == "cl100k"
    assert "chunk_size 810 not carried" in bu.sidebar_text(page)
    # the selected chunk holds the text the view was at
    sel = int(re.match(r"Chunk (\d+) of", chunk_heading(page)).group(1))
    assert page.evaluate(HOLDER_JS, place) == sel, (place, sel)
    assert page.locator(".ce-view .ce-idx-sel").first.inner_text() == str(sel)
    bu.screenshot(page, "params-strategy-switch.png")
