"""What BM25 reads of a text: Unicode words, case- and accent-folded, CJK runs as character
pairs, and each word's form for its stemmer (:func:`forms`).

Kept apart from :mod:`explorer.retrieval.lexical` (stop words, languages, stemming, the index):
everything here is about reading characters, and the app marks a hit's matched words with it too.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import regex

from explorer.text.measures import CJK_RANGES

#: A word: the ``regex`` module's ``\\w`` holds combining marks (``re``'s split "हिन्दी" at each vowel sign).
WORD = regex.compile(r"\w+")


#: What decomposition split and fold puts back together: Hangul letters (jamo), kana voicing marks.
_RECOMPOSED = re.compile("[\u1100-\u11ff\u3099\u309a]")
#: Thai, Lao, Myanmar and Khmer: written, like CJK, without spaces between words.
_SOUTHEAST_ASIAN = "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"
#: A character of a script without spaces between words (Hangul letters included): text that
#: needs more than Latin-script folding.
EAST_ASIAN = re.compile(f"[{CJK_RANGES}{_SOUTHEAST_ASIAN}]")
#: Blocks whose combining marks are vowel signs, viramas and tone marks, part of the letters
#: (Indic scripts, Thai to Tibetan, Myanmar, Khmer and their kin): folding keeps them. Elsewhere a
#: combining mark is an accent, dropped.
_LETTER_MARKS = re.compile(
    "[\u0900-\u0fff\u1000-\u109f\u1780-\u17ff\u1900-\u1aaf\u1b00-\u1bff\ua800-\uabff\U00011000-\U00011fff"
    "\u3099\u309a]"  # and kana voicing marks: ガラス (glass) is not カラス (crow)
)


#: Letters of scripts paired by character whose compatibility decomposition makes two: SARA AM.
_KEPT_WHOLE = (("\u0e4d\u0e32", "\u0e33"), ("\u0ecd\u0eb2", "\u0eb3"))
_WHOLES = frozenset(whole for _, whole in _KEPT_WHOLE)
#: Arabic tatweel (kashida): it lengthens a line, "كـتاب" is "كتاب"; folding drops it.
_TATWEEL = "\u0640"


def folded_case(text: str, form: str = "NFKC") -> str:
    """``text`` in Unicode's compatibility ``form`` (NFKC or NFKD), case-folded: the form first,
    so a character whose compatibility letters are capitals ("ℌ", a PDF's bold "𝐁", "㎒") reads
    lower-case, as its plain spelling does (folded first, "㎒" stayed "MHz" and missed "mhz")."""
    out = unicodedata.normalize(form, text).casefold()
    return out if unicodedata.is_normalized(form, out) else unicodedata.normalize(form, out)


def _unmarked(text: str) -> str:
    """Case-folded, compatibility-decomposed text with its accents (combining marks outside
    :data:`_LETTER_MARKS`) removed."""
    decomposed = folded_case(text, "NFKD")
    for parts, whole in _KEPT_WHOLE:  # a Thai or Lao vowel NFKD splits in two: one character,
        decomposed = decomposed.replace(parts, whole)  # as the pairs of the text around it count
    if _TATWEEL in decomposed:  # Arabic's stretching stroke is a letter to \w, but not spelling
        decomposed = decomposed.replace(_TATWEEL, "")
    if "ı" in decomposed:  # Turkish dotless i: "KAPI" case-folds to "kapi", "kapı" must meet it
        decomposed = decomposed.replace("ı", "i")
    return "".join(
        c for c in decomposed if not unicodedata.combining(c) or (c >= "\u0900" and _LETTER_MARKS.match(c))
    )  # the first test alone for Latin accents (U+0300-036F): this is BM25's hot path


def fold(text: str) -> str:
    """:func:`_unmarked` text, with what decomposition split put back together: Hangul syllables
    (split into letters, jamo) and voiced kana (ガ into カ and its mark)."""
    folded = _unmarked(text)
    return unicodedata.normalize("NFC", folded) if _RECOMPOSED.search(folded) else folded


#: Scripts written without spaces between words (Han, kana, Thai...) or with particles glued to
#: them (Hangul): their runs become overlapping character pairs.
CJK_RUN = re.compile(f"[{CJK_RANGES}{_SOUTHEAST_ASIAN}]+")


def words(text: str) -> list[str]:
    """Folded ``\\w+`` words; a run of CJK characters becomes its overlapping character pairs
    ("字节顺序" → "字节", "节顺", "顺序"), as Lucene's CJK analyser does: ``\\w+`` alone made
    a whole clause one token, so a Chinese or Japanese question matched nothing."""
    folded = _unmarked(text)
    if not EAST_ASIAN.search(folded):  # one look at the text (the BM25 hot path): Latin text
        return WORD.findall(folded)
    words = WORD.findall(fold(text))
    out: list[str] = []
    for w in words:
        at = 0
        for m in CJK_RUN.finditer(w):
            if m.start() > at:
                out.append(w[at : m.start()])
            run = m.group()
            out += [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
            at = m.end()
        if at < len(w):
            out.append(w[at:])
    return out


def cjk_pieces(word: str) -> list[tuple[int, int]]:
    """Offsets in ``word`` of the pieces :func:`words` makes of its CJK runs: each overlapping
    character pair, or a lone character (the other letters of the word are left out)."""
    out = []
    for r in CJK_RUN.finditer(word):
        out += [(r.start(), r.end())] if r.end() - r.start() == 1 else [(i, i + 2) for i in range(r.start(), r.end() - 1)]
    return out


def _joins_previous(ch: str) -> bool:
    """Whether NFKC may compose ``ch`` with the character before it: a mark (Indic vowel signs
    included), a Hangul vowel or final consonant letter, a half-width voicing mark."""
    return (
        unicodedata.combining(ch) != 0
        or unicodedata.category(ch).startswith("M")
        or "\u1160" <= ch <= "\u11ff"
        or ch in "\uff9e\uff9f"
    )


def word_spans(text: str, start: int, end: int) -> list[tuple[str, list[int], list[int]]]:
    """The words of ``text[start:end]`` as BM25 reads them (after NFKC: "x²y" is one word,
    "x2y"), each with the offsets in ``text`` where each of its characters starts and ends, so
    a word or a piece of it maps back to the characters written ("²" for its "2"; a syllable
    NFKC composed of three Hangul letters, or "ﾊﾟ" that became "パ", to all of them)."""
    piece = text[start:end]
    if unicodedata.is_normalized("NFKC", piece):
        return [(m.group(), list(range(m.start(), m.end())), list(range(m.start() + 1, m.end() + 1)))
                for m in WORD.finditer(text, start, end)]
    norm: list[str] = []
    starts: list[int] = []  # where in ``text`` the characters each of ``norm``'s comes from start
    ends: list[int] = []  # ... and end
    i = 0
    while i < len(piece):  # a character with the marks and letters NFKC may compose into it
        j = i + 1
        while j < len(piece) and _joins_previous(piece[j]):
            j += 1
        n = piece[i] if piece[i] in _WHOLES and j == i + 1 else unicodedata.normalize("NFKC", piece[i:j])
        norm.append(n)
        starts += [start + i] * len(n)
        ends += [start + j] * len(n)
        i = j
    return [(m.group(), starts[m.start() : m.end()], ends[m.start() : m.end()]) for m in WORD.finditer("".join(norm))]


def forms(text: str) -> list[tuple[str, str]]:
    """Each BM25 word of ``text`` as ``(what its stemmer reads, the folded word)``, in order.

    Snowball's rules are written for accented words, so the stemmer reads the word lower-cased
    and composed (NFKC: "ﬁ" and "x²" as "fi" and "x2"), and its stem is folded afterwards
    (:func:`folded_stems`): "signalée" and "signaler" both give "signal", where folded first
    "signalee" gave "signale" and missed. The folded word decides stop words. A word with an
    accent that has no composed letter, a word whose folding splits it ("½"), and a word in a
    script without spaces (CJK pairs) are read as their folded pieces; the other words of the
    same text are read as written."""
    out: list[tuple[str, str]] = []
    pairs: dict[str, tuple[str, str]] = {}  # one pair per distinct word: a corpus holds millions
    for w in WORD.findall(folded_case(text)):
        if w.isascii():  # most words: folding changes nothing
            out.append(pairs.get(w) or pairs.setdefault(w, (w, w)))
        else:
            out += _word_forms(w)
    return out


@lru_cache(maxsize=1 << 16)
def _word_forms(word: str) -> tuple[tuple[str, str], ...]:
    if EAST_ASIAN.search(word):  # CJK pairs (also from a compatibility character: ㍿ is 株式会社)
        return tuple((p, p) for p in words(word))
    pieces = WORD.findall(fold(word))
    if len(pieces) != 1 or _TATWEEL in word or any(unicodedata.combining(c) and not _LETTER_MARKS.match(c) for c in word):
        return tuple((p, p) for p in pieces)
    return ((word, pieces[0]),)


def folded_stems(stems: list[str]) -> list[str]:
    """Stems of :func:`forms`' first items, folded as the words are."""
    return [s if s.isascii() else fold(s) for s in stems]
