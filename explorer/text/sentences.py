"""Sentence and paragraph segmentation with character offsets.

Why our own (measured by ``bench/bench_sentences.py``, numbers in the README): on the tricky
cases of ``tests/sentence_cases.py`` no installed library was right on every case the project
requires. sentencex came closest (20 of 21, and several times faster than this module) but splits
"M. Dupont" and "vol. 2"; pysbd is ~40x slower and breaks URLs and "p. 12"; blingfire ignores
blank lines and CJK quotes; nupunkt and syntok miss CJK and French titles. Fixing a library's
output would mean rules that both merge and split its sentences, i.e. the decisions below
anyway, plus a runtime dependency and a language code per document. This module is one
compiled regex that finds candidate ends plus a few context rules; it needs no language code
(the word lists of every language are merged, :mod:`explorer.text.abbreviations`) and segments
1 MB in ~0.2 s of CPU here.

Rules, in order (all offsets come from the regex matches, never from searching sentence text):

1. Paragraphs: a blank line (or U+2029) always ends a sentence; sentences never span paragraphs.
2. Line structure: a single newline does *not* end a sentence (hard-wrapped prose), except
   before a list item (``-``, ``*``, ``•``, ``1.``, ``1)``), a Markdown heading, quote or code
   fence; around a table row (a line with ``|`` that is bordered, a delimiter row, or next to
   one or to a line with as many bars); after a Markdown heading line; and after a short line
   (at most ``SHORT_LINE`` characters, not ending in ``,;:-(`` ...) when the next line starts
   with a capital or a digit (headings and fields of PDFs and plain text). A fenced code block
   (one in a list item or a quote too) is one unit: no cut inside it within a paragraph, a cut
   before and after it (:mod:`explorer.text.line_breaks`).
3. CJK end marks ``。｡！？`` end a sentence with no space needed, together with closing
   brackets/quotes that follow them (``「…。」``), except before the Japanese quotative
   particle と/っ (``「行きます。」と言った``). ASCII ``!``/``?`` right before a CJK character too.
   Thai writes no end mark: spaces between two Thai words end a sentence (not beside a number,
   a Latin word, ๆ or ฯ: ``ปี 2566 มี``, ``ต่าง ๆ นานา``). Lao is left alone.
4. Latin end marks (``.``, ``!``, ``?``, ellipses ``...``/``…``, ``‽``, ``؟``, ``।``) count
   only when followed by whitespace or the end, after any closing quotes/brackets (``."``,
   ``.”``, German ``.“``, ``. »``, ``.)``, footnote marks ``[12]``); so URLs, e-mail addresses, file names and
   decimals (3.5) never split. The quote stays with its sentence.
5. A candidate is *not* a boundary when the next word starts with a lowercase letter
   (``etc. for``, ``Wait... what?``, ``« Vous venez ? » demanda-t-il``) — unless the whole
   paragraph has no capital letter at all (lowercased text such as the Chroma finance corpus),
   where a known abbreviation is needed to continue.
6. For a single ``.``, the word before it is checked: a single letter (initials ``J. R. R.``,
   ``M. Dupont``, ``Jean-Paul S. Martin``, ``z. B.``) continues the sentence, unless context
   says it is a label or a unit: a capital letter after a noun that names things by a letter
   (``vitamine C. Elle``, ``plan B. Il``, ``l'annexe A. Elle``; :data:`LETTER_NOUNS`), or after
   an article or such a noun and its adjective with a sentence-starting word next (``an A.
   She``, ``zona climatica E. La``; not ``the J. Paul Getty``, ``team captain A. Smith``),
   a unit letter after a number (``à 9 h. Il``, ``3 m. Le``; :data:`UNIT_LETTERS`), and a
   capital unit after a number with a sentence-starting word next (``230 V. Le``), end it. A
   title (``Dr.``, ``Mr.``, ``MM.``, ``Prof.``, Italian ``il sig.``, ``l'avv.``), a word that
   is never final (``e.g.``, ``i.e.``, ``cf.``, ``bzw.``), a word that precedes numbers (``p.
   12``, ``No. 5``, ``Fig. 3``, ``Nr. 4``, ``aprox. 30``, a street ``Goethestr. 5``, after an
   elision too: ``l'art. 3``) when a number or a lettered number (``art. L. 123-4``) follows,
   or a Roman numeral (``sec. XIX``), ``Co.`` before a company form (``Co. KG``), a number word
   after a number unless a sentence-starting word follows (``3 Mio. Euro``), a doctorate's
   field (``Dr. med. Weber``), a doubled-letter plural before another (``EE. UU.``), a dotted
   abbreviation of any language before a number or a path (``p.e. /etc``, ``v.d. 2K``), a list
   number at the start of a sentence or after a colon (``1. First``), a section number at the
   start of a sentence (``1.3. Documentation``), ``et al.`` before a bracketed year or
   reference (``et al. (2020)``), and a German ordinal after an article or before a month or an
   ordinal's noun (``zum 3. Mal``, ``3. Oktober``, ``als 2. Sieger``) all continue the sentence.
7. An ellipsis right after ``(`` or ``[`` is an elision (``[...]``), not an end; nor is a mark
   before any letter or digit of the sentence (``‚?‘ Impliziert``: a quoted mark naming itself).

Known limits (documented, not bugs): a sentence ending in a single capital letter with no
such context (``signé par Paul S. Il part``: read as an initial), a capital unit before a word
that is not a function word (``230 V. Tout``) or a title-like word (``Main St.``) is joined to
the next; ``U.S. Army`` splits after ``U.S.`` when a capital follows; a sentence that starts
with a lowercase letter is joined to the previous one in text that has capitals; a sentence
ending in a lowercase title or a doctorate's field (``my prof. She``, ``wurde Dr. med. Dann``)
or a street before a number (``Hauptstr. 5 Leute``) is joined to the next.
"""

