"""Clean-up steps: each on its own, and through the loader on real PDFs (page map stays exact)."""

from __future__ import annotations

import re

import pytest

from explorer.documents.cleanup import (
    Cleanup,
    clean_pages,
    collapse_blank_lines,
    drop_headers_footers,
    join_hyphenated,
)
from explorer.documents.loaders import load_bytes
from tests.support.hostile_inputs import make_pdf, numbered_pages

ALL = Cleanup(collapse_blank_lines=True, join_hyphenated=True, drop_headers_footers=True)


def test_all_off_by_default():
    assert Cleanup() == Cleanup(False, False, False)
    assert not Cleanup().any and ALL.any
    pages = ["a\n\n\n\nb-\nc"]
    assert clean_pages(pages, Cleanup(), is_pdf=True) == (pages, [])


# -- collapse_blank_lines ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected", "n"),
    [
        ("a\n\nb", "a\n\nb", 0),
        ("a\n\n\nb", "a\n\nb", 1),
        ("a\n \n\t\n  \nb\n\n\n\n\nc", "a\n\nb\n\nc", 2),
        ("a\nb\nc", "a\nb\nc", 0),
    ],
)
def test_collapse_blank_lines(text, expected, n):
    assert collapse_blank_lines(text) == (expected, n)


# -- join_hyphenated -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected", "n"),
    [
        ("an exam-\nple here", "an example here", 1),
        ("exam- \n  ple", "example", 1),
        ("éco-\nnomie", "économie", 1),
        ("soft\u00ad\nhyphen", "softhyphen", 1),
        ("Jean-\nPierre", "Jean-\nPierre", 0),  # capital after: a real compound name
        ("ACME-\nwide", "ACME-\nwide", 0),  # capital before
        ("2023-\n24", "2023-\n24", 0),  # digits
        ("a list:\n- item", "a list:\n- item", 0),  # a list dash is not a word break
        ("inter-\nna-\ntional", "international", 2),  # chains
        ("well -\nknown", "well -\nknown", 0),  # a dash after a space is punctuation
    ],
)
def test_join_hyphenated(text, expected, n):
    assert join_hyphenated(text) == (expected, n)


# -- drop_headers_footers ------------------------------------------------------------------------


BODIES = [
    "The board met twice in spring.",
    "Sales rose in the northern region.",
    "Costs fell after the merger closed.",
    "Hiring slowed in the last quarter.",
    "Cash covers two years of spending.",
    "The outlook for next year is calm.",
]


def _pages(n: int, header: str = "ACME Corp - Report", footer: str = "Page {n} of {t}") -> list[str]:
    return [f"{header}\n{BODIES[i - 1]}\n{BODIES[-i]}\n{footer.format(n=i, t=n)}" for i in range(1, n + 1)]


def test_headers_and_numbered_footers_are_dropped():
    out, n = drop_headers_footers(_pages(5))
    assert n == 9  # the first page keeps its header: on a first page it is most often the title
    assert out[2] == f"{BODIES[2]}\n{BODIES[-3]}"
    assert out[0] == f"ACME Corp - Report\n{BODIES[0]}\n{BODIES[-1]}"


def test_the_first_pages_header_goes_too_when_it_is_no_title():
    """Fonts showed the first page's top line is no heading: it is the running header there too."""
    out, n = drop_headers_footers(_pages(5), keep_title=False)
    assert n == 10 and out[0] == f"{BODIES[0]}\n{BODIES[-1]}"
    only_header, n = drop_headers_footers(["Same line"] * 4, keep_title=False)
    assert only_header[0].strip() == "Same line" and n == 3  # all else gone: it stays once


def test_two_line_headers_go_in_two_passes():
    pages = [f"ACME annual report\n{i}\n{BODIES[i]}\nDraft 2024-0{i}-01\nconfidential" for i in range(5)]
    out, n = drop_headers_footers(pages)
    assert out == [f"ACME annual report\n{BODIES[0]}", *BODIES[1:5]] and n == 19  # the title stays once


def test_header_on_too_few_pages_stays():
    pages = _pages(5)
    # the header is on 2 of 5 pages only (40% < 60%)
    pages = [
        p if i < 2 else p.replace("ACME Corp - Report", f"Section {'xyz'[i - 2]} intro line")
        for i, p in enumerate(pages)
    ]
    out, _ = drop_headers_footers(pages)
    assert out[0].startswith("ACME Corp - Report") and "Page" not in out[0]


