"""What drawing a PDF page costs, counted before PDFium is asked to draw it.

Why: a page can draw a form XObject that draws another ten times, and so on. pypdf stops
expanding such forms after 5,000 (so the text loads), but PDFium expands every one, both to render
the page and to read its characters: a 3 KB file of seven levels (a million draws) took 6.7 s and
1.7 GB, eight levels aborted the process at a 5 GB cap, which would take every session of a
server down with it. So the page's content streams are read with pypdf, each form's ``Do``
operators counted once (the counts of a form are reused wherever it is drawn), and a page whose
expansion passes :data:`MAX_DRAWS` or :data:`MAX_CONTENT_BYTES` is not drawn: its text view stays.

The count reads ``/Name Do`` in the decoded stream bytes without parsing the stream, so a string
that holds those letters counts too: an over-estimate, never an under-estimate of the forms drawn.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import Any

from explorer.documents.pdf import collect_pypdf_logs

#: Form XObjects drawn on one page, nested drawings expanded, past which it is not rendered.
#: Measured with PDFium on a page of nested forms: 11,111 draws 0.2 s and 64 MB; 111,111 draws
#: 0.8 s and 215 MB; 1,111,111 draws 6.7 s and 1.7 GB.
MAX_DRAWS = 50_000
#: Bytes of content stream PDFium reads for one page, each form counted as often as it is drawn.
MAX_CONTENT_BYTES = 64 * 2**20

_DO = re.compile(rb"/([^\s/\[\]()<>{}%]+)\s*Do(?![A-Za-z0-9_])")


@dataclass(frozen=True, slots=True)
class PageCost:
    """Form draws and content bytes of one page, nested forms expanded (each up to a cap)."""

    draws: int
    content_bytes: int

    @property
    def too_costly(self) -> bool:
        return self.draws > MAX_DRAWS or self.content_bytes > MAX_CONTENT_BYTES

    def reason(self) -> str:
        """Why the page is not drawn, for a caption."""
        if self.draws > MAX_DRAWS:
            return f"it draws nested forms more than {MAX_DRAWS:,} times"
        return f"its drawing instructions pass {MAX_CONTENT_BYTES // 2**20} MB"


def page_cost(data: bytes, number: int) -> PageCost | None:
    """The cost of page ``number`` (1-based) of the PDF ``data``; None when pypdf cannot read it
    (then PDFium is not asked either: a page that cannot be counted is not drawn)."""
    from pypdf import PdfReader

    try:
        with collect_pypdf_logs():  # its complaints were said when the document was loaded
            reader = PdfReader(io.BytesIO(data), strict=False)
            if not 1 <= number <= len(reader.pages):
                return None
            page = reader.pages[number - 1]
            contents = page.get_contents()
            body = contents.get_data() if contents is not None else b""
            return _Counter().cost(body, page.get("/Resources"))
    except Exception:  # a damaged file: pypdf's errors are many, and none is worth a traceback
        return None


class _Counter:
    """Counts a page's form draws and bytes; each form once, by its object number."""

    def __init__(self) -> None:
        self.seen: dict[Any, tuple[int, int]] = {}
        self.open: set[Any] = set()

    def cost(self, body: bytes, resources: Any) -> PageCost:
        draws, size = self._expand(body, resources)
        return PageCost(draws, size)

    def _expand(self, body: bytes, resources: Any) -> tuple[int, int]:
        xobjects = _dict(_dict(resources).get("/XObject"))
        draws, size = 0, len(body)
        for match in _DO.finditer(body):
            ref = xobjects.get("/" + match.group(1).decode("latin-1"))
            child = self._form(ref, resources)
            draws += 1 + child[0]
            size += child[1]
            if draws > MAX_DRAWS or size > MAX_CONTENT_BYTES:
                break  # past a cap: the exact figure no longer matters
        return min(draws, MAX_DRAWS + 1), min(size, MAX_CONTENT_BYTES + 1)

    def _form(self, ref: Any, outer: Any) -> tuple[int, int]:
        """A form's own draws and bytes (an image or an unknown name: none); a form without
        resources of its own uses ``outer``'s, as PDF 1.1 allowed."""
        key = getattr(ref, "idnum", None) or id(ref)
        if key in self.seen:
            return self.seen[key]
        if key in self.open:  # a form that draws itself: PDFium stops it, but count it as costly
            return MAX_DRAWS + 1, 0
        form = ref.get_object() if ref is not None and hasattr(ref, "get_object") else ref
        if not hasattr(form, "get_data") or form.get("/Subtype") != "/Form":
            return 0, 0
        self.open.add(key)
        try:
            got = self._expand(form.get_data(), form.get("/Resources") or outer)
        finally:
            self.open.discard(key)
        self.seen[key] = got
        return got


def _dict(value: Any) -> Any:
    value = value.get_object() if hasattr(value, "get_object") else value
    return value if hasattr(value, "get") else {}
