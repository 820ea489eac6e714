"""Compare in a real browser: the boundary diff marks the cuts only one configuration makes, the
summary counts them, identical outputs are flagged, the panels line up and scroll together, and
a click on a chunk of any panel inspects it.

The expected cuts are computed here with the core (``chunk_document`` on the same sample and
the two default configurations), not read back from the page. The fake embedder keeps it fast.
"""

from __future__ import annotations

import re

import pytest

from explorer.text.wording import plural
from tests.support import browser_util as bu

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: The window Compare shows first: page 1 of the default sample, 5,000 characters.
WINDOW = 5_000

#: For each panel: the offsets of the text just after a cut marker, and the kind of marker.
MARKS_JS = """() => [...document.querySelectorAll('.ce-cmp-body')].map((body) =>
  [...body.querySelectorAll('.ce-cut')].map((m) => {
    let n = m.nextElementSibling;
    while (n && n.classList.contains('ce-idx')) n = n.nextElementSibling;
    return [n ? Number(n.dataset.o) : null, m.classList.contains('ce-cut-only') ? 'only' : 'some'];
  }))"""

#: The offset of the first character visible at the top of each panel's text.
TOPS_JS = """() => [...document.querySelectorAll('.ce-cmp-body .ce-text')].map((box) => {
  const top = box.getBoundingClientRect().top + 4;
  for (const s of box.querySelectorAll('[data-o]')) {
    const rs = s.getClientRects();
    if (rs.length && rs[rs.length - 1].bottom > top) {
      const t = s.firstChild, cps = t ? Array.from(t.data) : [];
      const r = document.createRange();
      for (let k = 0; k < cps.length; k++) {
        const u = cps.slice(0, k).join('').length;
        r.setStart(t, u); r.setEnd(t, u + cps[k].length);
        if (r.getBoundingClientRect().bottom > top) return Number(s.dataset.o) + k;
      }
      return Number(s.dataset.o);
    }
  }
  return null;
})"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    bu.require_browser()
    with bu.streamlit_server(tmp_path_factory.mktemp("compare-cache"), fake_embedder=True) as srv:
        yield srv


@pytest.fixture()
def page(server):
    with bu.chromium() as browser:
        context, pg = bu.new_page(browser, width=1440, height=900)
        watch = bu.Watch().attach(context)
        pg.goto(server.url)
        bu.settle(pg)
        bu.nav(pg, "Compare")
        pg.locator(".ce-cmp-body .ce-text").nth(1).wait_for()
        yield pg
        watch.assert_clean()
        assert not watch.page_errors, watch.page_errors


def expected():
    """The two default configurations (recursive, fixed) on the default sample: their chunks
    and boundary diff, from the core."""
    from explorer import chunk_document
    from explorer.documents.samples import DEFAULT_SAMPLE, load_sample
    from explorer.render.boundaries import boundary_diff

    doc = load_sample(DEFAULT_SAMPLE)
    a, b = chunk_document(doc, "recursive"), chunk_document(doc, "fixed")
    diff = boundary_diff([[(c.start, c.end) for c in a], [(c.start, c.end) for c in b]])
    return doc, a, b, diff


def test_boundary_diff_marks_the_cuts_only_one_configuration_makes(page):
    doc, _, _, diff = expected()
    hi = min(WINDOW, len(doc.text))
    line = f"{plural(len(diff.shared), 'cut')} shared, {len(diff.unique[0])} only in 1, {len(diff.unique[1])} only in 2"
    assert line in bu.main_text(page)
    assert diff.unique[1], "the two configurations should cut differently"
    marks = page.evaluate(MARKS_JS)
    for panel in (0, 1):
        want = sorted(x for x in diff.unique[panel] if 0 <= x < hi)
        got = sorted(x for x, kind in marks[panel] if kind == "only")
        assert got == want, (panel, got[:10], want[:10])
    # a known place: the first cut only "fixed" makes in the window, marked in its panel only
    known = min(x for x in diff.unique[1] if x < hi)
    assert known not in [x for x, _ in marks[0]]
    shared = sorted(x for x in diff.shared if 0 < x < hi)
    assert shared == [] or shared[0] not in [x for x, _ in marks[0] + marks[1]]
    # the panels' texts start at the same height
    tops = [box.bounding_box()["y"] for box in page.locator(".ce-cmp-body .ce-text").all()]
    assert abs(tops[0] - tops[1]) < 1, tops
    # the README's screenshot (on request): the summary, and panels scrolled to where both cut
    page.evaluate("() => document.querySelector('[data-testid=\"stTabs\"]').scrollIntoView({block: 'start'})")
    page.evaluate("() => { const b = document.querySelector('.ce-cmp-body .ce-text'); b.scrollTop = 330; }")
    page.wait_for_timeout(500)
    page.mouse.move(5, 5)
    bu.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(bu.SCREENSHOTS / "compare-diff.png"))


def test_panels_scroll_together_by_text_position(page):
    before = page.evaluate(TOPS_JS)
    assert before[0] == before[1]
    page.evaluate(
        "() => { const b = document.querySelector('.ce-cmp-body .ce-text'); b.scrollTop = 1500;"
        " b.dispatchEvent(new Event('scroll')); }"
    )
    page.wait_for_timeout(600)
    tops = page.evaluate(TOPS_JS)
    assert tops[0] > 500, tops  # the first panel moved well down the text
    assert abs(tops[0] - tops[1]) < 120, tops  # the second one followed to the same place


def test_click_on_a_chunk_of_the_second_panel_inspects_it(page):
    _, _, b, _ = expected()
    target = page.locator('.ce-cmp-body[data-panel="1"] span.ce-s[data-c="3"]').first
    target.scroll_into_view_if_needed()
    target.click()
    bu.settle(page)
    heading = page.get_by_role("heading", name=re.compile(r"^Chunk \d+ of \d+")).first
    assert heading.inner_text().startswith(f"Chunk {b[3].index} of {len(b)}"), heading.inner_text()
    text = bu.main_text(page)
    assert "Inspecting a chunk of 2. fixed 500/0" in text
    assert f"Characters {b[3].start:,}–{b[3].end:,}" in text
    assert "Ends because" in text
    # the clicked chunk is selected in its panel
    assert page.locator('.ce-cmp-body[data-panel="1"] .ce-idx-sel').inner_text() == str(b[3].index)
    page.mouse.move(5, 5)
    page.screenshot(path=str(bu.ARTIFACTS / "compare-inspect.png"))


def test_identical_configurations_are_flagged(page):
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_role("button", name="Remove").click()  # the first (selected) one: "fixed" is left
    bu.settle(page)
    sidebar.get_by_role("button", name="Add").click()  # a copy of it
    bu.settle(page)
    page.locator(".ce-cmp-body .ce-text").nth(1).wait_for()
    flags = page.locator(".ce-cmp-same").all_inner_texts()
    assert flags == ["identical chunks to 2", "identical chunks to 1"], flags
    text = bu.main_text(page)
    assert re.search(r"\d+ cuts? shared, 0 only in 1, 0 only in 2", text), text[:2000]
    assert "identical chunks" in text
    assert page.locator(".ce-cmp-body .ce-cut").count() == 0
