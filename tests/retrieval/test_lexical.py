"""BM25 and hybrid retrieval: the tokeniser, hand-computed BM25 and fused scores, ties, no model for
BM25, and the ``--retriever`` flag."""

from __future__ import annotations

import itertools
import json
import math
import subprocess
import sys
import unicodedata
from pathlib import Path

import numpy as np
import pytest

from explorer import Context, Document
from explorer.cli import inputs as cli_inputs
from explorer.cli.main import main
from explorer.embedding.fake import FakeEmbedder
from explorer.errors import ParamError
from explorer.evaluation.evaluate import evaluate, sweep
from explorer.evaluation.questions import Question
from explorer.retrieval.faiss_index import VectorIndex
from explorer.retrieval.hubs import HUB_NEIGHBOURS, HUB_WEIGHT, NeighbourMeans
from explorer.retrieval.lexical import (
    BM25_B,
    BM25_K1,
    STOP_WORDS,
    LexicalIndex,
    fold,
    language_of,
    matched_spans,
    query_tokens,
    tokenize,
    tokenize_many,
)
from explorer.retrieval.ranking import (
    HYBRID_BM25_WEIGHT,
    HYBRID_CANDIDATES,
    RETRIEVERS,
    RRF_K,
    TIE_EPSILON,
    AnswerPlaces,
    answer_places,
    retrieve,
)
from explorer.retrieval.search import StrategyIndex, build_index, chunk_documents, compare, get_index
from explorer.retrieval.vectors import EmbedOptions
from explorer.strategies.config import StrategyConfig
from explorer.text.measures import LANGUAGE_MIN_SHARE

ROOT = Path(__file__).resolve().parents[2]

#: One chunk per paragraph (every paragraph below is one sentence).
PARA_CFG = StrategyConfig.make("sentence", {"sentences_per_chunk": 1, "overlap_sentences": 0})


def _doc(paragraphs: list[str], name: str = "doc.txt") -> Document:
    return Document(name, "text", "\n\n".join(paragraphs))


def _ctx(dim: int = 64) -> Context:
    return Context(embedder=FakeEmbedder(dim=dim))


# -- tokeniser -----------------------------------------------------------------------------------
def test_tokenize_folds_case_accents_and_drops_stop_words():
    assert tokenize("L'Électricité de l’été 2024, c'est cher!") == ["electr", "2024", "cher"]  # stemmed, then folded
    assert tokenize("The cat's bill WASN'T paid in 1999") == ["cat", "bill", "paid", "1999"]
    assert tokenize("ﬁle Straße naïve x²") == ["file", "strass", "naiv", "x2"]  # NFKD + casefold, stemmed
    assert tokenize("") == [] and tokenize("the of and, le la les") == []
    assert tokenize("données_brutes v2.1") == ["donnees_brut", "v2", "1"]
    assert fold("ÉCOLE Über") == "ecole uber"


def test_words_are_stemmed_in_their_language_and_queries_both_ways():
    """Texts indexed together take the stemmer of their language (by stop words), so forms of
    a word meet; a query, whose language is not known, keeps its French and English stems."""
    assert tokenize("Les paquets sont installés dans le dossier") == tokenize(
        "Le paquet est installé dans les dossiers"
    )
    assert tokenize("The filters are installed in the tank") == tokenize("The filter was installing in the tanks")
    assert language_of([["le", "paquet", "est", "la"]]) == "french"
    assert language_of([["the", "package", "is"]]) == language_of([["x2"]]) == "english"
    assert tokenize_many(["Les paquets.", "Des filtres, le paquet."]) == [["paquet"], ["filtr", "paquet"]]
    # without an index, an accented word keeps the stem of its folded form too ("installe")
    assert query_tokens("filters installés filters") == ["filter", "install", "installe", "filter"]
    assert tokenize("xr-7731 2024") == ["xr", "7731", "2024"]
    fr = LexicalIndex(["Conserver un paquet installé sur le disque.", "La météo de demain.", "Un seul mot."])
    assert fr.scores("Comment conserver mes paquets installés ?").argmax() == 0
    en = LexicalIndex(["The filters are backwashed every day.", "The pump is checked.", "A tank."])
    assert en.scores("how often is a filter backwashed").argmax() == 0


def test_stop_words_are_folded_and_leave_words_of_the_other_language():
    assert {"the", "and", "le", "les", "ete", "etaient", "qu", "l", "s", "t"} <= STOP_WORDS
    assert all(w == fold(w) for w in STOP_WORDS)
    # function words in one language that are content words in the other stay searchable
    assert not {"an", "or", "but", "car", "son", "pour", "plus"} & STOP_WORDS
    assert tokenize("le but de la voiture") == ["but", "voitur"]


# -- BM25 ----------------------------------------------------------------------------------------
def test_bm25_score_is_the_lucene_formula_by_hand():
    lex = LexicalIndex(["apple banana", "banana cherry cherry", "date"])
    scores = lex.scores("Cherry?")
    n, df, tf, dl, avgdl = 3, 1, 2, 3, (2 + 3 + 1) / 3
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    want = idf * tf / (tf + BM25_K1 * (1 - BM25_B + BM25_B * dl / avgdl))
    assert scores.dtype == np.float32 and scores.shape == (3,)
    assert scores[0] == 0 and scores[2] == 0
    assert scores[1] == pytest.approx(want, rel=1e-5)
    # stop words in the question change nothing
    assert np.array_equal(lex.scores("What is the cherry of the day?"), lex.scores("cherry day"))


def test_bm25_edge_cases_never_crash():
    assert LexicalIndex([]).scores("anything").shape == (0,)
    only_stops = LexicalIndex(["the of and", "le la"])
    assert only_stops.scores("the cat").tolist() == [0.0, 0.0]
    lex = LexicalIndex(["cats sleep", "", "dogs bark"])  # an empty text among others
    assert lex.scores("the of")[0] == 0 and lex.scores("unknown words").tolist() == [0, 0, 0]
    assert lex.scores("dogs").argmax() == 2


KEYWORD_PARAS = [
    "Pumps move water from the reservoir to the treatment hall every morning.",
    "Valve XR-7731 isolates the chlorine line during maintenance.",
    "Operators log water pressure readings in the shift book.",
    "Maintenance of the pumps follows the yearly schedule.",
]


def test_bm25_ranks_the_keyword_chunk_first():
    idx = build_index([_doc(KEYWORD_PARAS)], PARA_CFG, _ctx(), retriever="bm25")
    assert [c.text for c in idx.chunks] == KEYWORD_PARAS
    hits = idx.search("What does xr-7731 do?", k=3, retriever="bm25")
    assert [h.rank for h in hits] == [1, 2, 3]
    assert hits[0].chunk.text == KEYWORD_PARAS[1] and hits[0].score > 0
    assert hits[1].score == hits[2].score == 0  # no other chunk has a question word
    # the rest follow in document order
    assert [h.chunk.text for h in hits[1:]] == [KEYWORD_PARAS[0], KEYWORD_PARAS[2]]
    hits = idx.search("pumps maintenance", k=4, retriever="bm25")
    assert hits[0].chunk.text == KEYWORD_PARAS[3]  # both words
    assert all(a.score >= b.score for a, b in itertools.pairwise(hits))


def test_accents_fold_both_ways():
    paras = ["L'Électricité coûte plus cher cette année.", "Le gaz naturel reste stable.", "Rien ici."]
    idx = build_index([_doc(paras)], PARA_CFG, _ctx(), retriever="bm25")
    (hit,) = idx.search("electricite", k=1, retriever="bm25")
    assert hit.chunk.text == paras[0] and hit.score > 0
    idx2 = build_index([_doc(["the electricite price", "gas price"])], PARA_CFG, _ctx(), retriever="bm25")
    (hit,) = idx2.search("Électricité ?", k=1, retriever="bm25")
    assert hit.chunk.text == "the electricite price" and hit.score > 0