from __future__ import annotations

import re

from explorer import limits
from explorer.lru import per_text, spans_size
from explorer.text.abbreviations import (
    ABBREV_LOWER,
    ARTICLES,
    BEFORE_NUMBER,
    BEFORE_ROMAN,
    COMPANY_FORMS,
    DOCTOR_FIELDS,
    GERMAN_ORDINAL_BEFORE,
    GERMAN_ORDINAL_NEXT,
    LETTER_NOUNS,
    LINKING_WORDS,
    NEVER_FINAL,
    NUMBER_WORDS,
    SENTENCE_STARTERS,
    SO_ON,
    TITLES,
    UNIT_CAPITALS,
    UNIT_LETTERS,
)
from explorer.text.line_breaks import fence_cuts, line_ends_sentence

# -- paragraph breaks --------------------------------------------------------------------
_PARA = re.compile(r"\n[^\S\n]*\n\s*|\u2029\s*")

# -- sentence-end candidates ---------------------------------------------------------------
_CJK_CHARS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff66-\uff9f"
#: Closing quotes and brackets kept with the sentence they end: German and Czech close with
#: “ ‘ (opened by „ ‚) and »…« with «, Hebrew with ״; an opening “ or « is followed by a word, not
#: by a space, so it never closes a candidate.
_CLOSERS = "\"'”’»)\\]」』）】〕〉》›“‘«‹״"
_CJK_CLOSERS = "」』）】〕〉》”’\"'»)"
#: End marks that need no space after them: CJK, the full-width full stop (not between digits),
#: Armenian ։, Ethiopic ። and ፧, Myanmar ။, Khmer ។ and ៕.
_SPACELESS_ENDS = "。｡！？։።፧။។៕"
#: Thai writes no end mark: a space between two Thai words ends a sentence (or a clause). Before
#: it a Thai letter, vowel or tone mark, or ๚ ๛ (not ๆ, ฯ or a Thai digit: "ต่าง ๆ นานา", "กรุงเทพฯ
#: เป็น"); after it a consonant or a leading vowel. A Latin word or a number on either side goes on
#: ("ปี 2566 มี", "ใช้ Python เขียน").
_THAI_BEFORE = "\u0e01-\u0e2e\u0e30-\u0e3a\u0e40-\u0e45\u0e47-\u0e4e\u0e5a\u0e5b"
_THAI_AFTER = "\u0e01-\u0e2e\u0e40-\u0e44"
_CAND = re.compile(
    # a Markdown heading line: a boundary right after it
    r"(?P<head>(?m:^)#{1,6}[ \t][^\n]*\n)"
    # a single newline (decided by line_breaks.line_ends_sentence)
    r"|(?P<nl>\n)"
    # CJK end marks: no space needed
    rf"|(?P<cjk>(?:[{_SPACELESS_ENDS}]|．(?![0-9０-９]))[{_SPACELESS_ENDS}!?]*[{_CJK_CLOSERS}]*)"
    # ASCII !/? directly followed by a CJK character
    rf"|(?P<bang>[!?]+(?=[{_CJK_CHARS}]))"
    # Latin end marks + closing quotes/brackets/footnote marks, then whitespace or the end
    # (and the Greek question mark, ";" after a Greek letter, or before a Greek capital after a
    # code or a quote, "με το --fix-missing; Θέλετε": NFC makes U+037E a semicolon)
    r"|(?P<lat>(?P<run>(?:\.(?: \.){2,}|[.!?…‼‽⁇⁈⁉؟।॥۔]|(?<=[\u0370-\u03ff\u1f00-\u1fff])[;\u037e]"
    r"|[;\u037e](?=\s+[\u0386\u0388-\u038f\u0391-\u03a9]))+)"
    rf"(?:[{_CLOSERS}]|[ \u00a0\u202f]+[»›]|\[\d{{1,3}}\])*"
    # never ends before a spaced closing guillemet: in "« Tu viens ? », dit-il" and "« non ! »."
    # the quote goes on into the sentence (a » before a word opens a German quote: "Was? »Nein«")
    r"(?=\s|\Z)(?![ \u00a0\u202f]+[»›](?![^\W\d_])))"
    # Thai: the spaces between two Thai words, kept with the sentence before
    rf"|(?P<thai>(?<=[{_THAI_BEFORE}])[ \t]+(?=[{_THAI_AFTER}]))"
)
_TOKEN_BEFORE = re.compile(r"\S*\Z")
_OPENERS = "\"'“‘«([¿¡‹„‚»›״"
_NEXT = re.compile(rf"\s*[{_OPENERS}]*\s*(\S)")
_NEXT_WORD = re.compile(r"\s*(\w+)")
_ELLIPSIS = re.compile(r"\.(?: ?\.){2,}|…")


