"""Hostile input files, generated in code, with the outcome each one must have.

One reusable corpus for every layer: ``tests/test_hostile_loaders.py`` runs each case
through the loaders; other tests can run every *loadable* case through every strategy and
the CLI (``write_case(case, dir)`` puts the file on disk). Import from tests as
``from hostile_inputs import CASES``.

A case either loads (``error is None``; ``check`` asserts facts about the Document) or is
refused with a :class:`explorer.errors.LoadError` whose message contains ``error``.
Generators use fpdf2 (core Helvetica, latin-1) and pypdf, or write PDF syntax by hand where
no library makes such a file (lying page counts, broken font maps, deep nesting).
"""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from explorer import limits
from explorer.documents.document import Document

# -- PDF writers -----------------------------------------------------------------------------


def make_pdf(
    pages: Sequence[Sequence[str]],
    header: str | None = None,
    footer: str | None = None,
    font_size: float = 11,
) -> bytes:
    """A PDF with one text line per item of each page (fpdf2, Helvetica, latin-1 text).

    ``header``/``footer`` may use ``{n}`` (page number) and ``{total}``.
    """
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    pdf.set_creation_date(_FIXED_DATE)
    total = len(pages)
    for n, lines in enumerate(pages, start=1):
        pdf.add_page()
        if header is not None:
            pdf.set_font("Helvetica", size=8)
            pdf.text(20, 12, header.format(n=n, total=total))
        pdf.set_font("Helvetica", size=font_size)
        y = 25.0
        for line in lines:
            if line:
                pdf.text(20, y, line)
            y += font_size * 0.5
        if footer is not None:
            pdf.set_font("Helvetica", size=8)
            pdf.text(95, 287, footer.format(n=n, total=total))
    return bytes(pdf.output())


def _fixed_date():
    import datetime as dt

    return dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


_FIXED_DATE = _fixed_date()


def numbered_pages(n: int, lines_per_page: int = 30) -> list[list[str]]:
    """Pages whose lines say which page they are on (to check the page map)."""
    return [
        [
            f"Page{p}marker line {j}: the quick brown fox jumps over the lazy dog."
            for j in range(lines_per_page)
        ]
        for p in range(1, n + 1)
    ]


