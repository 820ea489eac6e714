"""The interactive text view in a real browser: click a chunk to inspect it, select text to get
its exact offsets, and use a selection as the expected answer on Retrieve.

The selection is made with the mouse (press at the left edge of the first character, release
at the right edge of the last), and the offsets the app reports are checked against the
document text the page shows. The fake embedder keeps it fast: nothing here depends on vectors.
"""

from __future__ import annotations

import re

import pytest

from tests.support import browser_util as bu

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


def explore_upload(pg, path) -> None:
    """Upload ``path`` on Documents and show it on Explore."""
    bu.nav(pg, "Documents")
    bu.upload(pg, path)
    bu.nav(pg, "Explore")
    if not pg.locator('[data-testid="stMain"]').get_by_text(path.name).count():
        box = pg.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').filter(has_text="Document")
        box.first.click()
        pg.get_by_role("option").filter(has_text=path.name).first.click()
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
    use, clear = (page.get_by_role("button", name=n).bounding_box() for n in ("Use as expected answer", "Clear"))
    assert abs(use["y"] - clear["y"]) < 4, (use, clear)  # side by side: Clear does not wrap alone

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


def chunk_heading(pg) -> str:
    return pg.get_by_role("heading", name=re.compile(r"^Chunk \d+ of \d+")).inner_text()


def test_the_table_of_all_chunks_loads_on_asking_and_a_row_picks_its_chunk(server):
    """A new visitor's first view loads no grid (its JavaScript was a third of what the browser
    fetched); the toggle under "All chunks" shows the table, and a row's checkbox inspects that chunk."""
    with bu.chromium() as browser:
        context, pg = bu.new_page(browser, width=1500, height=1000)
        scripts: list[str] = []
        pg.on("request", lambda r: scripts.append(r.url) if r.resource_type == "script" else None)
        pg.goto(server.url)
        pg.get_by_role("heading", name=re.compile(r"^Chunk 0 of \d+")).wait_for()
        bu.settle(pg)
        grid = pg.locator('[data-testid="stMain"] [data-testid="stDataFrame"]')
        assert grid.count() == 0
        assert not [u for u in scripts if "/DataFrame." in u], "the grid's bundle loaded on the first view"
        pg.get_by_text("Show the table of all chunks").click()
        bu.settle(pg)
        grid.wait_for()
        grid.scroll_into_view_if_needed()
        box = grid.bounding_box()
        pg.mouse.click(box["x"] + 18, box["y"] + 53 + 3 * 35)  # row 3's checkbox (rows of 35 px, under the header)
        bu.settle(pg)
        assert chunk_heading(pg).startswith("Chunk 3 of"), chunk_heading(pg)
        context.close()


#: Whether the selected chunk's start badge lies inside the text view's box (scrolled there).
SELECTED_IN_VIEW_JS = """() => {
  const box = document.querySelector('.ce-view .ce-text');
  const badge = box.querySelector('.ce-idx-sel');
  if (!badge) return false;
  const r = badge.getBoundingClientRect(), v = box.getBoundingClientRect();
  return r.top >= v.top && r.bottom <= v.bottom;
}"""


def test_next_and_previous_chunk_keys_move_the_selection(page):
    bu.nav(page, "Explore")
    assert chunk_heading(page).startswith("Chunk 0 of")
    assert any("j" in c and "next chunk" in c for c in captions(page))  # the keys are documented
    page.locator(".ce-view .ce-text").first.click(position={"x": 4, "y": 4})  # focus, on no chunk
    bu.settle(page)
    assert chunk_heading(page).startswith("Chunk 0 of")
    for key, expected in (("j", 1), ("ArrowRight", 2), ("j", 3), ("k", 2), ("ArrowLeft", 1)):
        page.keyboard.press(key)
        bu.settle(page)
        assert chunk_heading(page).startswith(f"Chunk {expected} of"), (key, chunk_heading(page))
        assert page.evaluate("() => !!document.activeElement.closest('.ce-view')")  # keeps the focus
    for _ in range(4):
        page.keyboard.press("j")
        bu.settle(page)
    assert chunk_heading(page).startswith("Chunk 5 of")
    assert page.evaluate(SELECTED_IN_VIEW_JS)  # the view scrolled to the chunk
    assert page.locator(".ce-view .ce-idx-sel").inner_text() == "5"
    # a burst of keys, faster than the app answers (a held key): every press counts
    for _ in range(5):
        page.keyboard.press("j")
        page.wait_for_timeout(40)
    bu.settle(page)
    page.wait_for_timeout(500)
    bu.settle(page)
    assert chunk_heading(page).startswith("Chunk 10 of"), chunk_heading(page)