_PREV_TOKEN = re.compile(r"(\S+)\s+\Z")
_NUMBER = re.compile(r"\d+(?:[.,\u00a0\u202f]\d+)*")
#: A year or reference number in brackets after "et al.".
_CITED_YEAR = re.compile(r"\s*[(\[]\d")
#: A lettered number after "art." or "p.": "art. L. 123-4" (French codes' L, R, D articles), "p. A3".
_LETTER_NUMBER = re.compile(r"\s*[A-Z]\.?[ \u00a0]?\d")
_INITIAL_NEXT = re.compile(r"\s*[^\W\d_]\.(?=\s|\Z)")
_ELISION = re.compile(r"\A(?:\w{1,2}|qu|jusqu|lorsqu|puisqu)['’]")
_JA_QUOTATIVE = "とっ"
_LIST_NUMBER = re.compile(r"\d{1,3}(?:\.\d{1,3}){0,3}\Z")  # "1.", and section numbers "1.3.", "5.1.3."
_SPACES = re.compile(r"\s*")
_HAS_ALNUM = re.compile(r"[^\W_]")
#: A Roman numeral after "sec." or "vol.": two letters or more, or I/V/X before punctuation
#: ("Wait a sec. I am" goes on as English).
_NEXT_ROMAN = re.compile(
    r"\s*(?:(?=[IVXLCDM]{2})M{0,4}(?:C[MD]|D?C{0,3})(?:X[CL]|L?X{0,3})(?:I[XV]|V?I{0,3})(?![\w'’])"
    r"|[IVX](?=[.,;:)]))"
)
_DOUBLED = re.compile(r"([^\W\d_])\1")
#: An abbreviation of short dotted pieces: "p.e", "p.es", "v.d", "z.B", "т.е" (its last "." is the candidate).
_DOTTED = re.compile(r"[^\W\d_]{1,2}(?:\.[^\W\d_]{1,3})+")
#: What follows a dotted abbreviation that goes on: a path, or what never starts a sentence
#: (after "Production I.G." a heading's "= = Music = =" starts one).
_NOT_FIRST = "/~,;:"
_NEXT_DOUBLED = re.compile(r"\s*([^\W\d_])\1\.")
#: What precedes a doctorate's field: "Dr. med.", "Dr. rer. nat.", "Dr. h. c. mult.".
_DOCTOR_BEFORE = frozenset(DOCTOR_FIELDS | {"dr", "dres", "h", "c"})


