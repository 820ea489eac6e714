"""A PDF page as an image, with the region of a chunk's text outlined on it.

Why a module of its own: it is the one place that reads a PDF with PDFium (``pypdfium2``) rather
than pypdf: pages are rendered to PNG (cached by content hash, page and scale, with a bound in
bytes), and the characters of a page's text layer give the boxes that outline a chunk. The
chunk's text (a slice of :class:`explorer.documents.document.Document`'s text, from pypdf and
perhaps cleaned up) is matched to the page's characters on letters and digits only, case and
compatibility forms folded, so line breaks, hyphens at line ends, spacing and dropped running
headers do not matter; where several places match, the one nearest the chunk's place on the
page wins. A chunk that cannot be matched gets no outline (never a wrong one on purpose).

PDFium is not thread-safe: every call into it holds one lock. Nothing here knows about the app;
:func:`page_html` is the markup it shows (the image inline, the outlines as positioned boxes).
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import threading
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from explorer.documents.document import Document
from explorer.lru import ByteLRU
from explorer.render.page_cost import page_cost

T = TypeVar("T")

#: Default rendering scale (PDF points to pixels): a sharp page in a ~450 px column.
PAGE_SCALE = 1.5
#: Most pixels of one rendered page (a poster-sized page is rendered smaller).
MAX_PIXELS = 4_000_000
#: Bytes of PNG kept in memory by the page-image cache.
IMAGE_CACHE_BYTES = 64 * 2**20
#: Bytes of page character boxes kept in memory.
TEXT_CACHE_BYTES = 32 * 2**20
#: Letters and digits matched at each end when a chunk is not found whole on its page.
ANCHOR = 24
#: Points added around each outlined line.
PAD = 1.5

_PDFIUM = threading.Lock()


@dataclass(frozen=True, slots=True)
class PageImage:
    """A rendered page: PNG bytes and their size in pixels."""

    png: bytes
    width: int
    height: int


@dataclass(frozen=True, slots=True)
class Box:
    """A rectangle on a page in fractions of its width and height, from the top left corner."""

    left: float
    top: float
    right: float
    bottom: float


_IMAGES: ByteLRU[PageImage] = ByteLRU(IMAGE_CACHE_BYTES, lambda im: len(im.png), single_flight=True)
#: Pages' character boxes (about 100 bytes a character).
_TEXTS: ByteLRU[_PageText] = ByteLRU(TEXT_CACHE_BYTES, lambda t: 100 * len(t.keys) + 1024, single_flight=True)


def content_key(data: bytes) -> str:
    """The cache key of a PDF's bytes (a content hash)."""
    return hashlib.sha256(data).hexdigest()[:32]


#: Why each page is not drawn ("" where it is), by (content key, page): a verdict is a few bytes.
_REFUSALS: ByteLRU[str] = ByteLRU(2 * 2**20, lambda why: 64 + len(why), single_flight=True)


def page_refusal(data: bytes, number: int, key: str | None = None) -> str:
    """Why PDFium is not asked to draw or read page ``number`` ("" when it is): a page whose
    nested forms or content would cost it seconds and gigabytes (:mod:`explorer.render.page_cost`),
    or one whose cost cannot be counted."""

    def judge() -> str:
        cost = page_cost(data, number)
        if cost is None:
            return "its drawing instructions could not be read"
        return cost.reason() if cost.too_costly else ""

    return _REFUSALS.get_or_make((key or content_key(data), number), judge)


def _on_page(data: bytes, number: int, read: Callable[[Any], T], key: str | None = None) -> T | None:
    """``read(page)`` on page ``number`` (1-based) under PDFium's lock; None for a page that is
    not there or cannot be read (a damaged page: the text view still works), or that is too
    costly to draw (:func:`page_refusal`)."""
    import pypdfium2 as pdfium

    if page_refusal(data, number, key):
        return None
    try:
        with _PDFIUM:
            pdf = pdfium.PdfDocument(data)
            try:
                return read(pdf[number - 1]) if 1 <= number <= len(pdf) else None
            finally:
                pdf.close()
    except Exception:
        return None


