"""Sentence and paragraph segmentation: every tricky case exactly, plus offset properties."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.text.sentences import paragraph_spans, sentence_spans
from tests.support.sentence_cases import CASES


def sentences(text: str) -> list[str]:
    return [text[s:e] for s, e in sentence_spans(text)]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_tricky_case(text, expected):
    assert sentences(text) == expected


def test_cases_embedded_in_one_document():
    """The same cases joined into one document, each as a paragraph: offsets stay absolute."""
    text = "\n\n".join(c[1] for c in CASES)
    expected = [s for c in CASES for s in c[2]]
    assert sentences(text) == expected


#: French administrative and technical prose (not in the shared cases, whose counts the README's
#: library comparison reports): abbreviations after an elision, articles of French codes,
#: capital units after a number, addresses, references and citations, with the names they must
#: not split.
FRENCH_MORE = [
    ("Consultez l'art. 3 du code. Il s'applique.", ["Consultez l'art. 3 du code.", "Il s'applique."]),
    ("Voir l'art. L. 123-4 du code du travail. Fin.", ["Voir l'art. L. 123-4 du code du travail.", "Fin."]),
    ("Il pèse d'env. 10 kg. C'est lourd.", ["Il pèse d'env. 10 kg.", "C'est lourd."]),
    ("Branchez sur 230 V. Le voyant s'allume.", ["Branchez sur 230 V.", "Le voyant s'allume."]),
    ("Le fusible fait 16 A. Il protège la ligne.", ["Le fusible fait 16 A.", "Il protège la ligne."]),
    ("En 1990 M. Le Pen a parlé. Fin.", ["En 1990 M. Le Pen a parlé.", "Fin."]),
    ("Le 3 J. Le Goff arrive. Fin.", ["Le 3 J. Le Goff arrive.", "Fin."]),
    ("Voir la page 12 A. Martin y répond. Fin.", ["Voir la page 12 A. Martin y répond.", "Fin."]),
    ("Il habite 12 bd. Haussmann à Paris. Fin.", ["Il habite 12 bd. Haussmann à Paris.", "Fin."]),
    ("Réf. 12345. Merci.", ["Réf. 12345.", "Merci."]),
    ("Call ext. 204 now. Fine.", ["Call ext. 204 now.", "Fine."]),
    ("1.3. Documentation nécessaire\n\nTexte.", ["1.3. Documentation nécessaire", "Texte."]),
    ("Fin du texte. 5.1.3. Plage d'adresses", ["Fin du texte.", "5.1.3. Plage d'adresses"]),
    ("Introduite dans APT 1.1. La suite.", ["Introduite dans APT 1.1.", "La suite."]),
    ("Version : 2.1. La suite.", ["Version : 2.1.", "La suite."]),
    # a quoted question or exclamation, its » spaced, goes on with the sentence around it (the
    # sentence had ended before the », the next one opening with "», demanda-t-il.")
    ("« Tu viens ? », demanda-t-il. Elle part.", ["« Tu viens ? », demanda-t-il.", "Elle part."]),
    ("Il a dit «\u00a0non\u00a0!\u00a0». Il part.", ["Il a dit «\u00a0non\u00a0!\u00a0».", "Il part."]),
    ("Un paquet «\u202fvirtuel\u202f?\u202f».) Oui.", ["Un paquet «\u202fvirtuel\u202f?\u202f».)", "Oui."]),
    ("Was? »Nein« sagte er. Gut.", ["Was?", "»Nein« sagte er.", "Gut."]),
    (
        "Plant Operations Handbook (rev. 7) page 2. Fin.",
        ["Plant Operations Handbook (rev. 7) page 2.", "Fin."],
    ),
    (
        "Voir Dupont et al. (2020) pour les détails. Fin.",
        ["Voir Dupont et al. (2020) pour les détails.", "Fin."],
    ),
    ("As Smith et al. [12] show. Then more.", ["As Smith et al. [12] show.", "Then more."]),
    ("Voir Dupont et al. Les auteurs concluent.", ["Voir Dupont et al.", "Les auteurs concluent."]),
]


#: Titles, abbreviations, ordinals and end marks of other languages (a helper's pass over
#: Spanish, Italian, Portuguese, Dutch, Polish, Czech, Russian, German, Armenian, Greek,
#: Amharic, Burmese and Chinese text); each was cut or joined wrongly before.
OTHER_LANGUAGES = [
    ("El Sr. García llegó tarde. La Sra. López no vino.", ["El Sr. García llegó tarde.", "La Sra. López no vino."]),
    ("Il Sig. Rossi è arrivato. Il Dott. Bianchi è partito.", ["Il Sig. Rossi è arrivato.", "Il Dott. Bianchi è partito."]),
    ("A Dra. Costa saiu cedo. Fim.", ["A Dra. Costa saiu cedo.", "Fim."]),
    ("Dhr. Jansen en mevr. De Vries kwamen. Het was laat.", ["Dhr. Jansen en mevr. De Vries kwamen.", "Het was laat."]),
    ("Spotkanie odbyło się w 2020 r. Następnie firma zmieniła nazwę.", ["Spotkanie odbyło się w 2020 r.", "Następnie firma zmieniła nazwę."]),
    ("Prof. Nowak i dr hab. Kowalski przyszli. Koniec.", ["Prof. Nowak i dr hab. Kowalski przyszli.", "Koniec."]),
    ("Это было в 1990 г. Потом всё изменилось.", ["Это было в 1990 г.", "Потом всё изменилось."]),
    # Khmer's full stop; Russian "см." (see); a dotted abbreviation before a path or a number (Debian's
    # Spanish, Italian and Vietnamese manuals: "p.e. /etc/passwd", "p.es. /etc/passwd", "(v.d. 2K 1G)")
    ("ខ្ញុំទៅផ្សារ។ គាត់នៅផ្ទះ។", ["ខ្ញុំទៅផ្សារ។", "គាត់នៅផ្ទះ។"]),
    ("Это описано выше, см. Раздел 3. Конец.", ["Это описано выше, см. Раздел 3.", "Конец."]),
    ("Formatos de archivo, p.e. /etc/passwd y otros. Fin.", ["Formatos de archivo, p.e. /etc/passwd y otros.", "Fin."]),
    ("So sánh các số (v.d. 2K 1G) được. Xong.", ["So sánh các số (v.d. 2K 1G) được.", "Xong."]),
    ("Vedi i file, p.es. 5 file. Fine.", ["Vedi i file, p.es. 5 file.", "Fine."]),
    # ... but before what starts a sentence it ends one (wikitexts: "Production I.G." then a heading)
    ("It was made by Production I.G. \n = = Music = = \n The music came later.",
     ["It was made by Production I.G.", "= = Music = = \n The music came later."]),
    ("He served at the Arsenal, C.S.A. , and left. End.", ["He served at the Arsenal, C.S.A. , and left.", "End."]),
    # German, Czech and Russian quotes close with “ or ‘ („…“, ‚…‘), »…« with «, Hebrew with ״: the
    # end mark inside them was no end at all (two sentences read as one)
    ("Er sagte: „Das ist gut.“ Dann ging er.", ["Er sagte: „Das ist gut.“", "Dann ging er."]),
    ("Er sagte: ‚Ja.‘ Dann ging er.", ["Er sagte: ‚Ja.‘", "Dann ging er."]),
    ("Sie rief: »Komm her!« Er kam sofort.", ["Sie rief: »Komm her!«", "Er kam sofort."]),
    ("Он сказал: „Я приду.“ Потом ушёл.", ["Он сказал: „Я приду.“", "Потом ушёл."]),
    ("הוא אמר: ״אני בא.״ אחר כך הלך.", ["הוא אמר: ״אני בא.״", "אחר כך הלך."]),
    ("He wrote “fine.“ and left. Then “Next” came.", ["He wrote “fine.“ and left.", "Then “Next” came."]),
    # the Greek question mark after a code or a quote (apt's Greek messages), not before a lowercase word
    ("Δοκιμάσατε το --fix-missing; Θέλετε να συνεχίσετε;", ["Δοκιμάσατε το --fix-missing;", "Θέλετε να συνεχίσετε;"]),
    ("Το αρχείο «%s» υπάρχει; Ναι.", ["Το αρχείο «%s» υπάρχει;", "Ναι."]),
    ("Υπάρχει το «ls»; Όχι, το «dir»; ίσως.", ["Υπάρχει το «ls»;", "Όχι, το «dir»; ίσως."]),
    # a quoted end mark that names itself (dpkg's German manual) is no sentence of its own
    ("‚?‘ Impliziert, dass die Prüfung fehlt. ‚.‘ Impliziert Erfolg.", ["‚?‘ Impliziert, dass die Prüfung fehlt.", "‚.‘ Impliziert Erfolg."]),
    ("Проф. Иванов живёт на ул. Ленина, д. 5. Конец.", ["Проф. Иванов живёт на ул. Ленина, д. 5.", "Конец."]),
    ("Мы купили хлеб, молоко и т. д.\nТехническое задание готово.", ["Мы купили хлеб, молоко и т. д.", "Техническое задание готово."]),
    ("См. стр. 12 и табл. 3.\nПеред началом проверьте насос.", ["См. стр. 12 и табл. 3.", "Перед началом проверьте насос."]),
    ("Das passiert zum 3. Mal in Folge. Die 5. Klasse fährt weg.", ["Das passiert zum 3. Mal in Folge.", "Die 5. Klasse fährt weg."]),
    ("Sie sind 3. Die anderen nicht.", ["Sie sind 3.", "Die anderen nicht."]),
    ("Nar. 5. května 1990 v Praze. Potom odešel.", ["Nar. 5. května 1990 v Praze.", "Potom odešel."]),
    ("Ի՞նչ է սա։ Սա թեստ է։", ["Ի՞նչ է սա։", "Սա թեստ է։"]),
    ("Τι είναι αυτό; Είναι ένα τεστ.", ["Τι είναι αυτό;", "Είναι ένα τεστ."]),
    ("ዛሬ ጥሩ ቀን ነው።ነገ ይዘንባል።", ["ዛሬ ጥሩ ቀን ነው።", "ነገ ይዘንባል።"]),
    ("မင်္ဂလာပါ။ ကျေးဇူးတင်ပါတယ်။", ["မင်္ဂလာပါ။", "ကျေးဇူးတင်ပါတယ်။"]),
    ("这是第一句．这是第二句．", ["这是第一句．", "这是第二句．"]),
    ("３．５ 是数字．下一句．", ["３．５ 是数字．", "下一句．"]),
    ("This is it; That is not.", ["This is it; That is not."]),
    ("I counted to 3. Then I stopped.", ["I counted to 3.", "Then I stopped."]),
    # and English stays as it was (a reviewer's cases): a name's "Sr.", "Doc", "Eng", "am 5."
    ("Martin Luther King Sr. He was a pastor.", ["Martin Luther King Sr.", "He was a pastor."]),
    ("Where is the Doc. It was here.", ["Where is the Doc.", "It was here."]),
    ("She works at Eng. Then she left.", ["She works at Eng.", "Then she left."]),
    ("I am 5. My sister is 7.", ["I am 5.", "My sister is 7."]),
    ("Llegó el Sr. García. Fin.", ["Llegó el Sr. García.", "Fin."]),
]


#: A tester's German, Spanish, Italian and Dutch documents: each was cut (or joined) wrongly
#: before. Italian titles are lowercase; letters after a noun and its adjective are labels.
TESTER_EU = [
    (
        "L'amministratore del condominio è il sig. Giuseppe Rossi, nominato ieri. Fine.",
        ["L'amministratore del condominio è il sig. Giuseppe Rossi, nominato ieri.", "Fine."],
    ),
    ("Il sig. Rossi è qui. Parlo con il dott. Verdi.", ["Il sig. Rossi è qui.", "Parlo con il dott. Verdi."]),
    ("Il prof. Neri insegna. L'avv. Galli parla.", ["Il prof. Neri insegna.", "L'avv. Galli parla."]),
    ("L'ing. Conti arriva. Fine.", ["L'ing. Conti arriva.", "Fine."]),
    ("Ho visto il dr. Esposito. Nessuno lo sapeva.", ["Ho visto il dr. Esposito.", "Nessuno lo sapeva."]),
    ("È nato nel sec. XIX. Poi si trasferì.", ["È nato nel sec. XIX.", "Poi si trasferì."]),
    ("Vedi il vol. II, cap. IV. Poi basta.", ["Vedi il vol. II, cap. IV.", "Poi basta."]),
    (
        "Secondo le norme della zona climatica E. La temperatura negli appartamenti è di 20 gradi.",
        ["Secondo le norme della zona climatica E.", "La temperatura negli appartamenti è di 20 gradi."],
    ),
    ("La casa è in classe energetica A. Il prezzo sale.", ["La casa è in classe energetica A.", "Il prezzo sale."]),
    ("Vedi l'allegato B. Poi firma.", ["Vedi l'allegato B.", "Poi firma."]),
    ("Ver el anexo C. Luego firmar.", ["Ver el anexo C.", "Luego firmar."]),
    ("Zie bijlage A. Het is klaar.", ["Zie bijlage A.", "Het is klaar."]),
    (
        "Sie heißt Wärmetechnik GmbH & Co. KG und wird verkauft. Die Müller & Co. KGaA zahlt.",
        ["Sie heißt Wärmetechnik GmbH & Co. KG und wird verkauft.", "Die Müller & Co. KGaA zahlt."],
    ),
    ("Sony Co. Ltd zahlt. Fertig.", ["Sony Co. Ltd zahlt.", "Fertig."]),
    ("Das kostet 3 Mio. Euro im Jahr. Dazu 2 Mrd. Dollar.", ["Das kostet 3 Mio. Euro im Jahr.", "Dazu 2 Mrd. Dollar."]),
    ("Frau Prof. Dr. med. Weber operiert. Fertig.", ["Frau Prof. Dr. med. Weber operiert.", "Fertig."]),
    ("Herr Dr. rer. nat. Schulz kommt. Fertig.", ["Herr Dr. rer. nat. Schulz kommt.", "Fertig."]),
    ("Wir wohnen in der Goethestr. 5 in Berlin. Fertig.", ["Wir wohnen in der Goethestr. 5 in Berlin.", "Fertig."]),
    ("Wij wonen in de Dorpsstr. 12 in Ede. Klaar.", ["Wij wonen in de Dorpsstr. 12 in Ede.", "Klaar."]),
    ("Er kam als 2. Sieger ins Ziel. Sie wurde 3. Siegerin.", ["Er kam als 2. Sieger ins Ziel.", "Sie wurde 3. Siegerin."]),
    ("Lo vimos en EE. UU. el año pasado. Fin.", ["Lo vimos en EE. UU. el año pasado.", "Fin."]),
    ("Trabaja en RR. HH. con las CC. OO. Fin.", ["Trabaja en RR. HH. con las CC. OO.", "Fin."]),
    ("Son aprox. 30 personas. Fin.", ["Son aprox. 30 personas.", "Fin."]),
]

#: Counter-cases next to those: real ends that must stay cut.
TESTER_EU_ENDS = [
    ("Il prezzo è salito del 3 %. Poi è sceso.", ["Il prezzo è salito del 3 %.", "Poi è sceso."]),
    ("Ich wohne in Berlin. Dort ist es schön.", ["Ich wohne in Berlin.", "Dort ist es schön."]),
    ("Er wurde 2. Dann kam der Rest.", ["Er wurde 2.", "Dann kam der Rest."]),
    ("Das ist größer als 2. Danach rechnen wir.", ["Das ist größer als 2.", "Danach rechnen wir."]),
    ("Der Schaden beträgt 3 Mio. Die Versicherung zahlt.", ["Der Schaden beträgt 3 Mio.", "Die Versicherung zahlt."]),
    ("Es el libro mio. Luego voy.", ["Es el libro mio.", "Luego voy."]),
    ("Er arbeitet bei Smith & Co. Die Firma ist alt.", ["Er arbeitet bei Smith & Co.", "Die Firma ist alt."]),
    ("Lo vimos en EE. UU. La economía crece.", ["Lo vimos en EE. UU.", "La economía crece."]),
    ("Wait a sec. I am coming.", ["Wait a sec.", "I am coming."]),
    ("No. I don't think so.", ["No.", "I don't think so."]),
    ("The team captain A. Smith scored. Fine.", ["The team captain A. Smith scored.", "Fine."]),
    ("Ne parla la zona di A. Rossi. Fine.", ["Ne parla la zona di A. Rossi.", "Fine."]),
]


@pytest.mark.parametrize(("text", "expected"), TESTER_EU + TESTER_EU_ENDS)
def test_german_spanish_italian_dutch_titles_abbreviations_and_labels(text, expected):
    """Lowercase titles, "sec. XIX", letters after "zona climatica", "Co. KG", "3 Mio. Euro",
    "Dr. med.", "-str. 5", "als 2. Sieger", "EE. UU.", "aprox. 30"; and the ends next to them."""
    assert sentences(text) == expected


@pytest.mark.parametrize(("text", "expected"), FRENCH_MORE + OTHER_LANGUAGES)
def test_abbreviations_articles_units_ordinals_and_end_marks(text, expected):
    """French abbreviations, articles and units; other languages' titles, ordinals and marks."""
    assert sentences(text) == expected


