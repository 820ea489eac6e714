"""Lexical retrieval: a tokeniser for BM25 and a BM25 index over chunk texts (their fusion with
the dense ranking is :func:`explorer.retrieval.ranking.hybrid_hits`).

Dense retrieval misses exact terms (codes, names, numbers) that BM25 finds, and the reverse for
paraphrases, so the app shows both and their fusion. BM25 needs no model: tokens are Unicode
words (``\\w+`` with the combining marks that belong to them), case-folded, accents folded
(NFKD, combining marks dropped, so "Électricité" matches "electricite"; the vowel signs and
viramas of Indic and South-East Asian scripts are letters, not accents, and stay), with small
English and French stop-word lists removed, and the common function words of a text's
language when it is German, Spanish, Italian, Portuguese or Dutch (of a question, those of the
indexed documents' languages); numbers are kept. Scripts written without spaces
(Han, kana, Hangul, Thai, Lao, Khmer, Myanmar) become overlapping character pairs.
Words are then stemmed with Snowball (PyStemmer, no data files), so "paquets" meets "paquet" and
"filters" meets "filter": each document's chunks take the stemmer of its language (English,
French, German, Spanish, Italian, Portuguese or Dutch: the one whose own function words they
hold most; English when none), in an index and in a streamed corpus alike; a query is stemmed
as French, as English and as every other language of the indexed documents, and keeps every
distinct stem (its language is not known, and a stem the texts do not hold matches nothing). Measured on the French
set (recursive 500, e5): BM25 hit@5 0.63 -> 0.70, hybrid 0.77 -> 0.80; on 3 Chroma corpora
0.899 -> 0.906 and 0.920 -> 0.924. (Both stemmers one after the other measured as well on French
but cut "filter" to "filt" while "filters" stays "filter".)

Scoring is ``bm25s`` (Lucene variant) with k1 = 0.9, b = 0.4, Anserini's defaults, rather than
Lucene's 1.5 / 0.75: chunks are short and of like length, so less length normalisation and an
earlier saturation of repeated words rank better. Measured (2026-12-05, BM25 alone, hit@5): French
set 0.70 -> 0.73 (500/0) and 0.75 -> 0.78 (1000/200); Chroma's 472 questions 91.7 -> 93.0 %, recall
88.2 -> 90.2 %; with e5 the hybrid gains 2 Chroma questions and 0-2 French ones. The ten-question
German and Spanish sets move by one question either way.
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

import numpy as np
import regex

from explorer.text.measures import CJK_RANGES, FUNCTION_WORDS, likeliest_language
from explorer.text.measures import STOPWORDS as STOPWORDS_BY_LANGUAGE

#: BM25 term-frequency saturation and length normalisation (Anserini's defaults; see above).
BM25_K1 = 0.9
BM25_B = 0.4

#: A word: the ``regex`` module's ``\\w`` holds combining marks (``re``'s split "हिन्दी" at each vowel sign).
_WORD = regex.compile(r"\w+")

# Function words only. A word that is a function word in one language but a content word in the
# other is left out, since the corpora mix both: English "an", "or", "but" (French year, gold,
# goal), French "car", "son", "ton", "pour", "plus" (English car, son, ton, pour, plus).
# Written with their accents; folded like the text below. Elision fragments ("l'", "qu'",
# "n't", "'s") are listed because ``\w+`` splits them off.
_ENGLISH = """
a about above after again against all am and any are as at be because been before being below
between both by can could did do does doing down during each few for from further had has
have having he her here hers herself him himself his how i if in into is it its itself just me
more most my myself no nor not now of off on once only other our ours ourselves out over own
same she should so some such than that the their theirs them themselves then there these they
this those through to too under until up very was we were what when where which while who whom
why will with would you your yours yourself yourselves s t d ll m re ve don doesn didn isn aren
wasn weren hasn haven hadn wouldn shouldn couldn also
"""
_FRENCH = """
à au aux avec ce ces cet cette c d dans de des du elle elles en et étaient était étant été être
eu il ils j je l la le les leur leurs lui m ma mais me même mes moi mon n ne ni nos notre nous on
ou où par pas qu que quel quelle quelles quels qui s sa sans se ses si sont sur t ta te tes toi
tu un une vos votre vous y a ai as avons avez ont avait avaient sera seront serait est suis es
sommes êtes été ceci cela ça celui celle ceux celles dont lors quand comme
"""

#: Languages whose Snowball stemmer a document can get, by their code in
#: :data:`explorer.text.measures.STOPWORDS` (the function words that pick one); English and
#: French first (a tie goes to the first), and a question is always stemmed as both of them.
STEMMERS = {
    "en": "english",
    "fr": "french",
    "de": "german",
    "es": "spanish",
    "it": "italian",
    "pt": "portuguese",
    "nl": "dutch",
}
LANGUAGES = tuple(STEMMERS.values())
ALWAYS_STEMMED = ("french", "english")

#: What decomposition split and fold puts back together: Hangul letters (jamo), kana voicing marks.
_RECOMPOSED = re.compile("[\u1100-\u11ff\u3099\u309a]")
#: Thai, Lao, Myanmar and Khmer: written, like CJK, without spaces between words.
_SOUTH_EAST_ASIAN = "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"
#: A character of a script without spaces between words (Hangul letters included): text that
#: needs more than Latin-script folding.
_EAST_ASIAN = re.compile(f"[{CJK_RANGES}{_SOUTH_EAST_ASIAN}]")
#: Blocks whose combining marks are vowel signs, viramas and tone marks, part of the letters
#: (Indic scripts, Thai to Tibetan, Myanmar, Khmer and their kin): folding keeps them. Elsewhere a
#: combining mark is an accent, dropped.
_LETTER_MARKS = re.compile(
    "[\u0900-\u0fff\u1000-\u109f\u1780-\u17ff\u1900-\u1aaf\u1b00-\u1bff\ua800-\uabff\U00011000-\U00011fff"
    "\u3099\u309a]"  # and kana voicing marks: ガラス (glass) is not カラス (crow)
)


#: Letters of scripts paired by character whose compatibility decomposition makes two: SARA AM.
_KEPT_WHOLE = (("\u0e4d\u0e32", "\u0e33"), ("\u0ecd\u0eb2", "\u0eb3"))


def _unmarked(text: str) -> str:
    """Case-folded, compatibility-decomposed text with its accents (combining marks outside
    :data:`_LETTER_MARKS`) removed."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    for parts, whole in _KEPT_WHOLE:  # a Thai or Lao vowel NFKD splits in two: one character,
        decomposed = decomposed.replace(parts, whole)  # as the pairs of the text around it count
    return "".join(
        c for c in decomposed if not unicodedata.combining(c) or (c >= "\u0900" and _LETTER_MARKS.match(c))
    )  # the first test alone for Latin accents (U+0300-036F): this is BM25's hot path


