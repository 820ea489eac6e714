"""PDF pages to text with pypdf, and every way a PDF goes wrong said in one sentence.

Why a module of its own: a PDF fails in more ways than any other input (damaged, encrypted,
scanned, broken fonts, too many pages, too slow), and pypdf reports some of them only in its
log, which is collected per load here instead of reaching the console.

Each page's text is extracted as it is (normalised like any text: see
:mod:`explorer.documents.decoding`), except that Latin ligature glyphs (U+FB00–U+FB06: "ﬁ", "ﬂ",
"ﬀ"...) are written as their letters: browsers and word processors draw "fi" as one glyph, and
read as one character "ﬁchier" is not the word "fichier" to a reader, to BM25 or to MiniLM's
tokenizer ("aﬀecte" was [UNK]). The loader strips the pages and joins them with one blank line,
and ``Document.pages`` maps each page to its range of the final text.

The same pass notes how each page's lines are set (font sizes, bold), for the headings that
:mod:`explorer.documents.pdf_headings` reads from them: pypdf reports each run of text to a
visitor as it extracts it, so the fonts cost no second extraction.
"""

from __future__ import annotations

import io
import logging
import re
import threading
import time
import unicodedata
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from explorer import limits
from explorer.documents.decoding import normalise
from explorer.documents.pdf_headings import PageStyles, StyleReader
from explorer.errors import LoadError
from explorer.text.wording import plural

#: A PDF page whose text is mostly (cid:NN) codes / private-use glyphs has a broken font.
GARBLED_SHARE = 0.30
#: Latin ligatures (ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ) to their letters, as Unicode's compatibility mapping writes them.
LIGATURES = {cp: unicodedata.normalize("NFKC", chr(cp)) for cp in range(0xFB00, 0xFB07)}

_CID = re.compile(r"\(cid:\d+\)")
_PRIVATE_USE = re.compile("[\ue000-\uf8ff\U000f0000-\U0010ffff\ufffd]")
#: Glyph names pypdf writes for a font it cannot map to Unicode ("/g1/g2/g3", "/uni0041", "/cid12").
_GLYPH_NAMES = re.compile(r"/(?:g|G|glyph|cid|uni|C)[0-9A-Fa-f]{1,5}(?=[/\s]|$)")

_pypdf_log: ContextVar[list[str] | None] = ContextVar("pypdf_log", default=None)
_handler_installed = False
_install_lock = threading.Lock()


class _CollectHandler(logging.Handler):
    """Routes pypdf's log records into the current load's list instead of the console."""

    def emit(self, record: logging.LogRecord) -> None:
        sink = _pypdf_log.get()
        if sink is not None:
            sink.append(record.getMessage())
        else:  # pypdf used outside a load: behave as if we were not here
            logging.getLogger().handle(record)


@contextmanager
def collect_pypdf_logs() -> Iterator[list[str]]:
    """Collect pypdf's warnings for this load (per thread/context: Streamlit sessions run in
    threads), so they become one Document warning instead of console noise."""
    global _handler_installed
    with _install_lock:
        if not _handler_installed:
            logger = logging.getLogger("pypdf")
            logger.addHandler(_CollectHandler(logging.WARNING))
            logger.propagate = False
            _handler_installed = True
    sink: list[str] = []
    token = _pypdf_log.set(sink)
    try:
        yield sink
    finally:
        _pypdf_log.reset(token)


def _damaged(name: str, err: BaseException) -> LoadError:
    """The message for a PDF pypdf could not read: damaged, or past one of pypdf's own limits
    (a stream too big, too many tokens in one), which is not damage."""
    detail = str(err).strip().splitlines()[0][:160] if str(err).strip() else ""
    if type(err).__name__ == "LimitReachedError":
        return LoadError(f"{name!r} is too complex for the PDF reader to read ({detail or 'past one of its limits'})")
    what = type(err).__name__ + (f": {detail}" if detail else "")
    return LoadError(f"{name!r} is a damaged or truncated PDF that cannot be read ({what})")


@dataclass(frozen=True)
class PdfPages:
    """A PDF as read: each page's text, how its lines are set (None where that was not read),
    and the warnings of the read."""

    texts: list[str]
    styles: list[PageStyles | None]
    warnings: list[str]


