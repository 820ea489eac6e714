"""The `semantic` strategy: LangChain's breakpoint definitions, pooled windows, caching, sizes."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer import Context, Document, get_strategy
from explorer.embedding.fake import FakeEmbedder
from explorer.errors import ParamError
from explorer.strategies.curve import DEFAULT_AMOUNT, breakpoint_scores, clear_sentence_cache, window_vectors
from explorer.strategies.invariants import invariant_errors
from explorer.strategies.semantic import AMOUNT_RANGE, _merge_small, semantic_curve
from explorer.text.chunk import END_OF_TEXT, SEMANTIC
from explorer.text.sentences import sentence_spans

SEM = get_strategy("semantic")

TOPICS = {
    "cats": [
        "Cats sleep for most of the day in warm sunny spots.",
        "A cat grooms its fur with a rough tongue.",
        "Kittens learn to hunt by playing with their littermates.",
        "Domestic cats purr when they feel safe and content.",
        "Many cats love to climb shelves and scratch posts.",
        "Cat whiskers help them judge narrow spaces in the dark.",
    ],
    "markets": [
        "Stock markets fell sharply after the central bank raised interest rates.",
        "Bond yields climbed to their highest level in a decade.",
        "Investors moved money from equities into government debt.",
        "The currency weakened against the dollar in morning trading.",
        "Analysts expect inflation to slow during the next quarter.",
        "Bank shares led the decline on the exchange.",
    ],
    "volcanoes": [
        "The volcano erupted and sent ash high into the sky.",
        "Molten lava flowed down the mountain toward the sea.",
        "Seismologists recorded hundreds of small earthquakes beneath the crater.",
        "Volcanic gases such as sulfur dioxide can harm crops.",
        "The eruption formed a new island from cooled basalt.",
        "Geologists sampled the rock to date the ancient lava flows.",
    ],
}


#: For the bag-of-words fake embedder, a topic is its vocabulary.
FAKE_TOPICS = {
    "cats": ["cat", "cats", "kitten", "fur", "purr", "whiskers", "claws", "mouse", "nap"],
    "markets": ["stock", "bond", "market", "yields", "rates", "bank", "inflation", "shares", "trading"],
    "volcanoes": ["volcano", "lava", "ash", "eruption", "crater", "magma", "basalt", "quake", "island"],
}


def _fake_topics() -> dict[str, list[str]]:
    rnd = random.Random(5)
    return {
        k: [" ".join(rnd.choice(v) for _ in range(8)).capitalize() + "." for _ in range(6)]
        for k, v in FAKE_TOPICS.items()
    }


def _topic_doc(topics: dict[str, list[str]] | None = None) -> tuple[Document, list[int]]:
    parts = [" ".join(s) for s in (topics or TOPICS).values()]
    text = " ".join(parts)
    starts = [text.index(p) for p in parts[1:]]
    return Document("topics.txt", "text", text), starts


def _ctx(dim: int = 256) -> Context:
    return Context(embedder=FakeEmbedder(dim=dim))


# -- pure pieces ---------------------------------------------------------------------------
def test_window_vectors_pool_neighbours():
    rng = np.random.default_rng(1)
    v = rng.standard_normal((6, 5))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    assert np.allclose(window_vectors(v, 0), v)
    w = window_vectors(v, 1)
    expect = v[1] + v[2] + v[3]
    assert np.allclose(w[2], expect / np.linalg.norm(expect))
    edge = v[0] + v[1]
    assert np.allclose(w[0], edge / np.linalg.norm(edge))
    assert np.allclose(window_vectors(v, 10)[0], window_vectors(v, 10)[5])  # whole text
    w = np.array([1.0, 2, 3, 4, 5, 6])
    weighted = window_vectors(v, 1, w)
    expect = 2 * v[1] + 3 * v[2] + 4 * v[3]
    assert np.allclose(weighted[2], expect / np.linalg.norm(expect))


def test_breakpoint_thresholds_by_hand():
    d = np.array([0.1, 0.2, 0.3, 0.4, 1.0])
    assert breakpoint_scores(d, "percentile", 50)[1] == pytest.approx(0.3)
    assert breakpoint_scores(d, "standard_deviation", 1)[1] == pytest.approx(0.4 + np.std(d))
    assert breakpoint_scores(d, "interquartile", 1)[1] == pytest.approx(0.4 + (0.4 - 0.2))
    g, t = breakpoint_scores(d, "gradient", 100)
    assert np.allclose(g, [0.1, 0.1, 0.1, 0.35, 0.6]) and t == pytest.approx(0.6)
    assert breakpoint_scores(d, "threshold", 0.75)[1] == pytest.approx(0.25)
    assert np.isnan(breakpoint_scores(np.array([0.5]), "gradient", 95)[1])
    assert np.isnan(breakpoint_scores(np.array([]), "percentile", 95)[1])


def test_thresholds_match_langchain():
    lc = pytest.importorskip("langchain_experimental.text_splitter")
    rng = np.random.default_rng(7)
    d = list(rng.random(57))
    for mode in ("percentile", "standard_deviation", "interquartile", "gradient"):
        for amount in (DEFAULT_AMOUNT[mode], 1.0, 50.0 if mode in ("percentile", "gradient") else 0.5):
            chunker = lc.SemanticChunker(
                embeddings=None, breakpoint_threshold_type=mode, breakpoint_threshold_amount=amount
            )
            want_t, want_arr = chunker._calculate_breakpoint_threshold(d)
            got_arr, got_t = breakpoint_scores(np.array(d), mode, amount)
            assert got_t == pytest.approx(want_t)
            assert np.allclose(got_arr, want_arr)


class _LCEmbeddings:
    """A LangChain Embeddings stand-in over the fake embedder (no network, deterministic)."""

    def __init__(self, emb: FakeEmbedder):
        self.emb = emb

    def embed_documents(self, texts):
        return self.emb.encode(texts).tolist()

    def embed_query(self, text):
        return self.emb.encode([text])[0].tolist()


@pytest.mark.parametrize(
    ("mode", "buffer_size", "window"),
    [
        *((m, 0, "pooled") for m in ("percentile", "standard_deviation", "interquartile", "gradient")),
        *(
            (m, b, "joined")
            for m in ("percentile", "standard_deviation", "interquartile", "gradient")
            for b in (1, 2)
        ),
    ],
)
def test_reproduces_langchain_chunks(mode, buffer_size, window):
    """With no window nothing is pooled, and joined windows are LangChain's own method: either
    way our chunks must equal LangChain's exactly (same sentences, same vectors)."""
    lc = pytest.importorskip("langchain_experimental.text_splitter")
    rnd = random.Random(3)
    words = [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "rain",
        "snow",
        "wind",
        "sun",
        "moon",
        "star",
        "river",
        "lake",
        "sea",
        "hill",
    ]
    sents = [
        " ".join(rnd.choice(words) for _ in range(rnd.randint(3, 9))).capitalize() + "." for _ in range(80)
    ]
    text = " ".join(sents)
    doc = Document("lc.txt", "text", text)
    assert len(sentence_spans(text)) == 80
    emb = FakeEmbedder(dim=32)
    amount = {"percentile": 90, "standard_deviation": 1, "interquartile": 0.5, "gradient": 90}[mode]
    want = lc.SemanticChunker(
        _LCEmbeddings(emb),
        buffer_size=buffer_size,
        breakpoint_threshold_type=mode,
        breakpoint_threshold_amount=amount,
    ).split_text(text)
    params = {
        "breakpoint_mode": mode,
        "breakpoint_amount": amount,
        "buffer_size": buffer_size,
        "window_embedding": window,
        "max_chunk_size": 0,  # LangChain does not cap
    }
    got = SEM.chunk(doc, params, Context(embedder=emb))
    assert [c.text for c in got] == want
    assert len(want) > 2


