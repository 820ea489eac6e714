"""Streamlit's "Press Enter to apply" never covers what is typed, in either direction.

A question typed in Hebrew starts at the input's right edge (``unicode-bidi: plaintext``), where
Streamlit draws its hint while the value is not yet applied: it covered the question's first
words, and a text area's last line. The text's box (the input's content box, or for a text area
scrolled to its caret the lines down to the last) must not meet the hint's box; an English
question keeps the look it had (a long one had reached under the hint too).
"""

from __future__ import annotations

import pytest

from tests.support import browser_util as bu

pytestmark = [pytest.mark.browser, pytest.mark.slow]

HEBREW = "כל כמה זמן שוטפים את המסננים במתקן הטיפול במים של העיר"
ENGLISH = (
    "How often are the filters backwashed at the treatment plant of the largest city in the northern part"
    " of the whole country"
)  # long enough to reach the hint
HEBREW_LINES = (
    "כל כמה זמן שוטפים את המסננים\nבמתקן הטיפול במים של העיר\nהגדולה ביותר באזור הצפוני\nשל המדינה כולה"
)

#: The hint's box (null when none shows), the box where the text is drawn (its top and bottom
#: those of the first and last line as scrolled now), and the paddings.
GEOMETRY_JS = """(el) => {
  const hint = el.closest('[data-testid="stTextInput"], [data-testid="stTextArea"]')
    .querySelector('[data-testid="InputInstructions"]');
  const r = el.getBoundingClientRect(), cs = getComputedStyle(el), px = (p) => parseFloat(cs[p]);
  const top = r.top + el.clientTop - el.scrollTop, left = r.left + el.clientLeft;
  return {
    hint: hint && hint.getBoundingClientRect().toJSON(),
    text: {left: left + px('paddingLeft'), right: left + el.clientWidth - px('paddingRight'),
           top: top + px('paddingTop'), bottom: top + el.scrollHeight - px('paddingBottom')},
    pad: [cs.paddingLeft, cs.paddingRight, cs.paddingTop, cs.paddingBottom],
  };
}"""


def meets(a: dict, b: dict) -> bool:
    return (
        a["left"] < b["right"]
        and b["left"] < a["right"]
        and a["top"] < b["bottom"]
        and b["top"] < a["bottom"]
    )


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    bu.require_browser()
    with bu.streamlit_server(tmp_path_factory.mktemp("hint-cache"), fake_embedder=True) as srv:
        yield srv


@pytest.fixture()
def page(server):
    with bu.chromium() as browser:
        _, pg = bu.new_page(browser, width=1200, height=900)
        pg.goto(server.url)
        bu.settle(pg)
        bu.nav(pg, "Retrieve")
        yield pg


def type_unapplied(pg, label: str, text: str) -> tuple[dict, dict]:
    """Type ``text`` into the empty box ``label`` without applying it: its geometry before and
    while the hint shows."""
    box = pg.get_by_label(label)
    idle = box.evaluate(GEOMETRY_JS)
    assert idle["hint"] is None, idle
    box.click()
    box.press_sequentially(text, delay=5)
    pg.locator('[data-testid="stMain"] [data-testid="InputInstructions"]').wait_for()
    return idle, box.evaluate(GEOMETRY_JS)


def clear(pg, label: str) -> None:
    box = pg.get_by_label(label)
    box.fill("")
    pg.get_by_role("heading", name="Retrieve").click()  # leaving the box applies it: the hint goes
    bu.settle(pg)


@pytest.mark.parametrize("question", [HEBREW, ENGLISH], ids=["hebrew", "english"])
def test_the_hint_does_not_cover_a_question_being_typed(page, question, request):
    idle, typing = type_unapplied(page, "Question", question)
    bu.screenshot(page, f"input-hint-question-{request.node.callspec.id}.png")
    assert not meets(typing["hint"], typing["text"]), typing
    assert typing["pad"][0] == idle["pad"][0]  # the text starts where it did (English)
    clear(page, "Question")
    assert page.get_by_label("Question").evaluate(GEOMETRY_JS)["pad"] == idle["pad"]


def test_the_hint_does_not_cover_the_last_line_of_a_hebrew_answer(page):
    idle, typing = type_unapplied(page, "Expected answer (optional)", HEBREW_LINES)
    bu.screenshot(page, "input-hint-answer-hebrew.png")
    assert not meets(typing["hint"], typing["text"]), typing
    assert typing["pad"][:2] == idle["pad"][:2]  # lines wrap where they did
    clear(page, "Expected answer (optional)")
    assert page.get_by_label("Expected answer (optional)").evaluate(GEOMETRY_JS)["pad"] == idle["pad"]
