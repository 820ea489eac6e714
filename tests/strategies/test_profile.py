"""Document profile: counts, structure, script and language, hybrid's choice (real tokenizer)."""

from __future__ import annotations

import pytest

from explorer.documents.document import Document
from explorer.documents.loaders import load_bytes
from explorer.documents.samples import load_sample
from explorer.strategies.hybrid import route
from explorer.strategies.profile import DocProfile, profile
from explorer.text.length import get_length
from explorer.text.measures import dominant_script, guess_language, line_stats, sample, word_pieces


def test_profile_of_the_markdown_sample():
    doc = load_sample("guide.md")
    p = profile(doc)
    assert isinstance(p, DocProfile)
    assert (p.name, p.kind, p.chars, p.pages) == ("guide.md", "markdown", len(doc.text), 0)
    assert p.words == len(doc.text.split())
    assert p.n_headings == 16 and p.max_heading_depth == 3 and p.structure_read
    assert p.n_code_blocks == 4 and p.n_tables == 2
    assert p.n_list_items == 15  # 3 (+2 nested) + 4 numbered + 3 + 3, at any depth
    assert (p.script, p.language, p.encoding) == ("Latin", "en", "utf-8")
    assert p.hybrid_choice == "markdown"
    assert p.hybrid_reason.startswith("routes each top-level section on its own: markdown for 5 sections")
    assert tuple(route(doc)) == p.routes


def test_profile_of_the_french_report():
    p = profile(load_sample("rapport_annuel.txt"))
    assert (p.kind, p.script, p.language) == ("text", "Latin", "fr")
    assert p.n_headings == 0 and p.n_code_blocks == 0 and p.n_list_items == 0 and not p.structure_read
    assert p.hybrid_choice == "recursive" and "paragraph" in p.hybrid_reason


def test_profile_of_the_pdf_sample():
    """A PDF's headings are read from its fonts, its code blocks and tables are not; hybrid
    routes each of its sections."""
    p = profile(load_sample("handbook.pdf"))
    assert (p.kind, p.pages, p.language, p.structure_read, p.headings_read) == ("pdf", 6, "en", False, True)
    assert (p.n_headings, p.max_heading_depth, p.n_code_blocks, p.n_tables) == (13, 2, 0, 0)
    assert p.hybrid_choice == "markdown + recursive"
    assert p.hybrid_reason.startswith("routes each top-level section on its own: markdown for 11 sections")
    assert 40 < p.mean_line_length < 100


NUMBERED = (
    "1. Introduction\n\nThe plant treats water for the valley.\n\n"
    "2.3 Scope\n\nIt covers the pumps and the filters.\n\n"
    "Chapter 2: Configuring\n\nSet the valves before the pumps start.\n"
)


@pytest.mark.parametrize("strategy", ["recursive", "hybrid", "markdown"])
def test_numbered_lines_of_plain_text_are_not_headings_anywhere(strategy):
    """The Documents page said "Headings 0" for such a text: no heading is read from plain text, so
    the profile says none was read (the page shows "—") and no chunk carries a heading path."""
    from explorer import chunk_document

    doc = load_bytes(NUMBERED.encode(), "numbered.txt")
    p = profile(doc)
    assert doc.headings == () and p.n_headings == 0 and p.structure_read is p.headings_read is False
    chunks = chunk_document(doc, strategy, {"chunk_size": 60, "chunk_overlap": 0})
    assert len(chunks) > 1 and all(c.headings == () for c in chunks)
    md = load_bytes(NUMBERED.replace("1. Intro", "# 1. Intro").encode(), "numbered.md")
    assert profile(md).structure_read is True and profile(md).n_headings == 1


def test_markdown_too_long_for_its_structure_reads_none(monkeypatch):
    from explorer import limits

    monkeypatch.setattr(limits, "MAX_MARKDOWN_CHARS", 50)
    doc = load_bytes(b"# Title\n\n" + b"Some text. " * 10, "long.md")
    assert doc.headings == () and any("too long for its Markdown structure" in w for w in doc.warnings)
    p = profile(doc)
    assert p.structure_read is p.headings_read is False


def test_tokens_match_the_model_tokenizer():
    text = "Chunking splits documents; the embedding model sees word pieces. " * 40
    length = get_length("tokens")
    assert word_pieces(text) == length(text) - length.special
    doc = Document("t.txt", "text", text)
    assert profile(doc).tokens == word_pieces(text)


@pytest.mark.parametrize("model", ["all-MiniLM-L6-v2", "multilingual-e5-small"])
def test_tokens_of_a_long_text_are_counted_in_pieces_exactly(model):
    para = "Word pieces are counted in batches cut at whitespace, so the sum stays exact. "
    text = para * 2_000  # ~160 KB: several 50 KB pieces
    length = get_length("tokens", model)
    assert word_pieces(text, model) == length(text) - length.special  # the whole text at once
    assert word_pieces("", model) == 0


