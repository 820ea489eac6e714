"""The PDF page beside the text: pages render to cached PNGs, a chunk's text is outlined where it
is on the page (whatever the clean-up did to the text), and nothing is outlined where it is not."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("pypdfium2")

from explorer.documents.cleanup import Cleanup
from explorer.documents.loaders import load_bytes
from explorer.documents.samples import load_sample, sample_bytes
from explorer.lru import ByteLRU
from explorer.render import pdf_page
from explorer.render.pdf_page import Box, PageImage, chunk_boxes, page_html, render_page
from explorer.strategies import get_strategy

PNG = b"\x89PNG\r\n\x1a\n"
ALL_CLEANUP = Cleanup(collapse_blank_lines=True, join_hyphenated=True, drop_headers_footers=True)


@pytest.fixture(scope="module")
def handbook() -> bytes:
    return sample_bytes("handbook.pdf")[1]


def test_a_page_renders_to_a_png_once(handbook):
    image = render_page(handbook, 2, key="test:handbook")
    assert image is not None and image.png.startswith(PNG)
    assert 800 < image.width < 1000 and image.height > image.width  # A4 portrait at 1.5 px/pt
    assert render_page(handbook, 2, key="test:handbook") is image  # cached by (content, page, scale)
    assert render_page(handbook, 2, scale=1.0, key="test:handbook").width < image.width
    assert render_page(handbook, 7) is None and render_page(handbook, 0) is None
    assert render_page(b"%PDF-1.4 not really", 1) is None


def test_a_page_is_reduced_to_a_palette_by_fast_octree(handbook, monkeypatch):
    """Median cut, PIL's default for RGB, took 0.2 s of a page's 0.3 s (1.3 s of Explore's first
    view on a busy server); fast octree 0.05 s, and its PNG is smaller."""
    from PIL import Image

    methods = []
    quantize = Image.Image.quantize

    def spy(self, *args, **kwargs):
        methods.append(kwargs.get("method"))
        return quantize(self, *args, **kwargs)

    monkeypatch.setattr(Image.Image, "quantize", spy)
    image = render_page(handbook, 3, key="test:octree")
    assert image is not None and image.png.startswith(PNG)
    assert methods == [Image.Quantize.FASTOCTREE]


def test_the_image_cache_is_bounded_in_bytes(handbook, monkeypatch):
    sizes = [len(render_page(handbook, number, key="sizes").png) for number in range(1, 7)]
    budget = sum(sizes) // 2  # room for some of the six pages, never all of them
    small = ByteLRU(budget, lambda im: len(im.png))
    monkeypatch.setattr(pdf_page, "_IMAGES", small)
    for number in range(1, 7):
        assert render_page(handbook, number, key="bounded") is not None
        assert small.nbytes <= budget
    assert 0 < len(small) < 6


@pytest.mark.parametrize("cleanup", [Cleanup(), ALL_CLEANUP], ids=["as-extracted", "cleaned-up"])
def test_every_chunk_is_outlined_on_each_of_its_pages(handbook, cleanup):
    doc = load_sample("handbook.pdf", cleanup)
    chunks = get_strategy("recursive").chunk(doc, {"chunk_size": 400, "chunk_overlap": 40})
    for ch in chunks:
        for number in ch.pages:
            boxes = chunk_boxes(handbook, doc, number, ch.start, ch.end)
            assert boxes, (ch.index, number, ch.text[:60])
            for b in boxes:
                assert 0 <= b.left < b.right <= 1 and 0 <= b.top < b.bottom <= 1
            tops = [b.top for b in boxes]
            assert tops == sorted(tops)  # one box a line, in reading order


def test_the_outline_is_where_the_text_is(handbook):
    doc = load_sample("handbook.pdf")
    page = doc.pages[0]
    header = doc.text[page.start : doc.text.index("\n", page.start)]
    top = chunk_boxes(handbook, doc, 1, page.start, page.start + len(header))
    assert len(top) == 1 and top[0].top < 0.08  # the running header: one line at the top
    # the same words further down (a section title) are found there, not at the first match
    title = doc.text.index("1. Plant overview")
    lower = chunk_boxes(handbook, doc, 1, title, title + len("1. Plant overview"))
    assert len(lower) == 1 and lower[0].top > top[0].bottom
    # words hyphenated at a line end in the PDF are one word in the text: two lines outlined
    cut = doc.text.index("superin-")
    assert len(chunk_boxes(handbook, doc, 1, cut, cut + len("superin-\ntendent"))) == 2


def test_a_word_drawn_with_a_ligature_glyph_is_outlined():
    from tests.support.hostile_inputs import ligature_pdf

    data = ligature_pdf(["Le \x01chier a\x02ecte l'in\x03uence du \x01ltre."])
    doc = load_bytes(data, "ligatures.pdf")  # "fichier": two letters where the page has one glyph
    start = doc.text.index("affecte")
    boxes = chunk_boxes(data, doc, 1, start, start + len("affecte l'influence"))
    assert len(boxes) == 1 and 0 < boxes[0].left < boxes[0].right < 1


def test_nothing_is_outlined_where_the_text_is_not(handbook):
    doc = load_sample("handbook.pdf")
    chunk = doc.text[doc.pages[1].start : doc.pages[1].start + 300]
    assert chunk_boxes(handbook, doc, 1, doc.pages[1].start, doc.pages[1].start + 300) == []  # another page
    assert chunk_boxes(handbook, doc, 9, 0, 100) == []
    text = load_sample("rapport_annuel.txt")
    assert chunk_boxes(handbook, text, 1, 0, 100) == []  # a text document has no pages
    assert chunk  # (the slice exists: the refusal is about the page, not the text)


def test_page_html_places_the_outlines_and_escapes_the_title():
    image = PageImage(PNG + b"fake", 100, 141)
    boxes = [Box(0.1, 0.2, 0.8, 0.23), Box(0.1, 0.24, 0.5, 0.27)]
    out = page_html(image, boxes, title='page 1 of "x"<script>.pdf')
    assert out.count('class="ce-pdf-box"') == 2 and out.count('class="ce-pdf-bar"') == 1
    assert 'src="data:image/png;base64,' in out
    assert "<script>" not in out and "&lt;script&gt;" in out
    lefts = [float(x) for x in re.findall(r'class="ce-pdf-box" style="position:absolute;left:([\d.]+)%', out)]
    assert lefts == [pytest.approx(9.7), pytest.approx(9.7)]
    assert "ce-pdf-box" not in page_html(image, [], title="p")


def test_the_punctuation_at_a_chunks_ends_is_outlined_with_it():
    """A French heading's " ?" and a quotation's "« " / " »" hold no letter to match: they are
    outlined when the chunk holds them (and only then)."""
    from tests.support.hostile_inputs import make_pdf

    data = make_pdf([["Pourquoi signaler un écart ?", "« Nous avons tenu le cap », dit-il."]])
    doc = load_bytes(data, "titres.pdf")

    def right_left(part: str) -> tuple[float, float]:
        start = doc.text.index(part)
        (box,) = chunk_boxes(data, doc, 1, start, start + len(part))
        return box.right, box.left

    assert right_left("Pourquoi signaler un écart ?")[0] > right_left("Pourquoi signaler un écart")[0] + 0.005
    quoted, bare = right_left("« Nous avons tenu le cap »"), right_left("Nous avons tenu le cap")
    assert quoted[1] < bare[1] - 0.005 and quoted[0] > bare[0] + 0.005
    assert right_left("le cap », dit-il.")[0] > right_left("le cap », dit-il")[0]
    # a chunk that stops at a letter does not reach the punctuation after it
    assert right_left("tenu le cap")[0] == bare[0]