def paragraph_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Blank-line separated paragraphs of ``text[start:end]``, trimmed, as absolute spans."""
    end = len(text) if end is None else end
    out: list[tuple[int, int]] = []
    pos = start
    for m in _PARA.finditer(text, start, end):
        _add_trimmed(text, pos, m.start(), out)
        pos = m.end()
    _add_trimmed(text, pos, end, out)
    return out


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentences of ``text[start:end]`` as absolute, whitespace-trimmed, increasing spans.

    Paragraph breaks always end a sentence. Every non-space character is in exactly one span.
    Whole-document calls are memoised: the strategies, the metrics and the app all ask for the
    same document's sentences after every parameter change.
    """
    if start == 0 and (end is None or end == len(text)):
        return list(_whole_text_sentences(text))
    return _sentence_spans(text, start, end)


@per_text(limits.TEXT_MEMO_BYTES, spans_size)
def _whole_text_sentences(text: str) -> tuple[tuple[int, int], ...]:
    # str caches its own hash, so a repeated look-up of the same document string is cheap.
    return tuple(_sentence_spans(text, 0, None))


def _sentence_spans(text: str, start: int, end: int | None) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for ps, pe in paragraph_spans(text, start, end):
        pos = ps
        for cut in _cuts(text, ps, pe):
            if cut > pos:
                _add_trimmed(text, pos, cut, out)
                pos = cut
        _add_trimmed(text, pos, pe, out)
    return out


def _cuts(text: str, ps: int, pe: int) -> list[int]:
    """Sentence boundaries inside the paragraph ``text[ps:pe]``, increasing."""
    cuts: list[int] = []
    para = text[ps:pe]
    caseless = para == para.lower()  # no capital letter anywhere: lowercased text
    sent_start = ps
    for m in _CAND.finditer(text, ps, pe):
        kind = m.lastgroup
        if kind == "lat":
            if not _latin_end(text, m, ps, pe, sent_start, caseless):
                continue
            cut = m.end()
        elif kind == "nl":
            if not line_ends_sentence(text, m.start(), ps, pe):
                continue
            cut = m.start()
        elif kind == "cjk":
            cut = m.end()
            if m.end() < pe and text[m.end()] in _JA_QUOTATIVE and text[m.end() - 1] in _CJK_CLOSERS:
                continue  # 「…。」と言った: the quote is part of the sentence
        else:  # head, bang, thai
            cut = m.end()
        cuts.append(cut)
        sent_start = cut
    return fence_cuts(text, ps, pe, cuts)


