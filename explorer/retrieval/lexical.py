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
"filters" meets "filter"; the stemmer reads a word with its accents and its stem is folded after
(folded first, "signalée" gave "signale" and missed "signaler"; measured on both French sets,
e5 int8, 1000/200 and 500/0: hybrid hit@5 +3 questions of 200, BM25 alone unchanged), and a
question typed without accents meets the accented words through the index's aliases (see
:func:`tokenize_with_language`). Each document's chunks take the stemmer of its language (English,
French, German, Spanish, Italian, Portuguese, Dutch, Polish or Turkish: the one whose own function
words they hold most; Russian, Serbian, Greek, Arabic, Persian or Hindi when its script names it;
English, which leaves other scripts as written, when none), in an index and in a streamed corpus alike; a query is stemmed
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
import threading
from collections.abc import Container, Hashable, Iterable, Sequence
from typing import Any

import numpy as np

from explorer.retrieval import bm25_words
from explorer.retrieval.bm25_languages import ALWAYS_STEMMED, LANGUAGES, STEMMERS, language_of
from explorer.retrieval.bm25_words import EAST_ASIAN, WORD, cjk_pieces, fold, folded_stems, forms, word_spans
from explorer.text.measures import FUNCTION_WORDS

#: BM25 term-frequency saturation and length normalisation (Anserini's defaults; see above).
BM25_K1 = 0.9
BM25_B = 0.4

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

def _folded_words(words: Iterable[str]) -> frozenset[str]:
    return frozenset(w for w in map(fold, words) if WORD.fullmatch(w))


#: Stop words of both languages, folded (so "été" is stored as "ete"): left out of every text.
STOP_WORDS: frozenset[str] = _folded_words((_ENGLISH + _FRENCH).split())


#: Function words that carry a question's meaning ("sin guardar", "nicht mehr", "più di"): kept.
_MEANINGFUL_WORDS = "sin no más muy sobre entre cuando porque nicht noch non più não mais niet geen nog nie değil не без"
_MEANINGFUL = frozenset(_MEANINGFUL_WORDS.split())
#: Function words of a language that its list in :mod:`explorer.text.measures` lacks, with its
#: question words: "wann", "chi", "dónde" matched the text's own ("Chi intende…"; "chiavi" stems
#: to "chi" in Italian), and a hit for the question's form outranked the answer.
_MORE_STOP_WORDS = {
    "de": "man wer wen wem wessen was wo wann warum wieso weshalb welche welcher welches welchen welchem "
    "woher wohin womit wofür wozu",
    "es": "qué quién quiénes cuál cuáles cuánto cuánta cuántos cuántas dónde adónde cómo",
    "it": "chi cosa quale quali quanto quanta quanti quante cui",
    "pt": "quem qual quais quanto quanta quantos quantas porquê",
    "nl": "wie waar wanneer hoe hoeveel welke welk waarom waarmee",
    "ru": "какой какая какое какие каким какую где когда почему зачем кто чем сколько куда откуда",
}


def _language_stop_words() -> dict[str, frozenset[str]]:
    """The common function words of German, Spanish, Italian, Portuguese and Dutch (the lists
    that name a text's language, :data:`~explorer.text.measures.FUNCTION_WORDS`, less the words
    that carry meaning), folded, by stemmer name. They hold other languages' content words
    (German "man", "die"), so they leave only a text in their own language, and a question over
    one. Why not Snowball's longer lists (bm25s ships them): they drop "sin", "hasta", "todos",
    and lost 2 of 20 Spanish questions where these kept every one (bench/data/european)."""
    return {
        STEMMERS[code]: _folded_words(w for w in (*words, *_MORE_STOP_WORDS.get(code, "").split()) if w not in _MEANINGFUL)
        for code, words in FUNCTION_WORDS.items()
        if code in STEMMERS and code not in ("en", "fr")  # theirs: the longer lists above, always out
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




_local = threading.local()  # a PyStemmer stemmer is not thread-safe: one set per thread


def _stemmer(language: str) -> Any:
    stemmers = getattr(_local, "stemmers", None)
    if stemmers is None:
        stemmers = _local.stemmers = {}
    if language not in stemmers:
        import Stemmer

        stemmers[language] = Stemmer.Stemmer(language)
    return stemmers[language]


def tokenize_many(texts: Sequence[str]) -> list[list[str]]:
    """BM25 tokens of texts indexed together: folded ``\\w+`` words minus stop words, stemmed
    with the stemmer of their language (one for all of them), in order (repeats kept)."""
    return tokenize_with_language(texts)[0]


#: Folded word -> the stems of the accented words that fold to it (see :func:`tokenize_with_language`).
Aliases = dict[str, tuple[str, ...]]


def tokenize_with_language(texts: Sequence[str]) -> tuple[list[list[str]], str, Aliases]:
    """:func:`tokenize_many`'s tokens, the language whose stemmer they got, and the aliases a
    question typed without accents needs.

    A word is stemmed as written, then its stem folded: Snowball's rules are written for
    accents ("signalée" and "signaler" both give "signal"; folded first, "signalee" gave
    "signale" and missed). Where the folded word stems otherwise ("electricite" gives
    "electricit", "électricité" "electr"), the folded word is an alias of its stem."""
    read = [forms(t) for t in texts]
    language = language_of([f for _, f in ws] for ws in read)
    stops = stop_words((language,))
    kept = [[p for p in ws if p[1] not in stops] for ws in read]  # the same pairs, not copies
    del read
    stems = _stems(_stemmer(language), {p for ws in kept for p in ws})
    aliases: dict[str, dict[str, None]] = {}
    for (_, f), both in stems.items():
        if len(both) > 1:
            aliases.setdefault(f, {})[both[0]] = None
    return [[stems[p][0] for p in ws] for ws in kept], language, {f: tuple(a) for f, a in aliases.items()}


def _stems(stemmer: Any, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], tuple[str, ...]]:
    """Each ``(word, folded)`` of :func:`forms`: its folded stem, then, where it differs, the
    stem of the folded word."""
    pairs = list(pairs)
    written = list({w for w, _ in pairs})
    plain = list({f for w, f in pairs if w != f})
    by_word = dict(zip(written, folded_stems(stemmer.stemWords(written)), strict=True))
    by_plain = dict(zip(plain, folded_stems(stemmer.stemWords(plain)), strict=True))
    return {(w, f): tuple(dict.fromkeys((by_word[w], by_plain.get(f, by_word[w])))) for w, f in pairs}


