"""Pieces (small-to-big scoring): pieces cut with exact offsets, each chunk holds the pieces at
least half inside it, and a chunk's dense score is mixed with its best piece's in every
ranking (dense, hybrid, the answer's place), exact and preview."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from explorer import Context, Document
from explorer.embedding.fake import FakeEmbedder
from explorer.errors import ParamError
from explorer.evaluation.corpus.plan import QuestionPlan
from explorer.evaluation.corpus.work import WorkSpec
from explorer.evaluation.cost import cost_of
from explorer.retrieval.pieces import PIECE_WEIGHT, ChunkPieces, PieceLayout, check_piece_chars, piece_spans
from explorer.retrieval.ranking import answer_places, retrieve
from explorer.retrieval.search import build_index
from explorer.retrieval.vectors import EmbedOptions
from explorer.strategies.config import StrategyConfig

TEXTS = hs.text(alphabet=hs.sampled_from("ab \n\té.,"), max_size=3_000)


@settings(max_examples=200, deadline=None)
@given(TEXTS, hs.integers(100, 400))
def test_pieces_are_exact_slices_in_order_and_leave_out_only_whitespace(text, size):
    spans = piece_spans(text, size)
    covered = 0
    for start, end in spans:
        assert covered <= start < end <= len(text) and end - start <= size
        assert not text[start:end].isspace()
        assert text[covered:start].isspace() or covered == start  # only whitespace left out
        covered = end
    assert not text[covered:].strip()


def test_pieces_end_after_a_blank_line_then_a_line_then_a_space():
    text = "a" * 150 + "\n\n" + "b" * 50 + "\n" + "c" * 50 + " " + "d" * 200
    assert piece_spans(text, 300)[0] == (0, 152)  # the blank line beats the later line end
    assert piece_spans("x" * 250, 100) == [(0, 100), (100, 200), (200, 250)]  # no separator: hard cuts
    assert piece_spans("  \n\n   ", 100) == []


@settings(max_examples=150, deadline=None)
@given(
    TEXTS,
    hs.integers(100, 300),
    hs.lists(hs.tuples(hs.integers(0, 3_000), hs.integers(1, 1_500)), max_size=12),
)
def test_a_chunk_holds_exactly_the_pieces_at_least_half_inside_it(text, size, raw):
    doc = Document("d.txt", "text", text)
    n = len(text)
    chunks = [_chunk(doc, min(s, n), min(n, s + length)) for s, length in raw]
    layout = PieceLayout.of([doc], chunks, size)
    spans = piece_spans(text, size)
    for i, c in enumerate(chunks):
        want = [j for j, (ps, pe) in enumerate(spans) if 2 * (min(pe, c.end) - max(ps, c.start)) >= pe - ps]
        assert list(range(layout.lo[i], layout.hi[i])) == want


@pytest.mark.parametrize("bad", [-1, 1, 99, 2_001, 2.5, True, "300"])
def test_piece_sizes_are_checked_and_named(bad):
    with pytest.raises(ParamError, match="piece_chars"):
        check_piece_chars(bad)
    with pytest.raises(ParamError, match=repr(bad).replace("(", r"\(")):
        EmbedOptions(piece_chars=bad)


def test_options_say_what_they_change():
    assert EmbedOptions().label == ""
    both = EmbedOptions(prepend_headings=True, context_chars=1500, piece_chars=300)
    assert both.label == "heading path prepended, 1,500 neighbouring characters embedded, scored with pieces of 300 characters"


def test_best_and_mix_against_brute_force():
    rng = np.random.default_rng(0)
    text = " ".join(f"w{i}" for i in range(900))
    doc = Document("d.txt", "text", text)
    chunks = [_chunk(doc, s, min(len(text), s + 700)) for s in range(0, len(text), 500)] + [
        _chunk(doc, 3, 40)
    ]
    layout = PieceLayout.of([doc], chunks, 200)
    vectors = rng.normal(size=(len(layout), 8)).astype(np.float32)
    pieces = ChunkPieces(layout, vectors)
    q = rng.normal(size=(3, 8)).astype(np.float32)
    own = rng.normal(size=(3, len(chunks))).astype(np.float32)
    best, mixed = pieces.best(q), pieces.mix(q, own)
    for i in range(len(chunks)):
        lo, hi = layout.lo[i], layout.hi[i]
        if lo == hi:
            assert np.isnan(best[:, i]).all() and np.allclose(mixed[:, i], own[:, i])
        else:
            want = (vectors[lo:hi] @ q.T).max(axis=0)
            assert np.allclose(best[:, i], want, atol=1e-6)
            assert np.allclose(mixed[:, i], (1 - PIECE_WEIGHT) * own[:, i] + PIECE_WEIGHT * want, atol=1e-6)
            found = pieces.best_piece(q[0], i)
            assert found is not None and abs(found.cosine - want[0]) < 1e-6
            assert (found.start, found.end) in {
                (int(layout.starts[j]), int(layout.ends[j])) for j in range(lo, hi)
            }


#: One line holds the question's words among many unrelated lines; a short chunk elsewhere holds
#: two of them. Whole-chunk vectors prefer the short chunk; its best piece lifts the long one.
LONG = "\n".join(
    [f"Line {i} speaks of topic{i} and subject{i} and matter{i} with theme{i} here." for i in range(9)]
    + ["Knead flour water yeast dough then bake the bread loaf."]
    + [f"Line {i} speaks of topic{i} and subject{i} and matter{i} with theme{i} there." for i in range(9, 13)]
)
SHORT = "Flour and yeast are sold at the corner shop on weekdays."
QUESTION = "knead flour yeast dough bake bread loaf"
CFG = StrategyConfig.make("recursive", {"chunk_size": 1500, "chunk_overlap": 0})


def _docs() -> list[Document]:
    return [Document("long.txt", "text", LONG), Document("short.txt", "text", SHORT)]


@pytest.mark.parametrize("retriever", ["dense", "hybrid", "rrf"])
def test_pieces_lift_the_chunk_whose_one_line_answers(retriever):
    ctx = Context(embedder=FakeEmbedder(dim=512))
    plain = build_index(_docs(), CFG, ctx)
    with_pieces = build_index(_docs(), CFG, ctx, EmbedOptions(piece_chars=100))
    assert [h.chunk.doc_name for h in retrieve(plain, [QUESTION], 2, "dense")[0]] == ["short.txt", "long.txt"]
    top = retrieve(with_pieces, [QUESTION], 2, retriever)[0]
    assert top[0].chunk.doc_name == "long.txt"
    assert len(with_pieces.pieces.layout) == LONG.count("\n") + 2  # one piece a line (< 100 chars each)


def test_every_dense_score_is_the_mixed_one():
    ctx = Context(embedder=FakeEmbedder(dim=512))
    idx = build_index(_docs(), CFG, ctx, EmbedOptions(piece_chars=100))
    qv = ctx.get_embedder().encode_queries([QUESTION])
    rows = np.arange(len(idx))
    want = idx.pieces.mix(qv, qv @ idx.vectors.T)[0]
    assert np.allclose(idx.dense_scores(qv[0], rows), want)
    dense = retrieve(idx, [QUESTION], 2, "dense", qv)[0]
    assert [h.score for h in dense] == pytest.approx(sorted(want, reverse=True))
    hybrid = retrieve(idx, [QUESTION], 2, "hybrid", qv)[0]
    assert hybrid[0].evidence.cosine == pytest.approx(want.max())
    long_row = [i for i, c in enumerate(idx.chunks) if c.doc_name == "long.txt"]
    places = answer_places(idx, QUESTION, (idx.chunks[long_row[0]].doc_id, 0, 10), qv[0])
    assert places is not None and places.dense_rank == 1
    plain = build_index(_docs(), CFG, ctx)
    assert idx.nbytes > plain.nbytes  # the pieces' vectors are counted, in memory and as cost
    cost = cost_of(idx, [dense], 2)
    assert cost.vectors == len(idx) + len(idx.pieces.layout) and cost.index_bytes == 4 * idx.dim * cost.vectors


def test_pieces_are_embedded_once_per_document_whatever_the_configuration():
    from explorer.retrieval import vectors

    vectors._piece_vectors.clear()
    emb = FakeEmbedder(dim=64)
    ctx = Context(embedder=emb)
    options = EmbedOptions(piece_chars=100)
    first = build_index(_docs(), CFG, ctx, options)
    before = list(emb.texts_embedded)
    assert set(first.pieces.layout.texts(_docs())) <= set(before)
    second = build_index(
        _docs(), StrategyConfig.make("recursive", {"chunk_size": 200, "chunk_overlap": 0}), ctx, options
    )
    new = emb.texts_embedded[len(before) :]
    assert new and set(new) == set(second.texts) - set(before)  # the new chunks, no piece again
    assert second.pieces.vectors is first.pieces.vectors  # one copy for both configurations


def test_preview_pools_the_pieces_from_the_token_states():
    ctx = Context(embedder=FakeEmbedder(dim=256))
    exact = build_index(_docs(), CFG, ctx, EmbedOptions(piece_chars=100))
    preview = build_index(
        _docs(), CFG, ctx, EmbedOptions(piece_chars=100), mode="preview", force_preview=True
    )
    assert preview.pieces.vectors.shape == exact.pieces.vectors.shape
    assert retrieve(preview, [QUESTION], 1, "hybrid")[0][0].chunk.doc_name == "long.txt"


def test_a_corpus_run_refuses_pieces_by_name():
    with pytest.raises(ParamError, match="piece_chars=300 is not available in a streamed corpus run"):
        WorkSpec((CFG,), QuestionPlan([], []), EmbedOptions(piece_chars=300))


@pytest.mark.model
def test_real_model_finds_the_answering_line_as_the_best_piece():
    docs = _docs()
    idx = build_index(docs, CFG, Context(), EmbedOptions(piece_chars=100))
    qv = idx.ctx.get_embedder().encode_queries(["How do I bake a loaf of bread?"])[0]
    row = next(i for i, c in enumerate(idx.chunks) if c.doc_name == "long.txt")
    best = idx.pieces.best_piece(qv, row)
    assert best is not None and "bread" in LONG[best.start : best.end]
    own = float(idx.vectors[row] @ qv)
    assert best.cosine > own  # the line answers better than the whole chunk
    mixed = idx.dense_scores(qv, np.array([row]))[0]
    assert mixed == pytest.approx((1 - PIECE_WEIGHT) * own + PIECE_WEIGHT * best.cosine, abs=1e-5)


def _chunk(doc: Document, start: int, end: int):
    from explorer.text.chunk import Chunk

    return Chunk(doc.id, doc.name, 0, start, end, doc.text[start:end], end - start, "chars", "")


@pytest.mark.parametrize(
    "options",
    [EmbedOptions(), EmbedOptions(piece_chars=300), EmbedOptions(True, 10_000, 2_000), EmbedOptions(context_chars=1)],
)
def test_options_travel_in_a_link_and_come_back_equal(options):
    assert EmbedOptions.from_link(options.link_value()) == options


@pytest.mark.parametrize(
    ("raw", "named"),
    [("x", "'x'"), ("p", "'p'"), ("p50", "piece_chars=50"), ("c10001", "context_chars=10001"), ("²", "'²'"), ("h;p300", "h;p300")],
)
def test_a_links_options_that_cannot_be_read_are_refused_by_name(raw, named):
    with pytest.raises(ParamError, match=re.escape(named)):
        EmbedOptions.from_link(raw)


def test_a_links_bad_part_does_not_drop_its_good_ones():
    options, bad = EmbedOptions.read_link("h,zz,p50,c120")
    assert options == EmbedOptions(prepend_headings=True, context_chars=120)
    assert bad == ("'zz' is not h, cN or pN", EmbedOptions.read_link("p50")[1][0])
    assert "piece_chars=50" in bad[1]
    assert EmbedOptions.read_link("h,p300") == (EmbedOptions(True, 0, 300), ())
    assert EmbedOptions.read_link(",,,") == (EmbedOptions(), ("'' is not h, cN or pN",))  # said once
