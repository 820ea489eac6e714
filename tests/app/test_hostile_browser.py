"""Hostile files and hostile text in a real browser, as a new user would feed them.

1. Hostile uploads (encrypted PDF, ZIP named .pdf, empty file, binary junk, scanned PDF, ...)
   next to a good document: each gets the loader's message in its own card on Documents, the
   good document stays usable on Explore, and nothing is lost moving between pages. A file over
   the upload limit is refused by the uploader itself. One screenshot of the messages goes to
   ``docs/screenshots/hostile-message.png`` for the README's Limits section.
2. A Markdown file full of HTML, script, ``javascript:`` links and images pointing outside, with
   a file name of the same kind, through every page: it is shown as text, no dialog ever fires,
   no request leaves the machine (they are blocked and recorded), and no live element comes
   from it.

The server uses the app's fake-embedder hook (Semantic and Retrieve embed with it).
"""

from __future__ import annotations

import time

import pytest

from tests.support import browser_util as bu
from tests.support.hostile_inputs import BY_ID, write_case

pytestmark = [pytest.mark.browser, pytest.mark.slow]

HOSTILE_UPLOADS = [
    "pdf-encrypted-password",
    "zip-named-pdf",
    "text-empty",
    "text-binary-junk",
    "pdf-image-only",
    "pdf-truncated",
    "text-named-pdf",
    "png-named-txt",
]
GOOD_MARKER = "Quillback"


def card(page, name: str):
    """The bordered card of one document on the Documents page: the innermost block that holds
    both its name and its Remove button (the name alone is also in a column of the card)."""
    title = page.locator('[data-testid="stMarkdownContainer"] strong', has_text=name)
    remove = page.get_by_role("button", name="Remove")
    return page.locator('[data-testid="stVerticalBlock"]').filter(has=title).filter(has=remove).last


def assert_server_clean(server: bu.Server) -> None:
    assert server.process.poll() is None, "the server died: " + server.log_tail()
    log = server.log_tail(50_000)
    assert "Traceback" not in log, log[-4000:]


@pytest.fixture()
def server(tmp_path):
    bu.require_browser()
    with bu.streamlit_server(tmp_path / "cache", fake_embedder=True) as srv:
        yield srv
        assert_server_clean(srv)


def test_hostile_files_get_a_message_beside_them(server, tmp_path):
    good = tmp_path / "plant-notes.txt"
    good.write_text(
        "\n\n".join(
            f"Paragraph {i}: the {GOOD_MARKER} pump is inspected every shift and each reading is logged."
            for i in range(30)
        ),
        encoding="utf-8",
    )
    files = [write_case(BY_ID[c], tmp_path) for c in HOSTILE_UPLOADS]
    with bu.chromium() as browser:
        context, page = bu.new_page(browser, width=1400, height=2600)
        watch = bu.Watch().attach(context)
        page.goto(server.url + "documents?samples=none")
        bu.settle(page)
        bu.upload(page, good)
        bu.upload(page, *files)

        for case_id, path in zip(HOSTILE_UPLOADS, files, strict=True):
            box = card(page, path.name)
            alerts = box.locator('[data-testid="stAlert"]')
            assert alerts.count() == 1, f"{path.name}: {alerts.count()} messages in its card"
            message = alerts.inner_text()
            assert BY_ID[case_id].error in message, (path.name, message)
            assert repr(path.name) in message, message
            assert "Traceback" not in message
        good_box = card(page, good.name)
        assert good_box.locator('[data-testid="stAlert"]').count() == 0
        assert "Characters" in good_box.inner_text()

        # the README's screenshot: the good document and the first four messages
        top = good_box.bounding_box()
        bottom = card(page, files[3].name).bounding_box()
        assert top and bottom
        clip = {
            "x": top["x"] - 12,
            "y": top["y"] - 12,
            "width": top["width"] + 24,
            "height": bottom["y"] + bottom["height"] - top["y"] + 24,
        }
        bu.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(bu.SCREENSHOTS / "hostile-message.png"), clip=clip)
        bu.screenshot(page, "hostile-documents.png")

        # the good document stays usable
        good_box.get_by_role("button", name="Explore").click()
        bu.heading(page, "Explore").wait_for()
        bu.settle(page)
        assert GOOD_MARKER in bu.main_text(page)
        assert page.locator(".ce-text .ce-idx").count() >= 2
        assert "plant-notes.txt" in bu.main_text(page)

        # nothing is lost between pages: the messages and the document are still there
        bu.nav(page, "Documents")
        for path in files:
            assert card(page, path.name).locator('[data-testid="stAlert"]').count() == 1, path.name
        assert "Characters" in card(page, good.name).inner_text()

        # over the upload limit: the uploader refuses it before it reaches the app
        huge = write_case(BY_ID["over-upload-limit"], tmp_path)
        t0 = time.monotonic()
        bu.upload(page, huge)
        # the refusal shows at once, and the helper sees it (not its 120 s wait for an upload)
        assert time.monotonic() - t0 < 60, f"the refused upload took {time.monotonic() - t0:.0f} s"
        chips = page.locator('[data-testid="stFileChip"]', has_text=huge.name)
        assert chips.count() == 1
        assert "must be 50.0MB or smaller" in chips.inner_text()
        assert card(page, huge.name).count() == 0, "a refused upload never becomes a document"
        assert "Characters" in card(page, good.name).inner_text()
        watch.assert_clean()


