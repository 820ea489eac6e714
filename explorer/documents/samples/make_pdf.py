"""Regenerate ``handbook.pdf``, the bundled multi-page PDF sample (needs fpdf2, a dev dependency).

    .venv/bin/python -m explorer.documents.samples.make_pdf

The PDF is committed, so the app never needs fpdf2. It is laid out line by line like a real
report: a running header and a "Page N of M" footer on every page (for the header/footer
clean-up), and long words hyphenated at line ends (for the hyphenation clean-up). The text is
original and latin-1 only (fpdf2's core Helvetica font).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

HEADER = "Harbor Valley Water Authority - Plant Operations Handbook (rev. 7)"
FOOTER = "Internal use only - Page {n} of {total}"
OUT = Path(__file__).with_name("handbook.pdf")

# (kind, text): "t" title, "h" section heading, "p" paragraph, "r" one-line row, "break" new page.
CONTENT: list[tuple[str, str]] = [
    ("t", "Plant Operations Handbook"),
    (
        "p",
        "This handbook describes how the operators of the Harbor Valley treatment plant run the plant "
        "from one shift to the next. It is written for operators who already hold a Grade II "
        "certificate and have completed the site induction. It does not replace the standard operating "
        "procedures kept in the control room; where the two disagree, the procedure wins and the "
        "discrepancy must be reported to the plant superintendent the same day.",
    ),
    ("h", "1. Plant overview"),
    (
        "p",
        "The plant draws raw water from the Harbor Valley reservoir through two intake towers and treats "
        "up to 48 million litres per day. Treatment follows a conventional sequence: screening, "
        "coagulation with aluminium sulphate, flocculation, sedimentation in four rectangular basins, "
        "rapid gravity filtration through dual-media filters, disinfection with sodium hypochlorite, and "
        "final pH correction with lime before the water enters the clear-water reservoir.",
    ),
    (
        "p",
        "The plant is staffed around the clock by two operators per shift. Shifts change at 06:00, 14:00 "
        "and 22:00. The outgoing operator walks the incoming operator through the shift log, open work "
        "orders, active alarms and any chemical deliveries expected during the next shift. A handover is "
        "complete only when both operators have signed the log.",
    ),
    ("h", "2. Daily rounds"),
    (
        "p",
        "Each operator completes two rounds per shift, the first within an hour of handover and the "
        "second at mid-shift. A round covers the intake screens, the chemical building, the flocculation "
        "and sedimentation basins, the filter gallery and the clear-water pumping station. The operator "
        "records readings on the round sheet and notes anything unusual, such as foam on the basins, "
        "unexpected noise from a pump, or a chemical smell in the dosing room.",
    ),
    (
        "p",
        "Readings that fall outside their normal band must be confirmed with a second instrument or a "
        "grab sample before any process change is made. A single unconfirmed reading is never a reason "
        "to stop a treatment stage. Instrumentation faults are common after heavy rain, when debris "
        "reaches the intake and the turbidity probes foul more quickly than usual.",
    ),
    ("h", "3. Coagulation and chemical dosing"),
    (
        "p",
        "The coagulant dose is set from the daily jar test, which the morning shift performs before "
        "09:00. Typical doses range from 18 to 35 mg/L of aluminium sulphate, rising sharply when raw "
        "water turbidity exceeds 20 NTU after storms. Operators adjust the dose in steps of no more than "
        "2 mg/L and wait at least forty minutes between steps, because the effect of a change only "
        "becomes visible at the end of the sedimentation basins.",
    ),
    (
        "p",
        "Chemical deliveries are received only during day shifts. The receiving operator checks the "
        "delivery note against the purchase order, inspects the tanker's certificate of analysis, and "
        "supervises the transfer from start to finish. Unloading stops immediately if a hose, coupling or "
        "bund shows any sign of leakage. Deliveries of hypochlorite and acid must never be unloaded at "
        "the same time, whatever the driver's schedule.",
    ),
    ("h", "4. Filtration and backwashing"),
    (
        "p",
        "The plant has twelve dual-media filters of anthracite over sand. Each filter is backwashed when "
        "its head loss reaches 2.1 metres, when its filtered-water turbidity rises above 0.15 NTU, or "
        "after 72 hours in service, whichever comes first. Backwashes are staggered so that no more than "
        "two filters are out of service at any time, and never during the evening demand peak between "
        "17:00 and 20:00.",
    ),
    (
        "p",
        "After a backwash, the filter runs to waste for fifteen minutes or until its turbidity falls "
        "below 0.10 NTU. Operators record the duration of each backwash, the wash-water volume and the "
        "turbidity at the end of the run-to-waste period. A filter that repeatedly needs longer than "
        "twenty-five minutes to recover is flagged for media inspection at the next maintenance window.",
    ),
    ("h", "5. Disinfection"),
    (
        "p",
        "Sodium hypochlorite is dosed after filtration. The target free chlorine residual leaving the "
        "clear-water reservoir is between 0.5 and 1.0 mg/L, and it must never fall below 0.3 mg/L. The "
        "contact time in the reservoir is checked against the disinfection table every shift, using the "
        "current flow and the lowest reservoir level of the past four hours, since a low level shortens "
        "the contact time.",
    ),
    (
        "p",
        "If the residual drops below 0.3 mg/L, the operator increases the dose, confirms the reading with "
        "a hand-held colorimeter and informs the superintendent within thirty minutes. If the residual "
        "cannot be restored within one hour, the emergency procedure in section 7 applies. Overdosing is "
        "less dangerous but still unacceptable: residuals above 2.0 mg/L cause taste complaints across "
        "the whole distribution network within a day.",
    ),
    ("h", "6. Sampling and laboratory checks"),
    (
        "p",
        "Grab samples are taken at fixed points: raw water, settled water from each basin, the combined "
        "filtered water, and treated water leaving the plant. Turbidity, pH, free chlorine and "
        "temperature are measured on site every four hours. Samples for bacteriological analysis are "
        "taken on Mondays and Thursdays and must reach the external laboratory within six hours, kept "
        "between 2 and 8 degrees Celsius during transport.",
    ),
    (
        "p",
        "Every laboratory result is entered in the plant's information system within one working day. "
        "A positive result for E. coli in treated water is treated as an emergency even if the operator "
        "suspects contamination of the sample, because the cost of a false alarm is small compared with "
        "the cost of a missed incident.",
    ),
    ("h", "7. Alarms and emergency response"),
    (
        "p",
        "Alarms are classified in three priorities. Priority 1 alarms, such as loss of disinfection, a "
        "chlorine gas leak or a power failure at the high-lift pumps, require immediate action and a call "
        "to the superintendent. Priority 2 alarms, such as a filter exceeding its turbidity limit, must be "
        "acknowledged within fifteen minutes and resolved or escalated within the shift. Priority 3 "
        "alarms are recorded and reviewed at the next morning meeting.",
    ),
    (
        "p",
        "During a power failure, the standby generator starts automatically and picks up the essential "
        "load within forty seconds. The operator verifies that the generator has started, that the "
        "disinfection dosing pumps are running, and that the high-lift pumps have restarted in the "
        "correct sequence. The generator carries enough fuel for thirty-six hours at full load; the fuel "
        "level is recorded on every round while it is running.",
    ),
    (
        "p",
        "In any emergency the first duty of the operator is personal safety, the second is the safety of "
        "the public water supply, and only the third is the protection of equipment. Nobody enters the "
        "chlorine room alone, and nobody enters it at all while the gas detector shows a reading above "
        "0.5 ppm.",
    ),
    ("h", "8. Maintenance coordination"),
    (
        "p",
        "Planned maintenance is scheduled through work orders issued by the maintenance planner every "
        "Friday for the following week. Before any equipment is released, the operator isolates it, "
        "applies personal locks and tags, and confirms that it cannot start. Isolations are recorded in "
        "the isolation register, and the equipment returns to service only after the maintenance "
        "technician and the operator have both signed the release.",
    ),
    (
        "p",
        "Unplanned repairs that affect treatment capacity need the superintendent's approval, except when "
        "waiting would itself create a risk to the supply. In that case the operator acts first, keeps a "
        "written account of the decision, and reports it at the next handover.",
    ),
    ("h", "9. Records and reporting"),
    (
        "p",
        "The shift log, the round sheets, the chemical delivery records and the isolation register are "
        "legal records. Entries are made in ink or in the electronic system, never in pencil, and "
        "mistakes are struck through with a single line and initialled rather than erased. Records are "
        "kept for ten years. Monthly compliance reports are compiled from these records by the process "
        "engineer and submitted to the regulator before the tenth day of the following month.",
    ),
    (
        "p",
        "Operators are encouraged to propose improvements to this handbook. Suggestions go to the plant "
        "superintendent, who reviews the handbook every year in January and records each change in the "
        "revision table kept with the master copy.",
    ),
    ("h", "10. Training and certification"),
    (
        "p",
        "New operators work a minimum of six weeks on day shifts alongside an experienced operator "
        "before they are rostered on nights. During that period they complete the plant's competency "
        "checklist, which covers every item in this handbook and is signed off item by item by the "
        "shift lead. Operators who return after an absence of more than three months repeat the "
        "checklist sections on disinfection and emergency response.",
    ),
    (
        "p",
        "Certificates are renewed every three years. The superintendent keeps a training matrix and "
        "books refresher courses so that no certificate lapses; an operator whose certificate has "
        "lapsed may assist on shift but may not act as the responsible operator. Twice a year the whole "
        "team takes part in an emergency exercise, alternating between a chlorine leak scenario and a "
        "total loss of power during the evening demand peak.",
    ),
    ("break", ""),
    ("h", "Appendix A. Normal operating ranges"),
    ("r", "Raw water turbidity: 1 to 20 NTU (storm events up to 150 NTU)"),
    ("r", "Coagulant dose: 18 to 35 mg/L aluminium sulphate"),
    ("r", "Settled water turbidity: below 2.0 NTU"),
    ("r", "Filtered water turbidity: below 0.15 NTU per filter"),
    ("r", "Filter head loss at backwash: 2.1 m"),
    ("r", "Free chlorine leaving the plant: 0.5 to 1.0 mg/L (never below 0.3 mg/L)"),
    ("r", "Treated water pH: 7.2 to 7.8"),
    ("r", "Clear-water reservoir level: 3.5 to 6.0 m"),
    ("r", "Generator fuel at full load: 36 hours"),
    ("h", "Appendix B. Contacts"),
    (
        "p",
        "Plant superintendent: extension 201, or the on-call mobile outside office hours. Maintenance "
        "planner: extension 214. Process engineer: extension 230. External laboratory reception: "
        "extension 9-4410, open from 07:00 to 19:00 on weekdays and from 08:00 to 12:00 on Saturdays. "
        "Regulator's incident line: listed on the board by the control room door, next to the fire "
        "evacuation plan.",
    ),
]

#: The only words split at a line end, with where they may be split (like a hyphenation
#: dictionary: a handful of clean breaks for the clean-up toggle to join).
HYPHENATION = {
    "superintendent": ("superin", "tendent"),
    "flocculation": ("floccu", "lation"),
    "sedimentation": ("sedimen", "tation"),
    "instrumentation": ("instrumen", "tation"),
    "disinfection": ("disin", "fection"),
    "contamination": ("contami", "nation"),
    "maintenance": ("mainte", "nance"),
    "temperature": ("tempera", "ture"),
    "information": ("infor", "mation"),
    "distribution": ("distri", "bution"),
    "experienced": ("experi", "enced"),
    "certificate": ("certifi", "cate"),
    "acknowledged": ("acknow", "ledged"),
    "bacteriological": ("bacterio", "logical"),
}


def _wrap(pdf, text: str, width: float) -> list[str]:
    """Greedy line wrapping that hyphenates a long lowercase word when it does not fit."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        candidate = f"{line} {word}" if line else word
        if pdf.get_string_width(candidate) <= width:
            line = candidate
            continue
        head = _hyphen_split(pdf, line, word, width)
        if head:
            lines.append(f"{line} {head}-" if line else f"{head}-")
            line = word[len(head) :]
        else:
            lines.append(line)
            line = word
    if line:
        lines.append(line)
    return lines


