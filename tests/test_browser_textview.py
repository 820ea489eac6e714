"""The interactive text view in a real browser: click a chunk to inspect it, select text to get
its exact offsets, and use a selection as the expected answer on Retrieve.

The selection is made with the mouse (press at the left edge of the first character, release
at the right edge of the last), and the offsets the app reports are checked against the
document text the page shows. The fake embedder keeps it fast: nothing here depends on vectors.
"""

from __future__ import annotations

import re

import browser_util as bu
import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: Page coordinates of the left edge of character ``a`` and the right edge of ``b - 1`` in the
#: first text view, after scrolling ``a`` into view (offsets in code points, like the app's).
POINTS_JS = """([a, b]) => {
  const root = document.querySelector('.ce-view');
  const spans = [...root.querySelectorAll('[data-o]')];
  function locate(pos) {
    for (const s of spans) {
      const o = Number(s.dataset.o), t = s.firstChild;
      if (!t) continue;
      const cps = Array.from(t.data);
      if (pos >= o && pos < o + cps.length) return [s, t, cps.slice(0, pos - o).join('').length, cps[pos - o].length];
    }
    return null;
  }
  function rectOf(pos) {
    const [, t, u, w] = locate(pos);
    const r = document.createRange();
    r.setStart(t, u); r.setEnd(t, u + w);
    return r.getClientRects()[0];
  }
  const box = root.querySelector('.ce-text');
  box.scrollIntoView({block: 'start'});
  box.scrollTop += rectOf(a).top - box.getBoundingClientRect().top - 60;
  function point(pos, right) {
    const rect = rectOf(pos);
    return {x: right ? rect.right - 1 : rect.left + 1, y: (rect.top + rect.bottom) / 2};
  }
  return [point(a, false), point(b - 1, true)];
}"""

#: The document text as the first text view holds it (its offset spans, in order), with the
#: offset of the first one.
TEXT_JS = """() => {
  const spans = [...document.querySelector('.ce-view').querySelectorAll('[data-o]')];
  return [Number(spans[0].dataset.o), spans.map((s) => s.textContent).join('')];
}"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    bu.require_browser()
    with bu.streamlit_server(tmp_path_factory.mktemp("textview-cache"), fake_embedder=True) as srv:
        yield srv


@pytest.fixture()
def page(server):
    with bu.chromium() as browser:
        _, pg = bu.new_page(browser, width=1500, height=1000)
        pg.goto(server.url)
        bu.settle(pg)
        yield pg


def click_at(pg, pos: int) -> None:
    """Click on character ``pos`` of the first text view."""
    p, _ = pg.evaluate(POINTS_JS, [pos, pos + 1])
    pg.mouse.click(p["x"] + 2, p["y"])
    bu.settle(pg)


def select(pg, a: int, b: int) -> None:
    """Drag the mouse over characters [a, b) of the first text view."""
    p, q = pg.evaluate(POINTS_JS, [a, b])
    pg.mouse.move(p["x"], p["y"])
    pg.mouse.down()
    pg.mouse.move(q["x"], q["y"], steps=10)
    pg.mouse.up()
    bu.settle(pg)


def view_text(pg) -> tuple[int, str]:
    return tuple(pg.evaluate(TEXT_JS))


def captions(pg) -> list[str]:
    return pg.locator('[data-testid="stCaptionContainer"]').all_inner_texts()


def test_click_picks_a_chunk_and_selection_gives_exact_offsets(page, server):
    bu.nav(page, "Explore")
    assert page.get_by_role("heading", name=re.compile(r"^Chunk 0 of \d+")).count() == 1
    start = int(page.locator('.ce-view span.ce-s[data-c="3"]').first.get_attribute("data-o"))
    click_at(page, start + 5)
    heading = page.get_by_role("heading", name=re.compile(r"^Chunk \d+ of \d+")).inner_text()
    assert heading.startswith("Chunk 3 of"), heading

    lo, text = view_text(page)
    # 24 characters on one line, inside chunk 3
    a = next(i for i in range(start + 3, start + 200) if "\n" not in text[i - lo : i - lo + 24])
    b = a + 24
    select(page, a, b)
    line = next(t for t in captions(page) if t.startswith("Selected"))
    assert f"characters {a:,}–{b:,} (24 chars)" in line, line
    assert "chunk 3" in line, line
    marked = page.locator(".ce-view .ce-ans").all_inner_texts()
    assert "".join(marked) == text[a - lo : b - lo]
    bu.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(bu.SCREENSHOTS / "explore-selection.png"))  # the README's, on request

    page.get_by_role("button", name="Use as expected answer").click()
    bu.settle(page)
    assert page.get_by_role("heading", name="Retrieve").count() == 1
    assert page.get_by_label("Expected answer (optional)").input_value() == text[a - lo : b - lo]
    assert any(f"characters {a:,}–{b:,}" in t for t in captions(page))
    bu.screenshot(page, "textview-explore-to-retrieve.png")
    server_errors = [ln for ln in server.log_tail(20000).splitlines() if "Traceback" in ln]
    assert not server_errors


def test_selecting_a_repeated_passage_scores_it_on_retrieve(page):
    bu.nav(page, "Retrieve")
    page.get_by_text("Select the expected answer in the text").click()
    bu.settle(page)
    header = "Harbor Valley Water Authority - Plant Operations Handbook (rev. 7)"
    choose = page.get_by_label("Document")
    if choose.count():  # several documents loaded: show the handbook
        choose.click()
        page.get_by_role("option", name=re.compile("handbook")).click()
        bu.settle(page)
    lo, text = view_text(page)
    second = text.index(header, text.index(header) + 1) + lo
    page.get_by_label("Question").fill("Who publishes the handbook?")
    page.get_by_label("Expected answer (optional)").fill(header)
    page.get_by_role("button", name="Search").click()
    bu.settle(page)
    assert "occurs more than once" in bu.main_text(page)  # typed, the header is ambiguous
    page.get_by_label("Expected answer (optional)").fill("")

    select(page, second, second + len(header))
    assert page.get_by_label("Expected answer (optional)").input_value() == header
    assert any(f"characters {second:,}–{second + len(header):,}" in t for t in captions(page))
    page.get_by_role("button", name="Search").click()
    bu.settle(page)
    body = bu.main_text(page)
    assert "occurs more than once" not in body
    assert len(re.findall(r"Recall \d+%", body)) >= 2, body[-3000:]
    bu.screenshot(page, "textview-retrieve-selected-answer.png")