def test_blank_line_with_spaces_ends_paragraph_and_sentence():
    text = "First part without stop\n \t \nsecond part, lowercase."
    assert paragraph_spans(text) == [(0, 23), (28, len(text))]
    assert sentences(text) == ["First part without stop", "second part, lowercase."]


def test_unicode_paragraph_separator():
    assert sentences("one\u2029two") == ["one", "two"]


def test_single_newline_inside_sentence_is_kept():
    text = "The committee met on Monday and\nagreed on the budget for the year."
    assert sentences(text) == [text]


def test_short_heading_line_before_capital_ends_sentence():
    text = "3 Results\nThe model converged after ten epochs, as expected by everyone involved."
    assert sentences(text) == ["3 Results", text[10:]]


def test_table_rows_are_separate():
    text = "year | revenue\n2017 | 20\n2018 | 25"
    assert sentences(text) == ["year | revenue", "2017 | 20", "2018 | 25"]


def test_markdown_tables_with_a_delimiter_or_borders_are_rows():
    text = "Results below:\n| a | b |\n|---|---|\n| 1 | 2 |\nThat is all."
    assert sentences(text) == ["Results below:", "| a | b |", "|---|---|", "| 1 | 2 |", "That is all."]
    assert sentences("a | b\n--- | ---\n1 | 2") == ["a | b", "--- | ---", "1 | 2"]


