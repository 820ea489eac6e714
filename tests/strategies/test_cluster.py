"""The `cluster` strategy: optimal grouping (checked by brute force), sizes, invariants."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer import Context, Document, get_strategy
from explorer.embedding.fake import FakeEmbedder
from explorer.errors import ParamError
from explorer.strategies.cluster import optimal_groups
from explorer.strategies.invariants import invariant_errors
from explorer.text.chunk import END_OF_TEXT

CLU = get_strategy("cluster")


def _unit(rng, n, dim=6, bias=0.0):
    v = rng.standard_normal((n, dim)) + bias  # a shared component raises the mean similarity
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _reward(v, groups, mean):
    total = 0.0
    for a, b in groups:
        for i, j in itertools.combinations(range(a, b), 2):
            total += float(v[i] @ v[j]) - mean
    return total


def _segmentations(n):
    for cuts in itertools.product([False, True], repeat=n - 1):
        groups, a = [], 0
        for i, c in enumerate(cuts, start=1):
            if c:
                groups.append((a, i))
                a = i
        groups.append((a, n))
        yield groups


@pytest.mark.parametrize("seed", range(12))
def test_dp_is_optimal_by_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 10))
    v = _unit(rng, n, bias=float(rng.choice([0.0, 0.8])))
    sizes = rng.integers(1, 6, n)
    budget = int(rng.integers(4, 14))
    sims = v @ v.T
    mean = float(sims[np.triu_indices(n, 1)].mean())

    def fits(groups):
        return all(b - a == 1 or sizes[a:b].sum() <= budget for a, b in groups)

    best = max(_reward(v, g, mean) for g in _segmentations(n) if fits(g))
    got = optimal_groups(v.astype(np.float32), np.zeros(n), np.zeros(n), sizes, budget)
    assert fits(got)
    assert next(a for a, _ in got) == 0 and got[-1][1] == n
    assert all(b1 == a2 for (_, b1), (a2, _) in itertools.pairwise(got))
    assert _reward(v, got, mean) == pytest.approx(best, abs=1e-5)


def test_dp_char_budget_uses_spans():
    rng = np.random.default_rng(0)
    v = _unit(rng, 6)
    starts = np.array([0, 10, 20, 30, 40, 50])
    ends = starts + 8
    groups = optimal_groups(v.astype(np.float32), starts, ends, None, 18)  # at most 2 pieces
    assert all(ends[b - 1] - starts[a] <= 18 for a, b in groups)


def test_dp_groups_similar_neighbours():
    e1, e2 = np.eye(4)[0], np.eye(4)[1]
    v = np.stack([e1, e1, e1, e2, e2, e2]).astype(np.float32)
    groups = optimal_groups(v, np.zeros(6), np.zeros(6), np.ones(6, dtype=np.int64), 10)
    assert groups == [(0, 3), (3, 6)]
    tight = optimal_groups(v, np.zeros(6), np.zeros(6), np.ones(6, dtype=np.int64), 2)
    assert all(b - a <= 2 for a, b in tight)
    assert not any(a < 3 < b for a, b in tight)  # never mixes the two topics


def _doc() -> Document:
    rnd = random.Random(1)
    vocab = [
        ["cat", "kitten", "fur", "purr", "whiskers", "claws", "mouse", "nap"],
        ["stock", "bond", "market", "yields", "rates", "bank", "inflation", "shares"],
        ["volcano", "lava", "ash", "eruption", "crater", "magma", "basalt", "island"],
    ]
    paras = []
    for v in vocab * 2:
        paras.append(
            " ".join(" ".join(rnd.choice(v) for _ in range(12)).capitalize() + "." for _ in range(5))
        )
    return Document("c.txt", "text", "\n\n".join(paras))


@pytest.mark.parametrize(
    ("params", "size"),
    [
        ({}, 250),
        ({"chunk_size": 60, "piece_size": 20}, 60),
        ({"length": "chars", "chunk_size": 300, "piece_size": 80}, 300),
        ({"length": "words", "chunk_size": 40, "piece_size": 10}, 40),
        ({"length": "words", "chunk_size": 40, "piece_size": 10, "size_rule": "pieces"}, 40),
        ({"length": "cl100k", "chunk_size": 60, "piece_size": 20, "size_rule": "pieces"}, 60),
    ],
)
def test_cluster_invariants_and_sizes(params, size):
    doc = _doc()
    emb = FakeEmbedder(dim=128)
    chunks = CLU.chunk(doc, params, Context(embedder=emb))
    assert not invariant_errors(doc, chunks, size)
    assert chunks[-1].reason == END_OF_TEXT
    assert emb.stats.encoded > 0
    if params.get("length") == "chars":
        assert all(c.chars <= size for c in chunks)


def test_cluster_pieces_rule_counts_pieces():
    """size_rule=pieces (the default, Chroma's rule): at most chunk_size // piece_size pieces per chunk, so
    chunks are never larger, and here smaller, than under the length rule."""
    doc = _doc()
    base = {"length": "words", "chunk_size": 40, "piece_size": 15}
    ctx = Context(embedder=FakeEmbedder(dim=128))
    pieces = CLU.chunk(doc, {**base, "chunk_size": 15}, ctx)  # one piece per chunk: the pieces
    by_pieces = CLU.chunk(doc, {**base, "size_rule": "pieces"}, ctx)
    by_length = CLU.chunk(doc, {**base, "size_rule": "length"}, ctx)
    starts = [c.start for c in pieces]
    for c in by_pieces:  # every chunk is 1 or 2 whole pieces (40 // 15 = 2)
        inside = [s for s in starts if c.start <= s < c.end]
        assert 1 <= len(inside) <= 2 and c.start in starts
    assert any(c.reason.startswith("size limit") for c in by_pieces)
    assert sum(c.chars for c in by_pieces) / len(by_pieces) < sum(c.chars for c in by_length) / len(by_length)


def test_cluster_keeps_topics_apart():
    doc = _doc()
    chunks = CLU.chunk(
        doc, {"length": "words", "chunk_size": 200, "piece_size": 15}, Context(embedder=FakeEmbedder(128))
    )
    para_starts = [0] + [i + 2 for i in range(len(doc.text)) if doc.text.startswith("\n\n", i)]
    # every paragraph (one topic, 60 words) starts a chunk: the DP never glues two topics
    assert set(para_starts) <= {c.start for c in chunks}


def test_cluster_params_are_checked():
    with pytest.raises(ParamError, match="piece_size=300 must not exceed chunk_size=250"):
        CLU.validate({"piece_size": 300})
    with pytest.raises(ParamError, match="no room"):
        CLU.validate({"piece_size": 2, "chunk_size": 10, "length": "tokens"})
    # the defaults are the report's ClusterSemanticChunker
    assert {k: CLU.validate({})[k] for k in ("chunk_size", "piece_size", "length", "size_rule")} == {
        "chunk_size": 250,
        "piece_size": 50,
        "length": "cl100k",
        "size_rule": "pieces",
    }


def test_cluster_tiny_documents():
    ctx = Context(embedder=FakeEmbedder())
    assert CLU.chunk(Document("e", "text", " \n"), {}, ctx) == []
    one = CLU.chunk(Document("o", "text", "Short text."), {}, ctx)
    assert [(c.start, c.end, c.reason) for c in one] == [(0, 11, END_OF_TEXT)]


@pytest.mark.model
def test_cluster_real_model_respects_size():
    doc = _doc()
    chunks = CLU.chunk(doc, {"chunk_size": 120, "piece_size": 30}, Context())
    assert len(chunks) > 3
    assert not invariant_errors(doc, chunks, 120)
    assert all(c.length <= 120 for c in chunks)


_WORDS = ["cat", "bond", "lava", "rain.", "3.5", "東京", "🙂", "y" * 60, "\n\n", "\n", "?"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    words=st.lists(st.sampled_from(_WORDS), min_size=0, max_size=150),
    sizes=st.tuples(st.integers(3, 40), st.integers(0, 200)),
    length=st.sampled_from(["chars", "words", "tokens"]),
)
def test_cluster_invariants_property(words, sizes, length):
    piece, extra = sizes
    params = {"piece_size": piece, "chunk_size": piece + extra, "length": length}
    doc = Document("p.txt", "text", " ".join(words))
    chunks = CLU.chunk(doc, params, Context(embedder=FakeEmbedder(dim=16)))
    assert not invariant_errors(doc, chunks, piece + extra)


def _punctuation_only(text: str) -> bool:
    return not any(ch.isalnum() for ch in text)


def test_a_lone_full_stop_joins_a_neighbour():
    """The piece splitter keeps each "." at the start of the piece after it, so the text's last
    "." was a piece of its own, and the grouping made it a chunk: "."."""
    text = (
        "iota gamma zeta kappa theta lambda kappa beta kappa alpha theta epsilon. "
        "mu theta iota iota theta eta. lambda gamma iota eta mu alpha."
    )
    doc = Document("t.txt", "text", text)
    for params in (
        {"piece_size": 10, "chunk_size": 50, "length": "chars"},
        {"piece_size": 5, "chunk_size": 20, "length": "words"},
    ):
        chunks = CLU.chunk(doc, params, Context(embedder=FakeEmbedder()))
        assert not invariant_errors(doc, chunks, params["chunk_size"])
        assert not [c.text for c in chunks if _punctuation_only(c.text)], params
        assert chunks[-1].text.endswith("mu alpha.")


_SENTENCE = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "epsilon"]), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sentences=st.lists(st.tuples(_SENTENCE, st.sampled_from(".?!")), min_size=1, max_size=8),
    glue=st.sampled_from([" ", "\n", "\n\n"]),
    piece=st.integers(4, 30),
    extra=st.integers(0, 60),
    rule=st.sampled_from(["pieces", "length"]),
)
def test_a_punctuation_chunk_stays_only_where_no_neighbour_has_room(sentences, glue, piece, extra, rule):
    text = glue.join(" ".join(words) + mark for words, mark in sentences)
    size = piece + extra
    doc = Document("t.txt", "text", text)
    params = {"piece_size": piece, "chunk_size": size, "length": "chars", "size_rule": rule}
    chunks = CLU.chunk(doc, params, Context(embedder=FakeEmbedder(dim=16)))
    assert not invariant_errors(doc, chunks, size)
    for k, c in enumerate(chunks):
        if _punctuation_only(c.text) and len(chunks) > 1:
            assert k == 0 or c.end - chunks[k - 1].start > size
            assert k == len(chunks) - 1 or chunks[k + 1].end - c.start > size