def test_accented_words_are_stemmed_before_folding():
    """Snowball's French rules are written for accents: folded first, "signalée" stemmed to
    "signale" and missed "signaler" ("signal"); a question typed without accents still finds
    the accented words through the index's aliases."""
    assert tokenize_many(["La déviation doit être signalée.", "Il faut signaler."]) == [
        ["deviat", "doit", "signal"],
        ["faut", "signal"],
    ]
    paras = ["La déviation doit être signalée au responsable.", "Le rapport est publié chaque mois.", "Rien."]
    idx = build_index([_doc(paras)], PARA_CFG, _ctx(), retriever="bm25")
    for question, want in [
        ("Quand faut-il signaler une déviation ?", 0),
        ("signalee deviation", 0),  # typed without accents: "signalee" is an alias of "signal"
        ("Quand publier le rapport ?", 1),  # "publier" meets "publié" ("publi")
        ("publie rapport", 1),
    ]:
        (hit,) = idx.search(question, k=1, retriever="bm25")
        assert hit.chunk.text == paras[want] and hit.score > 0, question
    assert idx.lexical.aliases["signalee"] == ("signal",)
    # a corpus that writes the word both ways (capitals without accents): each spelling finds both
    both = LexicalIndex(["La électricité du réseau est coupée.", "La ELECTRICITE du reseau est coupee."])
    for question in ("electricite", "électricité"):
        assert (both.scores(question) > 0).all(), question
    # a chunk with a CJK word stems its other words as written too
    mixed = LexicalIndex(["L'électricité du réseau est coupée hier.", "L'électricité 東京 du réseau est coupée."])
    assert (mixed.scores("électricité") > 0).all()
    # a compatibility character is read as the CJK it stands for: ㍿ is 株式会社
    assert tokenize("㍿ ACME") == ["株式", "式会", "会社", "acm"]
    assert LexicalIndex(["㍿ ACME", "x y"]).scores("株式会社")[0] > 0
    at = paras[0].index("signalée")
    assert matched_spans(paras[0], 0, len(paras[0]), "signaler") == [(at, at + 8)]
    assert matched_spans(paras[0], 0, len(paras[0]), "signalee") == [(at, at + 8)]


def test_cjk_runs_become_character_pairs():
    """Chinese and Japanese have no spaces: ``\\w+`` made a whole clause one token, so a question
    matched nothing. Hangul syllables survive accent folding (decomposed to jamo, put back)."""
    assert tokenize("没有字节顺序标记。") == ["没有", "有字", "字节", "节顺", "顺序", "序标", "标记"]
    assert tokenize("Python的用法") == ["python", "的用", "用法"]
    assert tokenize("検索します") == ["検索", "索し", "しま", "ます"]
    assert tokenize("我") == ["我"]  # a single character stays a token
    assert fold("한국어") == "한국어" and tokenize("문장을 검색") == ["문장", "장을", "검색"]
    assert tokenize("Électricité et gaz") == tokenize_many(["Électricité et gaz"])[0]  # Latin unchanged


def test_words_keep_the_marks_that_are_letters_and_unspaced_scripts_become_pairs():
    """Indic vowel signs and viramas are part of the word: ``re``'s ``\\w`` and accent folding
    cut "हिन्दी" into "ह", "नद"; Thai, like Chinese, has no spaces between words."""
    assert tokenize("हिन्दी भाषा में पाठ", stop_words=()) == ["हिन्दी", "भाषा", "में", "पाठ"]  # unstemmed
    assert [unicodedata.normalize("NFC", w) for w in tokenize("தமிழ் மொழி")] == ["தமிழ்", "மொழி"]
    assert tokenize("ภาษาไทย") == ["ภา", "าษ", "ษา", "าไ", "ไท", "ทย"]
    assert tokenize("العربيَّة", stop_words=()) == ["العربية"]  # Arabic vowel marks are accents: folded away
    assert tokenize("Électricité") == ["electricite"]  # Latin accents folded (English: no stem)
    assert tokenize("ガラス") != tokenize("カラス") and tokenize("バス") == ["バス"]  # voiced kana stay voiced
    assert tokenize("x\u1ab0y") == ["xy"]  # an extended Latin accent is still an accent
    assert tokenize("كـتـاب", stop_words=()) == ["كتاب"]  # the tatweel (kashida) only stretches a word
    assert tokenize("KAPI kapı", stop_words=()) == ["kapi", "kapi"]  # Turkish capital I is dotless ı


@pytest.mark.parametrize(
    ("paras", "question", "want"),
    [
        (["天气预报说明天会下雨。", "输入 dd 将该行删除。", "保存文件并退出编辑器。"], "怎样删除一行？", 1),
        (["ファイルを保存して終了します。", "語句を検索するには / を使います。", "天気がいい。"], "語句を検索する方法は？", 1),
        (["날씨가 좋습니다.", "파일을 저장하고 종료합니다.", "문장을 검색합니다."], "문장 검색", 2),
        (["मौसम आज अच्छा है।", "फ़िल्टर की सफ़ाई हर सुबह होती है।", "पानी की जाँच रोज़ होती है।"], "फ़िल्टर की सफ़ाई कब होती है?", 1),
        (["วันนี้อากาศดี", "ล้างตัวกรองทุกเช้า", "ตรวจน้ำทุกวัน"], "ล้างตัวกรองเมื่อไร", 1),
    ],
    ids=["chinese", "japanese", "korean", "hindi", "thai"],
)
def test_bm25_finds_the_chunk_a_cjk_question_asks_for(paras, question, want):
    idx = build_index([_doc(paras)], PARA_CFG, _ctx(), retriever="bm25")
    hits = idx.search(question, k=3, retriever="bm25")
    assert hits[0].chunk.text == paras[want] and hits[0].score > 0 and hits[1].score < hits[0].score


def test_stop_words_only_question_gives_zero_scores_in_document_order():
    idx = build_index([_doc(KEYWORD_PARAS)], PARA_CFG, _ctx(), retriever="bm25")
    hits = idx.search("What is the ... of it?", k=3, retriever="bm25")
    assert [(h.rank, h.score, h.chunk.text) for h in hits] == [
        (1, 0.0, KEYWORD_PARAS[0]),
        (2, 0.0, KEYWORD_PARAS[1]),
        (3, 0.0, KEYWORD_PARAS[2]),
    ]


def test_empty_corpus_gives_no_hits_for_every_retriever():
    for retriever in RETRIEVERS:
        idx = build_index([Document("blank.txt", "text", "  \n ")], PARA_CFG, _ctx(), retriever=retriever)
        assert len(idx) == 0 and idx.search("anything", 5, retriever=retriever) == []


def test_bm25_ties_go_to_the_first_copy_in_document_order():
    paras = ["alpha beta"] * 6 + ["gamma delta"]
    a, b = _doc(paras, "a.txt"), _doc(["gamma", "alpha beta"], "b.txt")
    idx = build_index([a, b], PARA_CFG, _ctx(), retriever="bm25")
    hits = idx.search("alpha", k=3, retriever="bm25")
    assert [(h.chunk.doc_name, h.chunk.start) for h in hits] == [("a.txt", 0), ("a.txt", 12), ("a.txt", 24)]
    assert hits[0].score == hits[1].score == hits[2].score > 0
    # documents the other way round: b's copy comes first now (same score: lengths are equal)
    idx = build_index([b, a], PARA_CFG, _ctx(), retriever="bm25")
    hits = idx.search("alpha", k=2, retriever="bm25")
    assert [(h.chunk.doc_name, h.chunk.start) for h in hits] == [("b.txt", 7), ("a.txt", 0)]
    assert [h.rank for h in hits] == [1, 2]


# -- hybrid --------------------------------------------------------------------------------------
#: Dimensions of the hand-made vectors: the query's axis and one per chunk (at most 15).
DIM = 16
#: Every two chunks of a hand-made index have this cosine, so each is as much a hub as any
#: other: hybrid's hub penalty is the same for every chunk and min-max normalisation removes it
#: (the penalty has its own tests below, with chunks that are not alike).
PAIR_COSINE = 0.25


def _vectors_with_pairs(cosines: list[float], pairs: np.ndarray) -> np.ndarray:
    """Unit vectors with the given cosines with the query e0 and ``pairs[i, j]`` between chunks
    ``i`` and ``j``: the parts orthogonal to e0 need the Gram matrix ``pairs - c cᵀ``."""
    c = np.array(cosines, np.float64)
    values, axes = np.linalg.eigh(pairs - np.outer(c, c))
    assert values.min() > -1e-9, "no such vectors: the cosines are too far apart for those pairs"
    out = np.zeros((len(c), DIM), np.float32)
    out[:, 0], out[:, 1 : len(c) + 1] = c, axes * np.sqrt(np.clip(values, 0, None))
    return out


def _vectors_with_cosines(cosines: list[float], pair: float = PAIR_COSINE) -> np.ndarray:
    """:func:`_vectors_with_pairs` with every two chunks ``pair`` apart."""
    return _vectors_with_pairs(cosines, (1 - pair) * np.eye(len(cosines)) + pair)


