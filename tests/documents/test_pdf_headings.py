"""A PDF's headings, read from its fonts: titles, levels and exact spans in the final text."""

from __future__ import annotations

from pathlib import Path

import pytest

from explorer.documents.cleanup import Cleanup
from explorer.documents.document import Document
from explorer.documents.loaders import load_bytes, load_path
from explorer.documents.pdf_headings import StyleReader
from explorer.documents.samples import load_sample
from tests.support.hostile_inputs import make_pdf
from tests.support.styled_pdf import BODY, CHAPTER, PROSE, REPORT, SECTION, styled_pdf

pytest.importorskip("fpdf")

ALL_CLEANUP = Cleanup(collapse_blank_lines=True, join_hyphenated=True, drop_headers_footers=True)
EXPECTED = [
    (1, "Rapport d'exploitation 2024", 1),
    (2, "1. Présentation générale", 1),
    (3, "1.1 Périmètre du service", 1),
    (3, "1.2 Organisation des équipes", 1),
    (2, "2. Sécurité des installations et procédures d'arrêt d'urgence", 1),
    (3, "2.1 Contrôles quotidiens", 2),
    (4, "2.1.1 Relevés des capteurs", 2),
    (4, "2.1.2 Journal des alarmes", 2),
    (2, "3. Maintenance préventive", 2),
    (3, "3.1 Calendrier des interventions", 3),
]


def report(header: tuple[str, float, str] | None = ("Rapport d'exploitation 2024 - usage interne", 8, "")):
    return styled_pdf(REPORT, header=header, footer="Page {n}")


def check_spans(doc: Document) -> None:
    """Every heading is its title in the final text, inside one page, in order and apart."""
    prev_end = -1
    for h in doc.headings:
        assert h.kind == "heading" and 1 <= h.level <= 6 and prev_end <= h.start < h.end
        span = doc.text[h.start : h.end]
        assert span == span.strip() and " ".join(span.split()) == h.info
        assert "\n" not in span or span.count("\n") == 1  # a title wrapped over two lines at most
        (page,) = doc.pages_for(h.start, h.end)
        assert doc.pages[page - 1].start <= h.start and h.end <= doc.pages[page - 1].end
        prev_end = h.end


def found(doc: Document) -> list[tuple[int, str, int]]:
    return [(h.level, h.info, doc.pages_for(h.start, h.end)[0]) for h in doc.headings]


def test_headings_at_several_sizes_bold_or_not_with_titles_levels_and_pages():
    doc = load_bytes(report(), "rapport.pdf")
    assert found(doc) == EXPECTED
    check_spans(doc)
    single = doc.headings[1]
    assert doc.text[single.start : single.end] == "1. Présentation générale"
    wrapped = doc.headings[4]  # one title over two lines: one heading, its span both lines
    assert doc.text[wrapped.start : wrapped.end] == "2. Sécurité des installations et\nprocédures d'arrêt d'urgence"
    assert "Remarque importante" not in [h.info for h in doc.headings]


def test_heading_paths_follow_the_headings_across_pages():
    doc = load_bytes(report(), "rapport.pdf")
    bottom = doc.headings[8]  # "3. Maintenance préventive", last line of page 2
    assert doc.text[bottom.end :].lstrip().startswith("Page 2")
    on_page_3 = doc.pages[2].start + doc.text[doc.pages[2].start :].index("Le service")
    assert doc.heading_path(on_page_3) == ("Rapport d'exploitation 2024", "3. Maintenance préventive")
    sensors = doc.text.index("2.1.1 Relevés")
    assert doc.heading_path(sensors + 40) == (
        "Rapport d'exploitation 2024",
        "2. Sécurité des installations et procédures d'arrêt d'urgence",
        "2.1 Contrôles quotidiens",
        "2.1.1 Relevés des capteurs",
    )


@pytest.mark.parametrize(
    "cleanup",
    [
        ALL_CLEANUP,
        Cleanup(drop_headers_footers=True),
        Cleanup(join_hyphenated=True),
        Cleanup(collapse_blank_lines=True),
    ],
    ids=["all", "headers", "hyphens", "blank-lines"],
)
def test_clean_up_keeps_heading_spans_exact(cleanup):
    """Clean-up changes the text (lines dropped, words joined across lines): the headings are
    found again in the text it leaves, at their exact place."""
    doc = load_bytes(report(), "rapport.pdf", cleanup)
    assert doc.cleanup and found(doc) == EXPECTED
    check_spans(doc)