def render_page(
    data: bytes, number: int, scale: float = PAGE_SCALE, key: str | None = None
) -> PageImage | None:
    """Page ``number`` (1-based) of the PDF ``data`` as a PNG, or None when it cannot be rendered.
    Cached by (``key`` or the content hash, page, scale)."""
    key = key or content_key(data)
    return _IMAGES.get_or_make((key, number, round(scale, 3)), lambda: _render(data, number, scale, key))


def _render(data: bytes, number: int, scale: float, key: str) -> PageImage | None:
    from PIL import Image

    def draw(page: Any) -> Any:
        w, h = page.get_size()
        return page.render(scale=min(scale, (MAX_PIXELS / max(w * h, 1.0)) ** 0.5)).to_pil()

    image = _on_page(data, number, draw, key)
    if image is None:
        return None
    buf = io.BytesIO()
    # a palette: a quarter of the bytes of RGB. Fast octree, not the default median cut: 0.05 s
    # against 0.2 s for a text page at 893x1263 (on a loaded server, 1.3 s of the first view)
    image.quantize(colors=128, method=Image.Quantize.FASTOCTREE).save(buf, format="PNG")
    return PageImage(buf.getvalue(), image.width, image.height)


@dataclass(frozen=True, slots=True)
class _PageText:
    """A page's letters and digits (folded), the character each came from, the page's
    characters, and the boxes."""

    keys: str
    chars: str
    index: tuple[int, ...]
    boxes: tuple[tuple[float, float, float, float] | None, ...]  # (left, top, right, bottom), fractions