def _index_with_vectors(paras: list[str], vecs: np.ndarray) -> StrategyIndex:
    ctx = _ctx(dim=DIM)
    chunks = chunk_documents([_doc(paras)], PARA_CFG, ctx)
    assert [c.text for c in chunks] == paras
    return StrategyIndex(PARA_CFG, chunks, [c.text for c in chunks], vecs, ctx, EmbedOptions())


def _index_with_cosines(paras: list[str], cosines: list[float]) -> StrategyIndex:
    """An index whose chunk vectors have the given cosine with the query vector e0, every two of
    them :data:`PAIR_COSINE` apart."""
    return _index_with_vectors(paras, _vectors_with_cosines(cosines))


QUERY = np.eye(1, DIM, dtype=np.float32)


def _fused(cosines: list[float], bm25: list[float], rows: list[int]) -> list[float]:
    """The fused score by hand: each score's place between the candidates' lowest and highest,
    half each."""

    def unit(xs: list[float]) -> list[float]:
        lo, hi = min(xs), max(xs)
        return [(x - lo) / (hi - lo) if hi > lo else 0.0 for x in xs]

    d, b = unit([cosines[r] for r in rows]), unit([bm25[r] for r in rows])
    return [(1 - HYBRID_BM25_WEIGHT) * x + HYBRID_BM25_WEIGHT * y for x, y in zip(d, b, strict=True)]


#: For the question "zebra" with cosines 0.1, 0.9, 0.5, 0.3: A is dense 4th and BM25 1st, B dense
#: 1st and C dense 2nd with no question word, D dense 3rd and BM25 2nd.
ZEBRA = ["zebra zebra stripes", "lions hunt at dusk", "giraffes eat leaves", "a zebra crossing on a long busy city road"]


def test_hybrid_fuses_dense_and_bm25_scores():
    paras = ZEBRA
    cosines = [0.1, 0.9, 0.5, 0.3]
    idx = _index_with_cosines(paras, cosines)
    dense = retrieve(idx, ["zebra"], 4, "dense", QUERY)[0]
    assert [h.chunk.text for h in dense] == [paras[1], paras[2], paras[3], paras[0]]
    bm25 = retrieve(idx, ["zebra"], 4, "bm25")[0]
    assert [h.chunk.text for h in bm25[:2]] == [paras[0], paras[3]] and bm25[1].score > bm25[2].score == 0
    scores = [float(x) for x in idx.lexical.scores("zebra")]
    want = dict(zip(paras, _fused(cosines, scores, [0, 1, 2, 3]), strict=True))
    # A: BM25 1 + cosine 0 = 0.5; B: cosine 1 = 0.5 (ties: A comes first); D and C below
    assert want[paras[0]] == pytest.approx(0.5) and want[paras[1]] == pytest.approx(0.5)
    hybrid = retrieve(idx, ["zebra"], 4, "hybrid", QUERY)[0]
    assert [h.chunk.text for h in hybrid] == sorted(paras, key=lambda p: (-round(want[p], 9), paras.index(p)))
    assert [h.score for h in hybrid] == pytest.approx([want[h.chunk.text] for h in hybrid])
    assert [h.rank for h in hybrid] == [1, 2, 3, 4]
    assert all(0 <= h.score <= 1 for h in hybrid)
    top2 = retrieve(idx, ["zebra"], 2, "hybrid", QUERY)[0]
    assert [h.chunk.text for h in top2] == [h.chunk.text for h in hybrid[:2]]


def test_a_lone_candidate_is_as_good_as_the_best():
    """One chunk: its cosine and BM25 score are both the highest and the lowest; it read "fused
    score 0.0000". A part it does not match (no question word) still gives it nothing."""
    (hit,) = retrieve(_index_with_cosines(["zebra stripes"], [0.6]), ["zebra"], 5, "hybrid", QUERY)[0]
    assert hit.score == pytest.approx(1.0)
    (hit,) = retrieve(_index_with_cosines(["lions hunt"], [0.6]), ["zebra"], 5, "hybrid", QUERY)[0]
    assert hit.score == pytest.approx(1 - HYBRID_BM25_WEIGHT)


def test_hybrid_keeps_the_gaps_that_reciprocal_ranks_throw_away():
    paras = [
        "pump",  # A: dense 1st by far, no question word
        "valve valve seal",  # B: dense 3rd, BM25 1st by far
        "seal kit",  # C: dense a hair ahead of B, BM25 2nd
    ]
    idx = _index_with_cosines(paras, [0.95, 0.30, 0.31])
    hybrid = retrieve(idx, ["valve seal"], 3, "hybrid", QUERY)[0]
    # reciprocal ranks would put C (2nd and 2nd) and B (3rd and 1st) ahead of A (1st, no word);
    # the scores say A is by far the closest in meaning and B by far the best in words
    assert [h.chunk.text for h in hybrid] == paras
    assert hybrid[0].score == hybrid[1].score == pytest.approx(0.5)
    assert hybrid[2].score < 0.5


def test_hybrid_ties_go_to_the_earlier_chunk_and_stop_words_rank_as_dense():
    paras = [
        "kiwi kiwi orchard",  # A: dense 2nd, BM25 1st
        "a kiwi grows on a very long vine in the warm hills",  # B: dense 1st, BM25 2nd
        "apples",  # C: dense 3rd
    ]
    idx = _index_with_cosines(paras, [0.6, 0.8, 0.2])
    hybrid = retrieve(idx, ["kiwi"], 3, "hybrid", QUERY)[0]
    scores = [float(x) for x in idx.lexical.scores("kiwi")]
    want = _fused([0.6, 0.8, 0.2], scores, [0, 1, 2])
    assert [h.score for h in hybrid] == pytest.approx(sorted(want, reverse=True))
    # the same text twice: equal fused scores, the earlier chunk first
    twice = _index_with_cosines(["kiwi pie", "kiwi pie", "plums"], [0.5, 0.5, 0.9])
    hits = retrieve(twice, ["kiwi"], 3, "hybrid", QUERY)[0]
    assert hits[0].score == pytest.approx(hits[1].score, abs=TIE_EPSILON)
    assert [h.chunk.start for h in hits[:2]] == sorted(h.chunk.start for h in hits[:2])
    # no question word but stop words: no BM25 evidence, hybrid follows dense
    hybrid = retrieve(idx, ["what is it?"], 3, "hybrid", QUERY)[0]
    assert [h.chunk.text for h in hybrid] == [paras[1], paras[0], paras[2]]
    assert [h.score for h in hybrid] == pytest.approx([0.5, 0.5 * (0.6 - 0.2) / 0.6, 0.0])


#: For "zebra": A is dense 1st by far with no question word, B-F hold it once each (equal BM25)
#: with falling cosines, G holds it four times (BM25 1st) with the lowest cosine. Fused: B-E, then
#: A and G (0.5 each, A first), then F.
FIRSTS = ["lions hunt at dusk", "zebra mango", "zebra peach", "zebra plum", "zebra lime", "zebra kiwi", "zebra zebra zebra zebra"]
FIRSTS_COSINES = [0.7, 0.5, 0.45, 0.4, 0.35, 0.1, 0.0]


def test_hybrid_keeps_bm25s_first_hit_in_its_first_five():
    idx = _index_with_cosines(FIRSTS, FIRSTS_COSINES)
    scores = [float(x) for x in idx.lexical.scores("zebra")]
    want = dict(zip(FIRSTS, _fused(FIRSTS_COSINES, scores, list(range(7))), strict=True))
    a, b, c, d, e, f, g = FIRSTS
    assert sorted(FIRSTS, key=lambda p: (-round(want[p], 9), FIRSTS.index(p))) == [b, c, d, e, a, g, f]
    seven = retrieve(idx, ["zebra"], 7, "hybrid", QUERY)[0]
    # G (BM25 1st) moves up to 5th, A and F one place down; each keeps its own fused score.
    # A (dense 1st) is not moved: measured, keeping dense's first hit lost more than it gained
    assert [h.chunk.text for h in seven] == [b, c, d, e, g, a, f]
    assert [h.score for h in seven] == pytest.approx([want[h.chunk.text] for h in seven])
    assert [h.rank for h in seven] == list(range(1, 8))
    assert [h.evidence.raised for h in seven] == [False] * 4 + [True, False, False]
    assert seven[4].evidence.bm25_rank == 1 and seven[4].to_dict()["evidence"]["raised"] is True
    assert seven[5].evidence.dense_rank == 1 and not seven[5].evidence.raised
    # a top k is the first k of a larger one: G is in a top 5, not in a top 4
    for k in (4, 5, 6):
        assert [h.chunk.text for h in retrieve(idx, ["zebra"], k, "hybrid", QUERY)[0]] == [h.chunk.text for h in seven[:k]]
    # reciprocal-rank fusion is left as it is
    assert not any(h.evidence.raised for h in retrieve(idx, ["zebra"], 7, "rrf", QUERY)[0])
    # already in the first five: not moved
    top = _index_with_cosines([g, b, c], [0.0, 0.5, 0.45])
    hits = retrieve(top, ["zebra"], 3, "hybrid", QUERY)[0]
    assert {h.chunk.text for h in hits} == {g, b, c} and not any(h.evidence.raised for h in hits)