def page_text(raw: str) -> str:
    """A page's text as extracted made the loader's: normalised, ligatures written as letters."""
    return normalise(raw).translate(LIGATURES)


def pdf_pages(data: bytes, name: str) -> PdfPages:
    """Each page's text (as extracted) and styles, and warnings. Raises LoadError when nothing is
    usable."""
    warnings: list[str] = []
    styles: list[PageStyles | None] = []
    with collect_pypdf_logs() as logs:
        reader, n_pages = _open(data, name)
        texts, failed, first_error, oversized = _extract(reader, n_pages, name, warnings, styles)
    _check_pages(texts, failed, first_error, name, warnings, oversized)
    if logs:
        first = logs[0].strip().splitlines()[0][:120] if logs[0].strip() else "?"
        warnings.append(
            f"pypdf reported {plural(len(logs), 'problem')} reading {name!r} "
            f"(first: {first}); some text may be missing"
        )
    return PdfPages(texts, styles, warnings)


def _open(data: bytes, name: str) -> tuple[Any, int]:
    """The reader (decrypted if it opens without a password) and the number of pages."""
    from pypdf import PdfReader
    from pypdf.errors import DependencyError

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        encrypted = reader.is_encrypted
    except Exception as err:  # pypdf raises many types (PdfReadError, ValueError, KeyError...)
        raise _damaged(name, err) from None
    if encrypted:
        try:
            opened = reader.decrypt("")
        except DependencyError:
            raise LoadError(
                f"{name!r} uses AES encryption, which needs the 'cryptography' package: "
                "pip install cryptography"
            ) from None
        except Exception as err:
            raise _damaged(name, err) from None
        if not opened:
            raise LoadError(f"{name!r} is encrypted with a password; remove the password and load it again")
    try:
        n_pages = len(reader.pages)
    except Exception as err:
        raise _damaged(name, err) from None
    if n_pages == 0:
        raise LoadError(f"{name!r} is a PDF with no pages")
    return reader, n_pages


def _extract(
    reader: Any, n_pages: int, name: str, warnings: list[str], styles: list[PageStyles | None]
) -> tuple[list[str], list[int], BaseException | None, list[int]]:
    """Each page's text within the page, time and size limits (a warning says where reading
    stopped); pages that fail are empty, listed in ``failed`` (1-based), the first error kept;
    pages too costly to read are empty, listed in ``oversized``. Each page's styles go to
    ``styles``, one per text."""
    todo = n_pages
    if n_pages > limits.MAX_PDF_PAGES:
        todo = limits.MAX_PDF_PAGES
        warnings.append(
            f"{name!r} has {n_pages:,} pages: only the first {todo:,} were read "
            f"(page limit {limits.MAX_PDF_PAGES:,})"
        )
    texts: list[str] = []
    failed: list[int] = []
    oversized: list[int] = []  # pages too costly to read (1-based)
    first_error: BaseException | None = None
    chars = 0
    t0 = time.monotonic()
    for i in range(todo):
        if i and time.monotonic() - t0 > limits.PDF_TIME_BUDGET_S:  # page 1 is always read
            warnings.append(
                f"reading {name!r} stopped after page {i} of {n_pages}: text extraction took over "
                f"{limits.PDF_TIME_BUDGET_S:g} s (time budget)"
            )
            break
        visitor = StyleReader(page_text)
        try:
            page = reader.pages[i]
            too_big = _too_big_to_read(page)
            if too_big:
                oversized.append(i + 1)
                warnings.append(f"page {i + 1} of {name!r} has {too_big}: its text was not read")
                text = ""
            else:
                text = page.extract_text(visitor_text=visitor) or ""
        except Exception as err:  # one bad page must not lose the others
            failed.append(i + 1)
            first_error = first_error or err
            text = ""
        raw, text = text, page_text(text)  # a page of control characters: no text
        chars += len(text)
        if chars > limits.MAX_TEXT_CHARS and not texts:  # nothing to keep: "no text layer" was wrong
            raise LoadError(
                f"{name!r} has over {limits.MAX_TEXT_CHARS:,} characters of text on its first page, "
                "over the limit: split it into smaller files"
            )
        if chars > limits.MAX_TEXT_CHARS:
            warnings.append(
                f"reading {name!r} stopped after page {i} of {n_pages}: the text passed the "
                f"limit of {limits.MAX_TEXT_CHARS:,} characters"
            )
            break
        texts.append(text)
        styles.append(visitor.styles(raw, text) if text else None)
    return texts, failed, first_error, oversized