# -- the strategy on the fake embedder ------------------------------------------------------
def test_three_topics_break_at_topic_changes_fake():
    doc, starts = _topic_doc(_fake_topics())
    ctx = _ctx()
    curve = semantic_curve(doc, {"buffer_size": 1}, ctx)
    top2 = sorted(np.argsort(curve.distances)[-2:])
    assert [curve.points[i].position for i in top2] == starts


def test_chunks_hold_invariants_and_reasons_record_distance():
    doc, _ = _topic_doc()
    chunks = SEM.chunk(doc, {"breakpoint_mode": "percentile", "breakpoint_amount": 80}, _ctx())
    assert not invariant_errors(doc, chunks)
    assert chunks[-1].reason == END_OF_TEXT
    for c in chunks[:-1]:
        meta = c.meta_dict()
        assert c.reason.startswith(SEMANTIC)
        assert meta["distance"] > meta["threshold"]
        assert f"distance {meta['distance']:.3f} > threshold {meta['threshold']:.3f}" in c.reason


def test_curve_is_consistent():
    doc, _ = _topic_doc()
    sents = sentence_spans(doc.text)
    for mode in ("percentile", "standard_deviation", "interquartile", "gradient", "threshold"):
        curve = semantic_curve(doc, {"breakpoint_mode": mode}, _ctx())
        assert len(curve.points) == len(sents) - 1
        assert curve.sentences == tuple(sents)
        for i, pt in enumerate(curve.points):
            assert pt.left == sents[i] and pt.right == sents[i + 1] and pt.position == sents[i + 1][0]
            assert pt.distance == pytest.approx(1 - pt.similarity)
            assert pt.is_break == (pt.score > curve.threshold)
        if mode == "threshold":
            assert curve.threshold == pytest.approx(1 - DEFAULT_AMOUNT["threshold"])
        chunks = SEM.chunk(doc, {"breakpoint_mode": mode}, _ctx())
        assert len(chunks) == len(curve.breaks) + 1