# -- hybrid's hub penalty -----------------------------------------------------------------------
def _by_hand_means(vecs: np.ndarray, k: int = HUB_NEIGHBOURS) -> list[float]:
    """Each vector's mean cosine to its ``k`` nearest others (fewer when there are fewer)."""
    g = vecs.astype(np.float64) @ vecs.T.astype(np.float64)
    out = []
    for i in range(len(vecs)):
        others = sorted((g[i, j] for j in range(len(vecs)) if j != i), reverse=True)[:k]
        out.append(float(np.mean(others)) if others else 0.0)
    return out


def test_neighbour_means_by_hand_computed_once_and_only_where_asked():
    rng = np.random.default_rng(7)
    for n in (1, 2, 3, 11, 12, 40):
        vecs = rng.normal(size=(n, 8)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        index = VectorIndex(vecs)
        searched: list[int] = []

        def search(
            q: np.ndarray, k: int, index: VectorIndex = index, searched: list[int] = searched
        ) -> tuple[np.ndarray, np.ndarray]:
            searched.append(len(q))
            return index.search(q, k)

        means = NeighbourMeans(n, lambda rows, vecs=vecs: vecs[rows], search)
        want = _by_hand_means(vecs)
        rows = np.array([n - 1, 0, n - 1])
        assert means(rows) == pytest.approx([want[n - 1], want[0], want[n - 1]], abs=1e-5)
        assert means(np.arange(n)) == pytest.approx(want, abs=1e-5)
        assert means(rows) == pytest.approx([want[n - 1], want[0], want[n - 1]], abs=1e-5)
        # the first call searched for its distinct rows, the second for the rest, the third not at
        # all; a lone chunk has no neighbour to search for
        distinct = len(set(rows.tolist()))
        assert searched == ([] if n == 1 else [distinct] + ([n - distinct] if n > distinct else []))


#: "what is it?" holds only stop words, so BM25 adds nothing and hybrid ranks by the penalised
#: cosines. H is the closest to the question but close to every filler too (a hub); A, the
#: answer, is a little less close to the question and far from everything else.
HUB_TEXTS = ["hub links everywhere", "the answer itself", "filler one", "filler two", "filler three"]
HUB_COSINES = [0.5, 0.45, 0.1, 0.1, 0.1]


def _hub_index(texts: list[str] = HUB_TEXTS) -> tuple[StrategyIndex, list[float]]:
    """The index above and each chunk's neighbour mean by hand: H (0.3 + 3 × 0.7) / 4, A 0.3 / 4,
    each filler (0.7 + 0 + 2 × 0.6) / 4 (four neighbours: every other chunk)."""
    pairs = np.full((5, 5), 0.6)
    pairs[0, 2:] = pairs[2:, 0] = 0.7  # the hub is near every filler
    pairs[1, :] = pairs[:, 1] = 0.0  # the answer is near no filler
    pairs[0, 1] = pairs[1, 0] = 0.3
    np.fill_diagonal(pairs, 1.0)
    vecs = _vectors_with_pairs(HUB_COSINES, pairs)
    near = _by_hand_means(vecs)
    assert near == pytest.approx([0.6, 0.075, 0.475, 0.475, 0.475], abs=1e-5)
    return _index_with_vectors(texts, vecs), near


def _by_hand_fused(near: list[float], bm25: list[float]) -> list[float]:
    dense = [c - HUB_WEIGHT * m for c, m in zip(HUB_COSINES, near, strict=True)]

    def unit(xs: list[float]) -> list[float]:
        lo, hi = min(xs), max(xs)
        return [(x - lo) / (hi - lo) if hi > lo else float(x > 0) for x in xs]

    return [(1 - HYBRID_BM25_WEIGHT) * d + HYBRID_BM25_WEIGHT * b for d, b in zip(unit(dense), unit(bm25), strict=True)]


def test_hybrid_takes_half_a_hubs_neighbour_cosine_off_its_cosine():
    idx, near = _hub_index()
    dense = retrieve(idx, ["what is it?"], 5, "dense", QUERY)[0]
    assert [h.chunk.text for h in dense][:2] == HUB_TEXTS[:2]  # dense: the cosine alone, H first
    hybrid = retrieve(idx, ["what is it?"], 5, "hybrid", QUERY)[0]
    assert [h.chunk.text for h in hybrid][:2] == [HUB_TEXTS[1], HUB_TEXTS[0]]  # the answer first
    want = _by_hand_fused(near, [0.0] * 5)
    for h in hybrid:
        i = HUB_TEXTS.index(h.chunk.text)
        assert h.score == pytest.approx(want[i], abs=1e-5)
        assert h.evidence.cosine == pytest.approx(HUB_COSINES[i], abs=1e-5)  # the card shows the cosine
        assert h.evidence.neighbours == pytest.approx(near[i], abs=1e-5)
        assert h.to_dict()["evidence"]["neighbours"] == pytest.approx(near[i], abs=1e-5)
    # reciprocal-rank fusion is left as it is: ranks, no penalty
    rrf = retrieve(idx, ["what is it?"], 5, "rrf", QUERY)[0]
    assert rrf[0].chunk.text == HUB_TEXTS[0] and all(h.evidence.neighbours is None for h in rrf)
    assert "neighbours" not in rrf[0].to_dict()["evidence"]


def test_the_hub_penalty_moves_only_the_dense_half_of_the_fused_score():
    """The hub holds the question's word, the answer does not: BM25's half still counts in full."""
    texts = ["zebra links everywhere", "the answer itself", "filler one", "filler two", "filler three"]
    idx, near = _hub_index(texts)
    hybrid = retrieve(idx, ["zebra"], 5, "hybrid", QUERY)[0]
    want = _by_hand_fused(near, [float(x) for x in idx.lexical.scores("zebra")])
    assert [h.chunk.text for h in hybrid] == [texts[i] for i in sorted(range(5), key=lambda i: (-round(want[i], 9), i))]
    assert [h.score for h in hybrid] == pytest.approx(sorted(want, reverse=True), abs=1e-5)
    assert hybrid[0].chunk.text == texts[0]  # 0.5 × (its place among the dense) + 0.5 × 1


def test_rrf_fuses_the_dense_and_bm25_ranks_by_hand():
    paras = ZEBRA
    idx = _index_with_cosines(paras, [0.1, 0.9, 0.5, 0.3])
    rrf = retrieve(idx, ["zebra"], 4, "rrf", QUERY)[0]
    # k = 60: A 1/64 + 1/61, D 1/63 + 1/62, B 1/61, C 1/62 (B and C are in no BM25 ranking)
    assert RRF_K == 60
    assert [h.chunk.text for h in rrf] == [paras[0], paras[3], paras[1], paras[2]]
    assert [h.score for h in rrf] == pytest.approx([1 / 64 + 1 / 61, 1 / 63 + 1 / 62, 1 / 61, 1 / 62])
    assert [h.rank for h in rrf] == [1, 2, 3, 4]
    # ranks, not scores: where the scores' gaps say otherwise, reciprocal ranks do not see them
    gaps = _index_with_cosines(["pump", "valve valve seal", "seal kit"], [0.95, 0.30, 0.31])
    by_rank = retrieve(gaps, ["valve seal"], 3, "rrf", QUERY)[0]
    # B 1/63 + 1/61, C 1/62 + 1/62, A (dense 1st by far, no question word) 1/61: last
    assert [h.chunk.text for h in by_rank] == ["valve valve seal", "seal kit", "pump"]
    assert [h.score for h in by_rank] == pytest.approx([1 / 63 + 1 / 61, 2 / 62, 1 / 61])
    assert retrieve(gaps, ["valve seal"], 3, "hybrid", QUERY)[0][0].chunk.text == "pump"


def test_rrf_ties_go_to_the_earlier_chunk_and_stop_words_rank_as_dense():
    paras = ["kiwi orchard", "a kiwi vine", "plums"]
    idx = _index_with_cosines(paras, [0.5, 0.9, 0.1])
    hits = retrieve(idx, ["kiwi"], 3, "rrf", QUERY)[0]
    # BM25 scores A and B alike (one "kiwi" in two words each): A 1st, B 2nd by the tie rule.
    # A: dense 2nd + BM25 1st, B: dense 1st + BM25 2nd: equal sums, the earlier chunk first
    bm25 = retrieve(idx, ["kiwi"], 3, "bm25")[0]
    assert [h.chunk.text for h in bm25[:2]] == paras[:2] and bm25[0].score == bm25[1].score
    assert [h.chunk.text for h in hits] == paras
    assert hits[0].score == hits[1].score == pytest.approx(1 / 61 + 1 / 62)
    stop = retrieve(idx, ["what is it?"], 3, "rrf", QUERY)[0]
    assert [h.chunk.text for h in stop] == [paras[1], paras[0], paras[2]]
    assert [h.score for h in stop] == pytest.approx([1 / 61, 1 / 62, 1 / 63])


def test_hybrid_with_the_fake_embedder_finds_the_keyword_chunk():
    idx = build_index([_doc(KEYWORD_PARAS)], PARA_CFG, _ctx(), retriever="hybrid")
    assert idx.has_vectors
    hits = idx.search("valve xr-7731 chlorine", k=2, retriever="hybrid")
    assert hits[0].chunk.text == KEYWORD_PARAS[1] and len(hits) == 2


# -- no model for BM25 ---------------------------------------------------------------------------
def test_bm25_never_calls_the_embedder():
    emb = FakeEmbedder(dim=40)  # its own model id: nothing cached by other tests
    ctx = Context(embedder=emb)
    doc = _doc([*KEYWORD_PARAS, "An extra paragraph only this test uses."])
    idx = build_index([doc], PARA_CFG, ctx, retriever="bm25")
    assert not idx.has_vectors
    idx.search_many(["valve", "pumps"], 2, retriever="bm25")
    out = compare([doc], [PARA_CFG], "xr-7731", 1, ctx, retriever="bm25")
    assert out[PARA_CFG][0].chunk.text == KEYWORD_PARAS[1]
    cached = get_index([doc], PARA_CFG, ctx, retriever="bm25")
    assert not cached.has_vectors
    q = Question("Which valve isolates the chlorine line?", ((doc.id, 0, 10),))
    (res,) = evaluate([doc], [PARA_CFG], [q], k=1, ctx=ctx, retriever="bm25")
    assert res.retriever == "bm25" and res.to_dict()["retriever"] == "bm25"
    assert emb.texts_embedded == [] and emb.stats.requested == 0
    # the same cached index serves dense next: it embeds now, once
    hits = compare([doc], [PARA_CFG], "xr-7731", 1, ctx, retriever="dense")[PARA_CFG]
    assert cached.has_vectors and len(hits) == 1 and emb.stats.encoded == len(cached) + 1
    assert get_index([doc], PARA_CFG, ctx) is cached


def test_evaluate_and_sweep_take_the_retriever():
    doc = _doc(KEYWORD_PARAS)
    start = doc.text.index("Valve")
    q = Question("Which part is XR-7731?", ((doc.id, start, start + 10),))
    for retriever in RETRIEVERS:
        (res,) = evaluate([doc], [PARA_CFG], [q], k=1, ctx=_ctx(), retriever=retriever)
        assert res.retriever == retriever
        if retriever != "dense":
            assert res.scores.recall.mean == 1.0
    rows = sweep([doc], PARA_CFG, "sentences_per_chunk", [1, 2], [q], k=1, ctx=_ctx(), retriever="bm25")
    assert [r.result.retriever for r in rows] == ["bm25", "bm25"]
    assert all(r.result.scores.recall.mean == 1.0 for r in rows)


@pytest.mark.parametrize("bad", ["sparse", "BM25", "", None])
def test_a_bad_retriever_names_itself_and_the_valid_ones(bad):
    doc = _doc(KEYWORD_PARAS)
    q = Question("valve", ((doc.id, 0, 5),))
    idx = build_index([doc], PARA_CFG, _ctx(), retriever="bm25")
    calls = [
        lambda: idx.search("valve", 1, retriever=bad),
        lambda: compare([doc], [PARA_CFG], "valve", 1, _ctx(), retriever=bad),
        lambda: build_index([doc], PARA_CFG, _ctx(), retriever=bad),
        lambda: evaluate([doc], [PARA_CFG], [q], 1, _ctx(), retriever=bad),
        lambda: sweep([doc], PARA_CFG, "sentences_per_chunk", [1], [q], 1, _ctx(), retriever=bad),
    ]
    for call in calls:
        with pytest.raises(ParamError, match=f"retriever {bad!r} is not one of dense, bm25, hybrid"):
            call()


# -- CLI -----------------------------------------------------------------------------------------
@pytest.fixture
def files(tmp_path) -> tuple[Path, Path]:
    txt = tmp_path / "doc.txt"
    txt.write_text("\n\n".join(KEYWORD_PARAS), encoding="utf-8")
    q = tmp_path / "q.jsonl"
    q.write_text(json.dumps({"question": "Which part is XR-7731?", "answer": "Valve XR-7731"}) + "\n")
    return txt, q


@pytest.fixture
def fake_emb(monkeypatch):
    emb = FakeEmbedder(dim=72)

    def make_context(model, progress=None, quantize=False, backend="auto"):
        return Context(model=model, embedder=emb, progress=progress, quantize=quantize)

    monkeypatch.setattr(cli_inputs, "make_context", make_context)
    return emb


def _run(capsysbinary, *argv: str) -> tuple[int, str]:
    rc = main(list(argv))
    out, _ = capsysbinary.readouterr()
    return rc, out.decode("utf-8")


STRAT = ["--strategy", "sentence", "--set", "overlap_sentences=0", "--set", "sentences_per_chunk=1"]


def test_cli_retriever_flag_on_compare_evaluate_sweep(capsysbinary, files, fake_emb):
    txt, q = files
    rc, out = _run(capsysbinary, "compare", str(txt), "--question", "xr-7731", *STRAT, "--k", "2",
                   "--retriever", "bm25", "-q")  # fmt: skip
    assert rc == 0
    (d,) = json.loads(out)
    assert d["retriever"] == "bm25" and d["hits"][0]["text"] == KEYWORD_PARAS[1]
    assert fake_emb.stats.requested == 0
    rc, out = _run(capsysbinary, "compare", str(txt), "--question", "xr-7731", *STRAT, "-q")
    assert rc == 0 and json.loads(out)[0]["retriever"] == "hybrid"  # the default
    # hybrid's evidence names each hit's neighbour mean (the hub correction), rrf's does not
    evidence = [h["evidence"] for h in json.loads(out)[0]["hits"]]
    assert evidence and all(-1 <= e["neighbours"] <= 1 and "raised" in e for e in evidence)
    ev = ["evaluate", "--corpus", str(txt), "--questions", str(q), *STRAT, "--k", "1", "-q"]
    rc, out = _run(capsysbinary, *ev, "--retriever", "dense", "--format", "json")
    assert rc == 0 and json.loads(out)[0]["retriever"] == "dense"
    rc, out = _run(capsysbinary, *ev, "--retriever", "bm25")
    assert rc == 0 and "1 question, top 1, bm25 retrieval;" in out
    rc, out = _run(capsysbinary, *ev, "--retriever", "rrf", "--format", "json")
    assert rc == 0 and json.loads(out)[0]["retriever"] == "rrf" and json.loads(out)[0]["recall"] == 1.0
    rc, out = _run(capsysbinary, "compare", str(txt), "--question", "xr-7731", *STRAT, "--k", "2",
                   "--retriever", "rrf", "-q")  # fmt: skip
    (d,) = json.loads(out)
    assert rc == 0 and d["hits"][0]["text"] == KEYWORD_PARAS[1] and 0 < d["hits"][0]["score"] <= 2 / 61 + 1e-6  # rounded to 6 places
    assert not any("neighbours" in h["evidence"] for h in d["hits"])
    sw = ["sweep", "--corpus", str(txt), "--questions", str(q), *STRAT[:4]]
    sw += ["--vary", "sentences_per_chunk=1,2"]
    rc, out = _run(capsysbinary, *sw, "--retriever", "bm25", "-q")
    assert rc == 0 and "bm25 retrieval" in out
    rc, out = _run(capsysbinary, *sw, "--retriever", "hybrid", "--format", "json", "-q")
    assert rc == 0 and [r["retriever"] for r in json.loads(out)] == ["hybrid", "hybrid"]


@pytest.mark.parametrize("command", ["compare", "evaluate", "sweep"])
def test_cli_rejects_a_bad_retriever(files, command):
    txt, q = files
    argv = {
        "compare": ["compare", str(txt), "--question", "x"],
        "evaluate": ["evaluate", "--corpus", str(txt), "--questions", str(q)],
        "sweep": ["sweep", "--corpus", str(txt), "--questions", str(q), "--vary", "chunk_size=80,120"],
    }[command]
    r = subprocess.run(
        [sys.executable, "-m", "explorer", *argv, "--retriever", "sparse"],
        cwd=ROOT,
        capture_output=True,
        timeout=120,
    )
    err = r.stderr.decode("utf-8")
    assert r.returncode == 2 and r.stdout == b""
    assert err.count("\n") == 1 and err.startswith("error: ")
    assert "--retriever" in err and "'sparse'" in err and "dense" in err and "Traceback" not in err


def test_cli_bm25_does_not_load_the_model(files):
    """The real default context: with --retriever bm25 neither torch nor sentence-transformers
    is imported, for compare and evaluate (token counts use the tokenizer only)."""
    txt, q = files
    code = (
        "import sys\n"
        "from explorer.cli.main import main\n"
        f"a = main(['compare', {str(txt)!r}, '--question', 'xr-7731', '--retriever', 'bm25', '-q'])\n"
        f"b = main(['evaluate', '--corpus', {str(txt)!r}, '--questions', {str(q)!r}, "
        "'--retriever', 'bm25', '-q'])\n"
        "heavy = sorted(m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules)\n"
        "print(a, b, heavy, file=sys.stderr)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, timeout=120)
    err = r.stderr.decode("utf-8")
    assert r.returncode == 0, err
    assert err.strip().splitlines()[-1] == "0 0 []"
    assert "Valve XR-7731" in r.stdout.decode("utf-8")


# -- real model ----------------------------------------------------------------------------------
@pytest.mark.model
def test_real_model_hybrid_on_the_bundled_samples():
    from explorer.documents.samples import load_sample, sample_questions
    from explorer.evaluation.questions import load_questions

    docs = [load_sample("guide.md"), load_sample("rapport_annuel.txt")]
    questions = load_questions(sample_questions({"guide.md", "rapport_annuel.txt"}), docs)
    assert len(questions) == 5
    cfg = StrategyConfig.make("recursive", {"chunk_size": 400, "chunk_overlap": 0})
    ctx = Context()
    results = {r: evaluate(docs, [cfg], questions, k=3, ctx=ctx, retriever=r)[0] for r in ("bm25", "hybrid", "rrf")}
    assert results["hybrid"].scores.hit_rate.mean >= 0.8
    assert results["rrf"].scores.hit_rate.mean >= 0.6
    assert results["bm25"].scores.hit_rate.mean >= 0.6
    idx = get_index(docs, cfg, ctx, retriever="hybrid")
    hits = idx.search("Quel dividende le conseil propose-t-il ?", k=3, retriever="hybrid")
    assert "dividende" in hits[0].chunk.text and 0.5 <= hits[0].score <= 1
    rrf = idx.search("Quel dividende le conseil propose-t-il ?", k=3, retriever="rrf")
    assert "dividende" in rrf[0].chunk.text and 1 / 70 < rrf[0].score <= 2 / 61
    # each hybrid hit's hub mean is its mean cosine to its 10 nearest chunks, by hand from the
    # model's own vectors
    near = _by_hand_means(idx.vectors)
    for h in hits:
        assert h.evidence.neighbours == pytest.approx(near[idx.positions[(h.chunk.doc_id, h.chunk.start)]], abs=1e-5)
        assert 0 < h.evidence.neighbours < 1


# -- other languages: each document stemmed in its own, questions in the index's ------------
@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("Die Datei wird mit dem Kommando gespeichert, und der Cursor ist nicht am Ende.", "german"),
        ("El cursor se mueve con las teclas y los cambios no se guardan en el fichero.", "spanish"),
        ("Il cursore si sposta con i tasti e le modifiche della riga non sono salvate.", "italian"),
        ("O cursor é movido com as teclas e as alterações não são salvas no arquivo.", "portuguese"),
        ("De cursor wordt met de toetsen bewogen en het bestand is niet opgeslagen.", "dutch"),
        ("Le curseur se déplace avec les touches et les modifications sont perdues.", "french"),
        ("The cursor is moved with the keys and the changes are not saved.", "english"),
    ],
)
def test_each_text_gets_the_stemmer_of_its_language(text, language):
    assert language_of([tokenize(text, stop_words=())]) == language