def fold(text: str) -> str:
    """:func:`_unmarked` text, with what decomposition split put back together: Hangul syllables
    (split into letters, jamo) and voiced kana (ガ into カ and its mark)."""
    folded = _unmarked(text)
    return unicodedata.normalize("NFC", folded) if _RECOMPOSED.search(folded) else folded


def _folded_words(words: Iterable[str]) -> frozenset[str]:
    return frozenset(w for w in map(fold, words) if _WORD.fullmatch(w))


#: Stop words of both languages, folded (so "été" is stored as "ete"): left out of every text.
STOP_WORDS: frozenset[str] = _folded_words((_ENGLISH + _FRENCH).split())


#: Function words that carry a question's meaning ("sin guardar", "nicht mehr", "più di"): kept.
_MEANINGFUL_WORDS = "sin no más muy sobre entre cuando porque nicht noch non più não mais niet geen nog"
_MEANINGFUL = frozenset(_MEANINGFUL_WORDS.split())
#: Function words of a language that its list in :mod:`explorer.text.measures` lacks.
_MORE_STOP_WORDS = {"de": ("man",)}


def _language_stop_words() -> dict[str, frozenset[str]]:
    """The common function words of German, Spanish, Italian, Portuguese and Dutch (the lists
    that name a text's language, :data:`~explorer.text.measures.FUNCTION_WORDS`, less the words
    that carry meaning), folded, by stemmer name. They hold other languages' content words
    (German "man", "die"), so they leave only a text in their own language, and a question over
    one. Why not Snowball's longer lists (bm25s ships them): they drop "sin", "hasta", "todos",
    and lost 2 of 20 Spanish questions where these kept every one (bench/data/european)."""
    return {
        STEMMERS[code]: _folded_words(w for w in (*words, *_MORE_STOP_WORDS.get(code, ())) if w not in _MEANINGFUL)
        for code, words in FUNCTION_WORDS.items()
        if code not in ("en", "fr")  # theirs are the longer lists above, always left out
    }


#: Each stemmed language's own stop words beyond :data:`STOP_WORDS` (none for English and French).
LANGUAGE_STOP_WORDS = _language_stop_words()


def stop_words(languages: Iterable[str] = ()) -> frozenset[str]:
    """The words left out of texts in ``languages`` (stemmer names), and of a question over
    them: English and French function words always, and each of those languages' own."""
    return _stop_words(frozenset(languages))


@functools.cache
def _stop_words(languages: frozenset[str]) -> frozenset[str]:
    return STOP_WORDS.union(*(LANGUAGE_STOP_WORDS[lang] for lang in languages if lang in LANGUAGE_STOP_WORDS))