def test_threshold_mode_extremes():
    doc, _ = _topic_doc()
    n = len(sentence_spans(doc.text))
    never = SEM.chunk(doc, {"breakpoint_mode": "threshold", "breakpoint_amount": -1}, _ctx())
    always = SEM.chunk(doc, {"breakpoint_mode": "threshold", "breakpoint_amount": 1}, _ctx())
    assert len(never) == 1 and len(always) == n
    assert "similarity" in always[0].reason and always[0].meta_dict()["similarity"] < 1


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"breakpoint_amount": 150}, "outside 0..100 for breakpoint_mode='percentile'"),
        ({"breakpoint_mode": "threshold", "breakpoint_amount": 2}, "cosine similarity"),
        ({"breakpoint_mode": "standard_deviation", "breakpoint_amount": -1}, "outside 0..10"),
        ({"breakpoint_mode": "nope"}, "not one of"),
        ({"buffer_size": 11}, "above the maximum"),
        ({"min_chunk_size": 500, "max_chunk_size": 100}, "min_chunk_size=500"),
        ({"max_chunk_size": 2, "length": "tokens"}, "no room"),
    ],
)
def test_bad_params_are_named(params, match):
    with pytest.raises(ParamError, match=match):
        SEM.validate(params)


def test_amount_defaults_follow_the_mode():
    assert SEM.validate({})["breakpoint_amount"] == 95
    assert SEM.validate({"breakpoint_mode": "standard_deviation"})["breakpoint_amount"] == 3
    assert SEM.validate({"breakpoint_mode": "threshold"})["breakpoint_amount"] == 0.5
    assert (
        SEM.validate({"breakpoint_mode": "interquartile", "breakpoint_amount": "2"})["breakpoint_amount"]
        == 2.0
    )


def test_min_chunk_size_merges_into_most_similar_neighbour():
    # groups: [0] [1] [2]; group 1 is small and its vector equals group 2's direction
    v = np.array([[1.0, 0, 0], [0, 0.9, 0.1], [0, 1.0, 0]])
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    text = "aaaaaaaaaa b cccccccccc"
    sents = ((0, 10), (11, 12), (13, 23))
    groups = _merge_small(text, sents, v, [(0, 0), (1, 1), (2, 2)], 5, len)
    assert groups == [(0, 0), (1, 2)]
    v2 = v[[2, 1, 0]]  # now the small group resembles the left one
    assert _merge_small(text, sents, v2, [(0, 0), (1, 1), (2, 2)], 5, len) == [(0, 1), (2, 2)]


def test_min_chunk_size_end_to_end():
    doc, _ = _topic_doc()
    params = {
        "breakpoint_mode": "threshold",
        "breakpoint_amount": 1,
        "min_chunk_size": 200,
        "max_chunk_size": 0,
        "length": "chars",
    }
    chunks = SEM.chunk(doc, params, _ctx())
    assert not invariant_errors(doc, chunks)
    assert len(chunks) > 1 and all(c.length >= 200 for c in chunks)


@pytest.mark.parametrize("length", ["chars", "words", "tokens"])
def test_max_chunk_size_is_respected(length):
    doc, _ = _topic_doc()
    size = {"chars": 150, "words": 25, "tokens": 40}[length]
    params = {
        "breakpoint_mode": "threshold",
        "breakpoint_amount": -1,
        "max_chunk_size": size,
        "length": length,
    }
    chunks = SEM.chunk(doc, params, _ctx())
    assert len(chunks) > 3
    assert not invariant_errors(doc, chunks, size)


