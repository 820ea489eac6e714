"""Cost beside quality: vectors, index bytes (FAISS's own arrays), embedding time measured when
the index is built (0 s "from cache" when every vector was cached), and the cl100k tokens of
the top-k chunks; in the evaluation results, the CLI's table and JSON, and the app's Retrieve
and Evaluate tables (AppTest, fake embedder); timed on the real model (``@pytest.mark.model``)."""

from __future__ import annotations

import json

import pytest

from explorer import Context, Document
from explorer.embedding.cache import EmbeddingCache
from explorer.embedding.fake import FakeEmbedder
from explorer.evaluation.cost import Cost, cost_of, format_bytes, format_seconds, llm_tokens
from explorer.evaluation.evaluate import evaluate
from explorer.evaluation.questions import Question
from explorer.retrieval.search import build_index
from explorer.strategies.config import StrategyConfig
from explorer.text.length import get_length

PARAS = [
    "Cats sleep most of the day. A cat purrs when content and grooms its fur.",
    "The stock market fell as bond yields rose. Investors sold bank shares.",
    "The volcano erupted with lava and ash. The crater glowed at night.",
    "Bread needs flour, water, yeast and salt. Knead the dough and bake it.",
]
DOCS = [
    Document("animals.txt", "text", PARAS[0] + "\n\n" + PARAS[3]),
    Document("news.txt", "text", PARAS[1] + "\n\n" + PARAS[2]),
]
CFG = StrategyConfig.make("recursive", {"chunk_size": 100, "chunk_overlap": 0})


def ctx(dim: int = 64, cache: EmbeddingCache | None = None) -> Context:
    return Context(embedder=FakeEmbedder(dim=dim, cache=cache))


def test_a_new_index_is_timed_and_counts_its_vectors_and_bytes():
    idx = build_index(DOCS, CFG, ctx(64))
    hits = idx.search_many(["volcano lava", "bread flour"], k=2)
    cost = cost_of(idx, hits, 2)
    assert cost.vectors == len(idx) == 4 and cost.dim == 64
    assert cost.index_bytes == 4 * 64 * 4  # flat: n × dim × 4, nothing else
    assert cost.embed_seconds is not None and cost.embed_seconds > 0
    assert cost.embedded_new == 4 and not cost.from_cache and cost.note == ""
    assert cost.embedding_label() == format_seconds(cost.embed_seconds)
    d = cost.to_dict()
    assert d["vectors"] == 4 and d["index_bytes"] == 1024 and d["llm_unit"] == "cl100k" and d["k"] == 2


def test_vectors_from_the_cache_count_as_zero_seconds():
    cache = EmbeddingCache.memory()
    build_index(DOCS, CFG, ctx(64, cache))
    again = build_index(DOCS, CFG, ctx(64, cache))  # a new embedder, the same cache
    cost = cost_of(again, again.search_many(["cats"], k=1), 1)
    assert again.embedded_new == 0 and cost.from_cache
    assert cost.seconds == 0 and cost.note == "from cache"
    assert cost.cells()["embedding"] == "0 s (from cache)" and cost.to_dict()["embed_seconds"] == 0


def test_a_time_that_includes_loading_the_model_says_so():
    class Lazy(FakeEmbedder):
        def __init__(self) -> None:
            super().__init__(64)
            self.ready = False

        @property
        def loaded(self) -> bool:
            return self.ready

        def _embed(self, texts):
            self.ready = True
            return super()._embed(texts)

    emb = Lazy()
    first = cost_of(build_index(DOCS, CFG, Context(embedder=emb)), [], 5)
    assert first.cold and first.embedding_label().endswith("s (with loading the model)")
    assert first.to_dict()["with_model_load"] is True
    other = StrategyConfig.make("recursive", {"chunk_size": 60, "chunk_overlap": 0})
    second = cost_of(build_index(DOCS, other, Context(embedder=emb)), [], 5)
    assert not second.cold and second.note == ""


def test_vectors_made_before_the_visit_began_say_cached_with_their_build_time():
    """An index is shared: its build time is not the time a later reader waited."""
    idx = build_index(DOCS, CFG, ctx(64))
    assert idx.embedded_at is not None
    now = cost_of(idx, [], 5, since=idx.embedded_at - 60)  # the visit that built it
    later = cost_of(idx, [], 5, since=idx.embedded_at + 1)  # a visit that began after
    assert not now.earlier and not now.embedding_label().startswith("cached")
    assert later.earlier and later.embedding_label() == f"cached (built in {format_seconds(idx.embed_seconds)})"
    assert cost_of(idx, [], 5).embedding_label() == now.embedding_label()  # the CLI: no visit
    assert cost_of(idx, [], 5, retriever="bm25", since=idx.embedded_at + 1).embedding_label() == "— (BM25: nothing embedded)"
    cache = EmbeddingCache.memory()
    build_index(DOCS, CFG, ctx(64, cache))
    again = build_index(DOCS, CFG, ctx(64, cache))  # every vector from the cache: 0 s, whenever
    assert cost_of(again, [], 5, since=again.embedded_at + 1).embedding_label() == "0 s (from cache)"