def _hyphen_split(pdf, line: str, word: str, width: float) -> str:
    """The head of ``word`` (from :data:`HYPHENATION`) if it fits on ``line`` with a hyphen."""
    parts = HYPHENATION.get(word.rstrip(",.;:"))
    if not parts or pdf.get_string_width(f"{line} {parts[0]}-") > width:
        return ""
    return parts[0]


def build() -> bytes:
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    pdf.set_creation_date(dt.datetime(2024, 11, 4, tzinfo=dt.UTC))
    pdf.set_title("Plant Operations Handbook")
    left, width, top, bottom = 24.0, 150.0, 30.0, 272.0
    body, line_h = 11.5, 6.4

    # lay out into pages of (y, style, size, text) first, so the footer knows the page count
    pages: list[list[tuple[float, str, float, str]]] = [[]]
    y = top
    for kind, text in CONTENT:
        if kind == "break":
            pages.append([])
            y = top
            continue
        style, size, gap_before = {
            "t": ("B", 18, 0.0),
            "h": ("B", 13, 6.0),
            "p": ("", body, 3.5),
            "r": ("", body, 0.0),
        }[kind]
        pdf.set_font("Helvetica", style=style, size=size)
        lines = _wrap(pdf, text, width)
        need = gap_before + line_h * (len(lines) + (2 if kind == "h" else 0))
        if y + need > bottom and pages[-1]:
            pages.append([])
            y = top
        elif pages[-1]:
            y += gap_before
        for line in lines:
            pages[-1].append((y, style, size, line))
            y += line_h + (2.0 if kind == "t" else 0.0)
        if kind in "th":
            y += 1.5
    total = len(pages)
    for n, items in enumerate(pages, start=1):
        pdf.add_page()
        pdf.set_font("Helvetica", size=8)
        pdf.text(left, 14, HEADER)
        for y, style, size, line in items:
            pdf.set_font("Helvetica", style=style, size=size)
            pdf.text(left, y, line)
        pdf.set_font("Helvetica", size=8)
        pdf.text(left, 285, FOOTER.format(n=n, total=total))
    return bytes(pdf.output())


if __name__ == "__main__":
    data = build()
    OUT.write_bytes(data)
    print(f"wrote {OUT} ({len(data):,} bytes)")
