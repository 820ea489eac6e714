"""Every metric against numbers worked out by hand (the arithmetic is in the comments)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explorer import Chunk, Document
from explorer.evaluation.chunk_metrics import chunk_stats, semantic_stats
from explorer.evaluation.flags import chunk_flags, count_tokens, flag_chunks, tiny_threshold
from explorer.evaluation.intervals import ChunkSpans, intersect, merge, subtract, total
from explorer.evaluation.retrieval_metrics import precision_omega, retrieval_scores
from explorer.evaluation.stats import SizeStats, Stat


def mk(doc: Document, spans: list[tuple[int, int]]) -> list[Chunk]:
    return [
        Chunk(doc.id, doc.name, i, s, e, doc.text[s:e], e - s, "chars", "test")
        for i, (s, e) in enumerate(spans)
    ]


# -- intervals ----------------------------------------------------------------------------------
def test_merge_intersect_subtract():
    # (1,3)+(2,4) -> (1,4); (5,8)+(8,9) touch -> (5,9); (10,10) is empty.
    assert merge([(5, 8), (1, 3), (2, 4), (8, 9), (10, 10)]) == [(1, 4), (5, 9)]
    assert total([(1, 4), (5, 9)]) == 7
    # (0,5)∩(3,8)=(3,5); (7,12)∩(3,8)=(7,8); (7,12)∩(11,20)=(11,12)
    assert intersect([(0, 5), (7, 12)], [(3, 8), (11, 20)]) == [(3, 5), (7, 8), (11, 12)]
    # (0,10)-(2,4)-(8,..) = (0,2),(4,8); (20,30)-(..,22)-(25,26) = (22,25),(26,30)
    assert subtract([(0, 10), (20, 30)], [(2, 4), (8, 22), (25, 26)]) == [(0, 2), (4, 8), (22, 25), (26, 30)]
    assert subtract([(0, 5)], []) == [(0, 5)]
    assert intersect([], [(0, 5)]) == []


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)), max_size=8),
    st.lists(st.tuples(st.integers(0, 60), st.integers(0, 60)), max_size=8),
)
def test_intervals_match_character_sets(a, b):
    """Interval arithmetic agrees with the naive per-character sets it replaces."""
    sa = {i for s, e in a for i in range(s, e)}
    sb = {i for s, e in b for i in range(s, e)}
    ma, mb = merge(a), merge(b)
    assert total(ma) == len(sa)
    assert {i for s, e in intersect(ma, mb) for i in range(s, e)} == sa & sb
    assert {i for s, e in subtract(ma, mb) for i in range(s, e)} == sa - sb


def test_stat_and_sizes():
    # [0,1]: mean .5, population std .5
    assert Stat.of([0.0, 1.0]) == Stat(0.5, 0.5)
    # [1,2,3,4]: mean 2.5, var (2.25+.25+.25+2.25)/4 = 1.25
    s = Stat.of([1, 2, 3, 4])
    assert s.mean == 2.5 and s.std == pytest.approx(1.25**0.5)
    assert Stat(0.785, 0.3).pct() == "78.5 ± 30.0"
    z = SizeStats.of([3, 5, 5, 8, 8, 12])
    # median of 6 values: (5+8)/2; mean 41/6
    assert (z.median, z.min, z.max) == (6.5, 3, 12)
    assert z.mean == pytest.approx(41 / 6)
    assert SizeStats.of([]) == SizeStats(0.0, 0.0, 0, 0, 0.0, 0.0)


# -- retrieval metrics (Chroma's definitions) -----------------------------------------------------
def test_retrieval_scores_two_excerpts():
    # E: A[10,20) and A[30,40): Σ|e| = 20.
    # R: A[0,15) (15 chars), B[0,50) (other document, 50), A[12,35) (23).
    # ∪R_c = A[0,35); I = [10,20) + [30,35) = 15.
    # recall 15/20; precision 15/(15+50+23=88); unused excerpt = [35,40) = 5; IoU 15/(88+5).
    refs = [("A", 10, 20), ("A", 30, 40)]
    ret = [("A", 0, 15), ("B", 0, 50), ("A", 12, 35)]
    s = retrieval_scores(refs, ret)
    assert s.recall == pytest.approx(0.75)
    assert s.precision == pytest.approx(15 / 88)
    assert s.iou == pytest.approx(15 / 93)
    assert (s.hit, s.rr) == (1.0, 1.0)


def test_retrieval_scores_first_hit_at_rank_three():
    # E: A[10,20). R: B[0,10), A[0,10) (touches at 10 but shares no character), A[18,22).
    # I = [18,20) = 2; recall 2/10; precision 2/(10+10+4); unused [10,18) = 8 -> IoU 2/(24+8).
    s = retrieval_scores([("A", 10, 20)], [("B", 0, 10), ("A", 0, 10), ("A", 18, 22)])
    assert s.recall == pytest.approx(0.2)
    assert s.precision == pytest.approx(2 / 24)
    assert s.iou == pytest.approx(2 / 32)
    assert s.rr == pytest.approx(1 / 3) and s.hit == 1.0


def test_retrieval_scores_overlap_counted_again_in_precision():
    # E: A[0,10). R: A[0,10), A[5,10): I = 10, recall 1; Σ|r| = 15 -> precision = IoU = 10/15.
    s = retrieval_scores([("A", 0, 10)], [("A", 0, 10), ("A", 5, 10)])
    assert s.recall == 1.0
    assert s.precision == pytest.approx(2 / 3)
    assert s.iou == pytest.approx(2 / 3)


def test_retrieval_scores_miss():
    # Nothing of A retrieved: I = 0; IoU = 0/(5 + 10) = 0; no hit, rr 0.
    s = retrieval_scores([("A", 0, 10)], [("B", 0, 5)])
    assert (s.recall, s.precision, s.iou, s.hit, s.rr) == (0, 0, 0, 0, 0)
    with pytest.raises(ValueError):
        retrieval_scores([], [("A", 0, 1)])


def test_precision_omega():
    spans = ChunkSpans([("A", 0, 10), ("A", 10, 20), ("A", 20, 30), ("A", 30, 40), ("B", 0, 40)])
    # E = A[12,25): touching chunks [10,20),[20,30) -> ∪C = 20 chars, ∩E = 13, E\C = 0: 13/20.
    assert precision_omega([("A", 12, 25)], spans) == pytest.approx(0.65)
    # + E2 = A[38,45) past the last chunk: C adds [30,40): ∪C = [10,40) = 30, ∩E = 13+2 = 15,
    # E\C = [40,45) = 5 -> 15/35.
    assert precision_omega([("A", 12, 25), ("A", 38, 45)], spans) == pytest.approx(15 / 35)
    # An excerpt equal to a chunk: its neighbours [0,10) and [20,30) touch it at 10 and 20 and
    # count, as in the report's code (an empty intersection counts): ∪C = [0,30): 10/30.
    assert precision_omega([("A", 10, 20)], spans) == pytest.approx(1 / 3)
    assert spans.touching("A", 10, 20) == [(10, 20)]
    assert spans.touching("A", 10, 20, adjacent=True) == [(0, 10), (10, 20), (20, 30)]
    assert spans.touching("C", 0, 5) == []


def test_chunk_spans_touching_matches_brute_force():
    rng = random.Random(3)
    ivs = []
    pos = 0
    for _ in range(200):
        s = pos + rng.randint(0, 5)
        ivs.append(("A", s, s + rng.randint(1, 40)))  # overlapping, uneven chunks
        pos = s + 1
    spans = ChunkSpans(ivs)
    for _ in range(200):
        a = rng.randint(0, 300)
        b = a + rng.randint(1, 30)
        brute = sorted((s, e) for _, s, e in ivs if s < b and e > a)
        assert sorted(spans.touching("A", a, b)) == brute
        brute = sorted((s, e) for _, s, e in ivs if s <= b and e >= a)
        assert sorted(spans.touching("A", a, b, adjacent=True)) == brute


# -- structural metrics ---------------------------------------------------------------------------
#            0         1         2         3
#            0123456789012345678901234567890123456
TEXT = "One two. Three four.\n\nFive six seven."
# sentences end at 8 ("One two."), 20 ("four."), 37 (end of text)


@pytest.fixture
def two_docs():
    d1 = Document("d1.txt", "text", TEXT)
    d2 = Document("d2.txt", "text", "One two. Extra")  # 14 chars, non-space 3+4+5 = 12
    c1 = mk(d1, [(0, 8), (9, 14), (15, 20), (22, 25), (25, 37)])
    c2 = mk(d2, [(0, 8)])
    return d1, d2, c1 + c2


def test_flags_by_hand(two_docs):
    d1, d2, chunks = two_docs
    tokens = [4, 3, 4, 3, 6, 4]
    flags = flag_chunks(chunks, [d1, d2], token_counts=tokens, max_tokens=4, tiny_chars=4)
    assert flags == [
        frozenset(),  # "One two." ends at a sentence end, 4 tokens = limit (not over)
        {"mid_sentence"},  # "Three" ends at 14: no sentence end; space after: not mid-word
        frozenset(),  # "four." starts after a space, ends at 20
        {"mid_sentence", "mid_word", "tiny"},  # "Fiv": cut inside "Five"; 3 chars < 4
        {"mid_word", "over_limit"},  # "e six seven.": starts inside "Five"; 6 tokens > 4; end of text
        {"duplicate"},  # same text as chunk 0
    ]
    # the single-chunk API agrees
    assert chunk_flags(chunks[3], d1, tokens=3, max_tokens=4, tiny_chars=4) == flags[3]


def test_a_cut_before_a_vowel_sign_is_mid_word():
    """Hindi's vowel signs are combining marks, not letters to ``str.isalnum``: a cut between
    "क" and "ि" split the syllable unflagged."""
    doc = Document("hi.txt", "text", "किताब पढ़ो")  # 0 क, 1 ि (vowel sign), 2 त...; space at 5
    inside, between = mk(doc, [(0, 1), (1, 5)]), mk(doc, [(0, 5), (6, 10)])
    assert [("mid_word" in f) for f in flag_chunks(inside, [doc], token_counts=[1, 1], max_tokens=9)] == [True, True]
    assert not any("mid_word" in f for f in flag_chunks(between, [doc], token_counts=[1, 1], max_tokens=9))


def test_chunk_stats_by_hand(two_docs):
    d1, d2, chunks = two_docs
    s = chunk_stats(chunks, [d1, d2], token_counts=[4, 3, 4, 3, 6, 4], max_tokens=4)
    assert s.count == 6
    # sizes 8,5,5,3,12,8: mean 41/6, median (5+8)/2, population std sqrt(50.8333/6)
    assert s.chars.mean == pytest.approx(41 / 6)
    assert s.chars.median == 6.5
    assert s.chars.std == pytest.approx((50.833333 / 6) ** 0.5, rel=1e-5)
    assert s.chars.cv == pytest.approx(s.chars.std / (41 / 6))
    # tokens 3,3,4,4,4,6: mean 4, max 6
    assert (s.tokens.mean, s.tokens.max, s.tokens.min) == (4, 6, 3)
    # tiny threshold: median (upper middle, 8) × 0.25 = 2 -> nothing under 2 chars
    assert s.tiny_chars == 2 and s.tiny == 0
    assert (s.over_limit, s.mid_sentence, s.mid_word, s.duplicate) == (1, 2, 2, 1)
    assert s.share("mid_sentence") == pytest.approx(2 / 6)
    # coverage: d1's 30 non-space chars all covered; d2 has 12, "Extra" (5) uncovered: 37/42
    assert s.coverage == pytest.approx(37 / 42)
    # no overlap: redundancy 0; expansion 41 chunk chars / (37 + 14) doc chars
    assert s.redundancy == 0
    assert s.expansion == pytest.approx(41 / 51)
    d = s.to_dict()
    assert d["mid_word_share"] == pytest.approx(2 / 6) and d["chars"]["max"] == 12


def test_redundancy_from_overlap():
    d = Document("a.txt", "text", "abcdefghij")
    # [0,6) and [4,10): chars 4,5 are in two chunks -> 2/10; expansion 12/10
    s = chunk_stats(mk(d, [(0, 6), (4, 10)]), d, token_counts=[3, 3])
    assert s.redundancy == pytest.approx(0.2)
    assert s.expansion == pytest.approx(1.2)
    assert s.coverage == 1.0
    # both cuts fall inside the one word "abcdefghij"
    assert s.mid_word == 2


def test_tiny_threshold():
    # median 1000 -> 250, capped at 50; median 40 -> 10; median 1 -> at least 1
    assert tiny_threshold([1000] * 5) == 50
    assert tiny_threshold([40, 40, 40]) == 10
    assert tiny_threshold([1]) == 1
    assert tiny_threshold([]) == 50


def test_mid_word_ignores_scripts_without_spaces():
    d = Document("ja.txt", "text", "日本語の文章です。次の文。")
    flags = flag_chunks(mk(d, [(0, 4), (4, 13)]), d, token_counts=[5, 5])
    assert "mid_word" not in flags[0]


def test_count_tokens_real_tokenizer_counts_cls_sep():
    d = Document("a.txt", "text", "hello world")
    # [CLS] hello world [SEP] in MiniLM's word pieces; <s> ▁hell o ▁world </s> in e5's
    from explorer.text.length import get_length

    assert count_tokens(mk(d, [(0, 11)]), get_length("tokens", "all-MiniLM-L6-v2")) == [4]
    assert count_tokens(mk(d, [(0, 11)]), get_length("tokens", "multilingual-e5-small")) == [5]
    s = chunk_stats(mk(d, [(0, 11)]), d)
    assert s.tokens.max == 5 and s.over_limit == 0  # the default model's (e5's) tokens


def test_flags_fast_for_many_chunks():
    """10k chunks of a ~500 KB text: sentence ends are computed once (not a timed assertion,
    just a smoke test that the per-chunk path is not quadratic)."""
    text = "Alpha beta gamma delta. " * 20_000
    d = Document("big.txt", "text", text)
    spans = [(i, i + 48) for i in range(0, len(text) - 48, 48)]
    cs = mk(d, spans)
    flags = flag_chunks(cs, d, token_counts=[10] * len(cs))
    assert len(flags) == len(cs) == 9999
    # every chunk is 48 chars = 2 sentences: ends at a sentence end (the space after excluded)
    assert not any("mid_sentence" in f for f in flags[:-1])


# -- cohesion / separation -----------------------------------------------------------------------
class TableEmbedder:
    """Hand-chosen unit vectors per text, so cosines are known."""

    def __init__(self, table):
        self.table = table
        self.calls = 0

    def encode(self, texts, progress=None):
        self.calls += 1
        return np.array([self.table[t] for t in texts], dtype=np.float32)


def test_cohesion_and_separation_by_hand():
    d = Document("c.txt", "text", "Cat. Dog. Sun.")
    chunks = mk(d, [(0, 9), (10, 14)])
    emb = TableEmbedder({"Cat.": (1.0, 0.0), "Dog.": (0.0, 1.0), "Cat. Dog.": (1.0, 0.0), "Sun.": (0.6, 0.8)})
    s = semantic_stats(chunks, d, emb)
    # chunk 0: sentences (1,0),(0,1); mean direction (.7071,.7071); each cosine .7071
    # chunk 1 has one sentence: left out. Separation: (1,0)·(0.6,0.8) = 0.6
    assert s.cohesion == pytest.approx(2**-0.5, rel=1e-6)
    assert s.separation == pytest.approx(0.6, rel=1e-6)
    assert (s.cohesion_chunks, s.separation_pairs) == (1, 1)
    assert emb.calls == 1  # one batch for everything
