"""Loaders on real files: PDFs written by fpdf2 and pypdf, text in real encodings, samples."""

from __future__ import annotations

import logging
import random
import re

import pytest

from explorer import chunk_document, limits
from explorer.documents.cleanup import Cleanup
from explorer.documents.decoding import decode_text, normalise
from explorer.documents.loaders import detect_kind, load_bytes, load_path
from explorer.documents.samples import DEFAULT_SAMPLE, SAMPLES, load_sample, sample_bytes
from explorer.errors import LoadError
from tests.support.hostile_inputs import encrypt_pdf, ligature_pdf, make_pdf, numbered_pages


@pytest.fixture(scope="module")
def five_pages() -> bytes:
    return make_pdf(numbered_pages(5, lines_per_page=12), header="ACME report", footer="Page {n} of {total}")


# -- PDF page map ------------------------------------------------------------------------------


def test_pdf_page_map_is_exact(five_pages):
    doc = load_bytes(five_pages, "report.pdf")
    assert doc.kind == "pdf" and doc.n_pages == 5 and doc.encoding == ""
    assert [p.number for p in doc.pages] == [1, 2, 3, 4, 5]
    for page in doc.pages:
        body = doc.text[page.start : page.end]
        assert body.startswith("ACME report\n")
        assert body.endswith(f"Page {page.number} of 5")
        assert body.count(f"Page{page.number}marker") == 12
    # pages are joined by exactly one blank line
    for a, b in zip(doc.pages, doc.pages[1:], strict=False):
        assert doc.text[a.end : b.start] == "\n\n"


def test_every_marker_offset_maps_to_its_page(five_pages):
    doc = load_bytes(five_pages, "report.pdf")
    for m in re.finditer(r"Page(\d)marker", doc.text):
        assert doc.pages_for(m.start(), m.end()) == (int(m.group(1)),)


def test_pdf_chunks_carry_their_pages(five_pages):
    doc = load_bytes(five_pages, "report.pdf")
    chunks = chunk_document(doc, "fixed", {"chunk_size": 700, "chunk_overlap": 100})
    assert max(len(c.pages) for c in chunks) == 2  # some chunks straddle a page break
    for c in chunks:
        on_pages = {int(n) for n in re.findall(r"Page(\d)marker", c.text)}
        assert on_pages <= set(c.pages), (c.pages, on_pages)
        assert set(c.pages) <= set(range(min(c.pages), max(c.pages) + 1))


def test_empty_page_keeps_numbering():
    pages = numbered_pages(3, 4)
    pages[1] = []  # a blank page in the middle
    doc = load_bytes(make_pdf(pages), "gap.pdf")
    assert [p.number for p in doc.pages] == [1, 2, 3]
    assert doc.pages[1].start == doc.pages[1].end  # empty range
    assert any("page 2 has no text" in w for w in doc.warnings), doc.warnings
    third = doc.text.index("Page3marker")
    assert doc.pages_for(third, third + 5) == (3,)


# -- PDF failure modes -------------------------------------------------------------------------


def test_encrypted_with_user_password_is_refused():
    data = encrypt_pdf(make_pdf(numbered_pages(1)), "s3cret")
    with pytest.raises(
        LoadError, match=re.escape("'a.pdf' is encrypted with a password; remove the password")
    ):
        load_bytes(data, "a.pdf")


@pytest.mark.parametrize("algorithm", ["RC4-128", "AES-128", "AES-256"])
def test_encrypted_with_empty_user_password_loads(algorithm):
    data = encrypt_pdf(make_pdf(numbered_pages(2, 3)), "", algorithm=algorithm)
    doc = load_bytes(data, "owner-only.pdf")
    assert doc.n_pages == 2 and "Page2marker line 2" in doc.text


def test_page_budget(monkeypatch, five_pages):
    monkeypatch.setattr(limits, "MAX_PDF_PAGES", 3)
    doc = load_bytes(five_pages, "long.pdf")
    assert doc.n_pages == 3 and "Page4marker" not in doc.text
    assert any("only the first 3 were read" in w for w in doc.warnings), doc.warnings


