"""Lexical retrieval: a tokeniser for BM25, a BM25 index over chunk texts, reciprocal-rank fusion.

Dense retrieval misses exact terms (codes, names, numbers) that BM25 finds, and the reverse for
paraphrases, so the app shows both and their fusion. BM25 needs no model: tokens are Unicode
words (``\\w+``), case-folded, accents folded (NFKD, combining marks dropped, so "Électricité"
matches "electricite"), with small English and French stop-word lists removed; numbers are kept.
No stemming: a stemmer is language-specific and BM25s' own would download or need PyStemmer.

Scoring is ``bm25s`` (Lucene variant, k1 = 1.5, b = 0.75: the usual defaults). Fusion is
reciprocal-rank fusion (Cormack, Clarke & Büttcher, 2009): a chunk scores the sum over rankings
of ``1 / (RRF_K + rank)``, with the paper's constant 60.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Hashable, Iterable, Sequence
from typing import Any, TypeVar

import numpy as np

#: BM25 term-frequency saturation and length normalisation (Lucene's and bm25s' defaults).
BM25_K1 = 1.5
BM25_B = 0.75
#: Reciprocal-rank fusion constant: rank r in a list adds 1 / (RRF_K + r). 60 is the value of
#: the original paper; it damps the difference between the very first ranks.
RRF_K = 60

_WORD = re.compile(r"\w+")
_Item = TypeVar("_Item", bound=Hashable)

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


def fold(text: str) -> str:
    """Case-folded, compatibility-decomposed text with combining marks (accents) removed."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


#: Stop words of both languages, folded (so "été" is stored as "ete").
STOP_WORDS: frozenset[str] = frozenset(
    w for w in (fold(x) for x in (_ENGLISH + _FRENCH).split()) if _WORD.fullmatch(w)
)


def tokenize(text: str, stop_words: Iterable[str] | None = None) -> list[str]:
    """BM25 tokens of ``text``: folded ``\\w+`` words minus stop words, in order (repeats kept)."""
    stops = STOP_WORDS if stop_words is None else frozenset(stop_words)
    return [w for w in _WORD.findall(fold(text)) if w not in stops]


class LexicalIndex:
    """BM25 over a fixed list of texts; :meth:`scores` gives every text's score for a query.

    Cheap to build (one pass of tokenisation, a sparse matrix), so it is built on demand and
    kept with the chunks it indexes.
    """

    def __init__(self, texts: Sequence[str]) -> None:
        self.size = len(texts)
        corpus = [tokenize(t) for t in texts]
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
        ids = self._bm25.get_tokens_ids(tokenize(query))
        if not ids:  # only stop words, or only words the texts never use
            return np.zeros(self.size, np.float32)
        return np.asarray(self._bm25.get_scores_from_ids(ids), dtype=np.float32)


def reciprocal_rank_fusion(rankings: Iterable[Sequence[_Item]], k: int = RRF_K) -> dict[_Item, float]:
    """Fused score per item: the sum over ``rankings`` (best first) of ``1 / (k + rank)``,
    rank from 1. An item missing from a ranking gets nothing from it."""
    fused: dict[_Item, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, 1):
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + rank)
    return fused
