"""Cheap measurements of a text: script, language guess, line lengths, sampling, word pieces.

The document profile shows them and the ``hybrid`` strategy routes on them, so they live once,
here, below both.

- *Script*: letters are counted by Unicode block (Latin, CJK = Han + kana + Hangul, Arabic,
  Cyrillic, Greek, Hebrew, Devanagari, Thai); the dominant script is the one with most letters.
- *Language* (a guess, shown as such): for Latin text, the share of words that are common
  function words of English, French, German, Spanish, Italian, Portuguese, Dutch, Polish,
  Turkish or Vietnamese (words
  shared by two of the lists do not count): the list a text holds most wins if its words are
  at least 2% of the text's (:func:`likeliest_language`), else ``other``. BM25 picks each
  document's stemmer by the same rule, so the profile names the language retrieval uses. For CJK text: ``ja`` if kana are present, ``ko`` for Hangul, else
  ``zh``. Cyrillic, Greek, Arabic, Hebrew, Devanagari and Thai text is named by its script
  (:func:`script_language`: Ukrainian, Serbian, Urdu and Persian by their own letters).
- Large texts are measured on a sample of evenly spaced windows (``SAMPLE_CHARS`` in all).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping

from explorer.text.length import get_length

SAMPLE_CHARS = 200_000
#: A line shorter than this (characters, non-empty) counts as short.
SHORT_LINE = 40

_SCRIPT_RANGES = {
    "Latin": "A-Za-z\u00aa\u00ba\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u1e00-\u1eff",
    "Han": "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff",
    "Kana": "\u3040-\u30ff\uff66-\uff9f",
    "Hangul": "\u1100-\u11ff\u3130-\u318f\uac00-\ud7af",
    "Arabic": "\u0600-\u06ff\u0750-\u077f\u08a0-\u08ff\ufb50-\ufdff\ufe70-\ufefc",
    "Cyrillic": "\u0400-\u052f",
    "Greek": "\u0370-\u03ff\u1f00-\u1fff",
    "Hebrew": "\u0590-\u05ff\ufb1d-\ufb4f",
    "Devanagari": "\u0900-\u097f",
    "Thai": "\u0e00-\u0e7f",
}
_SCRIPT_RE = {name: re.compile(f"[{ranges}]") for name, ranges in _SCRIPT_RANGES.items()}
_CJK_PARTS = ("Han", "Kana", "Hangul")
#: The characters of CJK text (Han, kana, Hangul), for a regular expression's ``[...]``.
CJK_RANGES = "".join(_SCRIPT_RANGES[part] for part in _CJK_PARTS)

#: Common function words per language. A word that is one in two languages is listed under both
#: (Spanish and Italian "a", "o"; Spanish "no"), so that it counts for neither.
_STOPWORDS_RAW = {
    "en": "the of and to in is that it for was on are with as be this by at from or have an not which "
    "we you they his her their were been has had will would there what when can all one",
    "fr": "le la les de des du et est un une que qui pour dans pas sur au aux avec ce il elle nous vous "
    "sont par plus ne se cette été ont être leur mais ou où son sa ses",
    "de": "der die das und ist nicht ein eine zu den von mit sich des auf für im dem auch es sie wir ich "
    "wird bei oder aus wie nach werden sind hat wurde noch kann um",
    "es": "el la los las de que y en del se por un una para con su al es lo como más pero sus ya este "
    "esta porque también fue son entre cuando muy sin sobre a o no nos",
    "it": "il lo la i gli le di del della dei delle che e è in un una per con non sono si anche come "
    "più questo questa nel nella alla al ma ha hanno essere perché molto quando dove a o da",
    "pt": "o a os as de do da dos das que e em um uma para com não se por é são mais como mas seu sua "
    "no na nos nas ao este esta isso quando também muito onde",
    "nl": "de het een en van in is dat op te zijn met voor niet aan er ook als bij maar om door naar "
    "dan wordt worden deze die dit hij zij wij werd geen nog wat",
    # Words another list holds once folded are left out: Polish "się" is German "sie", "są" French
    # "sa", Turkish "şu" Spanish "su"; they would count for neither and cost that language its word.
    "pl": "że jest nie w z jak przez oraz lub być został została dla tylko może które który która "
    "od po ze już czy tak ich jego jej jako tym",
    "tr": "ve bir bu için ile olarak daha çok gibi olan ama veya kadar sonra değil mi ise göre ancak "
    "tüm bunu bunun olduğu",
    "vi": "của và các là có được cho những trong với không này một để người đã khi",
    "ru": "и в не на что с по как это к из о для от но за он она они же так его её бы ли только было "
    "быть уже или при до под",
}
#: Each language's common function words, as listed (shared ones included).
FUNCTION_WORDS = {lang: tuple(words.split()) for lang, words in _STOPWORDS_RAW.items()}
_ALL = Counter(w for words in _STOPWORDS_RAW.values() for w in set(words.split()))
#: Function words that belong to one list only (``de``, ``la``, ``en``... are ambiguous).
STOPWORDS = {
    lang: frozenset(w for w in words.split() if _ALL[w] == 1) for lang, words in _STOPWORDS_RAW.items()
}
_WORD = re.compile(r"[^\W\d_]+")

#: The language a text in one of these scripts is named by (a script of several languages is
#: named by the letters that set one apart: :func:`script_language`).
SCRIPT_LANGUAGES = {"Cyrillic": "ru", "Greek": "el", "Arabic": "ar", "Hebrew": "he", "Devanagari": "hi", "Thai": "th"}
#: Letters of one language of a shared script, by the code they name: Ukrainian і ї є ґ and
#: Serbian ђ ј љ њ ћ џ among Cyrillic; Urdu ے ں ٹ ڈ ڑ and then Persian پ چ ژ گ among Arabic.
_OWN_LETTERS = {
    "Cyrillic": (("uk", "іїєґІЇЄҐ"), ("sr", "ђјљњћџЂЈЉЊЋЏ")),
    "Arabic": (("ur", "ےںٹڈڑ"), ("fa", "پچژگ")),
}
#: Share of a script's letters the letters of :data:`_OWN_LETTERS` must reach to name their language.
_OWN_SHARE = 0.005

#: Share of a text's words its language's own function words must reach to name the language.
#: Measured: 7.3-18.6 % in the French, German, Spanish and English texts of bench/ and in Debian's
#: Spanish manual pages (technical text, its option names left in English), at most 3.2 % for a
#: language the text is not in; a Russian text's stray Latin letters ("o", "a", "com") made 0.6 %
#: Portuguese. (An 8 % floor named Spanish manual pages "other", while BM25 stemmed them as Spanish.)
LANGUAGE_MIN_SHARE = 0.02


def likeliest_language(hits: Mapping[str, int], words: int) -> str | None:
    """The code in :data:`STOPWORDS` with most ``hits`` (a text's words among its own function
    words; a tie goes to the code listed first), None when those are under
    :data:`LANGUAGE_MIN_SHARE` of the text's ``words``."""
    best = max(STOPWORDS, key=lambda code: hits.get(code, 0))  # max keeps the first of equals
    n = hits.get(best, 0)
    return best if n and n >= LANGUAGE_MIN_SHARE * words else None