def test_wrapped_lines_that_merely_hold_bars_are_not_table_rows():
    # a manual page's synopsis wraps over lines with different numbers of bars
    text = (
        "Lance apt-get {update | upgrade | install paquet |\n"
        "remove paquet} avec les options voulues pour cette machine."
    )
    assert sentences(text) == [text]


def test_fenced_code_is_one_unit():
    text = "Install it first.\n```bash\npip install x\n# a comment\nmake run. Now\n```\nThen open it. Done."
    assert sentences(text) == [
        "Install it first.",
        "```bash\npip install x\n# a comment\nmake run. Now\n```",
        "Then open it.",
        "Done.",
    ]
    # tildes, a longer closing fence, and an unclosed fence running to the paragraph's end
    assert sentences("Text.\n~~~\nx. Y\n~~~~\nAfter.") == ["Text.", "~~~\nx. Y\n~~~~", "After."]
    assert sentences("Text.\n```\nx. Y\nZ. W") == ["Text.", "```\nx. Y\nZ. W"]


def test_an_underline_of_tildes_or_inline_backticks_open_no_code_block():
    text = "Install\n~~~~~~~\nRun the script. Then check it.\n\nUsage\n~~~~~\nCall it. Done."
    assert sentences(text) == ["Install", "~~~~~~~", "Run the script.", "Then check it.", "Usage", "~~~~~", "Call it.", "Done."]
    assert sentences("```js``` is the tag. This is a sentence.") == ["```js``` is the tag.", "This is a sentence."]


