"""In a real browser: a reload (F5) or the link in a fresh browser keeps an uploaded file, the
question and Evaluate's question file; ``/explore`` opens Explore with its link, and so does
``/explore/extra`` (serve.py's redirect); a typed expected answer with a line break where the PDF has a space (and a hyphen at
the line end) is scored on Retrieve; the Export page's CLI line runs in a fresh shell.

Runs on the app's fake embedder (``CHUNK_EXPLORER_FAKE_EMBEDDER=1``): what is checked here is
state and matching, not the model. Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import json
import re

import pytest

from tests.export.test_export_runs import output_rows, run_in_fresh_shell
from tests.support import browser_util as bu

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTES = "# Reload notes\n\nThe intake screens are raked twice a shift. Nothing else is said here.\n"
NAME = "reload notes (F5).md"
#: In the handbook sample this sentence runs over a line break, with "superin-" at the line end.
TYPED = "the discrepancy must be reported to the plant superintendent the same day."


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    bu.require_browser()
    with bu.streamlit_server(tmp_path_factory.mktemp("reload-cache"), fake_embedder=True) as srv:
        yield srv


@pytest.fixture(scope="module")
def browser(server):
    with bu.chromium() as b:
        yield b


def documents_listed(page) -> str:
    return bu.main_text(page)


def test_reload_and_a_fresh_browser_keep_the_upload_and_the_question(server, browser, tmp_path):
    context, page = bu.new_page(browser)
    watch = bu.Watch().attach(context)
    page.goto(server.url)
    bu.settle(page)
    bu.nav(page, "Documents")
    path = tmp_path / NAME
    path.write_text(NOTES, encoding="utf-8")
    bu.upload(page, path)
    assert NAME in documents_listed(page)
    page.wait_for_url(re.compile(r"[?&]up=[0-9a-f]{32}"), timeout=30_000)

    bu.nav(page, "Retrieve")
    page.get_by_label("Question").fill("When are the intake screens raked?")
    page.get_by_role("button", name="Search").click()
    bu.settle(page)
    page.wait_for_url(re.compile(r"[?&]q=When"), timeout=30_000)

    page.reload()  # F5: a new Streamlit session
    bu.heading(page, "Retrieve").wait_for()
    bu.settle(page)
    from playwright.sync_api import expect

    # the question comes back from the link (a loaded server may draw it a moment after settling)
    expect(page.get_by_label("Question")).to_have_value("When are the intake screens raked?", timeout=60_000)
    bu.nav(page, "Documents")
    text = documents_listed(page)
    assert NAME in text, text[:2000]
    assert "cannot be reopened" not in text
    bu.screenshot(page, "reload-keeps-upload.png")
    link = page.url

    fresh, other = bu.new_page(browser)  # a colleague on the same server, the same link
    watch.attach(fresh)
    other.goto(link)
    bu.heading(other, "Documents").wait_for()
    bu.settle(other)
    assert NAME in documents_listed(other)
    bu.nav(other, "Explore")
    assert "Reload notes" in bu.main_text(other)
    fresh.close()
    context.close()
    watch.assert_clean()
    assert not watch.page_errors, watch.page_errors
    assert "Traceback" not in server.log_tail(20_000)


def test_reload_and_a_fresh_browser_keep_evaluates_question_file(server, browser, tmp_path):
    """The question file uploaded on Evaluate comes back after F5 and in a fresh browser."""
    from playwright.sync_api import expect

    context, page = bu.new_page(browser)
    page.goto(server.url)
    bu.settle(page)
    bu.nav(page, "Evaluate")
    path = tmp_path / "plant questions.jsonl"
    rows = [{"question": "How often are the filters backwashed?", "answer": "or after 72 hours in service"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with page.expect_file_chooser() as chooser:
        page.locator('[data-testid="stMain"] [data-testid="stFileUploaderDropzone"] button').first.click()
    chooser.value.set_files(str(path))
    said = page.get_by_text("plant questions.jsonl: 1 question")
    expect(said).to_be_visible(timeout=60_000)
    page.wait_for_url(re.compile(r"[?&]qf=[0-9a-f]{32}"), timeout=30_000)
    page.reload()
    bu.heading(page, "Evaluate").wait_for()
    expect(said).to_be_visible(timeout=60_000)
    bu.settle(page)
    bu.screenshot(page, "reload-keeps-question-file.png")
    fresh, other = bu.new_page(browser)
    other.goto(page.url)
    bu.heading(other, "Evaluate").wait_for()
    expect(other.get_by_text("plant questions.jsonl: 1 question")).to_be_visible(timeout=60_000)
    fresh.close()
    context.close()
    assert "Traceback" not in server.log_tail(20_000)


def test_a_search_link_opened_in_fresh_browsers_shows_its_question_every_time(server, browser):
    """The link of a search, opened in five fresh browsers: each shows the results under the
    question that found them. (Streamlit sends a seeded box's value in the run that set it only;
    when a rerun overtook that run, the box stayed empty under the results: 7 of 12 links.)"""
    from playwright.sync_api import expect

    context, page = bu.new_page(browser)
    page.goto(server.url + "retrieve")
    bu.settle(page)
    question = "Comment les filtres sont-ils lavés ?"
    page.get_by_label("Question").fill(question)
    page.get_by_role("button", name="Search").click()
    bu.settle(page)
    page.wait_for_url(re.compile(r"[?&]q=Comment"), timeout=30_000)
    link = page.url
    for _ in range(5):
        fresh, other = bu.new_page(browser)
        other.goto(link)
        bu.heading(other, "Retrieve").wait_for()
        bu.settle(other)
        assert other.get_by_role("button", name="Show in Explore").count() > 0
        expect(other.get_by_label("Question")).to_have_value(question, timeout=5_000)
        fresh.close()
    context.close()


def evaluate_the_samples(page, server) -> None:
    """Evaluate, its sample questions scored: the per-question table shown."""
    page.goto(server.url + "evaluate")
    bu.heading(page, "Evaluate").wait_for()
    bu.settle(page)
    page.get_by_role("button", name="Use the sample questions").click()
    bu.settle(page)
    page.get_by_role("button", name="Run evaluation").click()
    page.get_by_text("Per question").wait_for(timeout=180_000)


def test_a_question_picked_on_evaluate_is_asked_on_retrieve_and_its_link_keeps_it(server, browser):
    """Evaluate's per-question table: a row picked with its checkbox reads whole below, and
    "Ask on Retrieve" opens Retrieve on that question with its answer, scored; the link of
    that page, opened in a fresh browser, shows the same question."""
    from playwright.sync_api import expect

    context, page = bu.new_page(browser, width=1300, height=900)
    evaluate_the_samples(page, server)
    bu.settle(page)
    grid = page.locator('[data-testid="stDataFrame"]').nth(2)  # after the scores' and the cost's
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    page.mouse.click(box["x"] + 18, box["y"] + 53)  # the first row's checkbox, under the header
    bu.settle(page)
    picked = page.locator(".st-key-w-eval_picked")
    question = picked.locator("strong").first.inner_text()
    assert question.endswith("?") and "Answer in" in picked.inner_text()
    bu.screenshot(page, "evaluate-picked-question.png")
    page.get_by_role("button", name="Ask on Retrieve").click()
    bu.heading(page, "Retrieve").wait_for()
    bu.settle(page)
    expect(page.get_by_label("Question")).to_have_value(question, timeout=5_000)
    assert page.get_by_label("Expected answer (optional)").input_value()
    assert len(re.findall(r"Recall \d+%", bu.main_text(page))) >= 2
    page.wait_for_url(re.compile(r"[?&]q="), timeout=30_000)
    fresh, other = bu.new_page(browser)
    other.goto(page.url)
    bu.heading(other, "Retrieve").wait_for()
    bu.settle(other)
    expect(other.get_by_label("Question")).to_have_value(question, timeout=5_000)
    fresh.close()
    context.close()


def test_a_reload_of_evaluate_shows_its_evaluation_and_sweep_again(server, browser):
    """F5 on Evaluate used to leave its buttons only: the link names the results shown, and
    they are run again (the cache holds their vectors) with the sweep's values in its box.
    The page a link or a reload opened keeps naming them, so a second F5 (or its link, copied
    again) shows them too: its address had lost the sweep while it ran again."""
    from playwright.sync_api import expect

    context, page = bu.new_page(browser, width=1300, height=900)
    evaluate_the_samples(page, server)
    page.get_by_label("Values", exact=True).fill("300,600")
    page.get_by_label("Values", exact=True).press("Enter")
    bu.settle(page)
    page.get_by_role("button", name="Run sweep").click()
    page.wait_for_url(re.compile(r"[?&]swv=300"), timeout=180_000)
    bu.settle(page)
    for _ in range(2):
        page.reload()
        bu.heading(page, "Evaluate").wait_for()
        page.get_by_text("Per question").wait_for(timeout=180_000)
        page.locator(".st-key-w-sweep_recall").wait_for(timeout=180_000)
        bu.settle(page)
        expect(page.get_by_label("Values", exact=True)).to_have_value("300,600", timeout=5_000)
        assert "Computed before" not in bu.main_text(page)
        page.wait_for_timeout(1_500)  # the last write of the address, after the results showed
        assert re.search(r"[?&]ev=1", page.url) and re.search(r"[?&]swv=300", page.url), page.url
    bu.screenshot(page, "evaluate-after-reload.png", full_page=True)
    context.close()


def test_a_reload_while_a_links_sweep_runs_again_keeps_it(browser, tmp_path):
    """F5 pressed while a link's evaluation and sweep are being run again: the address still
    names them (it named only what had finished), so the reload runs both once more. A slow
    fake embedder on a server of its own keeps the evaluation running when the address is read."""
    from playwright.sync_api import expect

    slow = {"CHUNK_EXPLORER_FAKE_DELAY": "0.3", "CHUNK_EXPLORER_JOB_WAIT": "0"}
    with bu.streamlit_server(tmp_path / "slow-cache", fake_embedder=True, env=slow) as srv:
        context, page = bu.new_page(browser, width=1300, height=900)
        page.goto(srv.url + "evaluate?qf=sample&ev=1&sw=chunk_size&swv=350%2C700&eq=file")
        bu.heading(page, "Evaluate").wait_for()
        stop = page.get_by_role("button", name="Stop")
        expect(stop).to_be_visible(timeout=60_000)  # the evaluation runs again
        page.wait_for_url(re.compile(r"[?&]cfg="), timeout=30_000)  # the address is written meanwhile
        assert stop.is_visible() and "swv=350" in page.url and "ev=1" in page.url, page.url
        page.reload()
        page.locator(".st-key-w-sweep_recall").wait_for(timeout=180_000)
        bu.settle(page)
        page.wait_for_timeout(1_500)
        assert "swv=350" in page.url and "ev=1" in page.url, page.url
        context.close()


def test_a_typed_answer_with_a_line_break_difference_is_scored(server, browser):
    context, page = bu.new_page(browser)
    page.goto(server.url + "retrieve")
    bu.heading(page, "Retrieve").wait_for()
    bu.settle(page)
    page.get_by_label("Question").fill("Who must be told about a discrepancy?")
    page.get_by_label("Expected answer (optional)").fill(TYPED)
    page.get_by_role("button", name="Search").click()
    bu.settle(page)
    body = bu.main_text(page)
    assert "not an exact substring" not in body and "command line" not in body
    assert len(re.findall(r"Recall \d+%", body)) >= 2, body[-3000:]
    bu.screenshot(page, "retrieve-typed-answer-line-break.png")
    context.close()


def test_the_exported_cli_line_runs_in_a_fresh_shell(server, browser, tmp_path):
    context, page = bu.new_page(browser)
    page.goto(server.url)
    bu.settle(page)
    bu.nav(page, "Documents")
    path = tmp_path / "upload" / NAME
    path.parent.mkdir()
    path.write_text(NOTES, encoding="utf-8")
    bu.upload(page, path)
    bu.nav(page, "Export")
    codes = page.locator('[data-testid="stCode"]').all_inner_texts()
    cli = next(c for c in codes if c.lstrip().startswith("python -m explorer chunk"))
    lines = [ln for ln in cli.splitlines() if ln.startswith("python -m explorer chunk")]
    assert lines and "--sample handbook.pdf" in lines[0] and "'reload notes (F5).md'" in lines[0], lines
    run_dir = tmp_path / "fresh"
    run_dir.mkdir()
    (run_dir / NAME).write_text(NOTES, encoding="utf-8")  # the user's own copy of what they uploaded
    done = run_in_fresh_shell(lines[0], run_dir)
    assert done.returncode == 0, done.stderr[-2000:]
    docs = {row["document"] for row in output_rows(lines[0], done, run_dir)}
    assert {"handbook.pdf", "guide.md", "rapport_annuel.txt", NAME} <= docs
    context.close()


def test_a_page_with_nothing_to_show_still_writes_its_address(server, browser):
    """A link naming no sample that exists: the page ends early, and its address used to keep the
    link's ``samples=x`` (the frame's last steps never ran after ``st.stop()``)."""
    context, page = bu.new_page(browser)
    page.goto(server.url + "retrieve?samples=x")
    bu.heading(page, "Retrieve").wait_for()
    page.wait_for_url(re.compile(r"[?&]samples=none&"), timeout=30_000)
    context.close()


def test_the_explore_address_opens_explore_with_its_link(server, browser):
    """Explore is served at the app's root; ``/explore``, the address the other pages suggest
    (``/retrieve``, ``/compare``), met Streamlit's "Page not found" dialog. It now opens Explore,
    keeping the link; an unknown page still gets the dialog (so the check below can see it)."""
    context, page = bu.new_page(browser)
    page.goto(server.url + "nope")
    bu.heading(page, "Explore").wait_for()
    page.get_by_text("Page not found").first.wait_for(timeout=30_000)
    context.close()

    context, page = bu.new_page(browser)
    page.goto(server.url + "explore?samples=Tidepool+guide+%28Markdown%29")
    bu.heading(page, "Explore").wait_for()
    page.wait_for_url(re.compile(r"/\?samples=Tidepool\+guide\+%28Markdown%29&"), timeout=30_000)
    bu.settle(page)
    assert page.get_by_text("Page not found").count() == 0
    assert "Explore" in bu.main_text(page) and "guide.md" in page.content()
    context.close()


def test_an_address_below_a_page_opens_the_page_with_its_link(server, browser):
    """An address below a page's (``/explore/extra``) opens the page with its link, where it showed
    an empty white page (streamlit/streamlit#8013): serve.py's redirect, as ``make run`` serves it."""
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


def test_a_deep_address_under_no_page_and_a_link_too_long_to_read_say_so(server, browser):
    """``/a/b`` was an empty white page; it now meets Streamlit's "Page not found", as ``/a``.
    A link of more values than Streamlit reads (1,000) opened the default view without a word;
    the page now says the link was too long."""
    context, page = bu.new_page(browser)
    page.goto(server.url + "nope/deeper/still")
    bu.heading(page, "Explore").wait_for(timeout=60_000)
    page.get_by_text("Page not found").first.wait_for(timeout=30_000)
    page.goto(server.url + "retrieve?" + "&".join(["cfg=%7B%7D"] * 1200))
    bu.heading(page, "Retrieve").wait_for(timeout=60_000)
    page.get_by_text(re.compile(r"The link was too long to be read \(1,200 values")).first.wait_for(timeout=30_000)
    bu.settle(page)
    assert "toolong" not in page.url  # the view's own link is written back
    context.close()
