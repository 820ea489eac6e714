"""A page's drawing cost is counted before PDFium draws it: nested form XObjects (a 3 KB "billion
laughs" PDF that PDFium expanded to gigabytes) and huge content streams are not drawn, and the
page's text still loads; ordinary pages are drawn as before."""

from __future__ import annotations

from explorer.documents.loaders import load_bytes
from explorer.documents.samples import sample_bytes
from explorer.render.page_cost import MAX_DRAWS, page_cost
from explorer.render.pdf_page import chunk_boxes, page_refusal, render_page
from explorer.strategies import get_strategy
from tests.support.hostile_inputs import _stream, raw_pdf

FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def nested_forms(levels: int, fan_out: int = 10, own_resources: bool = True) -> bytes:
    """One page drawing form 1, each form drawing the next ``fan_out`` times: fan_out ** (levels
    - 1) draws of the innermost text. Without ``own_resources``, the forms name the next one
    through the page's resources (PDF 1.1's inheritance)."""
    page_xobjects = b"/X 6 0 R" if own_resources else b" ".join(b"/X%d %d 0 R" % (i, 6 + i) for i in range(levels))
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> "
        b"/XObject << " + page_xobjects + b" >> >> /Contents 5 0 R >>",
        FONT,
        _stream(b"BT /F1 12 Tf 72 720 Td (Nested forms below.) Tj ET " + (b"/X Do" if own_resources else b"/X0 Do")),
    ]
    for level in range(levels):
        name = b"/X" if own_resources else b"/X%d" % (level + 1)
        if level + 1 < levels:
            body = (b"q " + name + b" Do Q\n") * fan_out
            res = b"/Resources << /XObject << /X %d 0 R >> >> " % (7 + level) if own_resources else b""
        else:
            body, res = b"BT /F1 12 Tf 72 700 Td (lol) Tj ET", b"/Resources << /Font << /F1 4 0 R >> >> "
        objs.append(
            b"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] " + res + b"/Length %d >>\nstream\n" % len(body)
            + body + b"\nendstream"
        )
    return raw_pdf(objs)


def test_nested_forms_are_counted_and_a_page_past_the_cap_is_not_drawn():
    small = nested_forms(3)
    assert page_cost(small, 1).draws == 1 + 10 + 100
    assert page_refusal(small, 1) == "" and render_page(small, 1) is not None
    bomb = nested_forms(8)  # ten million draws: PDFium took gigabytes, or aborted the process
    cost = page_cost(bomb, 1)
    assert cost.too_costly and cost.draws == MAX_DRAWS + 1
    assert page_refusal(bomb, 1) == f"it draws nested forms more than {MAX_DRAWS:,} times"
    assert render_page(bomb, 1) is None
    doc = load_bytes(bomb, "laughs.pdf")  # its text still loads (pypdf caps the forms it expands)
    assert "Nested forms below." in doc.text
    chunks = get_strategy("recursive").chunk(doc, {})
    assert chunk_boxes(bomb, doc, 1, chunks[0].start, chunks[0].end) == []


def test_forms_named_through_the_pages_resources_and_a_form_that_draws_itself_count():
    inherited = nested_forms(8, own_resources=False)
    assert page_cost(inherited, 1).too_costly
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /X 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /XObject /Subtype /Form /BBox [0 0 9 9] /Resources << /XObject << /X 4 0 R >> >> /Length 6 >>\n"
        b"stream\n/X Do\nendstream",
        _stream(b"/X Do"),
    ]
    assert page_cost(raw_pdf(objs), 1).too_costly


def test_a_page_whose_content_is_too_big_to_draw_says_so():
    from explorer.render import page_cost as cost_module

    pdf = nested_forms(2)
    assert not page_cost(pdf, 1).too_costly
    cost_module.MAX_CONTENT_BYTES, saved = 20, cost_module.MAX_CONTENT_BYTES
    try:
        assert page_cost(pdf, 1).too_costly
        assert page_cost(pdf, 1).reason() == "its drawing instructions pass 0 MB"
    finally:
        cost_module.MAX_CONTENT_BYTES = saved


def test_the_samples_pages_are_drawn():
    data = sample_bytes("Plant operations handbook (PDF, 6 pages)")[1]
    for number in range(1, 7):
        assert page_refusal(data, number) == ""
    assert page_refusal(b"not a pdf", 1) == "its drawing instructions could not be read"