def test_a_text_in_none_of_the_languages_is_not_stemmed_as_one_of_them():
    """A Russian text naming the Latin key "o" once holds one Portuguese function word and no
    other: too few (under LANGUAGE_MIN_SHARE of its words) to stem it as Portuguese; its script
    names it Russian."""
    russian = (
        "Чтобы открыть новую строку под курсором и перейти в режим вставки, нажмите клавишу o. "
        "Затем наберите текст и нажмите клавишу выхода, чтобы вернуться в обычный режим. "
        "Переместите курсор на строку ниже, отмеченную стрелкой, и повторите это упражнение "
        "несколько раз, пока команда не станет привычной. Обратите внимание, что после выхода "
        "из режима вставки курсор остаётся на последнем набранном символе, а сама строка "
        "сохраняется в буфере до тех пор, пока вы не запишете файл на диск командой записи. "
        "Если вы ошиблись, отмените последнее изменение и попробуйте ещё раз с самого начала."
    )
    words = tokenize(russian, stop_words=())
    assert "o" in words and len(words) > 1 / LANGUAGE_MIN_SHARE
    assert language_of([words]) == "russian"
    assert language_of([["o", "cursor", "com", "as", "teclas"]]) == "portuguese"


def test_a_question_is_stemmed_in_every_language_of_the_index():
    texts = [
        "Um eine ganze Zeile zu löschen, tippe dd.",
        "Die Eingabe von / sucht vorwärts nach dem Ausdruck.",
        "Um Vim zu verlassen, tippe :q! und die Änderungen sind verworfen.",
    ]
    index = LexicalIndex(texts, groups=["de"] * 3)
    assert index.languages == {"german"}
    # "Zeilen" meets "Zeile" only through the German stemmer (French and English keep "zeilen")
    assert "zeil" not in query_tokens("Zeilen") and "zeil" in query_tokens("Zeilen", {"german"})
    scores = index.scores("Wie lösche ich Zeilen?")
    assert scores.argmax() == 0 and scores[0] > 0
    # an index without German documents never stems a question as German (extra stems of
    # English words matched other English words on Chroma's set)
    english = LexicalIndex(["The filters are backwashed."], groups=["en"])
    assert english.languages == {"english"}
    assert query_tokens("Zeilen gelöscht", english.languages) == query_tokens("Zeilen gelöscht")