def test_needs_three_pages():
    out, n = drop_headers_footers(_pages(2))
    assert n == 0 and out == _pages(2)


def test_blank_pages_do_not_count():
    pages = [*_pages(3), "", "   "]
    out, n = drop_headers_footers(pages)
    assert n == 5 and out[3:] == ["", "   "]


def _edges(pages: list[str], header: str | None, footer: str | None) -> list[str]:
    """``pages`` (bodies) with a header/footer line; ``{n}`` is the page number."""
    return [
        "\n".join(x for x in (header, body, footer) if x is not None).format(n=n)
        for n, body in enumerate(pages, start=1)
    ]


def test_chapter_titles_alike_but_for_their_number_stay():
    """A manual with a chapter on each page lost "Chapter 2: Operating the service" ... with its
    running header: the titles differ only by their number, which goes up with the page."""
    bodies = [f"Chapter {i}: Operating the service\n{BODIES[i]}" for i in range(1, 4)]
    out, n = drop_headers_footers(_edges(bodies, "Orion Operations Manual", "Page {n}"))
    assert out == [f"Orion Operations Manual\n{bodies[0]}", *bodies[1:]] and n == 5


def test_chapter_openings_that_share_a_pattern_stay():
    """A chapter's opening line ("Chapter 3") appears once: lines alike but for a number that
    neither repeat nor count pages are titles, even on 60% of the pages."""
    tops = ["Chapter 1", "Chapter 2", None, "Chapter 3", "Chapter 4", None]
    pages = [f"{top}\n{BODIES[i]}" if top else BODIES[i] for i, top in enumerate(tops)]
    out, n = drop_headers_footers(pages)
    assert out == pages and n == 0


def test_distinct_chapter_titles_stay():
    titles = ["Installing", "Configuring", "Running", "Upgrading"]
    bodies = [f"Chapter {i}: {t}\n{BODIES[i]}" for i, t in enumerate(titles, start=1)]
    out, n = drop_headers_footers(_edges(bodies, "Orion Operations Manual", "- {n} -"))
    assert out == [f"Orion Operations Manual\n{bodies[0]}", *bodies[1:]] and n == 7


@pytest.mark.parametrize(
    "footer",
    ["Page {n} of 36", "- {n} -", "Report title \u2014 2024 \u2014 page {n}", "{n}", "Draft 2024-0{n}-01"],
)
def test_page_counters_are_dropped(footer):
    out, n = drop_headers_footers(_edges(BODIES, None, footer))
    assert out == BODIES and n == 6


def test_page_counters_that_restart_are_dropped():
    """Front matter numbered on its own, chapter-page numbers ("2-1", "2-2"): all counters."""
    numbers = ["1", "2", "3", "1", "2", "3", "4", "5", "6"]
    pages = [f"{BODIES[i % 6]} ({i})\nPage {k}" for i, k in enumerate(numbers)]
    assert drop_headers_footers(pages) == ([f"{BODIES[i % 6]} ({i})" for i in range(9)], 9)
    numbers = ["1-1", "1-2", "1-3", "2-1", "2-2", "2-3", "2-4"]
    pages = [f"{BODIES[i % 6]} ({i})\n{k}" for i, k in enumerate(numbers)]
    assert drop_headers_footers(pages) == ([f"{BODIES[i % 6]} ({i})" for i in range(7)], 7)


def test_a_running_header_with_the_chapter_number_is_dropped():
    """A book's "Chapitre 3" on every page of chapter 3 repeats as it is; a one-page chapter's goes too."""
    chapters = [1, 1, 1, 2, 3, 3, 3, 3, 4, 4]
    pages = [f"Chapitre {c}\n{BODIES[i % 6]} ({i})" for i, c in enumerate(chapters)]
    out, n = drop_headers_footers(pages)
    assert out == [f"Chapitre 1\n{BODIES[0]} (0)"] + [f"{BODIES[i % 6]} ({i})" for i in range(1, 10)]
    assert n == 9


def test_headers_only_for_pdfs():
    out, report = clean_pages(_pages(4), Cleanup(drop_headers_footers=True), is_pdf=False)
    assert out == _pages(4)
    assert report == ["drop_headers_footers: skipped (only PDFs have pages)"]


# -- through the loader, on real PDFs ------------------------------------------------------------