def encrypt_pdf(data: bytes, user_password: str, algorithm: str = "RC4-128") -> bytes:
    """Encrypt with pypdf. RC4 needs no extra package; AES needs ``cryptography``."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=user_password, owner_password="owner-secret", algorithm=algorithm)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def image_only_pdf(pages: int = 2) -> bytes:
    """Pages with only drawn shapes and an embedded image: what a scan looks like to pypdf."""
    from fpdf import FPDF
    from PIL import Image

    img = Image.new("L", (60, 40), color=128)
    pdf = FPDF()
    pdf.set_creation_date(_FIXED_DATE)
    for _ in range(pages):
        pdf.add_page()
        pdf.rect(20, 20, 120, 80, style="F")
        pdf.image(img, x=20, y=120, w=60)
    return bytes(pdf.output())


def zero_page_pdf() -> bytes:
    from pypdf import PdfWriter

    out = io.BytesIO()
    PdfWriter().write(out)
    return out.getvalue()


def raw_pdf(objects: Sequence[bytes], root: int = 1) -> bytes:
    """Write PDF syntax by hand: ``objects[i]`` is the body of object ``i + 1``; a correct
    cross-reference table is computed so only the content is hostile."""
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % i + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, root, xref)
    return bytes(out)


def _stream(content: bytes, compress: bool = False) -> bytes:
    if compress:
        content = zlib.compress(content, 9)
        return b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(content) + content + b"\nendstream"
    return b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream"


def _text_ops(lines: Sequence[str], font: bytes = b"/F1") -> bytes:
    ops = [b"BT", font + b" 12 Tf", b"72 720 Td", b"14 TL"]
    for line in lines:
        esc = line.encode("latin-1").replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)")
        ops.append(b"(" + esc + b") Tj T*")
    ops.append(b"ET")
    return b"\n".join(ops)


def bad_startxref_pdf() -> bytes:
    """A 3-page PDF whose ``startxref`` points 7 bytes off: pypdf recovers, with warnings."""
    import re

    data = make_pdf(numbered_pages(3))
    m = re.search(rb"startxref\s+(\d+)", data)
    assert m is not None
    return data[: m.start(1)] + b"%d" % (int(m.group(1)) + 7) + data[m.end(1) :]


def lying_page_count_pdf(claimed: int = 1_000_000_000) -> bytes:
    """One real page, but the page tree claims ``claimed`` pages (a page-count bomb)."""
    return raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count %d >>" % claimed,
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            _stream(_text_ops(["The only real page of a file that claims a billion."])),
        ]
    )


def deep_page_tree_pdf(depth: int = 5000) -> bytes:
    """A page tree nested ``depth`` levels deep (recursion bomb for naive readers)."""
    objs: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    # objects 2 .. depth+1 are /Pages nodes each holding the next; then the page, font, content
    page_id = depth + 2
    for level in range(depth):
        me = 2 + level
        kid = me + 1 if level + 1 < depth else page_id
        parent = b"" if level == 0 else b" /Parent %d 0 R" % (me - 1)
        objs.append(b"<< /Type /Pages /Kids [%d 0 R] /Count 1%s >>" % (kid, parent))
    objs.append(
        b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>"
        % (page_id - 1, page_id + 1, page_id + 2)
    )
    objs.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    objs.append(_stream(_text_ops(["Deep inside a nested page tree."])))
    return raw_pdf(objs)


def deep_array_pdf(depth: int = 100_000) -> bytes:
    """A page whose dictionary holds an array nested ``depth`` levels deep."""
    junk = b"[" * depth + b"]" * depth
    return raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Junk "
            + junk
            + b" /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            _stream(_text_ops(["Text behind a deeply nested array."])),
        ]
    )


def zip_bomb_stream_pdf(megabytes: int = 100) -> bytes:
    """A content stream that inflates to ``megabytes`` MB of spaces (a decompression bomb)."""
    return raw_pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
            _stream(_text_ops(["Bomb."]) + b"\n" + b" " * (megabytes * 2**20), compress=True),
        ]
    )


_PUA_CMAP = b"""/CIDInit /ProcSet findresource begin
12 dict begin
begincmap
/CMapName /Broken def
/CMapType 2 def
1 begincodespacerange
<00> <FF>
endcodespacerange
1 beginbfrange
<21> <7E> <E021>
endbfrange
endcmap
CMapName currentdict /CMap defineresource pop
end
end"""


def broken_font_pdf(good_pages: int = 0, broken_pages: int = 2) -> bytes:
    """Pages whose font maps every letter to a private-use code point (a font without a real
    Unicode map: what many subsetted or symbol fonts extract as), after ``good_pages`` normal ones."""
    n = good_pages + broken_pages
    first_page = 5
    kids = b" ".join(b"%d 0 R" % (first_page + 2 * i) for i in range(n))
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, n),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",  # 3: good font
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 99999 0 R >>",  # 4: patched
    ]
    for i in range(n):
        font = b"3 0 R" if i < good_pages else b"4 0 R"
        me = first_page + 2 * i
        objs.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 %s >> >> /Contents %d 0 R >>" % (font, me + 1)
        )
        objs.append(_stream(_text_ops([f"Page {i + 1}: readable words in a normal sentence here."] * 5)))
    cmap_id = len(objs) + 1
    objs.append(_stream(_PUA_CMAP))
    objs[3] = objs[3].replace(b"99999 0 R", b"%d 0 R" % cmap_id)
    return raw_pdf(objs)


_LIGATURE_CMAP = b"""/CIDInit /ProcSet findresource begin
12 dict begin
begincmap
/CMapName /Ligatures def
/CMapType 2 def
1 begincodespacerange
<00> <FF>
endcodespacerange
3 beginbfchar
<01> <FB01>
<02> <FB00>
<03> <FB02>
endbfchar
1 beginbfrange
<20> <7E> <0020>
endbfrange
endcmap
CMapName currentdict /CMap defineresource pop
end
end"""


def ligature_pdf(lines: Sequence[str]) -> bytes:
    """One page whose font draws "fi", "ff" and "fl" as ligature glyphs mapped to U+FB01, U+FB00
    and U+FB02 (what browsers' and word processors' PDFs hold): write them in ``lines`` as
    "\x01", "\x02" and "\x03"."""
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [4 0 R] /Count 1 >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 3 0 R >> >> /Contents 5 0 R >>",
        _stream(_text_ops(lines)),
        _stream(_LIGATURE_CMAP),
    ]
    return raw_pdf(objs)


def cid_text_pdf() -> bytes:
    """A PDF whose text layer literally holds "(cid:NN)" codes (what pdfminer-made OCR layers
    or converters leave when a font has no map)."""
    line = "".join(f"(cid:{n})" for n in range(10, 40))
    return make_pdf([[line] * 8, [line] * 8])


# -- text ------------------------------------------------------------------------------------

FRENCH = (
    "Le café de M. Dupont coûte 3,50 € ; « c’est cher », dit Mme Martin. "
    "L’élève naïf a lu la p. 12 du rapport."
)
MIXED_SCRIPTS = (
    "English, 中文：这是一个测试。日本語のテキスト。한국어 문장. "
    "العربية: هذا نص تجريبي. Emoji 👩‍💻🚀🇫🇷 and Ελληνικά, русский текст."
)
RTL = "שלום עולם, זה טקסט בעברית.\nمرحبا بالعالم، هذا نص عربي من اليمين إلى اليسار."
COMBINING = "e\u0301cole, n\u0303, a\u0308\u0304, Z\u0351\u0362a\u0334\u033flgo, \u0915\u094d\u0937"


def _cp1252() -> bytes:
    return "Le café – “quoted” ; naïve façade, coûte 3,50 €.\n".encode("cp1252") * 3


def _invalid_utf8() -> bytes:
    line = (FRENCH + "\n").encode("utf-8")
    return line + b"\xff\xfe" + line + b"\xc3(" + line * 2


# -- markdown --------------------------------------------------------------------------------

MD_UNCLOSED_FENCE = (
    "# Title\n\nIntro text.\n\n```python\n# not a heading\ndef f():\n    return 1\n\n## nor this\n"
)
MD_SEVEN_HASHES = "####### seven is not a heading\n\n###### six is\n\ntext\n"
MD_HEADINGS_ONLY = "# A\n## B\n### C\n#### D\n##### E\n###### F\n# G\n"
MD_SETEXT = "Main title\n==========\n\nSome text.\n\nSub title\n---------\n\nMore text.\n"
MD_HTML = (
    '<div class="x">\n<script>alert(1)</script>\n</div>\n\n# After html\n\n<img src=x onerror=alert(1)>\n'
)
MD_FRONT_MATTER = "---\ntitle: Guide\ntags: [a, b]\n---\n\n# Real heading\n\nBody.\n"


# -- cases -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One hostile input and its documented outcome."""

    id: str
    filename: str
    make: Callable[[], bytes]
    #: Fragment of the LoadError message, or None when the file must load.
    error: str | None = None
    #: Assertions on the loaded Document (raise AssertionError).
    check: Callable[[Document], None] | None = None
    #: True for cases that take seconds to generate or load.
    slow: bool = False
    #: False for huge inputs that should not stay in memory between tests.
    cache: bool = True

    def data(self) -> bytes:
        return _cached(self.id) if self.cache else self.make()