XSS_MD = """# Notes <img src=x onerror=alert('xss-heading')>

<script>alert("xss-script")</script>

Text with <img src=x onerror=alert('xss-img')> and <svg onload=alert('xss-svg')></svg> inline.

A [click me](javascript:alert('xss-link')) link, an <a href="http://evil.example/">outside link</a>,
an image ![tracker](http://evil.example/pixel.png) and <iframe src="http://evil.example/"></iframe>.

## Styles <style>body{background:url(http://evil.example/bg.png)}</style>

:red[not a directive] and <javascript:alert('autolink')> and {{7*7}} and &lt;b&gt;.

""" + "\n\n".join(f"Paragraph {i} about the Xsspump inspection and its readings." for i in range(12))

NAME = "[click](javascript:alert('name')) <img src=x onerror=alert('name')>.md"
#: Elements that must never come from the document, anywhere in the app's main area or sidebar.
LIVE = (
    '[data-testid="stMain"] script, [data-testid="stMain"] iframe, [data-testid="stMain"] svg[onload], '
    'img[src="x"], img[src^="http://evil"], a[href^="javascript:"], a[href^="http://evil"], '
    '[data-testid="stSidebar"] script'
)


def test_html_and_script_text_is_shown_never_run(server, tmp_path):
    path = tmp_path / NAME
    path.write_text(XSS_MD, encoding="utf-8")
    with bu.chromium() as browser:
        context, page = bu.new_page(browser, width=1400, height=1400)
        watch = bu.Watch().attach(context)
        page.goto(server.url + "documents?samples=none")
        bu.settle(page)
        bu.upload(page, path)
        main = bu.main_text(page)
        assert "javascript:alert('name')" in main, "the file name is shown as text"
        assert page.locator(LIVE).count() == 0

        bu.nav(page, "Explore")
        main = bu.main_text(page)
        for literal in ('<script>alert("xss-script")</script>', "<img src=x onerror=alert('xss-img')>",
                        "[click me](javascript:alert('xss-link'))", "![tracker](http://evil.example/pixel.png)"):  # fmt: skip
            assert literal in main, f"not shown as text: {literal}"
        assert page.locator(LIVE).count() == 0
        bu.screenshot(page, "hostile-xss-explore.png")

        # Compare and Semantic show the text; Export shows the file name inside code
        for title, shown in (
            ("Compare", "Xsspump"),
            ("Semantic", "Xsspump"),
            ("Export", "javascript:alert("),
        ):
            bu.nav(page, title)
            assert shown in bu.main_text(page), title
            assert page.locator(LIVE).count() == 0, title
            watch.assert_clean()

        bu.nav(page, "Retrieve")
        page.get_by_label("Question").fill("<img src=x onerror=alert('question')> Xsspump readings?")
        page.get_by_role("button", name="Search").click()
        bu.settle(page)
        from playwright.sync_api import expect

        # the hits come from a background job: on a loaded machine after the page has settled
        expect(page.locator('[data-testid="stMain"]')).to_contain_text("Xsspump", timeout=120_000)
        bu.settle(page)
        assert page.locator(LIVE).count() == 0
        bu.screenshot(page, "hostile-xss-retrieve.png")
        watch.assert_clean()
        assert not [e for e in watch.page_errors if "xss" in e or "alert" in e], watch.page_errors


def test_card_helper_finds_one_card_per_document(server, tmp_path):
    """Guard for the locator the tests above rely on: one card per name, not the page."""
    a, b = tmp_path / "first.txt", tmp_path / "second.txt"
    a.write_text("Alpha words here. " * 20, encoding="utf-8")
    b.write_bytes(b"")
    with bu.chromium() as browser:
        _, page = bu.new_page(browser)
        page.goto(server.url + "documents?samples=none")
        bu.settle(page)
        bu.upload(page, a, b)
        first, second = card(page, "first.txt"), card(page, "second.txt")
        assert "second.txt" not in first.inner_text()
        assert "first.txt" not in second.inner_text()
        assert second.locator('[data-testid="stAlert"]').count() == 1