def test_a_german_index_and_its_questions_leave_out_german_stop_words_and_others_keep_them():
    """German function words ("die", "wie", "man") score nothing and are not marked in a German
    document, as English and French ones are; an index without German keeps them (the German
    list holds English words: "man", "die")."""
    texts = [
        "Auf install folgen ein oder mehrere Pakete, für die eine Installation gewünscht wird.",
        "autoremove wird benutzt, um Pakete zu entfernen, die automatisch installiert wurden.",
        "Die Option zeigt, wie man nicht mehr benötigte Dateien findet.",
    ]
    index = LexicalIndex(texts, groups=["de"] * 3)
    assert index.languages == {"german"}
    question = "Wie entfernt man automatisch installierte Pakete, die nicht mehr benötigt werden?"
    tokens = query_tokens(question, index.languages)
    assert not {"die", "wie", "man", "werden"} & set(tokens)
    assert {"entfernt", "automat", "paket", "nicht"} <= set(tokens)  # a negation carries meaning
    spanish = query_tokens("¿Cómo se sale de Vim sin guardar los cambios?", {"spanish"})
    assert "sin" in spanish and not {"como", "se", "los"} & set(spanish)
    assert index.scores(question).argmax() == 1
    assert "die" not in tokenize_many(texts)[0]  # and in the chunks
    text = texts[0]
    marked = [text[s:e] for s, e in matched_spans(text, 0, len(text), question, index.languages)]
    assert "Pakete" in marked and "die" not in marked and "für" not in marked
    english = LexicalIndex(["The man page says what the option does."], groups=["en"])
    assert "man" in query_tokens("man page", english.languages)
    assert english.scores("man page").max() > 0