@pytest.fixture(scope="module")
def hyphen_pdf() -> bytes:
    pages = [
        [
            f"Page{p}marker: the committee discussed the exam-",
            "ple of a well-known case in some de-",
            "tail, then moved on.",
            "",
            "",
            "",
            f"A second paragraph about {topic}.",
        ]
        for p, topic in zip(range(1, 5), ("cats", "dogs", "owls", "bees"), strict=True)
    ]
    return make_pdf(pages, header="Quarterly review", footer="page {n}/{total}")


def test_loader_cleanup_keeps_page_map_exact(hyphen_pdf):
    raw = load_bytes(hyphen_pdf, "q.pdf")
    clean = load_bytes(hyphen_pdf, "q.pdf", ALL)
    assert raw.cleanup == ()
    assert clean.cleanup == (
        "drop_headers_footers: removed 8 repeated header/footer lines",
        "join_hyphenated: joined 8 words broken at a line end",
        "collapse_blank_lines: collapsed 0 runs of blank lines",
    )
    assert clean.id != raw.id and len(clean.text) < len(raw.text)
    assert "Quarterly review" not in clean.text  # an 8-point running header, on page 1 too
    for page in clean.pages:
        body = clean.text[page.start : page.end]
        assert body.startswith(f"Page{page.number}marker: the committee discussed the example of")
        assert "some detail, then" in body and "Quarterly review" not in body and "page " not in body
        assert body.endswith(("cats.", "dogs.", "owls.", "bees."))
    for m in re.finditer(r"Page(\d)marker", clean.text):
        assert clean.pages_for(m.start(), m.end()) == (int(m.group(1)),)


def test_each_toggle_alone(hyphen_pdf):
    only_h = load_bytes(hyphen_pdf, "q.pdf", Cleanup(join_hyphenated=True))
    assert "example" in only_h.text and "Quarterly review" in only_h.text
    only_hf = load_bytes(hyphen_pdf, "q.pdf", Cleanup(drop_headers_footers=True))
    assert "exam-\nple" in only_hf.text and "Quarterly review" not in only_hf.text


def test_collapse_on_text_document():
    doc = load_bytes(b"one\n\n\n\n\ntwo\r\n\r\n\r\n\r\nthree", "t.txt", Cleanup(collapse_blank_lines=True))
    assert doc.text == "one\n\ntwo\n\nthree"
    assert doc.cleanup == ("collapse_blank_lines: collapsed 2 runs of blank lines",)


def test_markdown_blocks_are_computed_after_cleanup():
    src = b"# Title\n\n\n\n\nSome para-\ngraph text.\n\n\n\n## Next\n"
    doc = load_bytes(src, "a.md", Cleanup(collapse_blank_lines=True, join_hyphenated=True))
    assert doc.text == "# Title\n\nSome paragraph text.\n\n## Next\n"
    assert [(b.kind, doc.text[b.start : b.end]) for b in doc.blocks] == [
        ("heading", "# Title"),
        ("paragraph", "Some paragraph text."),
        ("heading", "## Next"),
    ]


def test_a_pdf_of_nothing_but_its_header_keeps_it_once():
    data = make_pdf([["Same line on every page"] for _ in range(4)])
    assert load_bytes(data, "same.pdf").n_pages == 4
    doc = load_bytes(data, "same.pdf", Cleanup(drop_headers_footers=True))
    assert doc.text.strip() == "Same line on every page" and doc.n_pages == 4


def test_pdf_chapter_titles_stay_with_headers_dropped():
    """The case as a user met it: a PDF whose pages each open a chapter, under a running header."""
    pages = [[f"Chapter {n}: Operating the service", *numbered_pages(3, 2)[n - 1]] for n in (1, 2, 3)]
    data = make_pdf(pages, header="Orion Operations Manual - Confidential", footer="Page {n}")
    doc = load_bytes(data, "manual.pdf", Cleanup(drop_headers_footers=True))
    assert doc.cleanup == ("drop_headers_footers: removed 6 repeated header/footer lines",)
    for page in doc.pages:
        text = doc.text[page.start : page.end]
        assert text.startswith(f"Chapter {page.number}: Operating the service\nPage{page.number}marker")
        assert "Page " not in text and "Confidential" not in text


def test_header_numbers_vary_but_match(hyphen_pdf):
    pages = numbered_pages(6, 3)
    data = make_pdf(pages, header="Report 2024 - section {n}", footer="{n}")
    doc = load_bytes(data, "n.pdf", Cleanup(drop_headers_footers=True))
    assert "Report 2024" not in doc.text and doc.n_pages == 6  # page 1's "section 1" too: set small
    assert doc.text[doc.pages[5].start : doc.pages[5].end].endswith("lazy dog.")
