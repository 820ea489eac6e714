"""Which language a text is in, for BM25: the Snowball stemmer each document gets.

Kept apart from :mod:`explorer.retrieval.lexical` (stop words, stemming, the index): the same
rule as the document profile's (:mod:`explorer.text.measures`), a Latin text by its own function
words, a text in another script by the script.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from explorer.retrieval.bm25_words import fold
from explorer.text.measures import (
    SCRIPT_LANGUAGES,
    dominant_script,
    likeliest_language,
    script_counts,
    script_language,
)
from explorer.text.measures import STOPWORDS as STOPWORDS_BY_LANGUAGE

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
    "pl": "polish",
    "tr": "turkish",
    "ru": "russian",
    "sr": "serbian",
    "el": "greek",
    "ar": "arabic",
    "fa": "persian",
    "hi": "hindi",
}
LANGUAGES = tuple(STEMMERS.values())
ALWAYS_STEMMED = ("french", "english")


def _own_words() -> dict[str, frozenset[str]]:
    """Each language's own function words by its code, folded; a word two languages share once
    folded (the Italian "è" and the Portuguese "é" both become "e") belongs to neither."""
    folded = {code: frozenset(map(fold, words)) for code, words in STOPWORDS_BY_LANGUAGE.items()}
    seen = Counter(w for words in folded.values() for w in words)
    return {code: frozenset(w for w in words if seen[w] == 1) for code, words in folded.items()}


#: Each language's own function words, folded: they decide which stemmer a text gets.
_ONLY = _own_words()
#: Folded function word -> the one language it belongs to (one look-up per word for all of them).
_OWNER = {w: code for code, words in _ONLY.items() for w in words}
#: At most this many characters of a text's words are read to find its script.
_SCRIPT_SAMPLE = 200_000


def language_of(word_lists: Iterable[list[str]]) -> str:
    """The stemmer of the language whose own function words the folded words hold most, by the
    rule the document profile names a language with (:func:`~explorer.text.measures.likeliest_language`);
    English when none is named (English stemming leaves other scripts as they are)."""
    counts: Counter[str | None] = Counter()
    total = 0
    unlatin = 0  # words outside ASCII once folded: Cyrillic, Greek, Arabic... (a few French ones)
    sampled: list[str] = []
    size = 0
    for words in word_lists:
        total += len(words)
        counts.update(map(_OWNER.get, words))
        outside = len(words) - sum(map(str.isascii, words))
        unlatin += outside
        if outside and size < _SCRIPT_SAMPLE:
            sampled.append(" ".join(words))
            size += len(sampled[-1])
    code = _script_code(" ".join(sampled)) if unlatin * 5 > total else None
    return STEMMERS.get(code or likeliest_language(counts, total) or "en", "english")


def _script_code(text: str) -> str | None:
    """The language a text's dominant script names, as the document profile names it
    (:func:`~explorer.text.measures.script_language`); None for Latin and CJK text."""
    script = dominant_script(text)[0]
    if script not in SCRIPT_LANGUAGES:
        return None
    return script_language(text, script, script_counts(text)[script])
