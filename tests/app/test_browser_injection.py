"""A crafted link and a crafted file name in a real browser: messages show hostile text as text.

The link carries Markdown links, images, a colour directive and LaTeX in every parameter that
ends up in a message (sample names, the document, a configuration with separators, the question
and its expected answer, the model); the upload's file name carries the same. On every
page the DOM must hold no link or image pointing at evil.example, no KaTeX and no coloured span
from the payload, and the browser must request nothing outside this machine
(``browser_util.Watch`` blocks and records such requests). ``tests/test_injection.py`` checks the
same paths element by element in AppTest, and kept questions from a link (``kq=``), whose
Evaluate warning is still raw there (its KNOWN list says where).
"""

from __future__ import annotations

import json
import time
from urllib.parse import urlencode

import pytest

from tests.support import browser_util as bu

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LINK = "[Click to re-authenticate](http://evil.example/phish)"
IMAGE = "![i](http://evil.example/i.png)"
RED = ":red[**your data was deleted**]"
MATH = "$x^2$"
PAYLOAD = f"{RED} {LINK} {IMAGE} {MATH} <script>alert(1)</script>"  # RED first: notices quote the first 40-80 characters
#: What Streamlit makes pictures, arrows and characters of even in escaped Markdown: it must read as typed.
AS_TYPED = ":material_delete_forever: :streamlit: :+1: A -> B -- C &lt;i&gt;"
#: Anything the payload would make if it were rendered as Markdown.
RENDERED = (
    'a[href*="evil.example"], img[src*="evil.example"], .katex, '
    '.stMarkdownColoredText:has-text("deleted"), .stMarkdownColoredBackground:has-text("deleted")'
)
PAGES = ("Documents", "Explore", "Compare", "Semantic", "Retrieve", "Evaluate", "Export")


@pytest.fixture()
def server(tmp_path):
    bu.require_browser()
    with bu.streamlit_server(tmp_path / "cache", fake_embedder=True) as srv:
        yield srv
        assert srv.process.poll() is None, "the server died: " + srv.log_tail()
        assert "Traceback" not in srv.log_tail(50_000), srv.log_tail(4000)


def crafted_query() -> str:
    cfg = json.dumps({"s": "recursive", "p": {"separators": [PAYLOAD[:60], "\n\n"], "chunk_size": 300}})
    bad_cfg = json.dumps({"s": PAYLOAD, "p": {}})
    short = json.dumps({"s": "recursive", "p": {"separators": [MATH], "chunk_size": 300}})  # in the label whole
    pairs = [
        ("samples", PAYLOAD),
        ("samples", "Tidepool guide (Markdown)"),
        ("doc", PAYLOAD),
        ("cfg", cfg),
        ("cfg", bad_cfg),
        ("cfg", short),
        ("q", PAYLOAD),
        ("qa", PAYLOAD),
        ("model", PAYLOAD),
    ]
    return urlencode(pairs)


def assert_inert(page, where: str, watch: bu.Watch) -> None:
    rendered = page.locator(RENDERED)
    found = [
        rendered.nth(i).evaluate(
            "e => (e.closest('[data-testid^=stElementContainer], [data-testid=stExpander], [role=tab]') || e)"
            ".outerHTML.slice(0, 600)"
        )
        for i in range(rendered.count())
    ]
    assert not found, f"{where}: " + "\n".join(found)
    watch.assert_clean()
    assert not [e for e in watch.page_errors if "alert" in e], watch.page_errors


def test_a_crafted_link_and_file_name_render_as_text(server, tmp_path):
    name = f"{LINK} {RED} {MATH} {AS_TYPED}.txt"
    path = tmp_path / "hostile.txt"
    path.write_text("Rivers carry water to the sea. " * 20, encoding="utf-8")
    named = tmp_path / name.replace("/", "_")
    path.rename(named)
    with bu.chromium() as browser:
        context, page = bu.new_page(browser, width=1400, height=1200)
        watch = bu.Watch().attach(context)
        page.goto(server.url + "?" + crafted_query())  # Explore is the default page
        bu.settle(page)
        text = bu.main_text(page)
        assert "re-authenticate" in text, "the link's notices say what was ignored"
        assert ":red[" in text or "red[" in text, "the colour directive shows as typed"
        assert_inert(page, "link", watch)
        bu.screenshot(page, "injection-link-notices.png")
        for title in PAGES:
            bu.nav(page, title)
            assert_inert(page, title, watch)
            if title == "Documents":
                bu.upload(page, named)
                assert "re-authenticate" in bu.main_text(page)
                assert AS_TYPED in bu.main_text(page), "no icon, arrow or entity made of it"
                assert_inert(page, "upload", watch)
        bu.nav(page, "Retrieve")
        page.get_by_label("Question").fill(PAYLOAD)
        page.get_by_role("button", name="Search").click()
        bu.settle(page)
        assert_inert(page, "search", watch)


def test_a_45_mb_text_is_refused_within_seconds(server, tmp_path):
    """Over limits.MAX_TEXT_CHARS (20 M characters) but under the 50 MB upload limit: the card
    says so soon after the upload reaches the server (the transfer itself is local here)."""
    big = tmp_path / "big-45mb.txt"
    line = "Rivers carry water to the sea and the sea gives it back as rain. " * 4 + "\n"
    with big.open("w", encoding="utf-8") as f:
        for _ in range(45 * 2**20 // len(line)):
            f.write(line)
    with bu.chromium() as browser:
        _, page = bu.new_page(browser)
        page.goto(server.url + "documents?samples=none")
        bu.settle(page)
        t0 = time.monotonic()
        bu.upload(page, big)
        page.get_by_text("over the limit of 20,000,000").first.wait_for(timeout=60_000)
        took = time.monotonic() - t0
        print(f"45 MB upload refused {took:.1f} s after the file was chosen")
        assert took < 30, f"the refusal took {took:.1f} s"


def test_a_links_bad_values_stay_in_sight_until_dismissed(server):
    """A deep link to Retrieve whose values the app does not offer: each gets its notice, and the
    notices stay while the page reruns (it starts embedding the loaded documents at once; shown
    once, they flashed by unseen) until the visitor dismisses them."""
    bad = {"k": "100000", "retriever": "<b>bm</b>", "emb": "h,zz", "q": "a" * 600, "backend": "<script>"}
    with bu.chromium() as browser:
        _, page = bu.new_page(browser, width=1400, height=1200)
        page.goto(server.url.rstrip("/") + "/retrieve?" + urlencode(bad))
        bu.settle(page)
        page.wait_for_timeout(1500)  # and after the reruns that follow
        bu.settle(page)
        text = bu.main_text(page)
        for said in (
            "Ignored top k from the link (100000)",
            "Ignored the retriever named in the link (<b>bm</b>)",
            "Ignored part of what to embed from the link (kept h): 'zz' is not h, cN or pN",
            "question was cut to its first 500 characters",
            "Ignored the backend named in the link (<script>)",
        ):
            assert said in text, (said, text[:2000])
        assert "\\" not in text.split("Retrieve", 1)[-1].split("Question")[0]  # no escape shows
        page.get_by_role("button", name="Dismiss").click()
        bu.settle(page)
        assert "Ignored" not in bu.main_text(page)
