"""FAISS retrieval per strategy: right chunk found, documents pooled, enrichment never moves offsets."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from explorer import Context, Document
from explorer.documents.document import Block
from explorer.embedding.cache import EmbeddingCache
from explorer.embedding.fake import FakeEmbedder
from explorer.errors import ParamError
from explorer.retrieval.faiss_index import VectorIndex
from explorer.retrieval.ranking import Hit
from explorer.retrieval.search import build_index, chunk_documents, compare
from explorer.retrieval.vectors import EmbedOptions, embedded_text
from explorer.strategies.config import StrategyConfig

PARAS = [
    "Cats sleep most of the day. A cat purrs when content and grooms its fur.",
    "The stock market fell as bond yields rose. Investors sold bank shares.",
    "The volcano erupted with lava and ash. The crater glowed at night.",
    "Bread needs flour, water, yeast and salt. Knead the dough and bake it.",
]


def _docs() -> list[Document]:
    return [
        Document("animals.txt", "text", PARAS[0] + "\n\n" + PARAS[3]),
        Document("news.txt", "text", PARAS[1] + "\n\n" + PARAS[2]),
    ]


#: One chunk per paragraph on these texts (each paragraph is under 100 characters).
PARA_CFG = StrategyConfig.make("recursive", {"chunk_size": 100, "chunk_overlap": 0})


def _ctx() -> Context:
    return Context(embedder=FakeEmbedder(dim=256))


def test_search_finds_the_right_chunk_across_documents():
    idx = build_index(_docs(), PARA_CFG, _ctx())
    assert len(idx) == len(idx.chunks) == len(idx.texts) >= 4
    assert {c.doc_name for c in idx.chunks} == {"animals.txt", "news.txt"}
    hits = idx.search("volcano lava crater ash", k=3)
    assert [h.rank for h in hits] == [1, 2, 3]
    assert hits[0].chunk.doc_name == "news.txt" and "volcano" in hits[0].chunk.text
    assert all(a.score >= b.score for a, b in itertools.pairwise(hits))
    doc = _docs()[1]
    c = hits[0].chunk
    assert doc.text[c.start : c.end] == c.text
    assert hits[0].to_dict()["document"] == "news.txt"


def test_k_larger_than_the_index_and_bad_queries():
    idx = build_index(_docs(), PARA_CFG, _ctx())
    assert len(idx.search("bread", k=100)) == len(idx)
    with pytest.raises(ParamError, match="k=0"):
        idx.search("bread", k=0)
    with pytest.raises(ParamError, match="empty"):
        idx.search("   ", k=3)


def test_empty_corpus_returns_no_hits():
    idx = build_index([Document("blank.txt", "text", "  \n ")], PARA_CFG, _ctx())
    assert len(idx) == 0 and idx.search("anything", 5) == []


def test_embedded_text_options_change_text_not_offsets():
    text = "# Intro\n\nFirst part of the text.\n\n## Details\n\nThe detailed part is here."
    doc = Document(
        "m.md",
        "markdown",
        text,
        blocks=(Block("heading", 0, 7, 1, "Intro"), Block("heading", 34, 44, 2, "Details")),
    )
    cfg = StrategyConfig.make("fixed", {"chunk_size": 30, "chunk_overlap": 0})
    chunks = chunk_documents([doc], cfg, _ctx())
    last = chunks[-1]
    assert last.headings == ("Intro", "Details")
    assert embedded_text(last, doc) == last.text
    with_head = embedded_text(last, doc, EmbedOptions(prepend_headings=True))
    assert with_head == "Intro > Details\n\n" + last.text
    ctx_text = embedded_text(last, doc, EmbedOptions(context_chars=5))
    assert ctx_text == text[last.start - 5 : last.start] + last.text + text[last.end : last.end + 5]
    plain = build_index([doc], cfg, _ctx())
    enriched = build_index([doc], cfg, _ctx(), EmbedOptions(prepend_headings=True, context_chars=20))
    assert [(c.start, c.end) for c in plain.chunks] == [(c.start, c.end) for c in enriched.chunks]
    assert plain.texts != enriched.texts
    assert not np.array_equal(plain.vectors, enriched.vectors)


@pytest.mark.parametrize("bad", [-1, 10_001, 2.5, True])
def test_embed_options_are_validated(bad):
    with pytest.raises(ParamError, match="context_chars"):
        EmbedOptions(context_chars=bad)


def test_shared_chunk_texts_are_embedded_once_across_strategies():
    docs = _docs()
    emb = FakeEmbedder()
    ctx = Context(embedder=emb)
    a = StrategyConfig.make("fixed", {"chunk_size": 80, "chunk_overlap": 0})
    b = StrategyConfig.make("fixed", {"chunk_size": 80, "chunk_overlap": 20})
    ia, ib = build_index(docs, a, ctx), build_index(docs, b, ctx)
    distinct = set(ia.texts) | set(ib.texts)
    assert len(distinct) < len(ia.texts) + len(ib.texts)  # the test needs some shared texts
    assert emb.stats.encoded == len(distinct)


def test_compare_gives_hits_per_config_and_reuses_indexes():
    docs = _docs()
    emb = FakeEmbedder(cache=EmbeddingCache.memory())
    ctx = Context(embedder=emb)
    configs = [PARA_CFG, StrategyConfig.make("fixed", {"chunk_size": 40, "chunk_overlap": 0}, label="small")]
    out = compare(docs, configs, "bread flour yeast dough", 2, ctx)
    assert list(out) == configs
    for hits in out.values():
        assert len(hits) == 2 and isinstance(hits[0], Hit)
        assert hits[0].chunk.doc_name == "animals.txt"
    calls = emb.stats.encoded
    compare(docs, configs, "bread flour yeast dough", 2, ctx)
    assert emb.stats.encoded == calls
    with pytest.raises(ParamError, match="empty"):
        compare(docs, configs, "", 2, ctx)


def test_hnsw_agrees_with_exact_search():
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((2000, 32)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    queries = vecs[:100] + 0.05 * rng.standard_normal((100, 32)).astype(np.float32)
    flat, hnsw = VectorIndex(vecs), VectorIndex(vecs, exact=False)
    assert flat.kind == "flat" and hnsw.kind == "hnsw"
    s1, i1 = flat.search(queries, 5)
    _, i2 = hnsw.search(queries, 5)
    assert (i1[:, 0] == np.arange(100)).all()
    assert (i1[:, 0] == i2[:, 0]).mean() >= 0.95
    assert np.allclose(s1[:, 0], (vecs[i1[:, 0]] * queries).sum(axis=1), atol=1e-5)


@pytest.mark.model
def test_real_model_retrieves_the_right_paragraph():
    doc = Document("mixed.txt", "text", "\n\n".join(PARAS))
    idx = build_index([doc], PARA_CFG, Context())
    assert len(idx) == len(PARAS)
    assert idx.vectors.shape[1] == 384
    hits = idx.search("How do I make a loaf at home?", k=2)
    assert "flour" in hits[0].chunk.text
    hits = idx.search("Why did interest rates hurt equities?", k=1)
    assert "stock market" in hits[0].chunk.text
    assert idx.truncated == [False] * len(idx)


@pytest.mark.model
def test_real_model_compare_semantic_and_fixed():
    doc = Document("mixed.txt", "text", "\n\n".join(PARAS))
    configs = [StrategyConfig.make("semantic", {"buffer_size": 0}), PARA_CFG]
    out = compare([doc], configs, "eruption of a volcano", 1, Context())
    for hits in out.values():
        assert "volcano" in hits[0].chunk.text