def test_empty_and_single_sentence_documents():
    ctx = _ctx()
    assert SEM.chunk(Document("e", "text", "   \n "), {}, ctx) == []
    one = SEM.chunk(
        Document("o", "text", "  Just one sentence here.  "), {"breakpoint_mode": "gradient"}, ctx
    )
    assert [(c.start, c.end, c.reason) for c in one] == [(2, 25, END_OF_TEXT)]


def _big_text(target: int = 200_000) -> str:
    rnd = random.Random(0)
    pool = [s for ss in TOPICS.values() for s in ss]
    out, n = [], 0
    while n < target:
        para = " ".join(
            rnd.choice(pool).replace(".", f" {rnd.randint(0, 10**6)}.") for _ in range(rnd.randint(3, 8))
        )
        out.append(para)
        n += len(para) + 2
    return "\n\n".join(out)


def test_second_threshold_on_200kb_embeds_nothing():
    doc = Document("big.txt", "text", _big_text())
    assert len(doc.text) >= 200_000
    emb = FakeEmbedder(dim=64)
    ctx = Context(embedder=emb)
    first = SEM.chunk(doc, {"breakpoint_mode": "percentile", "breakpoint_amount": 95}, ctx)
    n_sent = len(sentence_spans(doc.text))
    assert emb.stats.encoded == len({doc.text[s:e] for s, e in sentence_spans(doc.text)})
    assert emb.stats.requested == n_sent  # each sentence asked for once, not once per window
    encoded = emb.stats.encoded
    second = SEM.chunk(doc, {"breakpoint_mode": "percentile", "breakpoint_amount": 80}, ctx)
    third = SEM.chunk(doc, {"breakpoint_mode": "threshold", "breakpoint_amount": 0.3}, ctx)
    assert emb.stats.encoded == encoded  # nothing new embedded
    assert len(second) > len(first) and len(third) != len(first)
    # contextual vectors depend on the buffer (the context each sentence sees): a new buffer
    # embeds once, then is cached like the first; pooled windows need no new embedding at all
    SEM.chunk(doc, {"buffer_size": 2}, ctx)
    assert emb.stats.encoded == 2 * encoded
    SEM.chunk(doc, {"buffer_size": 2, "breakpoint_amount": 90}, ctx)
    SEM.chunk(doc, {"window_embedding": "pooled"}, ctx)
    pooled = emb.stats.encoded
    SEM.chunk(doc, {"window_embedding": "pooled", "buffer_size": 3}, ctx)
    assert emb.stats.encoded == pooled
    encoded = pooled
    clear_sentence_cache()  # without the per-document LRU the content-hash cache still serves
    semantic_curve(doc, {"breakpoint_mode": "gradient"}, ctx)
    assert emb.stats.encoded == encoded
    assert emb.stats.cached > 0
    # LangChain-style joined windows: embedded once too, then thresholds are free
    semantic_curve(doc, {"window_embedding": "joined"}, ctx)
    joined = emb.stats.encoded
    assert joined > encoded
    clear_sentence_cache()
    SEM.chunk(doc, {"window_embedding": "joined", "breakpoint_mode": "interquartile"}, ctx)
    assert emb.stats.encoded == joined


# -- the real model --------------------------------------------------------------------------
@pytest.mark.model
@pytest.mark.parametrize(("model", "peaks"), [("all-MiniLM-L6-v2", 2), ("multilingual-e5-small", 3)])
def test_three_topics_break_at_topic_changes_real(model, peaks):
    """Both topic changes are among the curve's largest distances. MiniLM puts them exactly
    on top; e5's sentence distances are compressed (its vectors sit in a narrow cone), and in
    float32 one within-topic step (the volcano's gases, 0.224) outranks the second change
    (0.215), so for e5 the changes are two of the three peaks, whatever the backend."""
    doc, starts = _topic_doc()
    ctx = Context(model=model)
    curve = semantic_curve(doc, {"buffer_size": 0}, ctx)
    top = {curve.points[i].position for i in np.argsort(curve.distances)[-peaks:]}
    assert set(starts) <= top
    assert curve.points[int(np.argmax(curve.distances))].position in starts
    # pooled windows blur a change over the window: the peak may sit one sentence off
    pooled = semantic_curve(doc, {"buffer_size": 1}, ctx)
    found = sorted(np.argsort(pooled.distances)[-2:])
    truth = [i for i, p in enumerate(pooled.points) if p.position in starts]
    assert all(abs(p - t) <= 1 for p, t in zip(found, truth, strict=True))
    n = len(curve.distances)
    amount = 100 * (n - peaks - 0.5) / (n - 1)  # numpy's linear percentile: the `peaks` largest pass
    params = {"breakpoint_mode": "percentile", "breakpoint_amount": amount, "buffer_size": 0}
    chunks = SEM.chunk(doc, params, ctx)
    assert set(starts) <= {c.start for c in chunks[1:]} and len(chunks) == peaks + 1
    assert not invariant_errors(doc, chunks)