def test_fenced_code_with_blank_lines_pairs_its_fences_across_paragraphs():
    text = "```\nfirst. Part\n\nsecond. Part\n```\nProse after. More."
    assert sentences(text) == ["```\nfirst. Part", "second. Part\n```", "Prose after.", "More."]


def test_a_fence_nested_in_a_list_item_or_a_quote_is_one_unit():
    """The fences are the Markdown parse's: a regex of its own saw fences indented up to 3
    spaces only, so it cut inside one under a list item ("make. Now" ended a sentence) and at
    every line of one in a quote."""
    text = "1. Build it. Then run it.\n\n    ```bash\n    make. Now\n    # a comment\n    ```\n"
    assert sentences(text) == ["1. Build it.", "Then run it.", "```bash\n    make. Now\n    # a comment\n    ```"]
    text = "- Configure it:\n  ```ini\n  a = 1. B\n  ```\n- Start it. Done."
    assert sentences(text) == ["- Configure it:", "```ini\n  a = 1. B\n  ```", "- Start it.", "Done."]
    text = "Notes:\n> ```\n> code. More\n> # x\n> ```\n> After it. Yes."
    assert sentences(text) == ["Notes:", "> ```\n> code. More\n> # x\n> ```", "> After it.", "Yes."]


def test_an_unclosed_fence_in_a_list_item_ends_with_the_item():
    text = "1. Write it:\n   ```\n   a = 1. B\n2. Run it. Done."
    assert sentences(text) == ["1. Write it:", "```\n   a = 1. B", "2. Run it.", "Done."]