def test_a_running_header_set_large_is_no_heading_with_or_without_clean_up():
    """A bold 12-point running header (as large as a heading here) opens every page: a running
    header, not a section, even where it is the report's title too."""
    header = ("Rapport d'exploitation 2024", 12, "B")
    for cleanup in (Cleanup(), ALL_CLEANUP):
        doc = load_bytes(report(header), "rapport.pdf", cleanup)
        assert found(doc) == EXPECTED
        check_spans(doc)
        title = doc.headings[0]
        # the header (set as on every page) is no title on page 1 either: clean-up drops it there too
        assert doc.text.count("Rapport d'exploitation 2024") == (1 if cleanup.drop_headers_footers else 4)
        assert (title.start > 0) != cleanup.drop_headers_footers


def test_clean_up_drops_the_first_pages_running_header_but_keeps_a_title_there():
    """Page 1's top line goes with the running header it repeats unless its fonts make it a
    heading: an 8-point header above the title goes; a title that later pages repeat small as
    their header stays, once, as the first heading."""
    doc = load_bytes(report(), "rapport.pdf", Cleanup(drop_headers_footers=True))
    assert doc.text.startswith("Rapport d'exploitation 2024\nLe service") and "usage interne" not in doc.text
    assert doc.cleanup == ("drop_headers_footers: removed 6 repeated header/footer lines",)
    small = ("Guide de maintenance", 8, "")
    pages = [[("Guide de maintenance", 22, "B"), *PROSE, ("1. Objet", CHAPTER, "B"), *PROSE]]
    pages += [[small, *PROSE, (f"{n}. Partie", CHAPTER, "B"), *PROSE] for n in (2, 3, 4)]
    doc = load_bytes(styled_pdf(pages), "guide.pdf", Cleanup(drop_headers_footers=True))
    assert doc.text.startswith("Guide de maintenance\nLe service") and doc.text.count("Guide de maintenance") == 1
    assert [h.info for h in doc.headings][:2] == ["Guide de maintenance", "1. Objet"]


def test_one_font_size_gets_no_headings():
    """Numbered lines at the body size are no headings: nothing sets them apart but the text."""
    pages = [["1. Introduction", *PROSE, "2. Scope", *PROSE, "Chapitre 3", *PROSE] for _ in range(3)]
    doc = load_bytes(make_pdf(pages, header="Rapport", footer="Page {n}"), "plain.pdf")
    assert doc.kind == "pdf" and doc.headings == () and doc.blocks == ()


def test_a_cover_page_of_large_lines_in_a_row_gives_only_its_title():
    """Three lines in a row at one large size (a cover's names) are none of them a heading; two
    far apart are not one title either. The title, the largest size, stays."""
    cover = [
        ("Guide de maintenance", 24, "B"),
        ("Marie Durand", CHAPTER, "B"),
        ("Jean Martin", CHAPTER, "B"),
        ("Paul Petit", CHAPTER, "B"),
    ]
    body = [[("1. Objet", CHAPTER, "B"), *PROSE], [("2. Domaine", CHAPTER, "B"), *PROSE]]
    doc = load_bytes(styled_pdf([cover, *body]), "guide.pdf")
    assert [h.info for h in doc.headings] == ["Guide de maintenance", "1. Objet", "2. Domaine"]
    check_spans(doc)


def test_table_of_contents_entries_and_once_used_sizes_are_no_headings():
    toc = [
        ("Sommaire", CHAPTER, "B"),
        ("1. Objet . . . . . . . . . . . . 2", SECTION, ""),
        ("2. Domaine ............ 3", SECTION, ""),
    ]
    body = [
        [("1. Objet", CHAPTER, "B"), *PROSE, ("contact : service-technique", 12.5, "B"), *PROSE],
        [("2. Domaine", CHAPTER, "B"), *PROSE],
    ]
    doc = load_bytes(styled_pdf([toc, *body]), "guide.pdf")
    # the 12.5-point line is the only one of its size and not the largest: left out
    assert [h.info for h in doc.headings] == ["Sommaire", "1. Objet", "2. Domaine"]


def test_lines_that_read_as_sentences_going_on_are_no_headings():
    lines = [
        ("Pour la mise en service,", CHAPTER, "B"),  # ends with a comma
        *PROSE,
        ("Voir aussi :", CHAPTER, "B"),  # a lead-in
        *PROSE,
        ("12", CHAPTER, "B"),  # no letters
        *PROSE,
        ("A" * 130, CHAPTER, "B"),  # too long
        *PROSE,
        ("1. Objet", CHAPTER, "B"),
        *PROSE,
        ("2. Domaine", CHAPTER, "B"),
        *PROSE,
    ]
    doc = load_bytes(styled_pdf([lines]), "guide.pdf")
    assert [h.info for h in doc.headings] == ["1. Objet", "2. Domaine"]