def _latin_end(text: str, m: re.Match, ps: int, pe: int, sent_start: int, caseless: bool) -> bool:
    """Decide whether a Latin end-mark candidate really ends the sentence (rules 5-7)."""
    n = _NEXT.match(text, m.end(), pe)
    if n is None:
        return True  # end of paragraph
    nxt = n.group(1)
    i0 = m.start()
    run = m.group("run")
    ellipsis = _ELLIPSIS.fullmatch(run) is not None
    if ellipsis and i0 > ps and text[i0 - 1] in "([":
        return False  # elision mark [...]
    if nxt.islower() and (not caseless or ellipsis):
        return False
    if not _HAS_ALNUM.search(text, sent_start, i0):
        return False  # "‚?‘ Impliziert", '"." means': a quoted mark names itself, no sentence yet
    if run != ".":
        return True
    t = _TOKEN_BEFORE.search(text, max(ps, i0 - 40), i0)
    tok_start = t.start() if t else i0
    tok = text[tok_start:i0].lstrip(_OPENERS)
    if not tok:
        return True
    if len(tok) == 1 and tok.isalpha():
        return _letter_ends(text, m.end(), pe, max(sent_start, tok_start - 60), tok_start, tok, nxt)
    if _LIST_NUMBER.match(tok):
        return not _number_goes_on(text, m.end(), pe, sent_start, tok_start, tok)
    return not _word_goes_on(text, m.end(), pe, sent_start, tok_start, tok, nxt, caseless)


def _word_goes_on(
    text: str, after: int, pe: int, sent_start: int, tok_start: int, tok: str, nxt: str, caseless: bool
) -> bool:
    """Whether the word ``tok`` before "." is an abbreviation that continues the sentence: a
    title, a word never final, a word before a number, "Co. KG", "3 Mio. Euro", "Dr. med.",
    "EE. UU."."""
    bare = _ELISION.sub("", tok)  # l'art. 3, d'env. 10, l'avv. Galli: the word after the elision
    low = bare.lower()
    if caseless and low in ABBREV_LOWER:
        return True
    if (bare in TITLES and not _name_suffix(text, bare, tok_start, sent_start)) or low in NEVER_FINAL:
        return True
    if (nxt.isdigit() or nxt in _NOT_FIRST) and _DOTTED.fullmatch(bare):
        return True  # "p.e. /etc/passwd", "v.d. 2K", "C.S.A. ,": a dotted abbreviation before no sentence
    if low == "al" and _CITED_YEAR.match(text, after, pe):
        return True  # "Dupont et al. (2020) show", "et al. [12]": a citation goes on
    if low in BEFORE_NUMBER or low.endswith("str"):  # "-str." is a street: "Goethestr. 5"
        if nxt.isdigit() or nxt in "$€£¥§#" or _LETTER_NUMBER.match(text, after, pe):
            return True
        if low in BEFORE_ROMAN and _NEXT_ROMAN.match(text, after, pe):
            return True  # "sec. XIX", "vol. II"
    w = _NEXT_WORD.match(text, after, pe)
    word = w.group(1) if w else ""
    if bare in ("Co", "Cie"):
        return word in COMPANY_FORMS  # "GmbH & Co. KG", but "Smith & Co. The firm"
    p = _PREV_TOKEN.search(text, max(sent_start, tok_start - 40), tok_start)
    prev = p.group(1) if p else ""
    if bare in NUMBER_WORDS and _NUMBER.fullmatch(prev):
        return word not in SENTENCE_STARTERS  # "3 Mio. Euro", but "beträgt 3 Mio. Die Firma"
    if bare in DOCTOR_FIELDS:
        return prev.rstrip(".").lower() in _DOCTOR_BEFORE  # "Dr. med. Weber", "Dr. rer. nat."
    # Spanish plurals by doubled letters: "EE. UU.", "RR. HH.", "CC. OO."
    return _DOUBLED.fullmatch(bare) is not None and _NEXT_DOUBLED.match(text, after, pe) is not None


