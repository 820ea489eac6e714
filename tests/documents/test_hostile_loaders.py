"""Every hostile input through the loaders: the documented outcome, nothing else.

The cases and their expected outcomes live in ``hostile_inputs.py`` (reused by the strategy
and CLI tests); here each one is loaded from bytes and from disk.
"""

from __future__ import annotations

import pytest

from explorer.documents.document import Document
from explorer.documents.loaders import load_bytes, load_path
from explorer.errors import LoadError
from tests.support.hostile_inputs import CASES, Case, loadable_cases, write_case


def _params(cases: list[Case]):
    return [pytest.param(c, id=c.id, marks=[pytest.mark.slow] if c.slow else []) for c in cases]


def check_invariants_of_document(doc: Document) -> None:
    """What every loaded document guarantees, whatever the input."""
    text = doc.text
    assert text.strip(), "loaded documents are never empty"
    assert "\r" not in text
    assert not any(ord(ch) < 32 and ch not in "\n\t" for ch in text)
    assert not any(0x7F <= ord(ch) <= 0x9F for ch in text)
    prev_end = 0
    for i, page in enumerate(doc.pages, start=1):
        assert page.number == i
        assert prev_end <= page.start <= page.end <= len(text)
        prev_end = page.end
    for block in doc.blocks:
        assert 0 <= block.start < block.end <= len(text)
    assert doc.id and all(isinstance(w, str) and w for w in doc.warnings)


@pytest.mark.parametrize("case", _params(CASES))
def test_case_from_bytes(case: Case):
    data = case.data()
    if case.error is not None:
        with pytest.raises(LoadError) as info:
            load_bytes(data, case.filename)
        message = str(info.value)
        assert case.error in message
        assert repr(case.filename) in message, "the message names the file"
        assert "\n" not in message and "Traceback" not in message
        return
    doc = load_bytes(data, case.filename)
    check_invariants_of_document(doc)
    if case.check:
        case.check(doc)


@pytest.mark.parametrize("case", _params([c for c in CASES if c.cache]))
def test_case_from_disk(case: Case, tmp_path):
    path = write_case(case, tmp_path)
    if case.error is not None:
        with pytest.raises(LoadError) as info:
            load_path(path)
        assert case.error in str(info.value)
    else:
        assert load_path(path) == load_bytes(case.data(), case.filename)


def test_corpus_covers_the_issue_list():
    """The inputs issue 5 names are all here (a guard against silently dropping one)."""
    ids = {c.id for c in CASES}
    for needed in [
        "pdf-encrypted-password",
        "pdf-encrypted-empty-password",
        "pdf-image-only",
        "pdf-truncated",
        "pdf-zero-pages",
        "pdf-lying-page-count",
        "pdf-deep-page-tree",
        "pdf-broken-font",
        "pdf-cid-codes",
        "pdf-300-pages",
        "text-empty",
        "text-whitespace-only",
        "text-1mb-single-line",
        "text-5mb-one-char",
        "text-nul-and-controls",
        "text-invalid-utf8",
        "text-utf16-le-bom",
        "text-utf16-le-no-bom",
        "text-cp1252",
        "text-mixed-scripts",
        "text-rtl",
        "text-combining",
        "text-crlf-and-cr",
        "md-unclosed-fence",
        "md-seven-hashes",
        "md-headings-only",
        "md-setext",
        "md-html-blocks",
        "md-front-matter",
        "pdf-named-txt",
        "zip-named-pdf",
        "over-upload-limit",
    ]:
        assert needed in ids, needed
    assert len(loadable_cases()) >= 20


def _two_pages(second_lines: int) -> bytes:
    from tests.support.hostile_inputs import make_pdf

    return make_pdf([["A short first page about pumps."], [f"Line {i} of the second page." for i in range(second_lines)]])


def test_a_pdf_page_too_costly_to_read_is_left_empty_and_said(monkeypatch):
    """pypdf's extraction grows faster than a page's content, and the time budget is checked
    between pages only: a 147 KB file (a 70 MB page) took 3 minutes. A page past the content or
    text-operator limit is left empty with a warning; a file with no other text says why."""
    from explorer import limits

    monkeypatch.setattr(limits, "MAX_PDF_PAGE_TEXT_OPS", 20)
    doc = load_bytes(_two_pages(40), "two.pdf")
    assert "pumps" in doc.text and "second page" not in doc.text
    assert any("page 2 of 'two.pdf' has 40 text drawing operators, over the limit of 20" in w for w in doc.warnings)
    assert not any("no text (images or scans?)" in w for w in doc.warnings)  # said once, rightly
    monkeypatch.setattr(limits, "MAX_PDF_PAGE_CONTENT_BYTES", 10)
    with pytest.raises(LoadError) as err:
        load_bytes(_two_pages(3), "two.pdf")
    assert "has no page whose text could be read: page 1 of 'two.pdf' has 0 MB of drawing instructions" in str(err.value)
    assert "scanned" not in str(err.value)


def test_a_first_pdf_page_over_the_text_limit_is_refused_as_too_long(monkeypatch):
    """It was called "no text layer (scanned?)": the page was dropped before it was kept."""
    from explorer import limits

    monkeypatch.setattr(limits, "MAX_TEXT_CHARS", 20)
    with pytest.raises(LoadError) as err:
        load_bytes(_two_pages(3), "long.pdf")
    assert str(err.value) == "'long.pdf' has over 20 characters of text on its first page, over the limit: split it into smaller files"


def test_a_pdf_whose_font_maps_to_glyph_names_is_refused_as_unreadable():
    """A font without a Unicode map whose encoding names glyphs g1, g2…: pypdf extracts
    "/g1/g2/g3", which loaded as if it were text. It is counted as unreadable glyphs, as
    (cid:NN) codes are; paths such as /usr/share/doc are not."""
    from explorer.documents.pdf import _garbled
    from tests.support.hostile_inputs import _stream, raw_pdf

    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Xyz /Encoding << /Type /Encoding /Differences [65 /g1 /g2 /g3 /g4 /g5] >> >>"
    pdf = raw_pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        font,
        _stream(b"BT /F1 12 Tf 72 720 Td (ABCDE ABCDE EDCBA) Tj ET"),
    ])
    with pytest.raises(LoadError) as err:
        load_bytes(pdf, "glyphs.pdf")
    assert "unreadable glyphs" in str(err.value) and "/g12" in str(err.value)
    assert not _garbled("See /usr/share/doc/grep and /etc/apt/sources.list for the paths.")
    assert _garbled("/uni0041/uni0042/uni0043 /cid12/cid13")