def test_selecting_text_far_from_the_selected_chunk_keeps_the_scroll(page):
    """The reader scrolled away from the selected chunk and selects a passage there: the view
    stays where it is (the rerun brought the selected chunk back, the selection out of sight)."""
    bu.nav(page, "Explore")
    box = page.locator(".ce-view .ce-text").first
    box.evaluate("(b) => { b.scrollTop = b.scrollHeight * 0.6; }")
    page.wait_for_timeout(300)
    before = box.evaluate("(b) => b.scrollTop")
    v = box.bounding_box()
    y = v["y"] + v["height"] / 2
    page.mouse.move(v["x"] + 60, y)  # a drag over a line in the middle of the box
    page.mouse.down()
    page.mouse.move(v["x"] + 220, y, steps=10)
    page.mouse.up()
    bu.settle(page)
    assert any(t.startswith("Selected") for t in captions(page))
    after = page.locator(".ce-view .ce-text").first.evaluate("(b) => b.scrollTop")
    assert abs(after - before) < 40, (before, after)
    assert chunk_heading(page).startswith("Chunk 0 of")

def test_the_pdf_page_beside_the_text_follows_the_selected_chunk(page):
    bu.nav(page, "Explore")
    pdf = page.locator('[data-testid="stMain"] .ce-pdf')
    assert pdf.count() == 1 and pdf.locator("img").get_attribute("alt").startswith("Page 1 of handbook.pdf")
    assert pdf.locator(".ce-pdf-box").count() >= 3
    image = pdf.locator("img").bounding_box()
    assert image["width"] > 300 and image["height"] > 1.3 * image["width"]  # a whole page, drawn
    boxes = [b.bounding_box() for b in pdf.locator(".ce-pdf-box").all()]
    assert all(image["y"] <= b["y"] and b["y"] + b["height"] <= image["y"] + image["height"] for b in boxes)
    page.get_by_label("Page", exact=True).fill("3")
    page.get_by_label("Page", exact=True).press("Enter")
    bu.settle(page)
    pdf = page.locator('[data-testid="stMain"] .ce-pdf')
    assert pdf.first.locator("img").get_attribute("alt").startswith("Page 3 of handbook.pdf")  # or 2–3
    assert pdf.first.locator(".ce-pdf-box").count() >= 1
    page.set_viewport_size({"width": 1440, "height": 900})
    page.get_by_text("Click the text (or Tab to it)").evaluate("(el) => el.scrollIntoView({block: 'start'})")
    page.mouse.move(5, 5)
    bu.settle(page)
    bu.SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(bu.SCREENSHOTS / "pdf-page.png"))  # the README's, on request
    page.set_viewport_size({"width": 1500, "height": 1000})

    page.locator('[data-testid="stSidebar"]').get_by_label("Document").click()
    page.get_by_role("option", name=re.compile("rapport_annuel")).click()
    bu.settle(page)
    assert page.locator(".ce-view").count() == 1 and page.locator(".ce-pdf").count() == 0


def test_the_theme_follows_the_browsers_dark_preference(server):
    def colours(scheme: str) -> dict:
        with bu.chromium() as browser:
            context = browser.new_context(viewport={"width": 1440, "height": 900}, color_scheme=scheme)
            pg = context.new_page()
            pg.set_default_timeout(120_000)
            pg.goto(server.url)
            bu.settle(pg)
            bu.nav(pg, "Explore")
            bu.screenshot(pg, f"explore-{scheme}.png")
            return pg.evaluate(
                """() => {
                  const lum = (c) => { const [r, g, b] = c.match(/\\d+/g).map(Number); return (r + g + b) / 3; };
                  const app = getComputedStyle(document.querySelector('[data-testid="stApp"]'));
                  const text = getComputedStyle(document.querySelector('.ce-view .ce-text span.ce-s'));
                  return {app: lum(app.backgroundColor), text: lum(text.color)};
                }"""
            )

    light, dark = colours("light"), colours("dark")
    assert light["app"] > 200 and light["text"] < 80  # dark text on a light page
    assert dark["app"] < 60 and dark["text"] > 180  # light text on a dark page