def _number_goes_on(text: str, after: int, pe: int, sent_start: int, tok_start: int, tok: str) -> bool:
    """Whether a number before "." continues the sentence: a list or section number ("1. First",
    "1.3. Documentation"), a German ordinal ("am 3. Oktober", "zum 3. Mal", "als 2. Sieger")."""
    if _SPACES.fullmatch(text, sent_start, tok_start):
        return True  # "1. First", "1.3. Documentation" at the start of a sentence
    if "." not in tok and _after_colon(text, sent_start, tok_start):
        return True  # "Steps: 1. Open" (but "Version : 2.1. La suite" ends)
    w = _NEXT_WORD.match(text, after, pe)
    if w and w.group(1) in GERMAN_ORDINAL_NEXT:
        return True  # "am 3. Oktober", "als 2. Sieger"
    p = _PREV_TOKEN.search(text, max(sent_start, tok_start - 40), tok_start)
    return "." not in tok and p is not None and p.group(1).lower() in GERMAN_ORDINAL_BEFORE


def _letter_ends(text: str, after: int, pe: int, lo: int, tok_start: int, tok: str, nxt: str) -> bool:
    """Whether "<letter>." ends the sentence (rule 6): by default it does not (initials
    ``J. R. R. Tolkien``, ``Jean-Paul S. Martin``, ``M. Dupont``, ``z. B.``); it does after a
    number for a unit (``à 9 h. Il``, ``3 m. Le``), after a noun that names things by a letter
    (``vitamine C. Elle``, ``plan B. Il``), and after an article, a number (a capital unit) or a
    letter noun and its adjective when a sentence-starting word follows (``an A. She``,
    ``230 V. Le``, ``zona climatica E. La``). ``lo`` is where the sentence starts (or 60
    characters back)."""
    p = _PREV_TOKEN.search(text, lo, tok_start)
    if p is None:
        return False  # first word of the sentence: an initial or M.
    prev = p.group(1).strip(_OPENERS)
    if tok.islower():
        return (tok in UNIT_LETTERS and _NUMBER.fullmatch(prev) is not None) or (prev, tok) in SO_ON
    if nxt.isdigit() or _INITIAL_NEXT.match(text, after, pe):
        return False  # a chain of initials (J. R. R.), or a number follows (annexe A. 3)
    word = _ELISION.sub("", prev).lower()  # l'annexe -> annexe
    if word in LETTER_NOUNS:
        return True
    w = _NEXT_WORD.match(text, after, pe)
    if w is None or w.group(1) not in SENTENCE_STARTERS:
        return False
    if word in ARTICLES or (tok in UNIT_CAPITALS and _NUMBER.fullmatch(prev)):  # an A. She; 230 V. Le
        return True
    if not (prev.isalpha() and prev.islower()) or prev in LINKING_WORDS:
        return False
    p2 = _PREV_TOKEN.search(text, lo, p.start())  # "zona climatica E. La", not "team captain A. Smith"
    return p2 is not None and _ELISION.sub("", p2.group(1)).lower() in LETTER_NOUNS


def _name_suffix(text: str, tok: str, tok_start: int, sent_start: int) -> bool:
    """"Sr." after a capitalised word inside the sentence is English "Senior" ("Martin Luther King
    Sr. He was"), which may end a sentence; Spanish "Sr." comes first or after an article."""
    if tok != "Sr":
        return False
    p = _PREV_TOKEN.search(text, max(sent_start, tok_start - 40), tok_start)
    return p is not None and p.start() > sent_start and p.group(1)[:1].isupper()


def _after_colon(text: str, lo: int, i: int) -> bool:
    """True if the last non-space character before ``i`` (not before ``lo``) is a colon."""
    i -= 1
    while i >= lo and text[i].isspace():
        i -= 1
    return i >= lo and text[i] == ":"


def _add_trimmed(text: str, s: int, e: int, out: list[tuple[int, int]]) -> None:
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    if e > s:
        out.append((s, e))