@pytest.mark.model
def test_real_threshold_change_embeds_nothing():
    doc, _ = _topic_doc()
    ctx = Context(model="all-MiniLM-L6-v2", backend="torch")  # contextual windows: the torch pass
    emb = ctx.get_embedder()
    SEM.chunk(doc, {}, ctx)
    before = emb.stats.encoded
    clear_sentence_cache()
    SEM.chunk(doc, {"breakpoint_mode": "interquartile", "breakpoint_amount": 1.0}, ctx)
    assert emb.stats.encoded == before
    SEM.chunk(doc, {"buffer_size": 3}, ctx)  # new context for every sentence: embedded once more
    again = emb.stats.encoded
    assert again > before
    clear_sentence_cache()
    SEM.chunk(doc, {"buffer_size": 3, "breakpoint_mode": "gradient"}, ctx)
    assert emb.stats.encoded == again


# -- properties ------------------------------------------------------------------------------
_WORDS = ["cat", "bond", "lava", "rain", "Mr.", "3.5", "東京", "🙂", "x" * 40, "end.", "Why?", "\n\n", "\n"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    words=st.lists(st.sampled_from(_WORDS), min_size=0, max_size=120),
    mode=st.sampled_from(["percentile", "standard_deviation", "interquartile", "gradient", "threshold"]),
    frac=st.floats(0, 1),
    buffer_size=st.integers(0, 4),
    sizes=st.tuples(st.integers(0, 120), st.integers(0, 200)),
    length=st.sampled_from(["chars", "words", "tokens"]),
    window=st.sampled_from(["contextual", "pooled", "joined"]),
)
def test_semantic_invariants_property(words, mode, frac, buffer_size, sizes, length, window):
    text = " ".join(words)
    lo, hi, _ = AMOUNT_RANGE[mode]
    mn, mx = sizes
    if mx and (mn > mx or (length == "tokens" and mx <= 2)):
        mx = 0
    params = {
        "breakpoint_mode": mode,
        "breakpoint_amount": lo + frac * (hi - lo),
        "buffer_size": buffer_size,
        "min_chunk_size": mn,
        "max_chunk_size": mx,
        "length": length,
        "window_embedding": window,
    }
    doc = Document("p.txt", "text", text)
    chunks = SEM.chunk(doc, params, Context(embedder=FakeEmbedder(dim=16)))
    assert not invariant_errors(doc, chunks, mx or None)


@pytest.mark.model
def test_contextual_windows_follow_langchains_curve_closer_than_pooled(chroma_dir):
    """LangChain embeds each joined window; 'contextual' runs every token once but lets it see
    the window's neighbours. On real prose its distance curve must track LangChain's (joined)
    clearly better than pooling isolated sentences does (bench/bench_semantic.py measures the
    breakpoint agreement on 100 KB of each corpus)."""
    text = (chroma_dir / "corpora" / "wikitexts.md").read_text(encoding="utf-8")[:15_000]
    doc = Document("wiki15k.md", "text", text)
    ctx = Context(model="all-MiniLM-L6-v2", backend="torch")
    curves = {
        m: semantic_curve(doc, {"window_embedding": m}, ctx) for m in ("joined", "contextual", "pooled")
    }
    assert {m: c.window_embedding for m, c in curves.items()} == {m: m for m in curves}
    ref = curves["joined"].distances
    corr = {m: float(np.corrcoef(ref, curves[m].distances)[0, 1]) for m in ("contextual", "pooled")}
    assert corr["contextual"] > 0.7 and corr["contextual"] > corr["pooled"] + 0.05, corr


def test_contextual_falls_back_to_pooled_where_the_embedder_cannot():
    class NoContext(FakeEmbedder):
        def contextual_sums(self, sentences, band, progress=None):
            return None

    doc, _ = _topic_doc()
    emb = NoContext(dim=32)
    curve = semantic_curve(doc, {}, Context(embedder=emb))
    assert curve.window_embedding == "pooled"
    want = semantic_curve(doc, {"window_embedding": "pooled"}, Context(embedder=FakeEmbedder(dim=32)))
    assert np.allclose(curve.distances, want.distances)
    chunks = SEM.chunk(doc, {"min_chunk_size": 200}, Context(embedder=emb))
    assert not invariant_errors(doc, chunks)