#: Selects the first occurrence of a word in the first text view, as a mouse drag would end.
SELECT_WORD_JS = """(word) => {
  const root = document.querySelector('.ce-view');
  const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let t = walk.nextNode(); t; t = walk.nextNode()) {
    const i = t.data.indexOf(word);
    if (i < 0) continue;
    const r = document.createRange();
    r.setStart(t, i); r.setEnd(t, i + word.length);
    const sel = window.getSelection();
    sel.removeAllRanges(); sel.addRange(r);
    t.parentElement.dispatchEvent(new MouseEvent('mouseup', {bubbles: true}));
    return true;
  }
  return false;
}"""


def test_a_bidi_override_in_the_text_is_shown_not_obeyed_and_offsets_hold(page, tmp_path):
    """A right-to-left override inside a document reversed the rest of its line in the text
    view (chunk numbers included), so the view showed another text than the one chunked. Each
    bidirectional control is now a marked sign; a selection after it still gets its offsets."""
    from explorer.documents.loaders import load_bytes

    data = "Pump notes\n\nValve alpha \u202eopens beta\u202c then epsilon closes the line.\n".encode()
    path = tmp_path / "bidi notes.txt"
    path.write_bytes(data)
    text = load_bytes(data, path.name).text
    assert "\u202e" in text  # kept in the document: the view is what must not obey it
    explore_upload(page, path)
    view = page.locator(".ce-view .ce-text").first
    view.wait_for()
    shown = view.text_content()
    assert "\u202e" not in shown and "\u202c" not in shown and shown.count("⇄") == 2, shown
    assert "right-to-left override" in page.locator(".ce-view .ce-bidi").first.get_attribute("title")
    assert page.evaluate(SELECT_WORD_JS, "epsilon")
    bu.settle(page)
    a = text.index("epsilon")
    line = next(t for t in captions(page) if t.startswith("Selected"))
    assert f"characters {a:,}–{a + 7:,} (7 chars)" in line, line


#: For character ``pos`` of the first text view: how far its left edge lies from the box's left
#: edge, and its right edge from the box's right edge (pixels).
EDGES_JS = """(pos) => {
  const box = document.querySelector('.ce-view .ce-text');
  for (const s of box.querySelectorAll('[data-o]')) {
    const o = Number(s.dataset.o), t = s.firstChild, cps = t ? Array.from(t.data) : [];
    if (!(pos >= o && pos < o + cps.length)) continue;
    const u = cps.slice(0, pos - o).join('').length, r = document.createRange();
    r.setStart(t, u); r.setEnd(t, u + cps[pos - o].length);
    s.scrollIntoView({block: 'center'});
    const c = r.getClientRects()[0], b = box.getBoundingClientRect();
    return [c.left - b.left, b.right - c.right];
  }
  return null;
}"""


def test_a_right_to_left_line_reads_from_the_right_beside_a_left_to_right_one(page, tmp_path):
    """Each line takes the direction of its first letter: a Hebrew or Arabic line starts at the
    box's right edge (its full stop at its left end), an English line beside it at the left. The
    page's left-to-right direction had laid every line out from the left. So does a question."""
    lines = [
        "Operating notes for the pumping station.",
        "המשאבה הראשית נבדקת בכל בוקר לפני תחילת המשמרת.",
        "يجب فحص المضخة الرئيسية كل صباح قبل بدء الوردية.",
        "The spare pump is tested on Mondays.",
    ]
    path = tmp_path / "rtl notes.txt"
    path.write_text("\n\n".join(lines) + "\n", encoding="utf-8")
    explore_upload(page, path)
    page.locator(".ce-view .ce-text").first.wait_for()
    _, text = view_text(page)
    for line, rtl in zip(lines, (False, True, True, False), strict=True):
        left, right = page.evaluate(EDGES_JS, text.index(line))  # the line's first letter
        assert (right < left) == rtl and min(left, right) < 60, (line, left, right)
    bu.nav(page, "Retrieve")  # a question typed in Hebrew: each line in its first letter's direction too
    box = page.get_by_label("Question")
    box.fill(lines[1])
    assert box.evaluate("(e) => [getComputedStyle(e).unicodeBidi, getComputedStyle(e).textAlign]") == ["plaintext", "start"]