def tokenize_groups(
    texts: Sequence[str], groups: Sequence[Hashable]
) -> tuple[list[list[str]], frozenset[str], Aliases]:
    """:func:`tokenize_many` of each group's texts (a group: a document), in the texts' order,
    the languages the groups were stemmed in, and their aliases merged (:func:`merge_aliases`)."""
    out: list[list[str]] = [[] for _ in texts]
    languages = set()
    aliases: Aliases = {}
    for ids in _members(groups):
        tokens, language, found = tokenize_with_language([texts[i] for i in ids])
        languages.add(language)
        merge_aliases(aliases, found)
        for i, words in zip(ids, tokens, strict=True):
            out[i] = words
    return out, frozenset(languages), aliases


def merge_aliases(into: Aliases, more: Aliases) -> None:
    """Add ``more`` to ``into``: a folded word keeps every stem it stands for."""
    for f, stems in more.items():
        into[f] = tuple(dict.fromkeys((*into.get(f, ()), *stems)))


def group_languages(texts: Sequence[str], groups: Sequence[Hashable]) -> frozenset[str]:
    """The languages :func:`tokenize_groups` would stem these groups in, without stemming: what
    a question is stemmed in to mark its words in a hit when no BM25 index was built (dense)."""
    return frozenset(language_of(bm25_words.words(texts[i]) for i in ids) for ids in _members(groups))


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
        return [w for w in bm25_words.words(text) if w not in stops]
    return tokenize_many([text])[0]


def _query_languages(languages: Iterable[str]) -> list[str]:
    """The stemmers a query goes through: French, English, then the other ``languages``."""
    wanted = set(languages)
    return [*ALWAYS_STEMMED, *(lang for lang in LANGUAGES if lang in wanted and lang not in ALWAYS_STEMMED)]


def query_tokens(
    query: str,
    languages: Iterable[str] = (),
    vocabulary: Container[str] | None = None,
    aliases: Aliases | None = None,
) -> list[str]:
    """A query's tokens, each word stemmed as French, as English and as each of ``languages``
    (the other languages of the indexed documents), every distinct stem kept, in order (repeated
    words kept, as BM25 weighs them).

    Against an index (its ``vocabulary`` and ``aliases``), a word whose stem the texts lack
    takes the stems of the accented words it folds from ("electricite" typed, "électricité"
    written), else its folded form's stem (an accented question over text without accents).
    Without one, every stem is kept (to mark the words a hit matched).

    Why only the indexed languages: a stem the texts do not hold matches nothing, but a German
    or Spanish stem of an English word can be an English text's word (on Chroma's English
    corpora, stemming every question in four languages lost a question)."""
    languages = tuple(languages)
    stops = stop_words(languages)
    kept = [p for p in forms(query) if p[1] not in stops]
    by_language = [_stems(_stemmer(lang), kept) for lang in _query_languages(languages)]
    out: list[str] = []
    for p in kept:
        chosen: list[str] = []
        for stems in by_language:
            chosen += stems[p] if vocabulary is None else _known(stems[p], p[1], vocabulary, aliases or {})
        out += dict.fromkeys(chosen)
    return out


def _known(stems: tuple[str, ...], folded: str, vocabulary: Container[str], aliases: Aliases) -> tuple[str, ...]:
    """The stems of one question word that the index holds: as written, through the aliases of
    its folded form, and its folded form's own ("électricité" finds a text that writes
    "ELECTRICITE" as well as one with accents)."""
    found = tuple(dict.fromkeys(t for t in (stems[0], *aliases.get(folded, ()), stems[-1]) if t in vocabulary))
    return found or stems[:1]


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
    seen: dict[tuple[str, str], bool] = {}

    def matches(form: tuple[str, str]) -> bool:  # (stemmer's form, folded): a stem a query token?
        if form not in seen:
            folded = form[1]
            seen[form] = folded not in stops and any(
                stem in wanted for st in stemmers for stem in _stems(st, [form])[form]
            )
        return seen[form]

    out: list[tuple[int, int]] = []
    for word, starts, ends in word_spans(text, start, end) if wanted else ():
        if not EAST_ASIAN.search(word):
            found = [(starts[0], ends[-1])] if any(map(matches, forms(word))) else []
        else:
            found = [(starts[s], ends[e - 1]) for s, e in cjk_pieces(word) if matches((fold(word[s:e]),) * 2)]
        for s, e in found:
            if out and s <= out[-1][1]:
                out[-1] = (out[-1][0], max(e, out[-1][1]))
            else:
                out.append((s, e))
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
            corpus, self.languages, self.aliases = tokenize_groups(texts, groups)
        else:
            corpus, language, self.aliases = tokenize_with_language(texts)
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
        ids = self._bm25.get_tokens_ids(query_tokens(query, self.languages, self._bm25.vocab_dict, self.aliases))
        if not ids:  # only stop words, or only words the texts never use
            return np.zeros(self.size, np.float32)
        return np.asarray(self._bm25.get_scores_from_ids(ids), dtype=np.float32)