def _fold(ch: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKC", ch).casefold() if c.isalnum())


def _page_text(data: bytes, number: int, key: str) -> _PageText | None:
    return _TEXTS.get_or_make((key, number), lambda: _read_text(data, number, key))


def _read_text(data: bytes, number: int, key: str) -> _PageText | None:
    got = _on_page(data, number, _chars, key)
    if got is None:
        return None
    text, boxes = got
    keys, index = [], []
    for i, ch in enumerate(text):
        for c in _fold(ch):
            keys.append(c)
            index.append(i)
    return _PageText("".join(keys), text, tuple(index), tuple(boxes))


def _chars(page: Any) -> tuple[str, list] | None:
    """The page's characters and their boxes (fractions of the rendered page), or None for a
    rotated page (boxes would need rotating: no outline rather than a wrong one)."""
    if page.get_rotation() % 360:
        return None
    left, bottom, right, top = page.get_bbox()  # what is rendered: media box ∩ crop box
    tp = page.get_textpage()
    n = tp.count_chars()
    text = tp.get_text_range()
    if len(text) != n:
        text = "".join(tp.get_text_range(i, 1)[:1] or " " for i in range(n))
    w, h = max(right - left, 1e-6), max(top - bottom, 1e-6)
    boxes = []
    for i in range(n):
        x0, y0, x1, y1 = tp.get_charbox(i)
        ok = x1 > x0 and y1 > y0 and not text[i].isspace()
        boxes.append(((x0 - left) / w, (top - y1) / h, (x1 - left) / w, (top - y0) / h) if ok else None)
    return text, boxes


def _nearest(hay: str, needle: str, expected: int) -> int | None:
    """Where ``needle`` occurs in ``hay`` nearest to ``expected`` (None if nowhere)."""
    best, at = None, hay.find(needle)
    while at >= 0:
        if best is None or abs(at - expected) < abs(best - expected):
            best = at
        at = hay.find(needle, at + 1)
    return best


def _locate(keys: str, part: str, expected: int) -> tuple[int, int] | None:
    """The range of ``keys`` that holds ``part`` (whole, or from its first to its last letters)."""
    at = _nearest(keys, part, expected)
    if at is not None:
        return at, at + len(part)
    if len(part) < 2 * ANCHOR:
        return None
    head = _nearest(keys, part[:ANCHOR], expected)
    tail = _nearest(keys, part[-ANCHOR:], expected + len(part) - ANCHOR)
    if head is None or tail is None:
        return None
    end = tail + ANCHOR
    return (head, end) if len(part) / 2 <= end - head <= 2 * len(part) else None


def chunk_boxes(
    data: bytes, doc: Document, number: int, start: int, end: int, key: str | None = None
) -> list[Box]:
    """Outlines, one a line, of the part of ``doc.text[start:end]`` on page ``number`` of the PDF
    ``data`` that ``doc`` was loaded from; [] when that part cannot be matched."""
    page = next((p for p in doc.pages if p.number == number), None)
    if page is None:
        return []
    a, b = max(start, page.start), min(end, page.end)
    part = _fold(doc.text[a:b]) if b > a else ""
    pt = _page_text(data, number, key or content_key(data)) if part else None
    if pt is None:
        return []
    span = _locate(pt.keys, part, len(_fold(doc.text[page.start : a])))
    if span is None:
        return []
    first, last = pt.index[span[0]], pt.index[span[1] - 1]
    # the part's letters are matched; its punctuation before the first and after the last (the
    # " ?" of a French heading, "« " and " »") is taken from the page's characters beside them
    first = _beyond(pt.chars, first, -1, _marks(doc.text[a:b]))
    last = _beyond(pt.chars, last, 1, _marks(doc.text[a:b][::-1]))
    return _lines([bx for bx in pt.boxes[first : last + 1] if bx is not None])


def _marks(text: str) -> int:
    """How many characters other than spaces ``text`` holds before its first letter or digit."""
    lead = next((i for i, c in enumerate(text) if _fold(c)), len(text))
    return sum(not c.isspace() for c in text[:lead])


def _beyond(chars: str, at: int, step: int, count: int) -> int:
    """The index of the ``count``-th character other than a space from ``at`` in direction
    ``step``, stopping before a letter or digit (``at`` when there is none)."""
    i = at
    while count > 0 and 0 <= i + step < len(chars) and not _fold(chars[i + step]):
        i += step
        if not chars[i].isspace():
            count -= 1
            at = i
    return at


def _lines(boxes: Sequence[tuple[float, float, float, float]]) -> list[Box]:
    """Character boxes (in reading order) merged into one box per line: a character joins the
    line when it overlaps it vertically and does not go back to the left."""
    out: list[list[float]] = []
    last_x = -1.0
    for x0, y0, x1, y1 in boxes:
        cur = out[-1] if out else None
        if cur is not None and y0 <= cur[3] and y1 >= cur[1] and x0 >= last_x - 0.005:
            cur[0], cur[1], cur[2], cur[3] = (
                min(cur[0], x0),
                min(cur[1], y0),
                max(cur[2], x1),
                max(cur[3], y1),
            )
        else:
            out.append([x0, y0, x1, y1])
        last_x = x0
    return [Box(*line) for line in out]


def page_html(
    image: PageImage,
    boxes: Sequence[Box],
    *,
    title: str,
    color: tuple[int, int, int] = (213, 94, 0),
    pad: tuple[float, float] = (0.003, 0.003),
) -> str:
    """The page image with ``boxes`` highlighted (a tint and an underline on each line) and a bar
    in the margin beside them; ``title`` is the image's text alternative (escaped here), ``pad``
    the margin around each box in fractions of the page."""
    src = "data:image/png;base64," + base64.b64encode(image.png).decode("ascii")
    alt = html.escape(title)
    px, py = pad
    rgb = ",".join(map(str, color))

    def place(left: float, top: float, right: float, bottom: float) -> str:
        return (
            f"position:absolute;left:{100 * left:.3f}%;top:{100 * top:.3f}%;"
            f"width:{100 * (right - left):.3f}%;height:{100 * (bottom - top):.3f}%"
        )

    marks = [
        f'<div class="ce-pdf-box" style="{place(b.left - px, b.top - py, b.right + px, b.bottom + py)};'
        f'background:rgba({rgb},.2);border-bottom:2px solid rgb({rgb});border-radius:2px"></div>'
        for b in boxes
    ]
    if boxes:
        left = max(min(b.left for b in boxes) - 4 * px, 0.01)
        top, bottom = min(b.top for b in boxes) - py, max(b.bottom for b in boxes) + py
        marks.append(
            f'<div class="ce-pdf-bar" style="{place(left - 0.008, top, left - 0.002, bottom)};'
            f'background:rgb({rgb});border-radius:2px"></div>'
        )
    return (
        '<div class="ce-pdf" style="position:relative;width:100%;line-height:0">'
        f'<img src="{src}" alt="{alt}" title="{alt}" width="{image.width}" height="{image.height}" '
        'style="width:100%;height:auto;display:block;border:1px solid rgba(128,128,128,.4);'
        f'border-radius:4px;background:#fff">{"".join(marks)}</div>'
    )
