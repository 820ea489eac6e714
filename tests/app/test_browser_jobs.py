"""Work that does not block, in a real browser (Playwright + Debian's Chromium): a question on
Retrieve and a sweep on Evaluate run in the background with their status at the top of the
page, and Stop ends the sweep. The app runs on the slowed-down fake embedder
(``CHUNK_EXPLORER_FAKE_DELAY``), so the jobs last long enough to be seen and stopped.
Screenshots go to ``test-artifacts/`` (browser-jobs-*.png)."""

from __future__ import annotations

import re
import time

import pytest

from tests.support import browser_util as bu

pytestmark = [pytest.mark.browser, pytest.mark.slow]

BAR = '[data-testid="stMain"] .st-key-w-job_bar'


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    bu.require_browser()
    env = {"CHUNK_EXPLORER_FAKE_DELAY": "0.5", "CHUNK_EXPLORER_WARM": "0"}
    with bu.streamlit_server(tmp_path_factory.mktemp("jobs-cache"), fake_embedder=True, env=env) as srv:
        yield srv


def above(page, upper: str, lower: str) -> bool:
    a = page.locator(upper).first.bounding_box()
    b = page.locator(lower).first.bounding_box()
    return a is not None and b is not None and a["y"] + a["height"] <= b["y"] + 1


def wait_for_step(page, n: int, timeout: float = 60) -> None:
    """Until the job bar says step ``n`` or a later one of the sweep ("step 3 of 18, …"), not its last:
    any such step, since on a busy machine the page's polls may skip one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = re.search(r"step (\d+) of (\d+), .* with chunk_size = \d+", page.locator(BAR).first.inner_text())
        if m and n <= int(m[1]) < int(m[2]):
            return
        time.sleep(0.2)
    raise AssertionError(f"the sweep's bar never showed step {n} or later within {timeout} s")


def test_retrieve_and_a_sweep_run_in_the_background_and_stop_ends_the_sweep(server):
    with bu.chromium() as browser:
        context, pg = bu.new_page(browser, width=1400, height=900)
        watch = bu.Watch().attach(context)
        pg.goto(server.url + "retrieve")
        bu.heading(pg, "Retrieve").wait_for()
        bu.settle(pg)

        # Retrieve: the question's embedding runs in the background, its status at the top
        pg.get_by_label("Question").fill("How often are the filters backwashed?")
        pg.get_by_role("button", name="Search").click()
        bar = pg.locator(BAR)
        bar.wait_for(timeout=30_000)
        assert above(pg, BAR, '[data-testid="stTextInput"]')  # above the question box
        assert bar.get_by_role("button", name="Stop").is_visible()
        pg.get_by_text("texts embedded").first.wait_for(timeout=30_000)
        bu.screenshot(pg, "browser-jobs-retrieve.png")
        # it ends by itself: the bar goes, the results come, the page stops polling
        bar.wait_for(state="detached", timeout=120_000)
        bu.settle(pg, timeout=60)
        assert pg.get_by_role("button", name="Show in Explore").count() == 10

        # Evaluate: a sweep, then Stop
        bu.nav(pg, "Evaluate")
        pg.get_by_role("button", name="Use the sample questions").click()
        bu.settle(pg)
        values = pg.locator('input[aria-label="Values"]')
        values.fill("200:1000:100")
        values.press("Enter")
        bu.settle(pg)
        pg.get_by_role("button", name="Run sweep").click()
        bar.wait_for(timeout=30_000)
        pg.get_by_text("Sweep of chunk_size").first.wait_for(timeout=30_000)
        assert above(pg, BAR, '[data-testid="stSegmentedControl"], [data-testid="stButtonGroup"]')
        wait_for_step(pg, 2)  # a value scored: the bar names a later one
        # and where the user clicked, the page says the sweep runs (the bar may be scrolled away)
        assert "The sweep's curves will show here" in bu.main_text(pg)
        bu.screenshot(pg, "browser-jobs-evaluate.png")
        t0 = time.monotonic()
        bar.get_by_role("button", name="Stop").click()
        stopped = pg.locator(BAR).get_by_text("Stopped")
        stopped.wait_for(timeout=30_000)
        assert time.monotonic() - t0 < 30  # stops at the next batch, not at the end of the sweep
        bu.settle(pg, timeout=60)  # no running job, no polling left: the page is calm
        assert pg.locator(BAR).get_by_role("button", name="Resume").is_visible()
        text = bu.main_text(pg)
        assert "The sweep was stopped" in text
        assert "Recall (%)" in text or pg.locator('[data-testid="stPlotlyChart"]').count() >= 2
        bu.screenshot(pg, "browser-jobs-evaluate-stopped.png")
        assert "Traceback" not in server.log_tail(20_000)
        watch.assert_clean()
        context.close()
