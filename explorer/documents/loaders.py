"""Load PDF, Markdown and text files into :class:`Document` objects with exact offsets.

The kind of a file comes from its first bytes, its extension second: a PDF named ``.txt``
is read as a PDF, a ZIP archive named ``.pdf`` is refused as a ZIP archive. Every failure
is a :class:`LoadError` that names the file and says what to do.

Text normalisation (the text every offset indexes):

- line ends ``\\r\\n`` and lone ``\\r`` become ``\\n``; form feed, vertical tab and NEL
  (U+0085) become ``\\n`` too (they are line or page breaks);
- other C0 control characters (NUL, ESC...), DEL and the C1 controls U+0080–U+009F are
  dropped: they break HTML rendering and tokenizers and carry no text;
- everything else (CJK, right-to-left text, emoji, combining characters, U+2028...) is
  kept exactly as decoded: no Unicode normalisation, no whitespace folding.

PDF text is extracted per page with pypdf; each page is stripped of surrounding whitespace
and pages are joined with one blank line (``\\n\\n``). ``Document.pages`` maps each page to
its range of the final text (a page without text is an empty range where it would be).
"""

from __future__ import annotations

import codecs
import io
import logging
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from explorer import limits
from explorer.documents.cleanup import Cleanup, clean_pages
from explorer.documents.document import Document, Page
from explorer.errors import LoadError

MARKDOWN_EXTENSIONS = (".md", ".markdown", ".mdown", ".mkd")
PAGE_SEPARATOR = "\n\n"

#: Share of control characters (after decoding) above which a "text" file is called binary.
BINARY_CONTROL_SHARE = 0.10
#: Share of NUL bytes above which undecodable data is binary (UTF-16/32 text is caught first).
BINARY_NUL_SHARE = 0.05
#: Bytes charset-normalizer looks at (it takes ~0.5 s per MB); the whole file is then decoded.
DETECT_BYTES = 512 * 1024
#: A PDF page whose text is mostly (cid:NN) codes / private-use glyphs has a broken font.
GARBLED_SHARE = 0.30

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)