@cache
def _cached(case_id: str) -> bytes:
    return BY_ID[case_id].make()


def write_case(case: Case, directory: Path) -> Path:
    """Write the case's file into ``directory`` and return its path."""
    path = Path(directory) / case.filename
    path.write_bytes(case.data())
    return path


def _text_is(expected: str) -> Callable[[Document], None]:
    def check(doc: Document) -> None:
        assert doc.text == expected, (doc.text[:80], expected[:80])

    return check


def _all(*checks: Callable[[Document], None]) -> Callable[[Document], None]:
    def check(doc: Document) -> None:
        for c in checks:
            c(doc)

    return check


def _encoding(label: str) -> Callable[[Document], None]:
    def check(doc: Document) -> None:
        assert doc.encoding == label, doc.encoding

    return check


def _warns(fragment: str) -> Callable[[Document], None]:
    def check(doc: Document) -> None:
        assert any(fragment in w for w in doc.warnings), doc.warnings

    return check


def _kind(kind: str) -> Callable[[Document], None]:
    def check(doc: Document) -> None:
        assert doc.kind == kind, doc.kind

    return check


def _pages(n: int) -> Callable[[Document], None]:
    def check(doc: Document) -> None:
        assert doc.n_pages == n, doc.n_pages
        for p in doc.pages:
            if p.end > p.start:
                assert f"Page{p.number}marker" in doc.text[p.start : p.end]
                assert f"Page{p.number + 1}marker" not in doc.text[p.start : p.end]

    return check