def test_part_from_the_cache_is_timed_and_counted():
    cache = EmbeddingCache.memory()
    build_index(DOCS[:1], CFG, ctx(64, cache))
    both = build_index(DOCS, CFG, ctx(64, cache))
    assert both.embedded_new == 2 and not cost_of(both, [], 5).from_cache


def test_hnsw_adds_its_graph_to_the_vectors():
    import faiss

    idx = build_index(DOCS, CFG, ctx(32), exact=False)
    cost = cost_of(idx, [], 5)
    vectors = 4 * 32 * 4
    assert cost.index_bytes > vectors
    stored = faiss.serialize_index(idx.index._index).nbytes  # FAISS's own file, with its header
    assert abs(stored - cost.index_bytes) < 1024


def test_bm25_alone_embeds_nothing():
    idx = build_index(DOCS, CFG, ctx(), retriever="bm25")
    cost = cost_of(idx, idx.search_many(["volcano"], k=2, retriever="bm25"), 2)
    assert cost.vectors == 0 and cost.index_bytes == 0 and cost.seconds is None
    assert cost.note == "BM25: nothing embedded" and cost.cells()["index size"] == "—"


def test_bm25_costs_no_vector_even_when_the_shared_index_has_them():
    # the warm-up or a dense search embedded this index; a BM25 search read none of its vectors
    idx = build_index(DOCS, CFG, ctx())
    assert idx.has_vectors
    hits = idx.search_many(["volcano"], k=2, retriever="bm25")
    cost = cost_of(idx, hits, 2, retriever="bm25")
    assert cost.vectors == 0 and cost.index_bytes == 0 and cost.seconds is None
    assert cost.note == "BM25: nothing embedded"
    assert cost_of(idx, hits, 2, retriever="hybrid").vectors == len(idx)


def test_llm_tokens_are_the_top_k_chunks_cl100k_tokens_per_question():
    idx = build_index(DOCS, CFG, ctx())
    hits = idx.search_many(["volcano lava", "bread flour", "cats"], k=2)
    cl100k = get_length("cl100k")
    want = sum(sum(cl100k(h.chunk.text) for h in q) for q in hits) / 3
    assert llm_tokens(hits) == pytest.approx(want)
    assert cost_of(idx, hits, 2).llm_tokens == pytest.approx(want)
    assert cl100k("hello world") == 2  # the figure is in OpenAI's tokens, not the model's
    assert llm_tokens([]) == 0


def test_formats():
    assert format_bytes(512) == "512 B" and format_bytes(1536) == "1.5 KB"
    assert format_bytes(3 * 1024**2) == "3.0 MB"
    assert format_seconds(0) == "0 s" and format_seconds(0.042) == "0.04 s"
    assert format_seconds(3.21) == "3.2 s" and format_seconds(75) == "75 s"
    c = Cost(10, 384, 15360, 1.5, 10, 1234.4, 5, 2)
    assert c.cells() == {
        "vectors": "10",
        "index size": "15.0 KB",
        "embedding": "1.5 s",
        "LLM tokens @5": "1,234",
    }


def test_evaluation_results_carry_their_cost():
    qs = [Question("volcano lava ash", ((DOCS[1].id, len(PARAS[1]) + 2, len(DOCS[1].text)),))]
    (res,) = evaluate(DOCS, [CFG], qs, 2, ctx())
    assert res.cost is not None and res.cost.vectors == res.chunk_count == 4
    assert res.cost.llm_tokens > 0 and res.cost.embed_seconds is not None
    d = res.to_dict()
    assert d["cost"]["vectors"] == 4 and d["cost"]["index_bytes"] == 4 * 64 * 4


def test_cli_evaluate_shows_the_cost(capsysbinary, tmp_path, monkeypatch):
    from explorer.cli import inputs as cli_inputs
    from explorer.cli.main import main

    emb = FakeEmbedder(dim=128)
    monkeypatch.setattr(
        cli_inputs, "make_context", lambda model, progress=None, quantize=False, backend="auto": Context(
            model=model, embedder=emb, progress=progress
        )
    )
    doc = tmp_path / "doc.txt"
    doc.write_text("\n\n".join(PARAS), encoding="utf-8")
    q = tmp_path / "q.jsonl"
    q.write_text(json.dumps({"question": "volcano?", "answer": "The volcano erupted with lava and ash."}))
    args = ["evaluate", "--corpus", str(doc), "--questions", str(q), "--strategy", "recursive", "--k", "2", "-q"]
    assert main([*args, "--set", "chunk_size=100", "--set", "chunk_overlap=0"]) == 0
    out = capsysbinary.readouterr().out.decode()
    header = out.splitlines()[0]
    for col in ("Vectors", "Index", "Embedding", "LLM tokens @2"):
        assert f"| {col} " in header
    assert "| 4 " in out and "2.0 KB" in out  # 4 vectors of 128 float32
    assert main([*args, "--set", "chunk_size=100", "--set", "chunk_overlap=0", "--format", "json"]) == 0
    (row,) = json.loads(capsysbinary.readouterr().out.decode())
    assert row["cost"]["vectors"] == row["chunks"] and row["cost"]["index_bytes"] == row["chunks"] * 128 * 4
    assert row["cost"]["from_cache"] is True  # the table's run embedded them already