def script_language(text: str, script: str, letters: int) -> str | None:
    """The code of a text whose dominant ``script`` (with ``letters`` letters) names a language,
    else None: Cyrillic is Russian unless Ukrainian or Serbian letters make 0.5 % of them, Arabic
    script is Arabic unless Urdu or Persian letters do. Why: BM25 stems a text in its language
    (Russian cases, Arabic prefixes), and a Russian stemmer on Ukrainian would cut its words badly."""
    for code, own in _OWN_LETTERS.get(script, ()):
        if sum(map(text.count, own)) >= _OWN_SHARE * letters:
            return code
    return SCRIPT_LANGUAGES.get(script)


def sample(text: str, budget: int = SAMPLE_CHARS, windows: int = 10) -> str:
    """The whole text if short, else ``windows`` evenly spaced slices adding up to ``budget``."""
    if len(text) <= budget:
        return text
    size = budget // windows
    step = (len(text) - size) // (windows - 1)
    return "\n".join(text[i * step : i * step + size] for i in range(windows))


def script_counts(text: str) -> dict[str, int]:
    """Letters per script (CJK split into Han/Kana/Hangul) in ``text``."""
    return {name: len(rx.findall(text)) for name, rx in _SCRIPT_RE.items()}


def dominant_script(text: str) -> tuple[str, float]:
    """(script, share of letters) — ``CJK`` groups Han, kana and Hangul; ``none`` if no letters."""
    counts = script_counts(sample(text))
    grouped = {k: v for k, v in counts.items() if k not in _CJK_PARTS}
    grouped["CJK"] = sum(counts[k] for k in _CJK_PARTS)
    total = sum(grouped.values())
    if total == 0:
        return "none", 0.0
    best = max(grouped, key=lambda k: grouped[k])
    return best, grouped[best] / total


#: The names of the codes :func:`guess_language` gives (``other`` has none).
LANGUAGE_NAMES = {
    "en": "English",
    "fr": "French",
    "de": "German",
    "es": "Spanish",
    "it": "Italian",
    "pt": "Portuguese",
    "nl": "Dutch",
    "zh": "Chinese",
    "ja": "Japanese",
    "ko": "Korean",
    "pl": "Polish",
    "tr": "Turkish",
    "vi": "Vietnamese",
    "ru": "Russian",
    "uk": "Ukrainian",
    "sr": "Serbian",
    "el": "Greek",
    "ar": "Arabic",
    "fa": "Persian",
    "ur": "Urdu",
    "he": "Hebrew",
    "hi": "Hindi",
    "th": "Thai",
}


def guess_language(text: str, script: str | None = None) -> str:
    """``en``/``fr``/``de``/``es``/``it``/``pt``/``nl``/``zh``/``ja``/``ko`` or ``other`` (see the
    module docstring)."""
    text = sample(text)
    if script is None:
        script = dominant_script(text)[0]
    if script in SCRIPT_LANGUAGES:
        return script_language(text, script, script_counts(text)[script]) or "other"
    if script == "CJK":
        counts = script_counts(text)
        if counts["Kana"]:
            return "ja"
        return "ko" if counts["Hangul"] > counts["Han"] else "zh"
    if script != "Latin":
        return "other"
    words = [w.lower() for w in _WORD.findall(text)]
    if not words:
        return "other"
    hits = {lang: sum(1 for w in words if w in sw) for lang, sw in STOPWORDS.items()}
    return likeliest_language(hits, len(words)) or "other"


def line_stats(text: str) -> tuple[float, float]:
    """(mean length of non-empty lines, share of them shorter than ``SHORT_LINE``)."""
    lengths = [len(line.strip()) for line in text.split("\n")]
    lengths = [n for n in lengths if n]
    if not lengths:
        return 0.0, 0.0
    return sum(lengths) / len(lengths), sum(1 for n in lengths if n < SHORT_LINE) / len(lengths)


def word_pieces(text: str, model: str | None = None) -> int:
    """Word pieces of the embedding model in ``text`` (no [CLS]/[SEP]): from the text's token
    index (tokenised once, in pieces, and shared with the chunk counts of the same text)."""
    if not text:
        return 0
    length = get_length("tokens", model)
    return length.slices(text, [(0, len(text))])[0] - length.special