def _own_words() -> dict[str, frozenset[str]]:
    """Each language's own function words by its code, folded; a word two languages share once
    folded (the Italian "è" and the Portuguese "é" both become "e") belongs to neither."""
    folded = {code: frozenset(map(fold, words)) for code, words in STOPWORDS_BY_LANGUAGE.items()}
    seen = Counter(w for words in folded.values() for w in words)
    return {code: frozenset(w for w in words if seen[w] == 1) for code, words in folded.items()}


#: Each language's own function words, folded: they decide which stemmer a text gets.
_ONLY = _own_words()
_local = threading.local()  # a PyStemmer stemmer is not thread-safe: one set per thread


def _stemmer(language: str) -> Any:
    stemmers = getattr(_local, "stemmers", None)
    if stemmers is None:
        stemmers = _local.stemmers = {}
    if language not in stemmers:
        import Stemmer

        stemmers[language] = Stemmer.Stemmer(language)
    return stemmers[language]


#: Scripts written without spaces between words (Han, kana, Thai...) or with particles glued to
#: them (Hangul): their runs become overlapping character pairs.
_CJK_RUN = re.compile(f"[{CJK_RANGES}{_SOUTH_EAST_ASIAN}]+")


def _words(text: str) -> list[str]:
    """Folded ``\\w+`` words; a run of CJK characters becomes its overlapping character pairs
    ("字节顺序" → "字节", "节顺", "顺序"), as Lucene's CJK analyser does: ``\\w+`` alone made
    a whole clause one token, so a Chinese or Japanese question matched nothing."""
    folded = _unmarked(text)
    if not _EAST_ASIAN.search(folded):  # one look at the text (the BM25 hot path): Latin text
        return _WORD.findall(folded)
    words = _WORD.findall(fold(text))
    out: list[str] = []
    for w in words:
        at = 0
        for m in _CJK_RUN.finditer(w):
            if m.start() > at:
                out.append(w[at : m.start()])
            run = m.group()
            out += [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
            at = m.end()
        if at < len(w):
            out.append(w[at:])
    return out


def language_of(word_lists: Iterable[list[str]]) -> str:
    """The stemmer of the language whose own function words the folded words hold most, by the
    rule the document profile names a language with (:func:`~explorer.text.measures.likeliest_language`);
    English when none is named (English stemming leaves other scripts as they are)."""
    counts = dict.fromkeys(_ONLY, 0)
    total = 0
    for words in word_lists:
        total += len(words)
        for code, only in _ONLY.items():
            counts[code] += sum(map(only.__contains__, words))
    return STEMMERS[likeliest_language(counts, total) or "en"]


def tokenize_many(texts: Sequence[str]) -> list[list[str]]:
    """BM25 tokens of texts indexed together: folded ``\\w+`` words minus stop words, stemmed
    with the stemmer of their language (one for all of them), in order (repeats kept)."""
    return tokenize_with_language(texts)[0]


def tokenize_with_language(texts: Sequence[str]) -> tuple[list[list[str]], str]:
    """:func:`tokenize_many`'s tokens, and the language whose stemmer they got."""
    words = [_words(t) for t in texts]
    language = language_of(words)
    stops = stop_words((language,))
    kept = [[w for w in ws if w not in stops] for ws in words]
    unique = list(dict.fromkeys(w for ws in kept for w in ws))
    stems = dict(zip(unique, _stemmer(language).stemWords(unique), strict=True))
    return [[stems[w] for w in ws] for ws in kept], language


def tokenize_groups(texts: Sequence[str], groups: Sequence[Hashable]) -> tuple[list[list[str]], frozenset[str]]:
    """:func:`tokenize_many` of each group's texts (a group: a document), in the texts' order,
    and the languages the groups were stemmed in."""
    out: list[list[str]] = [[] for _ in texts]
    languages = set()
    for ids in _members(groups):
        tokens, language = tokenize_with_language([texts[i] for i in ids])
        languages.add(language)
        for i, words in zip(ids, tokens, strict=True):
            out[i] = words
    return out, frozenset(languages)


def group_languages(texts: Sequence[str], groups: Sequence[Hashable]) -> frozenset[str]:
    """The languages :func:`tokenize_groups` would stem these groups in, without stemming: what
    a question is stemmed in to mark its words in a hit when no BM25 index was built (dense)."""
    return frozenset(language_of(_words(texts[i]) for i in ids) for ids in _members(groups))


def _members(groups: Sequence[Hashable]) -> list[list[int]]:
    """Indices of each group's items, groups in order of first appearance."""
    members: dict[Hashable, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    return list(members.values())


def tokenize(text: str, stop_words: Iterable[str] | None = None) -> list[str]:
    """BM25 tokens of one text on its own (:func:`tokenize_many` of it); ``stop_words`` replaces
    the stop lists (then nothing is stemmed)."""
    if stop_words is not None:
        stops = frozenset(stop_words)
        return [w for w in _words(text) if w not in stops]
    return tokenize_many([text])[0]


def _query_languages(languages: Iterable[str]) -> list[str]:
    """The stemmers a query goes through: French, English, then the other ``languages``."""
    wanted = set(languages)
    return [*ALWAYS_STEMMED, *(lang for lang in LANGUAGES if lang in wanted and lang not in ALWAYS_STEMMED)]


def query_tokens(query: str, languages: Iterable[str] = ()) -> list[str]:
    """A query's tokens, each word stemmed as French, as English and as each of ``languages``
    (the other languages of the indexed documents), every distinct stem kept, in order (repeated
    words kept, as BM25 weighs them).

    Why only the indexed languages: a stem the texts do not hold matches nothing, but a German
    or Spanish stem of an English word can be an English text's word (on Chroma's English
    corpora, stemming every question in four languages lost a question)."""
    languages = tuple(languages)
    stops = stop_words(languages)
    kept = [w for w in _words(query) if w not in stops]
    stemmed = [_stemmer(lang).stemWords(kept) for lang in _query_languages(languages)]
    out: list[str] = []
    for stems in zip(*stemmed, strict=True):
        out += dict.fromkeys(stems)
    return out


def matched_spans(
    text: str, start: int, end: int, query: str, languages: Iterable[str] = ()
) -> list[tuple[int, int]]:
    """``(start, end)`` of each word of ``text[start:end]`` that BM25 would match with a word of
    ``query`` (the same folding, stop words and stems as :func:`query_tokens` with
    ``languages``), in order, merged where they touch; in a run of CJK characters, each matched
    pair. Offsets are found while reading the text, so ``text[s:e]`` is the word.

    Why: a hit card shows how much a chunk matched (its score), not where; marked words show a
    reader at a glance why BM25 ranked it, or that a dense hit shares no word with the question."""
    languages = tuple(languages)
    wanted = set(query_tokens(query, languages))
    stops = stop_words(languages)
    stemmers = [_stemmer(lang) for lang in _query_languages(languages)]
    seen: dict[str, bool] = {}

    def matches(word: str) -> bool:  # a folded word: is one of its stems a query token?
        if word not in seen:
            seen[word] = word not in stops and any(st.stemWord(word) in wanted for st in stemmers)
        return seen[word]

    out: list[tuple[int, int]] = []
    for m in _WORD.finditer(text, start, end) if wanted else ():
        if not _EAST_ASIAN.search(m.group()):
            found = [(m.start(), m.end())] if any(map(matches, _words(m.group()))) else []
        else:
            found = [(m.start() + s, m.start() + e) for s, e in _cjk_pieces(m.group()) if matches(fold(m.group()[s:e]))]
        for s, e in found:
            if out and s <= out[-1][1]:
                out[-1] = (out[-1][0], max(e, out[-1][1]))
            else:
                out.append((s, e))
    return out


def _cjk_pieces(word: str) -> list[tuple[int, int]]:
    """Offsets in ``word`` of the pieces :func:`_words` makes of its CJK runs: each overlapping
    character pair, or a lone character (the other letters of the word are left out)."""
    out = []
    for r in _CJK_RUN.finditer(word):
        out += [(r.start(), r.end())] if r.end() - r.start() == 1 else [(i, i + 2) for i in range(r.start(), r.end() - 1)]
    return out


class LexicalIndex:
    """BM25 over a fixed list of texts; :meth:`scores` gives every text's score for a query.

    Cheap to build (one pass of tokenisation, a sparse matrix), so it is built on demand and
    kept with the chunks it indexes.
    """

    def __init__(self, texts: Sequence[str], groups: Sequence[Hashable] | None = None) -> None:
        """``groups``: the document of each text; each document's texts are stemmed for its own
        language (as the streamed corpus runner does), else all of them for theirs."""
        self.size = len(texts)
        if groups is not None:
            corpus, self.languages = tokenize_groups(texts, groups)
        else:
            corpus, language = tokenize_with_language(texts)
            self.languages = frozenset((language,))
        self._bm25: Any = None
        if any(corpus):  # bm25s cannot index a corpus without a single token
            import bm25s

            self._bm25 = bm25s.BM25(k1=BM25_K1, b=BM25_B, method="lucene")
            self._bm25.index(corpus, show_progress=False)

    def __len__(self) -> int:
        return self.size

    def scores(self, query: str) -> np.ndarray:
        """float32 BM25 score of each text for ``query`` (0 where no query word occurs)."""
        if self._bm25 is None:
            return np.zeros(self.size, np.float32)
        ids = self._bm25.get_tokens_ids(query_tokens(query, self.languages))
        if not ids:  # only stop words, or only words the texts never use
            return np.zeros(self.size, np.float32)
        return np.asarray(self._bm25.get_scores_from_ids(ids), dtype=np.float32)