# -- the app ------------------------------------------------------------------------------------
@pytest.fixture()
def app_env(monkeypatch):
    monkeypatch.setenv("CHUNK_EXPLORER_FAKE_EMBEDDER", "1")
    monkeypatch.setenv("CHUNK_EXPLORER_JOB_WAIT", "60")
    monkeypatch.setenv("CHUNK_EXPLORER_WARM", "0")


COST_COLUMNS = ["vectors", "index size", "embedding", "LLM tokens @5"]


def test_retrieve_shows_cost_beside_the_scores(app_env):
    from explorer.documents.samples import load_sample
    from tests.app.test_app_pages import ask, ok, start

    at = start("retrieve")
    guide = load_sample("Tidepool guide (Markdown)").text
    ask(at, "How do I install it?", guide[guide.index("#", 10) :][:80].strip())
    ok(at)
    (table,) = [d for d in at.table if "vectors" in d.value.columns]
    t = table.value
    assert list(t.columns[-4:]) == COST_COLUMNS and {"recall %", "IoU %", "top score"} <= set(t.columns)
    assert len(t) == 2 and all(v > 0 for v in t["vectors"])
    assert all(s.endswith("B") for s in t["index size"])
    assert all(s.endswith(" s") or "from cache" in s for s in t["embedding"])
    assert any("LLM tokens @k" in c.value and "cl100k" in c.value for c in at.caption)
    # the same question again: the indexes come from the core's cache, timed when built
    next(b for b in at.button if b.label == "Keep the question").click().run()
    at.button(key="w.q.runall").click().run()
    ok(at)
    assert all(r["LLM tokens"] > 0 for r in at.session_state["ret_batch"])


def test_evaluate_results_table_has_the_cost_columns(app_env):
    from tests.app.test_app_pages import ok, start

    at = start("evaluate")
    at.button(key="w.qsample").click().run()
    at.button(key="w.eval_run").click().run()
    ok(at)
    scores, t = at.dataframe[0].value, at.dataframe[1].value  # quality, then cost, by configuration
    assert "Recall" in scores.columns and "vectors" not in scores.columns
    assert list(t["configuration"]) == list(scores["configuration"]) and "Recall" not in t.columns
    assert list(t.columns[-4:]) == COST_COLUMNS
    assert len(t) == 2 and all(float(v.replace(",", "")) > 0 for v in t["LLM tokens @5"])
    assert any("from the cache" in c.value for c in at.caption)


# -- on the real model --------------------------------------------------------------------------
@pytest.mark.model
def test_embedding_time_is_measured_on_the_real_model_and_is_zero_from_cache():
    from explorer.embedding.embedder import get_embedder

    emb = get_embedder("all-MiniLM-L6-v2")
    docs = [Document("report.txt", "text", "\n\n".join(f"{p} Paragraph {i}." for i, p in enumerate(PARAS * 5)))]
    first = build_index(docs, CFG, Context(model="all-MiniLM-L6-v2", embedder=emb))
    hits = first.search_many(["volcano lava"], k=3)
    cost = cost_of(first, hits, 3)
    assert cost.dim == 384 and cost.vectors == len(first)
    assert cost.index_bytes == len(first) * 384 * 4
    assert cost.embedded_new == len(set(first.texts)) and cost.seconds is not None and cost.seconds > 0
    again = cost_of(build_index(docs, CFG, Context(model="all-MiniLM-L6-v2", embedder=emb)), hits, 3)
    assert again.from_cache and again.seconds == 0 and again.embedding_label() == "0 s (from cache)"
    assert again.llm_tokens == cost.llm_tokens > 0


def test_the_llm_counter_is_loaded_once_on_a_thread_of_its_own(monkeypatch):
    """The warm-up and a search load the counter beside their embedding, so the page that shows
    a cost finds it ready (its import is about a second); a page that needs it while it loads
    waits for that load instead of making a second counter beside it."""
    import threading
    import time

    from explorer.evaluation import cost
    from explorer.text import length

    made = []
    real_init = length.OpenAITokenLength.__init__

    def slow_init(self, name):
        made.append(threading.current_thread().name)
        time.sleep(0.5)
        real_init(self, name)

    monkeypatch.setattr(length.OpenAITokenLength, "__init__", slow_init)
    monkeypatch.setattr(cost, "_preload", [])
    get_length.cache_clear()
    thread = cost.preload_llm_counter()
    assert thread is not None and thread.daemon
    counter = cost.llm_counter()  # asked while it loads: waits for it
    assert made == ["llm-counter"] and counter is get_length(cost.LLM_UNIT) and counter.name == "cl100k"
    assert llm_tokens([[]]) == 0 and made == ["llm-counter"]
    assert cost.preload_llm_counter() is None  # once per process
    get_length.cache_clear()