def _too_big_to_read(page: Any) -> str:
    """What makes a page's text too costly for pypdf to extract ("" when nothing does): its
    decoded content stream's bytes, or its text-showing operators (counted as bytes, a bound)."""
    contents = page.get_contents()
    data = contents.get_data() if contents is not None else b""
    if len(data) > limits.MAX_PDF_PAGE_CONTENT_BYTES:
        return (
            f"{len(data) / 2**20:,.0f} MB of drawing instructions, over the limit of "
            f"{limits.MAX_PDF_PAGE_CONTENT_BYTES // 2**20} MB"
        )
    ops = data.count(b"Tj") + data.count(b"TJ")
    if ops > limits.MAX_PDF_PAGE_TEXT_OPS:
        return f"{ops:,} text drawing operators, over the limit of {limits.MAX_PDF_PAGE_TEXT_OPS:,}"
    return ""


def _check_pages(
    texts: list[str],
    failed: list[int],
    first_error: BaseException | None,
    name: str,
    warnings: list[str],
    oversized: Sequence[int] = (),
) -> None:
    """Refuse a PDF with no readable text; warn about failed, garbled and empty pages."""
    if failed and len(failed) == len(texts):
        assert first_error is not None
        raise _damaged(name, first_error)
    if failed:
        warnings.append(f"{_pages_word(failed)} could not be read and {_is_are(failed)} left empty")
    empty = [i + 1 for i, t in enumerate(texts) if not t.strip() and i + 1 not in failed]
    if len(empty) == len(texts) - len(failed) and oversized:
        said = next(w for w in warnings if w.endswith("its text was not read"))
        raise LoadError(f"{name!r} has no page whose text could be read: {said}")
    empty = [i for i in empty if i not in oversized]  # said already
    if len(empty) == len(texts) - len(failed):
        raise LoadError(f"{name!r} has no text layer (scanned?) — run OCR first")
    garbled = [i + 1 for i, t in enumerate(texts) if _garbled(t)]
    with_text = len(texts) - len(empty) - len(failed)
    if garbled and len(garbled) == with_text:
        raise LoadError(
            f"The text of {name!r} extracts as unreadable glyphs ((cid:NN) codes, glyph names such as /g12, or private-use "
            "characters): its fonts have no Unicode map — run OCR first"
        )
    if garbled:
        warnings.append(
            f"{_pages_word(garbled)} of {name!r} extract{'s' if len(garbled) == 1 else ''} as unreadable "
            "glyphs (broken font encoding): chunks there will be garbage"
        )
    if empty:
        warnings.append(f"{_pages_word(empty)} {_has_have(empty)} no text (images or scans?)")


def _garbled(text: str) -> bool:
    visible = len(text) - sum(1 for c in text if c.isspace())
    if visible <= 0:
        return False
    bad = sum(len(m) for m in (*_CID.findall(text), *_GLYPH_NAMES.findall(text))) + len(_PRIVATE_USE.findall(text))
    return bad / visible > GARBLED_SHARE


def _pages_word(numbers: list[int]) -> str:
    """ "page 3", "pages 2, 5, 7–9"."""
    runs: list[str] = []
    i = 0
    while i < len(numbers):
        j = i
        while j + 1 < len(numbers) and numbers[j + 1] == numbers[j] + 1:
            j += 1
        runs.append(str(numbers[i]) if i == j else f"{numbers[i]}–{numbers[j]}")
        i = j + 1
    return ("page " if len(numbers) == 1 else "pages ") + ", ".join(runs)


def _is_are(numbers: list[int]) -> str:
    return "is" if len(numbers) == 1 else "are"


def _has_have(numbers: list[int]) -> str:
    return "has" if len(numbers) == 1 else "have"