def test_time_budget(monkeypatch, five_pages):
    monkeypatch.setattr(limits, "PDF_TIME_BUDGET_S", 0.0)
    doc = load_bytes(five_pages, "slow.pdf")
    assert doc.n_pages == 1  # the first page is always read
    assert any("stopped after page 1 of 5" in w and "time budget" in w for w in doc.warnings), doc.warnings


def test_pdf_text_limit_stops_with_warning(monkeypatch, five_pages):
    monkeypatch.setattr(limits, "MAX_TEXT_CHARS", 2_000)
    doc = load_bytes(five_pages, "big.pdf")
    assert 1 <= doc.n_pages < 5
    assert any("limit of 2,000 characters" in w for w in doc.warnings)


def test_text_over_char_limit_is_refused(monkeypatch):
    monkeypatch.setattr(limits, "MAX_TEXT_CHARS", 100)
    with pytest.raises(
        LoadError, match=re.escape("'t.txt' has 101 characters of text, over the limit of 100")
    ):
        load_bytes(b"x" * 101, "t.txt")


def test_markdown_structure_limit(monkeypatch):
    monkeypatch.setattr(limits, "MAX_MARKDOWN_CHARS", 10)
    doc = load_bytes(b"# Title\n\nsome text\n", "big.md")
    assert doc.kind == "markdown" and doc.blocks == ()
    assert "too long for its Markdown structure to be read (19 characters, limit 10)" in doc.warnings[0]


