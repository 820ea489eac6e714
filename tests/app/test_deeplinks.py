"""Addresses below a page's are redirected to the page (pages.ui.deeplinks, served by serve.py);
every other path is left to Streamlit."""

from __future__ import annotations

import asyncio

import pytest

from pages.ui.deeplinks import DeepLinks, page_redirect
from pages.ui.nav import NAVIGATION


@pytest.mark.parametrize("page", sorted(NAVIGATION))
def test_a_path_below_a_page_goes_to_the_page(page):
    assert page_redirect(f"/{page}/extra") == f"/{page}"
    assert page_redirect(f"/{page}/a/b/") == f"/{page}"
    assert page_redirect(f"/team/{page}/extra", base="/team/") == f"/team/{page}"


@pytest.mark.parametrize(("path", "target"), [("/a/a", "/a"), ("/nope/extra/", "/nope"), ("/a/b/c", "/a"), ("/app/x", "/app")])
def test_a_deep_path_under_no_page_goes_to_its_first_segment(path, target):
    """Streamlit says "page not found" there and shows the default page, as for ``/a``: the
    deep path itself was an empty white page."""
    assert page_redirect(path) == target


@pytest.mark.parametrize(
    "path",
    ["/", "/explore", "/explore/", "/nope", "/static/js/index.js", "/_stcore/health", "/app/static/x.png",
     "/media/abc.png", "/component/x/index.html", "/favicon.png", "/explore/extra-but-other-base",
     "/explore/_stcore/health", "/compare/_stcore/stream"],
)  # fmt: skip
def test_other_paths_are_streamlits(path):
    base = "/team" if path.endswith("other-base") else ""
    assert page_redirect(path, base) is None


def test_the_middleware_redirects_with_the_query_and_passes_the_rest():
    passed, sent = [], []

    async def app(scope, receive, send):
        passed.append(scope["path"])

    async def send(message):
        sent.append(message)

    links = DeepLinks(app)
    html = [(b"accept", b"text/html,application/xhtml+xml,*/*;q=0.8")]
    scope = {"type": "http", "method": "GET", "path": "/explore/extra", "query_string": b"doc=a%20b", "headers": html}
    asyncio.run(links(scope, None, send))
    assert sent[0]["status"] == 302 and (b"location", b"/explore?doc=a%20b") in sent[0]["headers"]
    asyncio.run(links({**scope, "method": "POST"}, None, send))  # only GET and HEAD are redirected
    asyncio.run(links({**scope, "path": "/static/js/x.js"}, None, send))
    # the frontend's fetches below a page's address (how it finds the base path) are Streamlit's
    asyncio.run(links({**scope, "headers": [(b"accept", b"*/*")]}, None, send))
    assert passed == ["/explore/extra", "/static/js/x.js", "/explore/extra"]


def _redirect_of(path: str, query: bytes) -> tuple[int, dict]:
    sent: list = []

    async def app(scope, receive, send):
        sent.append({"status": "passed"})

    async def send(message):
        sent.append(message)

    html = [(b"accept", b"text/html")]
    asyncio.run(DeepLinks(app)({"type": "http", "method": "GET", "path": path, "query_string": query, "headers": html}, None, send))
    return sent[0]["status"], dict(sent[0].get("headers", []))


def test_a_link_longer_than_streamlit_reads_is_sent_on_with_its_size():
    """Streamlit drops a query of over 1,000 values whole: the link opened on the default view
    without a word. It now goes to the same page with ``toolong``, which the app says."""
    query = "&".join(["cfg=x"] * 1200).encode()
    status, headers = _redirect_of("/retrieve", query)
    assert status == 302 and headers[b"location"] == f"/retrieve?toolong=1200-{len(query)}".encode()
    assert _redirect_of("/explore/extra", query)[1][b"location"].startswith(b"/explore?toolong=1200-")
    assert _redirect_of("//evil.example/x", query)[1][b"location"].startswith(b"/evil.example?toolong=")
    assert _redirect_of("//evil.example", query)[1][b"location"].startswith(b"/evil.example?toolong=")
    assert _redirect_of("/retrieve", b"&".join([b"cfg=x"] * 999))[0] == "passed"  # read by Streamlit


@pytest.mark.parametrize("raw", ["1200-6000", "x", "1-2-3", "<b>**1**</b>", "9" * 40 + "-1"])
def test_the_too_long_notice_reads_only_two_numbers(raw):
    from pages.ui.url_fit import too_long_notice

    said = too_long_notice(raw)
    assert said.startswith("The link was too long to be read") and "default view" in said
    assert ("(1,200 values, 6,000 characters)" in said) == (raw == "1200-6000")
    assert "<b>" not in said and "**" not in said
    assert too_long_notice(None) == ""