_MD_LINES = ["```\n", "~~~\n", "```py\n", "Text. More text.\n", "x = 1\n", "\n", "- a. B\n"]
_NESTED_LINES = ["  ```\n", "    ```\n", "> ```\n", "> x. Y\n", "1. a. B\n", "   c. D\n", "~~~~~~~~\n"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_MD_LINES + _NESTED_LINES), max_size=60), st.data())
def test_fence_cuts_match_the_pairwise_rule(lines, data):
    """fence_cuts looks each cut up among the paragraph's blocks by bisection (a paragraph of
    25,000 blocks took a minute pair by pair); it keeps and adds the same cuts as the pairwise rule."""
    from explorer.text.line_breaks import fence_cuts
    from explorer.text.markdown_parse import fenced_code as _fenced_blocks

    text = "".join(lines)
    ps = data.draw(st.integers(0, len(text)))
    pe = data.draw(st.integers(ps, len(text)))
    cuts = sorted(set(data.draw(st.lists(st.integers(ps, pe), max_size=20))))
    inside = [(max(s, ps), min(e, pe)) for s, e in _fenced_blocks(text) if s < pe and e > ps]
    if not inside:
        assert fence_cuts(text, ps, pe, cuts) == cuts
        return
    kept = {c for c in cuts if not any(s < c < e for s, e in inside)}
    kept.update(c for s, e in inside for c in (s, e) if ps < c < pe)
    assert fence_cuts(text, ps, pe, cuts) == sorted(kept)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_MD_LINES + _NESTED_LINES), max_size=40))