def test_question_words_of_each_language_are_stop_words_there():
    """A tester's Italian question "Chi è l'amministratore…" matched "Chi intende…" and, stemmed,
    "chiavi" (Italian Snowball gives "chi"): the chunk about keys came third for it. German
    "wann", Spanish "dónde", Dutch "wanneer" and Portuguese "quem" did the same."""
    texts = [
        "Chi intende eseguire lavori deve avvisare l'amministratore.",
        "Le chiavi del locale caldaia sono custodite dal portiere.",
        "L'amministratore del palazzo è il sig. Rossi, nominato dall'assemblea.",
    ]
    index = LexicalIndex(texts, groups=["it"] * 3)
    assert index.languages == {"italian"}
    question = "Chi è l'amministratore del palazzo?"
    assert not {"chi"} & set(query_tokens(question, index.languages))
    assert index.scores(question).argmax() == 2
    marked = [texts[1][s:e] for s, e in matched_spans(texts[1], 0, len(texts[1]), question, index.languages)]
    assert marked == []  # "chiavi" is not the question's word
    for words, language in (("wann wo welche", "german"), ("dónde quién cuántos", "spanish"),
                            ("wanneer hoeveel waar", "dutch"), ("quem quais", "portuguese")):  # fmt: skip
        assert query_tokens(words, {language}) == [], (words, language)
    # the same words count where their language is not indexed (Italian "chi" is not English)
    assert query_tokens("chi", {"english"}) != []


# -- the question's words in a hit ------------------------------------------------------------
def test_matched_spans_are_the_words_bm25_matches_at_their_offsets():
    text = "Pré-requis : les PAQUETS installés. Électricité du paquet; the filters were installing."
    spans = matched_spans(text, 0, len(text), "Quel paquet installer ? electricite, filter", ["english"])
    assert [text[s:e] for s, e in spans] == ["PAQUETS", "installés", "Électricité", "paquet", "filters", "installing"]
    assert matched_spans(text, 0, len(text), "le la les du ?") == []  # stop words only
    at = text.index("PAQUETS")
    assert matched_spans(text, at, at + 30, "paquet") == [(at, at + 7)]  # only inside [start, end)
    assert matched_spans(text, at + 1, at + 30, "paquet") == []  # "AQUETS": not the word BM25 sees
    cjk = "字节顺序很重要。用 dd 删除一行。"
    assert [cjk[s:e] for s, e in matched_spans(cjk, 0, len(cjk), "如何删除一行？")] == ["删除一行"]
    thai = "ดื่มน้ำทุกวัน คำถาม"  # SARA AM, which NFKD splits in two, is one character of its pairs
    assert [thai[s:e] for s, e in matched_spans(thai, 0, len(thai), "น้ำ คำ")] == ["น้ำ", "คำ"]
    hindi = "फ़िल्टर की सफ़ाई हर सुबह होती है।"  # whole words, vowel signs included
    assert [hindi[s:e] for s, e in matched_spans(hindi, 0, len(hindi), "सफ़ाई कब")] == ["सफ़ाई"]


def test_compatibility_characters_read_as_their_plain_letters_in_index_question_and_marks():
    """A character whose compatibility letters are capitals ("ℌ", a PDF's bold "𝐁𝐨𝐥𝐝", "㎒")
    is lower-cased after NFKC, so its plain spelling finds it; the marks read the text as BM25
    does ("x²y" is one word, "x2y") and land on the characters written."""
    texts = ["the ℌilbert space", "a 5 ㎒ band", "𝐁𝐨𝐥𝐝 claims", "the x²y term", "nothing here"]
    index = LexicalIndex(texts)
    for question, i in (("Hilbert", 0), ("mhz", 1), ("bold", 2), ("x2y", 3)):
        scores = index.scores(question)
        assert scores.argmax() == i and scores[i] > 0, question
        text = texts[i]
        assert [text[s:e] for s, e in matched_spans(text, 0, len(text), question)] == [text.split()[-2]], question
    text = "x " + texts[3]  # offsets in the whole text, a window of it read
    assert matched_spans(text, 2, len(text), "x2y") == [(6, 9)]
    assert matched_spans("½ cup", 0, 5, "2 cup") == [(0, 1), (2, 5)]  # "1⁄2": its "2" marks the "½"


def test_marks_land_on_letters_that_nfkc_composes():
    """Hangul written as separate letters (jamo, as NFD leaves it) and half-width kana with their
    voicing marks compose under NFKC, as the index reads them: a chunk BM25 scores has its
    words marked, on every letter written (they were read one character at a time: no marks)."""
    import unicodedata

    for text, question, marked in (
        (unicodedata.normalize("NFD", "한국어 문서"), "한국어", [unicodedata.normalize("NFD", "한국어")]),
        ("ﾊﾟｿｺﾝ を 使う", "パソコン", ["ﾊﾟｿｺﾝ"]),
        ("x " + unicodedata.normalize("NFD", "문서") + " y", "문서", [unicodedata.normalize("NFD", "문서")]),
    ):
        index = LexicalIndex([text, "the cat sat on the mat", "nothing here"])
        assert index.scores(question)[0] > 0
        spans = matched_spans(text, 0, len(text), question, index.languages)
        assert [text[s:e] for s, e in spans] == marked, ascii(text)
        at = text.index(" ")  # a window from a word's edge: the same marks, in the text's offsets
        assert matched_spans(text, at, len(text), question, index.languages) == [(s, e) for s, e in spans if s >= at]


def test_a_chunk_has_matched_words_exactly_when_its_bm25_score_is_positive():
    """The marks tell the same story as the score: on the French set's man page in 300-character
    pieces, a piece has a marked word if and only if BM25 scores it above 0."""
    text = (ROOT / "bench" / "data" / "french" / "man-grep.txt").read_text()[:30_000]
    pieces = [(i, min(i + 300, len(text))) for i in range(0, len(text), 300)]
    index = LexicalIndex([text[s:e] for s, e in pieces])
    for question in ("Comment ignorer la casse des motifs ?", "Quel code de sortie en cas d'erreur ?"):
        scores = index.scores(question)
        marked = [bool(matched_spans(text, s, e, question, index.languages)) for s, e in pieces]
        assert marked == [bool(x > 0) for x in scores]
        assert 0 < sum(marked) < len(pieces)


def test_a_dense_index_knows_its_languages_without_building_bm25():
    """A hit found by dense marks a German document's words by their German stems, as under
    hybrid: the index finds the languages BM25 would stem in, and builds no BM25 index for it."""
    german = _doc(["Um eine ganze Zeile zu löschen, tippe dd.", "Die Eingabe von / sucht vorwärts nach dem Ausdruck."], "de.txt")
    french = _doc(["Le curseur se déplace avec les touches et les modifications sont perdues."], "fr.txt")
    idx = build_index([german, french], PARA_CFG, _ctx(), retriever="dense")
    assert idx.stemmed_languages() == {"german", "french"}
    assert idx._lexical is None  # found without building BM25
    assert idx.stemmed_languages() == idx.lexical.languages  # the same once it is built
    text = german.text
    spans = matched_spans(text, 0, len(text), "Wie lösche ich Zeilen?", idx.stemmed_languages())
    assert [text[s:e] for s, e in spans] == ["Zeile", "löschen"]



PREFIX_QUESTIONS = (
    "Comment ignorer la casse des motifs ?",
    "Quel code de sortie en cas d'erreur ?",
    "Comment afficher les numéros de ligne ?",
    "Comment chercher dans tous les fichiers d'un répertoire ?",
    "Que fait l'option contexte ?",
    "Comment compter les lignes qui correspondent ?",
)


def _assert_larger_k_keeps_the_first_hits(ctx: Context, retriever: str) -> None:
    text = (ROOT / "bench" / "data" / "french" / "man-grep.txt").read_text()
    cfg = StrategyConfig.make("recursive", {"chunk_size": 300, "chunk_overlap": 0})
    idx = build_index([Document("man-grep.txt", "text", text)], cfg, ctx, retriever=retriever)
    assert len(idx) > 4 * 20
    many = idx.search_many(PREFIX_QUESTIONS, 20, retriever=retriever)
    for k in (1, 5, 12):
        few = idx.search_many(PREFIX_QUESTIONS, k, retriever=retriever)
        assert [[(h.chunk.start, h.score) for h in hs] for hs in few] == [
            [(h.chunk.start, h.score) for h in hs[:k]] for hs in many
        ]


