"""In a real browser, the app as ``make run`` serves it (``serve.py``): an address below a page's
(``/explore/extra``) opens the page with its link, where it showed an empty white page
(streamlit/streamlit#8013). Runs on the app's fake embedder."""

from __future__ import annotations

import re

import pytest

from tests.support import browser_util as bu

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    bu.require_browser()
    with bu.streamlit_server(tmp_path_factory.mktemp("serve-cache"), fake_embedder=True) as srv:
        yield srv


@pytest.fixture(scope="module")
def browser(server):
    with bu.chromium() as b:
        yield b


def test_an_address_below_a_page_opens_the_page_with_its_link(server, browser):
    context, page = bu.new_page(browser)
    watch = bu.Watch().attach(context)
    page.goto(server.url + "explore/extra/more?samples=Tidepool+guide+%28Markdown%29")
    bu.heading(page, "Explore").wait_for(timeout=60_000)
    page.wait_for_function('document.body.innerText.includes("Chunk 0 of")', timeout=60_000)
    page.wait_for_url(re.compile(r"/\?samples=Tidepool\+guide\+%28Markdown%29"), timeout=30_000)
    assert "guide.md" in bu.main_text(page)
    bu.screenshot(page, "deep-link-explore.png")
    page.goto(server.url + "compare/x")
    bu.heading(page, "Compare").wait_for(timeout=60_000)
    assert re.search(r"/compare(\?|$)", page.url), page.url
    watch.assert_clean()
    assert not watch.page_errors, watch.page_errors
    context.close()
