"""PDFs whose lines are set at known sizes and weights (fpdf2, Helvetica, latin-1 text), to test
heading detection against headings we placed ourselves."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

#: A line: its text, or (text, size in points, style: "" or "B"); a bare text is body text.
Line = str | tuple[str, float, str]

BODY = 10.5
#: French body text, wrapped as a report's lines are.
PROSE = (
    "Le service d'exploitation vérifie chaque matin l'état des pompes et des filtres.",
    "Toute anomalie relevée pendant la tournée est consignée dans le registre de quart,",
    "avec l'heure, le nom de l'opérateur et la mesure prise pour y remédier.",
    "Les seuils d'alerte sont révisés chaque année par le responsable de la sécurité.",
)

#: Sizes of a chapter and a section heading, under a 22-point title.
CHAPTER, SECTION = 16, 13
#: A French report: its title, three levels of headings (bold or not), one bold at the body size
#: and numbered, a title wrapped over two lines, a heading at the bottom of a page, a bold label
#: that is no heading, and a word hyphenated at a line end.
REPORT = [
    [
        ("Rapport d'exploitation 2024", 22, "B"),
        *PROSE,
        ("1. Présentation générale", CHAPTER, "B"),
        "Le rapport décrit l'exploi-",
        "tation du réseau d'eau potable pendant l'année écoulée.",
        ("1.1 Périmètre du service", SECTION, ""),
        *PROSE,
        ("1.2 Organisation des équipes", SECTION, ""),
        *PROSE,
        ("2. Sécurité des installations et", CHAPTER, "B"),
        ("procédures d'arrêt d'urgence", CHAPTER, "B"),
        *PROSE,
    ],
    [
        *PROSE,
        ("2.1 Contrôles quotidiens", SECTION, ""),
        *PROSE,
        ("2.1.1 Relevés des capteurs", BODY, "B"),
        *PROSE,
        ("Remarque importante", BODY, "B"),  # bold at the body size, not numbered: a label
        *PROSE,
        ("2.1.2 Journal des alarmes", BODY, "B"),
        *PROSE[:2],
        ("3. Maintenance préventive", CHAPTER, "B"),  # at the bottom of its page
    ],
    [
        *PROSE,
        ("3.1 Calendrier des interventions", SECTION, ""),
        *PROSE,
    ],
]


def styled_pdf(
    pages: Sequence[Sequence[Line]],
    header: tuple[str, float, str] | None = None,
    footer: str | None = None,
) -> bytes:
    """One PDF page per item of ``pages``, one text line per :data:`Line`, top to bottom; a line
    larger than the body gets room above it, as headings do, unless the line above is set alike
    (a title wrapped over two lines). ``header`` (text, size, style) is drawn at the top of every
    page and ``footer`` ("Page {n}") at the bottom."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    pdf.set_creation_date(dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    for n, lines in enumerate(pages, start=1):
        pdf.add_page()
        if header is not None:
            pdf.set_font("Helvetica", style=header[2], size=header[1])
            pdf.text(20, 12, header[0])
        y = 25.0
        above = None
        for line in lines:
            text, size, style = (line, BODY, "") if isinstance(line, str) else line
            if size > BODY and above != (size, style):
                y += size * 0.35
            above = (size, style)
            pdf.set_font("Helvetica", style=style, size=size)
            pdf.text(20, y, text)
            y += size * 0.5
        if footer is not None:
            pdf.set_font("Helvetica", size=8)
            pdf.text(95, 287, footer.format(n=n))
    return bytes(pdf.output())