@pytest.mark.parametrize("retriever", ["hybrid", "rrf"])
def test_a_larger_top_k_keeps_the_first_hits(retriever):
    """Moving the Top k slider from 5 to 20 adds hits below the first ones and never reorders
    them: the fused candidates do not depend on k (up to HYBRID_CANDIDATES)."""
    _assert_larger_k_keeps_the_first_hits(_ctx(), retriever)


@pytest.mark.model
def test_a_larger_top_k_keeps_the_first_hits_with_the_real_model():
    _assert_larger_k_keeps_the_first_hits(Context(), "hybrid")


def _assert_evidence_is_each_rankings_own(ctx: Context, retriever: str) -> None:
    """A fused hit's evidence is the place and score the dense and the BM25 retriever give that
    chunk themselves (None where the chunk is not among that ranking's candidates)."""
    text = (ROOT / "bench" / "data" / "french" / "man-grep.txt").read_text()
    cfg = StrategyConfig.make("recursive", {"chunk_size": 300, "chunk_overlap": 0})
    idx = build_index([Document("man-grep.txt", "text", text)], cfg, ctx, retriever=retriever)
    pool = HYBRID_CANDIDATES
    for question in PREFIX_QUESTIONS:
        dense = {h.chunk.start: h for h in idx.search(question, pool, retriever="dense")}
        bm25 = {h.chunk.start: h for h in idx.search(question, pool, retriever="bm25") if h.score > 0}
        hits = idx.search(question, 10, retriever=retriever)
        assert len(hits) == 10
        for h in hits:
            ev, start = h.evidence, h.chunk.start
            assert ev is not None and (start in dense or start in bm25)
            assert ev.dense_rank == (dense[start].rank if start in dense else None)
            assert ev.bm25_rank == (bm25[start].rank if start in bm25 else None)
            if start in dense:
                assert ev.cosine == pytest.approx(dense[start].score, abs=1e-5)
            if start in bm25:
                assert ev.bm25 == pytest.approx(bm25[start].score)
        assert hits[0].to_dict()["evidence"] == hits[0].evidence.to_dict()
        if retriever == "hybrid":  # BM25's first hit is in the first five, raised or not
            first = [s for s in bm25 if bm25[s].rank == 1]
            assert set(first) <= {h.chunk.start for h in hits[:5]}
            assert [h.chunk.start for h in hits if h.evidence.raised] in ([], first)
        else:
            assert not any(h.evidence.raised for h in hits)
    assert all(h.evidence is None for h in idx.search(PREFIX_QUESTIONS[0], 5, retriever="dense"))
    assert "evidence" not in idx.search(PREFIX_QUESTIONS[0], 5, retriever="bm25")[0].to_dict()


@pytest.mark.parametrize("retriever", ["hybrid", "rrf"])
def test_a_fused_hit_carries_its_place_in_each_ranking(retriever):
    _assert_evidence_is_each_rankings_own(_ctx(), retriever)


@pytest.mark.model
def test_a_fused_hit_carries_its_place_in_each_ranking_with_the_real_model():
    _assert_evidence_is_each_rankings_own(Context(), "hybrid")


def _assert_answer_places_are_the_retrievers_ranks(ctx: Context) -> None:
    text = (ROOT / "bench" / "data" / "french" / "man-grep.txt").read_text()[:40_000]
    cfg = StrategyConfig.make("recursive", {"chunk_size": 300, "chunk_overlap": 0})
    idx = build_index([Document("man-grep.txt", "text", text)], cfg, ctx, retriever="hybrid")
    n = len(idx)
    emb = ctx.get_embedder()
    for question in PREFIX_QUESTIONS[:3]:
        (qv,) = emb.encode_queries([question])
        dense = {h.chunk.start: h.rank for h in idx.search(question, n, retriever="dense")}
        bm25 = {h.chunk.start: h.rank for h in idx.search(question, n, retriever="bm25") if h.score > 0}
        for j in range(0, n, 7):
            c = idx.chunks[j]
            ref = (c.doc_id, c.start + 1, c.start + 2)  # inside this chunk only
            places = answer_places(idx, question, ref, qv)
            assert places.dense_rank == dense[c.start]
            assert places.bm25_rank == bm25.get(c.start)
        # an answer over two chunks: the better placed of them
        a, b = idx.chunks[3], idx.chunks[4]
        both = answer_places(idx, question, (a.doc_id, a.end - 1, b.start + 1), qv)
        assert both.dense_rank == min(dense[a.start], dense[b.start])
        # and which of the two holds each place
        assert both.dense_chunk == (3 if dense[a.start] < dense[b.start] else 4)
        if both.bm25_rank is not None:
            ranks = {3: bm25.get(a.start, n + 1), 4: bm25.get(b.start, n + 1)}
            assert ranks[both.bm25_chunk] == both.bm25_rank == min(ranks.values())
    assert answer_places(idx, "grep", ("other.txt", 0, 10), qv) is None
    no_word = answer_places(idx, "le la", ref, qv)  # no question word
    assert no_word == AnswerPlaces(places.dense_rank, None, places.dense_chunk, None)
    bare = build_index([Document("man-grep.txt", "text", text)], cfg, ctx, retriever="dense")
    if not bare.has_lexical:  # a dense search does not build BM25 for this
        assert answer_places(bare, "grep", ref, qv).bm25_rank is None


def test_an_answers_place_in_each_ranking():
    _assert_answer_places_are_the_retrievers_ranks(_ctx())


@pytest.mark.model
def test_an_answers_place_in_each_ranking_with_the_real_model():
    _assert_answer_places_are_the_retrievers_ranks(Context())



@pytest.mark.parametrize(
    ("texts", "question", "language"),
    [
        # Russian cases: "файлы" (plural) and "файла" (genitive) are one word
        (["Программа быстро сжимает файлы на диске.", "Кошка спит на диване весь день."], "сжатие файла", "russian"),
        # Greek: "αρχεία" / "αρχείου", and the accents (tonos) folded on both sides
        (["Το πρόγραμμα συμπιέζει τα αρχεία γρήγορα.", "Η γάτα κοιμάται στον καναπέ."], "αρχειου", "greek"),
        # Arabic: the article and the plural, and a tatweel in the question
        (["يقوم البرنامج بضغط الملفات بسرعة.", "القطة تنام على الأريكة طوال اليوم."], "المـلف", "arabic"),
        # Hindi: the oblique plural "फ़ाइलों" of "फ़ाइल"
        (["प्रोग्राम फ़ाइलों को जल्दी संपीड़ित करता है।", "बिल्ली सोफे पर सोती है।"], "फ़ाइल", "hindi"),
        # Turkish suffixes: "dosyaları" / "dosyanın"
        (["Bu program ve bir araç dosyaları için hızlı çalışır.", "Kedi bütün gün ve gece kanepede uyur."],
         "dosyanın", "turkish"),
        # Polish cases: "pliki" / "pliku"
        (["Program jest szybki i kompresuje pliki na dysku, że tak powiem.", "Kot jest na kanapie cały dzień."],
         "pliku", "polish"),
    ],
)
def test_texts_in_other_scripts_and_languages_get_their_stemmer(texts, question, language):
    """A text in Cyrillic, Greek, Arabic or Devanagari is named by its script, a Turkish or Polish
    one by its function words, and stemmed in that language: before, each got the English stemmer
    (which leaves them as written) and a question with another case of a word matched nothing
    (Polish was even stemmed as Portuguese, by its "na")."""
    index = LexicalIndex(texts)
    assert index.languages == {language}
    scores = index.scores(question)
    assert scores[0] > 0 and scores[1] == 0


def test_a_shared_script_is_named_by_the_letters_of_one_language():
    """Ukrainian is not stemmed as Russian (its і, ї, є set it apart), nor Urdu as Arabic or
    Persian; Persian gets its own stemmer."""
    ukrainian = tokenize("Програма швидко стискає файли, і це її головна перевага.", stop_words=())
    persian = tokenize("این برنامه پرونده‌ها را به سرعت فشرده می‌کند و کار را آسان می‌کند.", stop_words=())
    urdu = tokenize("یہ پروگرام فائلوں کو تیزی سے کمپریس کرتا ہے اور کام آسان بناتا ہے۔", stop_words=())
    assert language_of([ukrainian]) == "english"  # no stemmer: words kept as written
    assert language_of([persian]) == "persian"
    assert language_of([urdu]) == "english"