def test_the_bundled_handbook_gets_its_sections():
    titles = [
        "Plant Operations Handbook",
        "1. Plant overview",
        "2. Daily rounds",
        "3. Coagulation and chemical dosing",
        "4. Filtration and backwashing",
        "5. Disinfection",
        "6. Sampling and laboratory checks",
        "7. Alarms and emergency response",
        "8. Maintenance coordination",
        "9. Records and reporting",
        "10. Training and certification",
        "Appendix A. Normal operating ranges",
        "Appendix B. Contacts",
    ]
    for cleanup in (Cleanup(), ALL_CLEANUP):
        doc = load_sample("handbook.pdf", cleanup)
        assert [h.info for h in doc.headings] == titles
        assert [h.level for h in doc.headings] == [1] + [2] * 12
        check_spans(doc)
        first = doc.text.index("The plant draws raw water")
        assert doc.heading_path(first) == ("Plant Operations Handbook", "1. Plant overview")


REAL_PDFS = (
    "/usr/share/doc/libtasn1-doc/libtasn1.pdf",
    "/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf",
)


@pytest.mark.parametrize("path", REAL_PDFS, ids=lambda p: Path(p).name)
def test_real_pdfs_headings_are_exact_with_or_without_clean_up(path):
    if not Path(path).exists():
        pytest.skip(f"{path} is not installed")
    plain = load_path(path)
    cleaned = load_path(path, ALL_CLEANUP)
    for doc in (plain, cleaned):
        assert len(doc.headings) >= 20
        check_spans(doc)
    assert [h.info for h in cleaned.headings] == [h.info for h in plain.headings]
    assert not any(len(h.info) == 1 for h in plain.headings)  # an index's letters are no sections


def test_the_style_reader_never_raises_and_gives_up_on_what_it_cannot_match():
    """An error in pypdf's visitor would lose the page's text: the reader swallows it and gives
    the page no styles; runs that do not join into the page's text give none either."""
    identity, at = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 1.0, 0.0, 700.0]
    reader = StyleReader(str)
    reader("Titre", None, None, None, 12)  # no matrices
    assert reader.styles("Titre", "Titre") is None
    reader = StyleReader(str)
    reader("Titre", identity, at, {}, 14)
    assert reader.styles("Titre et plus", "Titre et plus") is None
    reader = StyleReader(str)
    reader("Titre", identity, at, {"/BaseFont": "/ABCDEF+Calibri,Bold"}, 7)
    reader("\n", None, None, None, 7)  # no text to read a size from: matrices are not looked at
    reader("corps", [2.0, 0.0, 0.0, 2.0, 0.0, 0.0], identity, {"/BaseFont": "/Helvetica"}, 5)
    styles = reader.styles("Titre\ncorps", "Titre\ncorps")
    assert styles is not None and dict(styles.chars) == {(7.0, True): 5, (10.0, False): 5}
    assert [(s.line, s.size, s.bold, s.top) for s in styles.lines] == [(0, 7.0, True, 700.0), (1, 10.0, False, 0.0)]


def test_the_style_reader_follows_line_ends_that_cleaning_makes():
    """A carriage return alone is a line end once the loader normalises the text: the runs are
    cleaned like the page, so the lines stay the page's."""
    identity = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    reader = StyleReader(lambda t: t.replace("\r", "\n"))
    reader("Titre\rcorps", identity, identity, {}, 12)
    styles = reader.styles("Titre\rcorps", "Titre\ncorps")
    assert styles is not None and [s.line for s in styles.lines] == [0, 1]
    assert StyleReader(str).styles("x", "x\ny") is None  # no runs: nothing to trust


def test_a_pdf_whose_fonts_cannot_be_read_says_its_headings_are_not_detected(monkeypatch):
    monkeypatch.setattr(StyleReader, "styles", lambda self, raw, text: None)
    doc = load_bytes(report(), "rapport.pdf")
    assert doc.headings == () and "Le service" in doc.text
    assert any("the fonts of 'rapport.pdf' could not be read" in w for w in doc.warnings)


def test_bold_sets_nothing_apart_where_the_body_is_bold():
    """In a document set in bold, a bold numbered line at the body size is a list item; where
    the body is not bold, it is a heading."""
    steps = ["1. Ouvrir la vanne d'arrêt", *PROSE, "2. Vérifier la pression", *PROSE]
    numbered = [steps[0], steps[5]]
    all_bold = [(t, BODY, "B") for t in steps]
    assert load_bytes(styled_pdf([all_bold]), "bold.pdf").headings == ()
    steps_bold = [(t, BODY, "B") if t in numbered else t for t in steps]
    assert [h.info for h in load_bytes(styled_pdf([steps_bold]), "steps.pdf").headings] == numbered
