"""Load PDF, Markdown and text files into :class:`Document` objects with exact offsets.

The kind of a file comes from its first bytes, its extension second: a PDF named ``.txt``
is read as a PDF, a ZIP archive named ``.pdf`` is refused as a ZIP archive. Every failure
is a :class:`LoadError` that names the file and says what to do.

Text is decoded and normalised by :mod:`explorer.documents.decoding` (the normalisation every
offset counts on), PDF pages extracted by :mod:`explorer.documents.pdf`; each PDF page is
stripped of surrounding whitespace and pages are joined with one blank line (``\\n\\n``).
``Document.pages`` maps each page to its range of the final text (a page without text is an
empty range where it would be). ``Document.blocks`` holds a Markdown file's blocks
(:mod:`.markdown_blocks`) or a PDF's headings, read from its fonts (:mod:`.pdf_headings`).
"""

from __future__ import annotations

import os
from pathlib import Path

import regex

from explorer import limits
from explorer.documents.cleanup import Cleanup, clean_pages
from explorer.documents.decoding import decode_text, normalise_counting
from explorer.documents.document import Block, Document, Page
from explorer.documents.pdf import PdfPages, pdf_pages
from explorer.documents.pdf_headings import HeadingLine, detect, heading_blocks, opens_with_heading
from explorer.errors import LoadError
from explorer.text.markdown_parse import structure_readable
from explorer.text.wording import plural

MARKDOWN_EXTENSIONS = (".md", ".markdown", ".mdown", ".mkd")
PAGE_SEPARATOR = "\n\n"
_SURROGATE = regex.compile(r"[\ud800-\udfff]")

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
    return load_bytes(data, file_name(p), cleanup)


def file_name(path: str | Path) -> str:
    """The name a document is shown and written under: a name that is not UTF-8 on disk (Python
    keeps its bytes as lone surrogates, "caf\\udce9.txt") gets U+FFFD for them, so the JSON, CSV and
    results files that carry it are valid UTF-8 (they had held the surrogates' own bytes)."""
    name = os.path.basename(path)
    return os.fsencode(name).decode("utf-8", "replace") if _SURROGATE.search(name) else name


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
    pdf = pdf_pages(data, name) if kind == "pdf" else None
    pages, encoding, dropped = _read_pages(data, name, pdf, warnings)
    if kind != "pdf":  # (a PDF stops extracting at the limit: explorer.documents.pdf)
        _check_chars_before_cleanup(pages[0], name, cleanup)
    found = detect(pdf.texts, pdf.styles) if pdf is not None else []
    keep_title = pdf is None or opens_with_heading(pdf.texts, pdf.styles, found)
    pages, steps = clean_pages(pages, cleanup, is_pdf=kind == "pdf", keep_title=keep_title)
    if kind == "pdf":
        pages = [p.strip() for p in pages]
        text, page_map = _join_pages(pages)
    else:
        text, page_map = pages[0], ()
    if not text.strip():
        raise LoadError(f"{name!r} is empty after clean-up; switch clean-up off")
    if len(text) > limits.MAX_TEXT_CHARS:
        raise LoadError(_too_long(name, len(text)))
    if pdf is not None:
        blocks = _pdf_blocks(pdf, found, text, page_map, name, warnings)
    else:
        blocks = _blocks(kind, text, name, warnings)
    return Document(
        name=name,
        kind=kind,
        text=text,
        pages=page_map,
        blocks=blocks,
        warnings=tuple(warnings),
        cleanup=tuple(steps),
        encoding=encoding,
        changed_controls=dropped,
    )


def _too_long(name: str, chars: int) -> str:
    return (
        f"{name!r} has {chars:,} characters of text, over the limit of {limits.MAX_TEXT_CHARS:,}: "
        "split it into smaller files"
    )


#: All that clean-up can remove from a text file: blank lines, and the hyphen and line break of a
#: broken word (dropping headers and footers is for PDFs).
_CLEANUP_REMOVES = " \t\n-\u00ad\u2010"