def _blocks(*expected: tuple[str, int, str]) -> Callable[[Document], None]:
    """Expected (kind, level, info) of the document's blocks, in order."""

    def check(doc: Document) -> None:
        got = tuple((b.kind, b.level, b.info) for b in doc.blocks)
        assert got == expected, got

    return check


def _no_headings(doc: Document) -> None:
    assert not doc.headings, doc.headings


CASES: list[Case] = [
    # ---- PDFs
    Case(
        "pdf-encrypted-password",
        "locked.pdf",
        lambda: encrypt_pdf(make_pdf(numbered_pages(2)), "s3cret"),
        error="is encrypted with a password; remove the password and load it again",
    ),
    Case(
        "pdf-encrypted-empty-password",
        "owner-only.pdf",
        lambda: encrypt_pdf(make_pdf(numbered_pages(2)), ""),
        check=_pages(2),
    ),
    Case(
        "pdf-encrypted-empty-password-aes",
        "owner-only-aes.pdf",
        lambda: encrypt_pdf(make_pdf(numbered_pages(2)), "", algorithm="AES-256"),
        check=_pages(2),
    ),
    Case(
        "pdf-image-only",
        "scan.pdf",
        image_only_pdf,
        error="has no text layer (scanned?) — run OCR first",
    ),
    Case(
        "pdf-truncated",
        "truncated.pdf",
        lambda: make_pdf(numbered_pages(3))[:-600],
        error="is a damaged or truncated PDF",
    ),
    Case(
        "pdf-garbage-after-header",
        "garbage.pdf",
        lambda: b"%PDF-1.7\n" + bytes(range(256)) * 40,
        error="is a damaged or truncated PDF",
    ),
    Case("pdf-zero-pages", "empty.pdf", zero_page_pdf, error="is a PDF with no pages"),
    Case(
        "pdf-bad-startxref",
        "bad-xref.pdf",
        lambda: bad_startxref_pdf(),
        check=_all(_pages(3), _warns("pypdf reported")),
    ),
    Case(
        "pdf-missing-eof",
        "no-eof.pdf",
        lambda: make_pdf(numbered_pages(2)).replace(b"%%EOF", b""),
        error="is a damaged or truncated PDF",
    ),
    Case(
        "pdf-lying-page-count",
        "billion.pdf",
        lying_page_count_pdf,
        check=lambda d: _assert(d.n_pages == 1 and "only real page" in d.text, d.text),
    ),
    Case(
        "pdf-deep-page-tree",
        "deep-tree.pdf",
        deep_page_tree_pdf,
        error="is too complex for the PDF reader to read",
    ),
    Case(
        "pdf-deep-array",
        "deep-array.pdf",
        deep_array_pdf,
        error="is a damaged or truncated PDF",
    ),
    Case(
        "pdf-inflate-bomb",
        "bomb.pdf",
        zip_bomb_stream_pdf,
        error="is too complex for the PDF reader to read",
        slow=True,
    ),
    Case(
        "pdf-broken-font",
        "broken-font.pdf",
        broken_font_pdf,
        error="extracts as unreadable glyphs",
    ),
    Case(
        "pdf-broken-font-some-pages",
        "half-broken-font.pdf",
        lambda: broken_font_pdf(good_pages=2, broken_pages=1),
        check=_all(
            _warns("page 3 of 'half-broken-font.pdf' extracts as unreadable glyphs"),
            lambda d: _assert(d.n_pages == 3 and "Page 2: readable" in d.text, d.text),
        ),
    ),
    Case("pdf-cid-codes", "cid.pdf", cid_text_pdf, error="extracts as unreadable glyphs"),
    Case(
        "pdf-300-pages",
        "long.pdf",
        lambda: make_pdf(numbered_pages(300), header="Long report", footer="Page {n} of {total}"),
        check=_pages(300),
        slow=True,
    ),
    Case(
        "pdf-named-txt",
        "really-a-pdf.txt",
        lambda: make_pdf(numbered_pages(2)),
        check=_all(_kind("pdf"), _pages(2), _warns("is a PDF file despite its .txt extension")),
    ),
    Case(
        "zip-named-pdf",
        "archive.pdf",
        lambda: _zip_bytes(),
        error="is a ZIP archive (.zip, or a .docx/.xlsx/.pptx/.epub document), not a PDF",
    ),
    Case(
        "text-named-pdf",
        "notes.pdf",
        lambda: b"just some text, no PDF here\n",
        error="is not a PDF: it does not start with %PDF-",
    ),
    Case(
        "png-named-txt",
        "picture.txt",
        lambda: b"\x89PNG\r\n\x1a\n" + bytes(200),
        error="is a PNG image, not a PDF, Markdown or text file",
    ),
    Case(
        "over-upload-limit",
        "huge.txt",
        lambda: b"a" * (limits.MAX_FILE_BYTES + 1),
        error="over the upload limit",
        cache=False,
    ),
    # ---- text
    Case("text-empty", "empty.txt", lambda: b"", error="is empty"),
    Case("text-whitespace-only", "blank.txt", lambda: b" \n\t\r\n  \n", error="is empty"),
    Case("text-controls-only", "only-controls.txt", lambda: b"\x00\x01 \x02\n", error="binary"),
    Case(
        "text-invisible-only",
        "zero-width.txt",
        lambda: "\u200b\u200d\ufeff\u200e\u00ad \n".encode() * 300,
        error="is empty (it holds only whitespace, control or invisible formatting characters)",
    ),
    Case(
        "text-1mb-single-line",
        "line.txt",
        lambda: ("word" * 262_144).encode(),
        check=lambda d: _assert(len(d.text) == 1_048_576 and "\n" not in d.text, len(d.text)),
    ),
    Case(
        "text-5mb-one-char",
        "aaaa.txt",
        lambda: b"a" * (5 * 2**20),
        check=lambda d: _assert(len(d.text) == 5 * 2**20 and set(d.text) == {"a"}, len(d.text)),
        cache=False,
    ),
    Case(
        "text-nul-and-controls",
        "controls.txt",
        lambda: b"abc\x00def\x01 ghi\x1b[31mred\x1b[0m\x7f end\x0cnext\x0bline\n" + b"plain words " * 20,
        check=_all(
            lambda d: _assert(d.text.startswith("abcdef ghi[31mred[0m end\nnext\nline\n"), d.text[:60]),
            _warns("removed 5 control characters"),
        ),
    ),
    Case("text-binary-junk", "junk.txt", lambda: bytes(range(256)) * 64, error="binary"),
    Case(
        "text-random-bytes",
        "random.bin",
        lambda: __import__("random").Random(7).randbytes(4096),
        error="binary",
    ),
    Case(
        "text-invalid-utf8",
        "broken-utf8.txt",
        _invalid_utf8,
        check=_all(
            _encoding("utf-8"),
            _warns("invalid utf-8 byte sequences replaced"),
            lambda d: _assert("coûte" in d.text and d.text.count("\ufffd") == 3, d.text[:80]),
        ),
    ),
    Case(
        "text-utf16-le-bom",
        "utf16le.txt",
        lambda: b"\xff\xfe" + (FRENCH + "\n" + MIXED_SCRIPTS).encode("utf-16-le"),
        check=_all(_encoding("utf-16-le (BOM)"), _text_is(FRENCH + "\n" + MIXED_SCRIPTS)),
    ),
    Case(
        "text-utf16-be-bom",
        "utf16be.txt",
        lambda: b"\xfe\xff" + (FRENCH + "\n" + MIXED_SCRIPTS).encode("utf-16-be"),
        check=_all(_encoding("utf-16-be (BOM)"), _text_is(FRENCH + "\n" + MIXED_SCRIPTS)),
    ),
    Case(
        "text-utf16-le-no-bom",
        "utf16le-nobom.txt",
        lambda: (FRENCH + "\nplain ASCII words follow here.\n").encode("utf-16-le"),
        check=_all(_encoding("utf-16-le"), _text_is(FRENCH + "\nplain ASCII words follow here.\n")),
    ),
    Case(
        "text-utf16-be-no-bom",
        "utf16be-nobom.txt",
        lambda: (FRENCH + "\n").encode("utf-16-be"),
        check=_all(_encoding("utf-16-be"), _text_is(FRENCH + "\n")),
    ),
    Case(
        "text-utf8-bom",
        "bom.txt",
        lambda: b"\xef\xbb\xbf" + FRENCH.encode(),
        check=_all(_encoding("utf-8 (BOM)"), _text_is(FRENCH)),
    ),
    Case(
        "text-cp1252",
        "cp1252.txt",
        _cp1252,
        check=_all(
            _encoding("cp1252"),
            _text_is("Le café – “quoted” ; naïve façade, coûte 3,50 €.\n" * 3),
            _warns("decoded as cp1252"),
        ),
    ),
    Case(
        "text-cp1252-short",
        "short.txt",
        lambda: "café – “quoted”".encode("cp1252"),
        check=_all(_encoding("cp1252"), _text_is("café – “quoted”")),
    ),
    Case(
        "text-mixed-scripts",
        "mixed.txt",
        lambda: MIXED_SCRIPTS.encode(),
        check=_text_is(MIXED_SCRIPTS),
    ),
    Case("text-rtl", "rtl.txt", lambda: RTL.encode(), check=_text_is(RTL)),
    Case("text-combining", "combining.txt", lambda: COMBINING.encode(), check=_text_is(COMBINING)),
    Case(
        "text-crlf-and-cr",
        "lines.txt",
        lambda: b"one\r\ntwo\rthree\r\n\r\nfour\n\rfive",
        check=_text_is("one\ntwo\nthree\n\nfour\n\nfive"),
    ),
    Case(
        "text-html-script",
        "xss.txt",
        lambda: b'<script>alert("x")</script> <img src=x onerror=alert(1)> [a](javascript:alert(1))',
        check=_text_is('<script>alert("x")</script> <img src=x onerror=alert(1)> [a](javascript:alert(1))'),
    ),
    # ---- markdown
    Case(
        "md-unclosed-fence",
        "unclosed.md",
        lambda: MD_UNCLOSED_FENCE.encode(),
        check=_blocks(("heading", 1, "Title"), ("paragraph", 0, ""), ("code", 0, "python")),
    ),
    Case(
        "md-seven-hashes",
        "hashes.md",
        lambda: MD_SEVEN_HASHES.encode(),
        check=_blocks(("paragraph", 0, ""), ("heading", 6, "six is"), ("paragraph", 0, "")),
    ),
    Case(
        "md-headings-only",
        "headings.md",
        lambda: MD_HEADINGS_ONLY.encode(),
        check=_blocks(*[("heading", lv, t) for lv, t in zip((1, 2, 3, 4, 5, 6, 1), "ABCDEFG", strict=True)]),
    ),
    Case(
        "md-setext",
        "setext.md",
        lambda: MD_SETEXT.encode(),
        check=_blocks(
            ("heading", 1, "Main title"),
            ("paragraph", 0, ""),
            ("heading", 2, "Sub title"),
            ("paragraph", 0, ""),
        ),
    ),
    Case(
        "md-html-blocks",
        "html.md",
        lambda: MD_HTML.encode(),
        check=_blocks(("html", 0, ""), ("heading", 1, "After html"), ("html", 0, "")),
    ),
    Case(
        "md-front-matter",
        "front.md",
        lambda: MD_FRONT_MATTER.encode(),
        check=_blocks(("front_matter", 0, "yaml"), ("heading", 1, "Real heading"), ("paragraph", 0, "")),
    ),
    Case(
        "md-only-a-fence-of-hashes",
        "fence.md",
        lambda: b"```\n" + b"# no\n" * 50 + b"```\n",
        check=_all(_no_headings, _blocks(("code", 0, ""))),
    ),
    Case(
        "md-crlf",
        "crlf.md",
        lambda: b"# Title\r\n\r\nText\r\n\r\n## Sub\r\nmore\r\n",
        check=_blocks(
            ("heading", 1, "Title"), ("paragraph", 0, ""), ("heading", 2, "Sub"), ("paragraph", 0, "")
        ),
    ),
]

BY_ID = {c.id: c for c in CASES}
assert len(BY_ID) == len(CASES), "duplicate case ids"


def loadable_cases() -> list[Case]:
    """Cases that must load: feed these to every strategy."""
    return [c for c in CASES if c.error is None]


def _zip_bytes() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("word/document.xml", "<w:document>not a pdf</w:document>")
    return buf.getvalue()


def _assert(ok: bool, detail: object) -> None:
    assert ok, detail