def test_no_sentence_ends_inside_a_fence_but_at_a_blank_line(lines):
    """Every fenced block the markdown strategy keeps whole, nested ones too, is cut only where
    a blank line in it ends a paragraph."""
    from explorer.documents.markdown_blocks import markdown_blocks
    from explorer.text.markdown_parse import structure

    text = "".join(lines)
    fences = structure(text).fences
    assert set(fences) <= {(b.start, b.end) for b in markdown_blocks(text) if b.kind == "code"}
    spans = sentence_spans(text)
    for (_, end), (nxt, _) in pairwise(spans):
        for s, e in fences:
            assert not (s < end < e and text[end:nxt].count("\n") < 2), (text[s:e], text[end:nxt])


def test_sub_range_offsets_are_absolute_and_bounded():
    text = "Intro. Skip me.\n\nM. Dupont est venu. Il est reparti.\n\nTail. More."
    start = text.index("M. Dupont")
    end = text.index("\n\nTail")
    spans = sentence_spans(text, start, end)
    assert [text[s:e] for s, e in spans] == ["M. Dupont est venu.", "Il est reparti."]
    assert spans[0][0] == start and spans[-1][1] == end
    # a range that starts mid-sentence is still trimmed and bounded
    spans = sentence_spans(text, 3, 12)
    assert [text[s:e] for s, e in spans] == ["ro.", "Skip"]


