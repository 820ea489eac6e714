"""The truncation audit and the cost table in a real browser (real model, Debian's Chromium).

Explore on the handbook in recursive chunks of 3,000 characters: the chunks over e5's 512
tokens have their unread tail greyed and struck through from exactly the offset the core
computes, the legend explains it, and the inspector of such a chunk says how many tokens the
model reads and how many characters it never embeds. Retrieve: a question against two
configurations shows vectors, index size, embedding time and LLM tokens beside the scores.

Screenshots at 1440×900: ``truncation-audit.png`` and ``cost-table.png`` in ``docs/screenshots``
with ``UPDATE_SCREENSHOTS=1``, else in ``test-artifacts/``.
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest

from tests.support import browser_util as bu

pytestmark = [pytest.mark.browser, pytest.mark.model, pytest.mark.slow]

HANDBOOK = "Plant operations handbook (PDF, 6 pages)"
BIG = {"chunk_size": 3000, "chunk_overlap": 200}
SMALL = {"chunk_size": 1000, "chunk_overlap": 200}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    bu.require_browser()
    # no warm-up: the embedding time in the cost table is the search's own
    env = {"CHUNK_EXPLORER_WARM": "0"}
    with bu.streamlit_server(tmp_path_factory.mktemp("audit-cache"), env=env) as srv:
        yield srv


@pytest.fixture()
def page(server):
    with bu.chromium() as browser:
        context, pg = bu.new_page(browser, width=1440, height=900)
        watch = bu.Watch().attach(context)
        query = {"doc": HANDBOOK, "cfg": [json.dumps({"s": "recursive", "p": p}) for p in (BIG, SMALL)]}
        pg.goto(server.url + "?" + urlencode(query, doseq=True))
        bu.settle(pg)
        yield pg
        watch.assert_clean()
        assert not watch.page_errors, watch.page_errors


def expected():
    """The handbook's chunks under BIG and how e5 reads them, from the core."""
    from explorer import chunk_document
    from explorer.documents.samples import load_sample
    from explorer.evaluation.truncation import model_setup

    doc = load_sample(HANDBOOK)
    chunks = chunk_document(doc, "recursive", BIG)
    return doc, chunks, model_setup(None).readings([c.text for c in chunks])


#: Offsets (``data-o``) and text of the greyed spans of the first text view.
UNREAD_JS = """() => [...document.querySelectorAll('.ce-view .ce-text span.ce-unread')]
  .map((s) => [Number(s.dataset.o), s.textContent, getComputedStyle(s).textDecorationLine])"""


def test_explore_draws_the_unread_tail_and_the_inspector_says_what_is_lost(page):
    doc, chunks, reads = expected()
    cut = [i for i, r in enumerate(reads) if r.truncated]
    assert cut, "chunks of 3,000 characters of the handbook should be over e5's 512 tokens"
    page.locator(".ce-view .ce-text span.ce-unread").first.wait_for()
    spans = page.evaluate(UNREAD_JS)
    assert all("line-through" in deco for _, _, deco in spans)
    # the greyed text is exactly every cut chunk's tail (overlaps with the next chunk included)
    tails = {}
    for i in cut:
        a = chunks[i].start + reads[i].read_chars
        tails.update({x: doc.text[x] for x in range(a, chunks[i].end)})
    shown = {o + k: ch for o, text, _ in spans for k, ch in enumerate(text)}
    assert shown == tails
    text = bu.main_text(page)
    assert "never embedded (over the token limit)" in text
    total = sum(r.unread_chars for r in reads)
    assert (
        f"the model cuts {len(cut)} of {len(chunks)} chunks: {total:,} characters are never embedded" in text
    )
    # inspect the first cut chunk
    number = page.get_by_label("Chunk", exact=True)
    number.fill(str(cut[0]))
    number.press("Enter")
    bu.settle(page)
    r = reads[cut[0]]
    sentence = f"The model reads {r.read_tokens} of {r.tokens} tokens; the last {r.unread_chars} characters"
    page.get_by_text(sentence).first.wait_for()
    # the screenshot: the figures, the greyed tail of the selected chunk, the inspector's line
    page.locator('[data-testid="stMetric"]').first.evaluate("(e) => e.scrollIntoView({block: 'start'})")
    page.evaluate(
        """(a) => { const box = document.querySelector('.ce-view .ce-text');
        const s = [...box.querySelectorAll('span.ce-unread')].find((x) => Number(x.dataset.o) >= a);
        box.scrollTop += s.getBoundingClientRect().top - box.getBoundingClientRect().top - 220; }""",
        chunks[cut[0]].start + r.read_chars,
    )
    page.wait_for_timeout(500)
    page.mouse.move(5, 5)
    bu.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(bu.SCREENSHOTS / "truncation-audit.png"))


def test_compare_panels_draw_each_configurations_unread_tails(page):
    bu.nav(page, "Compare")
    page.locator(".ce-cmp-body .ce-text").nth(1).wait_for()
    counts = page.evaluate(
        "() => [...document.querySelectorAll('.ce-cmp-body')].map((b) => b.querySelectorAll('span.ce-unread').length)"
    )
    assert counts[0] > 0 and counts[1] == 0, counts  # 3,000 characters are cut, 1,000 are not
    assert "never embedded (over the token limit)" in bu.main_text(page)
    page.get_by_role("tab", name="Metrics").click()
    bu.settle(page)
    page.mouse.move(5, 5)
    page.screenshot(path=str(bu.ARTIFACTS / "compare-truncation.png"))


def test_retrieve_shows_the_cost_of_each_configuration_beside_its_scores(page):
    bu.nav(page, "Retrieve")
    page.get_by_label("Question").fill("How often are the filters backwashed?")
    page.get_by_label("Expected answer (optional)").fill("or after 72 hours in service")
    page.get_by_role("button", name="Search").click()
    bu.settle(page)
    page.get_by_text("LLM tokens @k").first.wait_for()
    # each configuration's row comes when its index is ready (hybrid: its vectors and BM25)
    table = (
        page.locator('[data-testid="stTable"]')
        .filter(has_text="recursive 3000/200")
        .filter(has_text="recursive 1000/200")
        .first
    )
    table.wait_for(timeout=300_000)
    cells = table.inner_text()
    for column in ("configuration", "recall %", "vectors", "index size", "embedding", "LLM tokens @5"):
        assert column in cells, cells[:500]
    assert "recursive 3000/200" in cells and "recursive 1000/200" in cells
    assert " KB" in cells and " s" in cells
    page.get_by_text("Question", exact=True).first.evaluate("(e) => e.scrollIntoView({block: 'start'})")
    page.wait_for_timeout(500)
    page.mouse.move(5, 5)
    bu.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(bu.SCREENSHOTS / "cost-table.png"))