@pytest.mark.parametrize(
    ("text", "script", "language"),
    [
        ("这是一个中文句子。我们在测试脚本检测。", "CJK", "zh"),
        ("これは日本語の文章です。ひらがなとカタカナ。", "CJK", "ja"),
        ("이것은 한국어 문장입니다. 테스트 중입니다.", "CJK", "ko"),
        ("هذا نص عربي طويل بما فيه الكفاية للاختبار.", "Arabic", "ar"),
        ("Это русский текст для проверки письма.", "Cyrillic", "ru"),
        ("Αυτό είναι ελληνικό κείμενο.", "Greek", "el"),
        ("זה טקסט בעברית לבדיקה.", "Hebrew", "he"),
        ("The report was written by the team and it is now with the board.", "Latin", "en"),
        ("Le rapport a été écrit par l'équipe et il est dans les mains du conseil.", "Latin", "fr"),
        ("Der Bericht wurde von dem Team geschrieben und ist nicht fertig.", "Latin", "de"),
        ("El informe fue escrito por el equipo y está con los directores.", "Latin", "es"),
        ("Il rapporto è stato scritto dalla squadra e non è ancora nella sua forma finale.", "Latin", "it"),
        ("O relatório foi escrito pela equipe e não está com os diretores.", "Latin", "pt"),
        ("Het rapport is door het team geschreven en is nog niet klaar.", "Latin", "nl"),
        ("Lorem ipsum dolor sit amet, consectetur adipiscing elit.", "Latin", "other"),
        ("12345 67890 !!! ???", "none", "other"),
    ],
)
def test_script_and_language(text, script, language):
    assert dominant_script(text)[0] == script
    assert guess_language(text) == language


#: Spanish prose among English option lines, as in Debian's Spanish apt_preferences(5): 7 % of
#: its words are Spanish function words, 3 % English or Portuguese ones.
SPANISH_MANUAL = """Las preferencias de APT permiten elegir qué versión de un paquete se instala cuando hay varias.
Package: perl
Pin: version 5.10*
Pin-Priority: 1001

Package: *
Pin: origin ""
Pin-Priority: 999

Explanation: Uninstall or do not install any Debian-originated package versions
Package: *
Pin: release a=unstable
Pin-Priority: 50

APT asigna una prioridad de 100 a los paquetes instalados, y de 500 a los paquetes de la versión objetivo.
Package: gnome* kde*
Pin: release n=experimental
Pin-Priority: 500
"""


@pytest.mark.parametrize(
    "text",
    [
        SPANISH_MANUAL,
        "The report was written by the team and it is now with the board.",
        "Der Bericht wurde von dem Team geschrieben und ist nicht fertig.",
        "Het rapport is door het team geschreven en is nog niet klaar.",
        "Lorem ipsum dolor sit amet, consectetur adipiscing elit.",
        "Это русский текст для проверки письма, o.",
        "Το πρόγραμμα συμπιέζει τα αρχεία γρήγορα.",
        "یہ پروگرام فائلوں کو تیزی سے کمپریس کرتا ہے۔",
        "Program jest szybki i kompresuje pliki na dysku, że tak powiem.",
        "これは日本語の文章です。",
    ],
)
def test_the_profile_names_the_language_bm25_stems_a_text_in(text):
    """One rule for both: a Spanish manual page was "Latin · other" on Documents (an 8 % floor)
    while BM25 stemmed it as Spanish (2 %)."""
    from explorer.retrieval.lexical import STEMMERS, language_of, tokenize

    code = guess_language(text)
    assert language_of([tokenize(text, stop_words=())]) == STEMMERS.get(code, "english")
    if text is SPANISH_MANUAL:
        assert code == "es"


def test_mixed_script_share():
    script, share = dominant_script("abcd" + "中文中文中文")
    assert script == "CJK" and share == pytest.approx(0.6)


def test_line_stats():
    assert line_stats("") == (0.0, 0.0)
    mean, short = line_stats("a" * 80 + "\n\n" + "b" * 10 + "\n   \n" + "c" * 30)
    assert mean == pytest.approx(40.0) and short == pytest.approx(2 / 3)


def test_sample_windows():
    text = "".join(chr(65 + i % 26) for i in range(1_000_000))
    s = sample(text, budget=10_000, windows=10)
    assert len(s) == 10_000 + 9  # ten 1,000-char windows joined by newlines
    assert s.startswith(text[:1000]) and s.endswith(text[-1000:])
    assert sample("short") == "short"


def test_profile_of_cjk_text_routes_to_cjk_recursive():
    doc = load_bytes(("这是第一句。这是第二句！这是第三句？" * 50).encode(), "zh.txt")
    p = profile(doc)
    assert (p.script, p.language, p.hybrid_choice) == ("CJK", "zh", "recursive")
    assert "。！？" in p.hybrid_reason