def test_empty_and_whitespace():
    assert sentence_spans("") == []
    assert sentence_spans(" \n\n\t ") == []
    assert paragraph_spans("\n\n\n") == []


def test_no_whitespace_at_all():
    text = "x" * 5000 + "." + "y" * 10
    assert sentences(text) == [text]


def test_long_runs_stay_linear_enough():
    """Pathological inputs (many candidates in one paragraph) finish and keep the properties."""
    for text in ("1. " * 20000, ". " * 20000, "a.\n" * 20000, "Dr. " * 20000, "。" * 20000):
        spans = sentence_spans(text)
        _check_spans(text, spans, 0, len(text))


def test_chroma_state_of_the_union(chroma_dir):
    text = (chroma_dir / "corpora" / "state_of_the_union.md").read_text(encoding="utf-8")
    spans = sentence_spans(text)
    _check_spans(text, spans, 0, len(text))
    got = [text[s:e] for s, e in spans]
    assert "Mr. Speaker, Madam Vice President, members of Congress, my fellow Americans." in got
    assert got[:2] == ["Good evening.", "Good evening."]
    # No sentence of this speech runs across a paragraph, and none is absurdly long.
    assert max(e - s for s, e in spans) < 600


# -- properties --------------------------------------------------------------------------------


def _check_spans(text: str, spans: list[tuple[int, int]], start: int, end: int) -> None:
    prev_end = start
    for s, e in spans:
        assert prev_end <= s < e <= end, (s, e, prev_end)
        assert not text[s].isspace() and not text[e - 1].isspace(), (s, e)
        assert not text[prev_end:s].strip(), f"non-space text between spans: {text[prev_end:s]!r}"
        prev_end = e
    assert not text[prev_end:end].strip()


_PIECES = st.sampled_from(
    [". ", ".", "... ", "… ", "? ", "! ", "。", "！", "？", "」", "“", "”", "« ", " »", '"', "'", ")",
     "(", "[...] ", "\n", "\n\n", "\n- ", "\n1. ", "# ", "|", " ", "\u00a0", "\u2029", "Dr", "M", "e.g",
     "p", "12", "3.5", "4,2", "etc", "Hello", "monde", "東京", "😀", "\x00", "\t", ":", "z. B", "と",
     "ภาษาไทย", "ไป", "ๆ", "ฯ", "๒๕"]
)  # fmt: skip
_TEXT = st.one_of(
    st.text(max_size=300),
    st.lists(_PIECES, max_size=60).map("".join),
    st.text(alphabet=st.sampled_from("ab .!?。\n"), max_size=200),
)


@settings(max_examples=300, deadline=None)
@given(_TEXT, st.data())
def test_sentence_spans_properties(text, data):
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    for a, b in ((0, len(text)), (start, end)):
        spans = sentence_spans(text, a, b if b != len(text) else None)
        _check_spans(text, spans, a, b)


@settings(max_examples=150, deadline=None)
@given(_TEXT)
def test_paragraph_spans_properties(text):
    paras = paragraph_spans(text)
    _check_spans(text, paras, 0, len(text))
    # sentences never cross a paragraph: each sentence lies inside one paragraph
    for s, e in sentence_spans(text):
        assert any(ps <= s and e <= pe for ps, pe in paras)