def test_file_size_limit(monkeypatch, tmp_path):
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", 1000)
    with pytest.raises(LoadError, match="over the upload limit"):
        load_bytes(b"a" * 1001, "a.txt")
    path = tmp_path / "big.txt"
    path.write_bytes(b"a" * 1001)
    with pytest.raises(LoadError, match=re.escape("'big.txt' is 1,001 bytes, over the upload limit")):
        load_path(path)
    # a size that rounds to the limit is said in bytes: "50.0 MB, over the upload limit of 50 MB" read
    # as a contradiction; a size clearly over it stays in MB
    monkeypatch.setattr(limits, "MAX_FILE_BYTES", 2 * limits.MB)
    with pytest.raises(LoadError, match=re.escape("is 2,000,001 bytes, over the upload limit of 2 MB")):
        load_bytes(b"a" * (2 * limits.MB + 1), "a.txt")
    with pytest.raises(LoadError, match=re.escape("is 2.2 MB, over the upload limit of 2 MB")):
        load_bytes(b"a" * (22 * limits.MB // 10), "a.txt")


_LOAD_DAMAGED = """
import logging, re, sys
sys.path.insert(0, ".")
from tests.support.hostile_inputs import bad_startxref_pdf
from explorer.documents.loaders import load_bytes
if sys.argv[1] == "configured":
    logging.basicConfig(level=logging.DEBUG)
doc = load_bytes(bad_startxref_pdf(), "x.pdf")
assert doc.n_pages == 3, doc.n_pages
print(doc.warnings[-1])
"""


@pytest.mark.parametrize("logging_setup", ["bare", "configured"])
def test_pypdf_log_messages_become_one_warning(logging_setup):
    """pypdf's log lines never reach the console (bare Python, or with logging set up):
    they are summarised in one Document warning instead."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", _LOAD_DAMAGED, logging_setup],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("pypdf reported 2 problems reading 'x.pdf' (first: incorrect startxref")
    assert "pypdf" not in out.stderr, out.stderr


def test_pypdf_outside_a_load_still_logs(caplog):
    """Our log handler only captures during a load; pypdf used elsewhere behaves normally."""
    load_bytes(make_pdf(numbered_pages(1, 2)), "warm.pdf")  # installs the handler
    with caplog.at_level(logging.WARNING):
        logging.getLogger("pypdf._reader").warning("outside message")
    assert any("outside message" in r.getMessage() for r in caplog.records)


# -- kind detection ------------------------------------------------------------------------------


def test_kind_by_magic_then_extension(five_pages):
    assert detect_kind(five_pages, "x.txt")[0] == "pdf"
    assert detect_kind(b"# Title\n", "x.md")[0] == "markdown"
    assert detect_kind(b"# Title\n", "x.MARKDOWN")[0] == "markdown"
    assert detect_kind(b"# Title\n", "x.txt")[0] == "text"
    assert detect_kind(b"plain", "noext")[0] == "text"
    # a Markdown file that *mentions* %PDF- is not a PDF
    assert detect_kind(b"Files start with `%PDF-1.7`.\n", "notes.md")[0] == "markdown"


def test_docx_is_named():
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("word/document.xml", "<w/>")
    with pytest.raises(LoadError, match=r"'cv.docx' is a ZIP archive .* not a PDF, Markdown or text file"):
        load_bytes(buf.getvalue(), "cv.docx")


def test_load_path_errors(tmp_path):
    with pytest.raises(LoadError, match=r"cannot read .*missing\.txt"):
        load_path(tmp_path / "missing.txt")
    with pytest.raises(LoadError, match="is not a file"):
        load_path(tmp_path)


def test_load_path_reads_like_bytes(tmp_path, five_pages):
    path = tmp_path / "r.pdf"
    path.write_bytes(five_pages)
    assert load_path(path) == load_bytes(five_pages, "r.pdf")


def test_pdf_ligature_glyphs_are_read_as_their_letters():
    """Browsers and word processors draw "fi", "ff", "fl" as one glyph (U+FB01...): read as one
    character, "ﬁchier" was not the word "fichier" to BM25, to a reader, or to MiniLM ([UNK])."""
    data = ligature_pdf(["Le \x01chier a\x02ecte l'in\x03uence du \x01ltre.", "Un autre \x01chier."])
    doc = load_bytes(data, "ligatures.pdf")
    assert doc.text == "Le fichier affecte l'influence du filtre.\nUn autre fichier."
    assert [(p.start, p.end) for p in doc.pages] == [(0, len(doc.text))]
    from explorer.retrieval.lexical import LexicalIndex

    assert LexicalIndex([doc.text]).scores("fichier")[0] > 0


# -- text decoding -------------------------------------------------------------------------------


def test_cp1252_french_is_not_read_as_cp1250():
    """charset-normalizer ranks cp1250 first here; we must not turn û/ï/è into ű/ď/č."""
    text = "L’élève naïf coûte 3,50 € à la fenêtre, dit-il « très » sûr.\n" * 3
    decoded, encoding, warnings = decode_text(text.encode("cp1252"), "f.txt")
    assert (decoded, encoding) == (text, "cp1252")
    assert "save it as UTF-8" in warnings[0]


#: ASCII words of a French manual page, and French words with accents.
_ASCII_WORDS = (
    "le la les un une des de du pour avec sans dans sur sous option fichier commande ligne texte "
    "motif recherche sortie entree valeur nombre mode liste affiche lance utilise grep -i -v -c "
    "--color --count --regexp PATTERN FILE expression reguliere si alors sinon chaque fois"
)
_ACCENTED = "été créé déjà très où à fenêtre coûte naïf élève garçon leçon première côté deuxième système"


def _few_accents(seed: int, words: int, accents: int) -> str:
    rnd = random.Random(seed)
    plain, accented = _ASCII_WORDS.split(), _ACCENTED.split()
    out = [rnd.choice(plain) for _ in range(words)]
    for _ in range(accents):
        out.insert(rnd.randrange(len(out)), rnd.choice(accented))
    return " ".join(out) + "\n"


@pytest.mark.parametrize("codec", ["latin-1", "cp1252"])
def test_french_with_few_accents_is_read_as_cp1252(codec):
    """Few accents among many ASCII words: charset-normalizer ranked cp1257, mac-latin2 or even
    Big5 first (7 of these 160 texts read wrongly before)."""
    wrong = []
    for seed in range(40):
        for words, accents in ((100, 1), (300, 3), (1000, 10), (300, 20)):
            text = _few_accents(seed, words, accents)
            decoded, encoding, _ = decode_text(text.encode(codec), "f.txt")
            if decoded != text:
                wrong.append((seed, words, accents, encoding))
    assert not wrong


def test_latin1_text_the_detector_finds_too_chaotic_still_loads():
    """A French tutorial in Latin-1 with rules of "~": charset-normalizer finds every reading
    too chaotic (it was refused as "not text"); its least chaotic reading reads as text."""
    lesson = (
        "=" * 78 + "\n=    B i e n v e n u e   dans le   T u t o r i e l   -   Version 1.7  =\n"
        + "=" * 78 + "\n\n     Vim est un éditeur très puissant qui a trop de commandes pour pouvoir\n"
        "     toutes les expliquer dans un cours comme celui-ci, qui est conçu pour en\n"
        "     décrire suffisamment afin de vous permettre d'utiliser simplement Vim.\n\n"
        + "~" * 78 + "\n                     Leçon 1.1 : DÉPLACEMENT DU CURSEUR\n" + "~" * 78 + "\n\n"
        "  ** Pour déplacer le curseur, appuyez les touches h, j, k, l comme indiqué. **\n"
        "             ^\n             k              Astuce : La touche h est à gauche.\n"
        "       < h       l >               La touche l est à droite et déplace à droite.\n"
        "             j                     La touche j ressemble à une flèche vers le bas.\n"
    )
    text = lesson * 11 + "~" * 78 + "\n"
    decoded, encoding, warnings = decode_text(text.encode("latin-1"), "tutor.fr")
    assert (decoded, encoding) == (text, "cp1252") and "save it as UTF-8" in warnings[0]


def test_turkish_latin5_is_not_read_as_cp1252():
    """ğ ı ş read as cp1252 are ð ý þ: Icelandic letters, not Western European enough."""
    text = (
        "Bu ders, düzenleyiciyi kullanmayı öğrenmek için yeterli komutları anlatır. İmleci "
        "hareket ettirmek için h, j, k ve l tuşlarına basın. Şimdi bir sonraki derse geçin; "
        "değişiklikleri kaydetmek için :w yazın ve Enter tuşuna basın. "
    ) * 3
    decoded, encoding, _ = decode_text(text.encode("iso8859-9"), "tr.txt")
    assert decoded == text and encoding == "cp1254"


@pytest.mark.parametrize(
    ("text", "codec"),
    [
        ("Привет, как дела? Это тестовый текст на русском языке, без латиницы.", "cp1251"),
        ("Zażółć gęślą jaźń, to jest polski tekst z ogonkami.", "cp1250"),
    ],
)
def test_other_legacy_encodings_are_not_forced_to_cp1252(text, codec):
    decoded, encoding, _ = decode_text(text.encode(codec), "t.txt")
    assert decoded == text and encoding == codec


@pytest.mark.parametrize(
    ("text", "codec", "label"),
    [
        ("ファイルのサイズが許容値を超えています。設定を確認してください。", "iso2022_jp", "iso-2022-jp"),
        ("파일 크기가 허용된 값을 초과합니다. 설정을 확인하십시오.", "iso2022_kr", "iso-2022-kr"),
    ],
    ids=["japanese", "korean"],
)
def test_seven_bit_iso_2022_text_is_read_by_its_escape_sequences(text, codec, label):
    """ISO-2022 bytes are all ASCII: UTF-8 had read them as escape codes and Latin letters."""
    decoded, encoding, warnings = decode_text(text.encode(codec), "mail.txt")
    assert (decoded, encoding) == (text, label) and label in warnings[0]


def test_an_ascii_file_with_a_stray_escape_dollar_stays_utf8():
    data = b"prompt \x1b$ not a charset switch\n" * 3
    assert decode_text(data, "log.txt")[1] == "utf-8"


def test_a_dos_french_text_is_read_as_cp850():
    """A DOS editor's French (cp850) was read as cp1252: "systŠme", "dÇfaut"."""
    text = ("Le système de fichiers est monté en lecture seule. Vérifiez les paramètres ; où trouver "
            "les journaux ? À côté des fichiers générés par défaut, déjà créés.")
    decoded, encoding, _ = decode_text(text.encode("cp850"), "dos.txt")
    assert decoded == text and encoding == "cp850"


def test_legacy_bytes_after_a_long_ascii_head():
    """Detection looks where the non-ASCII bytes are, not at an ASCII-only head."""
    data = b"plain ascii words. " * 40_000 + "L’élève naïf coûte 3,50 €.".encode("cp1252")
    decoded, encoding, _ = decode_text(data, "late.txt")
    assert encoding == "cp1252" and decoded.endswith("L’élève naïf coûte 3,50 €.")


def test_mostly_utf8_with_a_bad_byte_late():
    data = "é".encode() * 10 + b"x" * 600_000 + b"\xff" + "à".encode() * 5
    decoded, encoding, warnings = decode_text(data, "u.txt")
    assert encoding == "utf-8" and decoded.endswith("\ufffdààààà") and "1 invalid utf-8" in warnings[0]


def test_utf16_without_bom_cjk():
    text = "这是一个测试。我们的文本很好，没有字节顺序标记。"
    decoded, encoding, _ = decode_text(text.encode("utf-16-le"), "t.txt")
    assert decoded == text and encoding == "utf-16-le"


def test_utf32_bom():
    decoded, encoding, _ = decode_text("hé 😀".encode("utf-32"), "t.txt")
    assert decoded == "hé 😀" and encoding.startswith("utf-32")


def test_normalise_line_ends_and_controls():
    assert normalise("a\r\nb\rc\n\rd") == "a\nb\nc\n\nd"
    assert normalise("page\fnext\vline\x85end") == "page\nnext\nline\nend"
    assert normalise("a\x00b\x01c\x1bd\x7fe\x9ff\tg") == "abcdef\tg"
    keep = "é\u0301 中文 عربي 😀 \u200b \u2028 \ufeff"
    assert normalise(keep) == keep


def test_text_doc_keeps_surrounding_whitespace_and_has_no_blocks():
    doc = load_bytes(b"\n  Hello world.  \n", "t.txt")
    assert doc.text == "\n  Hello world.  \n" and doc.blocks == () and doc.pages == ()
    assert doc.kind == "text" and doc.encoding == "utf-8"


def test_markdown_doc_has_blocks():
    doc = load_bytes(b"# T\n\n```\n# code\n```\n", "a.md")
    assert [(b.kind, b.info) for b in doc.blocks] == [("heading", "T"), ("code", "")]


def test_same_text_same_id():
    a = load_bytes(b"same text\r\n", "a.txt")
    b = load_bytes("same text\n".encode("utf-16"), "b.txt")
    assert a.id == b.id and a.name != b.name


# -- samples -------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(SAMPLES))
def test_samples_load_small_and_clean(name):
    filename, data = sample_bytes(name)
    assert len(data) < 60_000
    doc = load_sample(name)
    assert doc.name == filename and doc.warnings == ()
    assert load_sample(filename).id == doc.id


def test_sample_pdf_has_six_pages_headers_and_hyphens():
    doc = load_sample(DEFAULT_SAMPLE)
    assert doc.kind == "pdf" and doc.n_pages == 6
    assert doc.text.count("Harbor Valley Water Authority - Plant Operations Handbook") == 6
    assert len(re.findall(r"[a-z]-\n[a-z]", doc.text)) >= 5
    clean = load_sample(DEFAULT_SAMPLE, Cleanup(join_hyphenated=True, drop_headers_footers=True))
    # the running header goes from the first page too: set small, it is no title there either
    assert clean.text.startswith("Plant Operations Handbook\nThis handbook describes")
    assert "Plant Operations Handbook (rev. 7)" not in clean.text
    assert "Internal use only" not in clean.text
    assert "superintendent" in clean.text and not re.search(r"[a-z]-\n[a-z]", clean.text)
    assert clean.cleanup[0].startswith("drop_headers_footers: removed 12 ")


def test_sample_markdown_structure():
    doc = load_sample("guide.md")
    kinds = [b.kind for b in doc.blocks]
    assert kinds[0] == "front_matter" and kinds.count("table") == 2 and "list" in kinds
    assert {h.level for h in doc.headings} == {1, 2, 3}
    fence = next(b for b in doc.blocks if b.kind == "code" and b.info == "toml")
    assert "# not a heading" in doc.text[fence.start : fence.end]
    assert all("not a heading" not in h.info for h in doc.headings)


def test_sample_report_is_french_prose():
    doc = load_sample("rapport_annuel.txt")
    assert doc.kind == "text" and doc.encoding == "utf-8"
    for tricky in ("M. Dupont", "Mme Martin", "p. 12", "3,5 %", "« ", "e.g.", "Dr. ", "U.S."):
        assert tricky in doc.text, tricky


def test_unknown_sample():
    with pytest.raises(LoadError, match="unknown sample 'nope'"):
        load_sample("nope")


def test_committed_pdf_matches_generator():
    """The committed sample is what make_pdf.py builds (regenerate it after editing the text)."""
    pytest.importorskip("fpdf")
    from explorer.documents.samples.make_pdf import build

    fresh = load_bytes(build(), "handbook.pdf")
    assert fresh.text == load_sample(DEFAULT_SAMPLE).text


def test_a_file_mixing_utf8_and_latin1_reads_each_part_in_its_own_encoding():
    """Ten UTF-8 lines then ten Latin-1 lines (two files joined) were read as cp1250 throughout,
    the valid UTF-8 turned to mojibake: each part is read in its own encoding, and said."""
    from explorer.export.readers import python_codec

    line = "Le café coûte 3,50 € à Noël.\n"
    doc = load_bytes(line.encode("utf-8") * 10 + line.encode("cp1252") * 10, "joined.txt")
    assert doc.text.strip() == (line * 20).strip()
    assert doc.encoding == "utf-8 + cp1252"
    assert any("mixes UTF-8 with another encoding: 50 byte sequences" in w for w in doc.warnings)
    assert python_codec(doc.encoding) == "utf-8-sig"  # no one codec: the snippets read UTF-8
    latin = load_bytes(line.encode("cp1252") * 20, "latin.txt")  # one encoding: detected as before
    assert latin.text.strip() == (line * 20).strip() and "+" not in latin.encoding


LEGACY_TEXTS = {
    "pl": "Zażółć gęślą jaźń. Ten plik zawiera opcje, które można zmienić. Wszystkie ścieżki są "
    "względne, a użytkownik może je również ustawić w pliku. Jeśli wartość nie jest podana, "
    "używana jest domyślna; każdy wpis zostanie sprawdzony.",
    "cs": "Příliš žluťoučký kůň úpěl ďábelské ódy. Tento soubor obsahuje nastavení, která může "
    "uživatel změnit. Výchozí hodnota je uvedena v příkazu níže; pokud není zadána, použije se "
    "již existující řádek.",
    "hu": "Árvíztűrő tükörfúrógép. A következő beállítások módosíthatók; az első érték előtt a "
    "felhasználó megadhatja a könyvtárat, amelyből a fájlok betöltődnek. Különböző lehetőségek "
    "közül választhat, és ő dönti el.",
    "ro": "Această opțiune specifică fișierul în care se scrie; dacă nu este dată, se folosește "
    "valoarea implicită. Și după ce comanda se termină, fișierele rămân până la sfârșit.",
    "fr": "Le système crée un répertoire où les données déjà écrites sont conservées ; même après "
    "l'arrêt, l'élément reste là. Ça marche très bien, à côté de la première règle.",
    "de": "Für die Größe des Schlüssels müssen Sie während der Änderung außerdem zurück. "
    "Natürlich können Einträge größer sein; schließlich heißt es: möglich.",
    "pt": "Não é possível alterar a opção padrão, então você até pode usar a configuração após a "
    "instalação; são informações úteis.",
}


@pytest.mark.parametrize(
    ("lang", "codec"),
    [("pl", "iso8859_2"), ("pl", "cp1250"), ("cs", "iso8859_2"), ("cs", "cp1250"), ("hu", "iso8859_2"),
     ("hu", "cp1250"), ("ro", "iso8859_16"), ("fr", "cp1252"), ("fr", "latin-1"), ("de", "latin-1"),
     ("pt", "cp1252")],
)
def test_a_legacy_code_page_is_read_by_the_words_and_letters_it_spells(lang, codec):
    """Central European files were read in the wrong Latin code page (Polish ISO-8859-2 as
    ISO-8859-10 "poniŋszych", Czech as cp1250 "ľe" for "že", Hungarian as cp1252 "elsõ"): among
    the Latin code pages, the reading that spells common words and keeps to one alphabet wins;
    Western text stays as it was read."""
    text = LEGACY_TEXTS[lang]
    got, label, _ = decode_text(text.encode(codec), f"{lang}.txt")
    assert got == normalise(text), (label, got[:80])