#: Signatures of common binary formats, to say what a file is instead of "not text".
_SIGNATURES = (
    (b"PK\x03\x04", "a ZIP archive (.zip, or a .docx/.xlsx/.pptx/.epub document)"),
    (b"PK\x05\x06", "a ZIP archive (.zip, or a .docx/.xlsx/.pptx/.epub document)"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Microsoft Office file (.doc/.xls/.ppt)"),
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"),
    (b"II*\x00", "a TIFF image"),
    (b"MM\x00*", "a TIFF image"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"Rar!\x1a\x07", "a RAR archive"),
    (b"\xfd7zXZ\x00", "an xz archive"),
    (b"\x7fELF", "a program (ELF executable)"),
)

_LINE_BREAKS = re.compile("[\f\v\x85]")  # (str.translate is ~30x slower on non-ASCII text)
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_BINARY_CHARS = re.compile("[\x00-\x08\x0e-\x1a\x1c-\x1f\ufffd]")  # ESC (\x1b) is common in logs
_NON_ASCII = re.compile("[^\x00-\x7f]")
_FIRST_HIGH = re.compile(b"[\x80-\xff]")
_CID = re.compile(r"\(cid:\d+\)")
_PRIVATE_USE = re.compile("[\ue000-\uf8ff\U000f0000-\U0010ffff\ufffd]")


# -- public API ------------------------------------------------------------------------------
_NO_CLEANUP = Cleanup()


def load_path(path: str | Path, cleanup: Cleanup = _NO_CLEANUP) -> Document:
    """Load a file from disk (see :func:`load_bytes`)."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if not p.is_file():
            raise LoadError(f"{str(p)!r} is not a file")
    except OSError as err:
        raise LoadError(f"cannot read {str(p)!r}: {err.strerror or err}") from None
    _check_size(size, p.name)
    try:
        data = p.read_bytes()
    except OSError as err:
        raise LoadError(f"cannot read {str(p)!r}: {err.strerror or err}") from None
    return load_bytes(data, p.name, cleanup)


def load_bytes(data: bytes, name: str, cleanup: Cleanup = _NO_CLEANUP) -> Document:
    """Turn a file's bytes into a :class:`Document`; ``name`` is the file name shown to the user.

    Raises :class:`LoadError` with a message naming the file for anything unreadable.
    """
    if not isinstance(data, bytes):
        data = bytes(data)
    _check_size(len(data), name)
    if not data:
        raise LoadError(f"{name!r} is empty (0 bytes)")
    kind, warnings = detect_kind(data, name)
    encoding = ""
    if kind == "pdf":
        raw_pages, more = _pdf_pages(data, name)
        warnings += more
    else:
        text, encoding, more = decode_text(data, name)
        warnings += more
        raw_pages = [text]
    normalised = [_normalise(p) for p in raw_pages]
    pages = [p for p, _ in normalised]
    dropped = sum(n for _, n in normalised)
    if dropped > 0 and kind != "pdf":
        warnings.append(
            f"removed {dropped:,} control character{'s' if dropped != 1 else ''} (NUL, ESC...) "
            "that break display and tokenizers"
        )
    if kind == "pdf":
        pages = [p.strip() for p in pages]
    if not any(p.strip() for p in pages):
        raise LoadError(f"{name!r} is empty (it holds only whitespace or control characters)")
    pages, steps = clean_pages(pages, cleanup, is_pdf=kind == "pdf")
    if kind == "pdf":
        pages = [p.strip() for p in pages]
        text, page_map = _join_pages(pages)
    else:
        text, page_map = pages[0], ()
    if not text.strip():
        raise LoadError(f"{name!r} is empty after clean-up; switch clean-up off")
    if len(text) > limits.MAX_TEXT_CHARS:
        raise LoadError(
            f"{name!r} has {len(text):,} characters of text, over the limit of "
            f"{limits.MAX_TEXT_CHARS:,}: split it into smaller files"
        )
    blocks = ()
    if kind == "markdown" and len(text) > limits.MAX_MARKDOWN_CHARS:
        warnings.append(
            f"{name!r} is too long for its Markdown structure to be read ({len(text):,} characters, "
            f"limit {limits.MAX_MARKDOWN_CHARS:,}): headings, code and tables are not detected"
        )
    elif kind == "markdown":
        from explorer.documents.markdown_blocks import markdown_blocks

        blocks = markdown_blocks(text)
    return Document(
        name=name,
        kind=kind,
        text=text,
        pages=page_map,
        blocks=blocks,
        warnings=tuple(warnings),
        cleanup=tuple(steps),
        encoding=encoding,
    )


def normalise(text: str) -> str:
    """Line ends to ``\\n``; drop control characters (see the module docstring)."""
    return _normalise(text)[0]


def _normalise(text: str) -> tuple[str, int]:
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if _LINE_BREAKS.search(text):
        text = _LINE_BREAKS.sub("\n", text)
    return _CONTROLS.subn("", text)


# -- kind detection --------------------------------------------------------------------------
def _ext(name: str) -> str:
    return Path(name).suffix.lower()


def detect_kind(data: bytes, name: str) -> tuple[str, list[str]]:
    """``"pdf"``, ``"markdown"`` or ``"text"`` from magic bytes first, extension second."""
    ext = _ext(name)
    head = data[:1024]
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"%PDF-") or (ext == ".pdf" and b"%PDF-" in head):
        warns = [] if ext == ".pdf" else [f"{name!r} is a PDF file despite its {ext or 'missing'} extension"]
        return "pdf", warns
    for sig, what in _SIGNATURES:
        if data.startswith(sig):
            wanted = "a PDF" if ext == ".pdf" else "a PDF, Markdown or text file"
            raise LoadError(f"{name!r} is {what}, not {wanted}: export it as PDF or text and upload again")
    if ext == ".pdf":
        raise LoadError(f"{name!r} is not a PDF: it does not start with %PDF- (a renamed or damaged file?)")
    return ("markdown" if ext in MARKDOWN_EXTENSIONS else "text"), []


def _check_size(size: int, name: str) -> None:
    if size > limits.MAX_FILE_BYTES:
        raise LoadError(
            f"{name!r} is {size / 2**20:,.1f} MB, over the upload limit of "
            f"{limits.MAX_FILE_BYTES / 2**20:,.0f} MB: split it or upload a smaller file"
        )


# -- text decoding ---------------------------------------------------------------------------
def decode_text(data: bytes, name: str) -> tuple[str, str, list[str]]:
    """Decode text bytes: BOM → UTF-8 → UTF-16/32 without BOM → charset-normalizer.

    Returns ``(text, encoding label, warnings)``. Binary data raises :class:`LoadError`.
    """
    warnings: list[str] = []
    for bom, codec in _BOMS:
        if data.startswith(bom):
            body = data[len(bom) :]
            try:
                text = body.decode(codec)
            except UnicodeDecodeError:
                text = body.decode(codec, "replace")
                warnings.append(_replaced_warning(text, codec))
            return _check_binary(text, name), f"{codec} (BOM)", warnings

    nul_share = data.count(0) / len(data)
    if nul_share > BINARY_NUL_SHARE:
        # UTF-16/32 without BOM has NULs in most code units; anything else with so many is binary
        best = _charset_normalizer_best(data)
        if best is None or not best.replace("_", "-").startswith(("utf-16", "utf-32")):
            raise LoadError(
                f"{name!r} is a binary file, not text ({nul_share:.0%} of its bytes are NUL): "
                "upload a PDF, Markdown or text file"
            )
        codec = best.replace("_", "-")
        return _check_binary(data.decode(codec, "replace"), name), codec, warnings

    try:
        return _check_binary(data.decode("utf-8"), name), "utf-8", warnings
    except UnicodeDecodeError:
        pass

    # Mostly valid UTF-8 with a few bad bytes (a damaged or concatenated file): keep UTF-8
    # and mark the bad bytes with U+FFFD, rather than reading every accent wrongly.
    head = data[:DETECT_BYTES].decode("utf-8", "replace")
    bad = head.count("\ufffd")
    good = len(_NON_ASCII.findall(head)) - bad
    if good >= 1 and bad * 10 <= good:
        replaced = data.decode("utf-8", "replace")
        warnings.append(_replaced_warning(replaced, "utf-8"))
        return _check_binary(replaced, name), "utf-8", warnings

    codec = _charset_normalizer_best(_detection_sample(data))
    if codec is None:
        raise LoadError(
            f"{name!r} is not text in any encoding that fits its bytes (a binary file?): "
            "upload a PDF, Markdown or text file"
        )
    try:
        text = data.decode(codec)
    except UnicodeDecodeError:
        if codec == "cp1252":  # cp1252 leaves 5 bytes undefined; latin-1 decodes anything
            codec = "latin-1"
            text = data.decode(codec)
        else:  # detected on the first DETECT_BYTES; a later byte does not fit
            text = data.decode(codec, "replace")
            warnings.append(_replaced_warning(text, codec))
    label = codec.replace("_", "-")
    if not label.startswith(("utf-16", "utf-32")):
        warnings.append(
            f"{name!r} is not UTF-8: decoded as {label} (detected by charset-normalizer); "
            "if accented letters look wrong, save it as UTF-8 and upload again"
        )
    return _check_binary(text, name), label, warnings


def _charset_normalizer_best(data: bytes) -> str | None:
    """Codec name from charset-normalizer, preferring cp1252 among equally clean readings.

    charset-normalizer often ranks cp1250 first for Western European text (it decodes most
    accents identically), which turns French "û", "ï" or "è" into "ű", "ď", "č". When a
    cp1252 reading is among the least chaotic candidates, it is the one we take.
    """
    from charset_normalizer import from_bytes

    results = list(from_bytes(data))
    if not results:
        return None
    least = min(r.chaos for r in results)
    for r in results:
        if r.chaos <= least + 0.01 and "cp1252" in (r.could_be_from_charset or [r.encoding]):
            return "cp1252"
    return results[0].encoding


def _detection_sample(data: bytes) -> bytes:
    """Up to DETECT_BYTES from just before the first non-ASCII byte (an ASCII head would tell
    charset-normalizer nothing); the start stays even so UTF-16 code units stay aligned."""
    m = _FIRST_HIGH.search(data)
    start = 0 if m is None else max(0, m.start() - 1024) & ~1
    return data[start : start + DETECT_BYTES]


def _replaced_warning(text: str, codec: str) -> str:
    n = text.count("\ufffd")
    return f"{n:,} invalid {codec} byte sequence{'s' if n != 1 else ''} replaced by \ufffd"


def _check_binary(text: str, name: str) -> str:
    sample = text[:200_000]
    if sample:
        share = len(_BINARY_CHARS.findall(sample)) / len(sample)
        if share > BINARY_CONTROL_SHARE:
            raise LoadError(
                f"{name!r} looks like binary data, not text ({share:.0%} control or undecodable "
                "characters): upload a PDF, Markdown or text file"
            )
    return text


# -- PDF -------------------------------------------------------------------------------------
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
def _collect_pypdf_logs() -> Iterator[list[str]]:
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
    detail = str(err).strip().splitlines()[0][:160] if str(err).strip() else ""
    what = type(err).__name__ + (f": {detail}" if detail else "")
    return LoadError(f"{name!r} is a damaged or truncated PDF that cannot be read ({what})")


def _pdf_pages(data: bytes, name: str) -> tuple[list[str], list[str]]:
    """Text of each page (as extracted), and warnings. Raises LoadError when nothing is usable."""
    from pypdf import PdfReader
    from pypdf.errors import DependencyError

    warnings: list[str] = []
    with _collect_pypdf_logs() as logs:
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
                raise LoadError(
                    f"{name!r} is encrypted with a password; remove the password and upload again"
                )
        try:
            n_pages = len(reader.pages)
        except Exception as err:
            raise _damaged(name, err) from None
        if n_pages == 0:
            raise LoadError(f"{name!r} is a PDF with no pages")
        todo = n_pages
        if n_pages > limits.MAX_PDF_PAGES:
            todo = limits.MAX_PDF_PAGES
            warnings.append(
                f"{name!r} has {n_pages:,} pages: only the first {todo:,} were read "
                f"(page limit {limits.MAX_PDF_PAGES:,})"
            )
        texts: list[str] = []
        failed: list[int] = []
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
            try:
                text = reader.pages[i].extract_text() or ""
            except Exception as err:  # one bad page must not lose the others
                failed.append(i + 1)
                first_error = first_error or err
                text = ""
            text = normalise(text)  # a page of control characters is a page without text
            chars += len(text)
            if chars > limits.MAX_TEXT_CHARS:
                warnings.append(
                    f"reading {name!r} stopped after page {i} of {n_pages}: the text passed the "
                    f"limit of {limits.MAX_TEXT_CHARS:,} characters"
                )
                break
            texts.append(text)
    if failed and len(failed) == len(texts):
        assert first_error is not None
        raise _damaged(name, first_error)
    if failed:
        warnings.append(f"{_pages_word(failed)} could not be read and {_is_are(failed)} left empty")
    empty = [i + 1 for i, t in enumerate(texts) if not t.strip() and i + 1 not in failed]
    if len(empty) == len(texts) - len(failed):
        raise LoadError(f"{name!r} has no text layer (scanned?) — run OCR first")
    garbled = [i + 1 for i, t in enumerate(texts) if _garbled(t)]
    with_text = len(texts) - len(empty) - len(failed)
    if garbled and len(garbled) == with_text:
        raise LoadError(
            f"{name!r}'s text extracts as unreadable glyphs ((cid:NN) codes or private-use "
            "characters): its fonts have no Unicode map — run OCR first"
        )
    if garbled:
        warnings.append(
            f"{_pages_word(garbled)} of {name!r} extract{'s' if len(garbled) == 1 else ''} as unreadable "
            "glyphs (broken font encoding): chunks there will be garbage"
        )
    if empty:
        warnings.append(f"{_pages_word(empty)} {_has_have(empty)} no text (images or scans?)")
    if logs:
        first = logs[0].strip().splitlines()[0][:120] if logs[0].strip() else "?"
        warnings.append(
            f"pypdf reported {len(logs)} problem{'s' if len(logs) != 1 else ''} reading {name!r} "
            f"(first: {first}); some text may be missing"
        )
    return texts, warnings


def _garbled(text: str) -> bool:
    visible = len(text) - sum(1 for c in text if c.isspace())
    if visible <= 0:
        return False
    bad = sum(len(m) for m in _CID.findall(text)) + len(_PRIVATE_USE.findall(text))
    return bad / visible > GARBLED_SHARE


def _join_pages(pages: list[str]) -> tuple[str, tuple[Page, ...]]:
    """Join page texts with a blank line; the page map indexes the joined text."""
    parts: list[str] = []
    page_map: list[Page] = []
    pos = 0
    for number, text in enumerate(pages, start=1):
        if text and parts:
            parts.append(PAGE_SEPARATOR)
            pos += len(PAGE_SEPARATOR)
        page_map.append(Page(number, pos, pos + len(text)))
        if text:
            parts.append(text)
            pos += len(text)
    return "".join(parts), tuple(page_map)


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