def _check_chars_before_cleanup(text: str, name: str, cleanup: Cleanup) -> None:
    """Refuse a text over :data:`explorer.limits.MAX_TEXT_CHARS` before clean-up runs (seconds on
    a 45 MB file), unless clean-up could bring it under: it only removes the characters of
    :data:`_CLEANUP_REMOVES`, so what is left of the others is a floor."""
    n = len(text)
    if n <= limits.MAX_TEXT_CHARS:
        return
    if cleanup.any and n - sum(map(text.count, _CLEANUP_REMOVES)) <= limits.MAX_TEXT_CHARS:
        return  # decided after clean-up
    raise LoadError(_too_long(name, n))


def _read_pages(
    data: bytes, name: str, pdf: PdfPages | None, warnings: list[str]
) -> tuple[list[str], str, int]:
    """The normalised pages (one for text and Markdown; ``pdf``: a PDF's, as read), the encoding
    label ("" for a PDF) and the control characters of a text file dropped or made line ends."""
    encoding = ""
    kind = "pdf" if pdf is not None else "text"
    if pdf is not None:
        raw_pages, more = pdf.texts, pdf.warnings
    else:
        text, encoding, more = decode_text(data, name)
        raw_pages = [text]
    warnings += more
    normalised = [normalise_counting(p) for p in raw_pages]
    pages = [p for p, _, _ in normalised]
    dropped = sum(n for _, n, _ in normalised)
    changed = dropped + sum(n for _, _, n in normalised)
    if dropped > 0 and kind != "pdf":
        warnings.append(
            f"removed {plural(dropped, 'control character')} (NUL, ESC...) "
            "that break display and tokenizers"
        )
    if kind == "pdf":
        pages = [p.strip() for p in pages]
    if not any(map(_shows_anything, pages)):
        raise LoadError(
            f"{name!r} is empty (it holds only whitespace, control or invisible formatting characters)"
        )
    return pages, encoding, changed if kind != "pdf" else 0


#: A character a reader sees: not whitespace, control (Cc) or format (Cf: zero-width space and
#: joiners, byte-order mark, direction marks, soft hyphen).
_VISIBLE = regex.compile(r"[^\s\p{Cc}\p{Cf}]")


def _shows_anything(text: str) -> bool:
    """Whether ``text`` has a character a reader sees. Why: a file of only invisible ones loads as
    a page that looks blank and chunks into invisible chunks. A regex, not a loop over
    ``unicodedata.category``: 48 MB of zero-width spaces took 2.3 s that way."""
    return _VISIBLE.search(text) is not None


def _pdf_blocks(
    pdf: PdfPages, found: list[HeadingLine], text: str, page_map: tuple[Page, ...], name: str, warnings: list[str]
) -> tuple[Block, ...]:
    """A PDF's headings ``found`` from its fonts, placed in the final text (after clean-up); a
    warning when no page's fonts could be read (then none was looked for)."""
    if not any(style is not None for style, page in zip(pdf.styles, pdf.texts, strict=True) if page.strip()):
        warnings.append(f"the fonts of {name!r} could not be read: its headings are not detected")
        return ()
    return heading_blocks(pdf.texts, found, text, page_map)


def _blocks(kind: str, text: str, name: str, warnings: list[str]) -> tuple[Block, ...]:
    """A Markdown document's blocks (headings, code, tables), unless it is too long to read."""
    if kind != "markdown":
        return ()
    if not structure_readable(text):
        warnings.append(
            f"{name!r} is too long for its Markdown structure to be read ({len(text):,} characters, "
            f"limit {limits.MAX_MARKDOWN_CHARS:,}): headings, code and tables are not detected"
        )
        return ()
    from explorer.documents.markdown_blocks import markdown_blocks

    return markdown_blocks(text)


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
            raise LoadError(f"{name!r} is {what}, not {wanted}: export it as PDF or text and load it again")
    if ext == ".pdf":
        raise LoadError(f"{name!r} is not a PDF: it does not start with %PDF- (a renamed or damaged file?)")
    return ("markdown" if ext in MARKDOWN_EXTENSIONS else "text"), []


def _check_size(size: int, name: str) -> None:
    if size > limits.MAX_FILE_BYTES:
        shown = f"{size / limits.MB:,.1f} MB"
        if round(size / limits.MB, 1) <= limits.MAX_FILE_BYTES / limits.MB:  # "50.0 MB, over 50 MB"
            shown = f"{size:,} bytes"
        raise LoadError(
            f"{name!r} is {shown}, over the upload limit of "
            f"{limits.MAX_FILE_BYTES / limits.MB:,.0f} MB: split it or upload a smaller file"
        )


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
