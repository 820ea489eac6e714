"""Embedders: fake (fast) and the real bundled all-MiniLM-L6-v2, both through the cache."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from explorer.embedding.bf16 import native_bf16
from explorer.embedding.cache import EmbeddingCache
from explorer.embedding.embedder import get_embedder
from explorer.embedding.fake import FakeEmbedder
from explorer.embedding.onnx_backend import graph_id
from explorer.embedding.torch_embedder import SentenceTransformerEmbedder
from explorer.errors import ModelError

MINILM = "all-MiniLM-L6-v2"  # the torch path and its packed pass are tested on the Chroma model

ROOT = Path(__file__).resolve().parents[2]


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


# -- fake embedder -------------------------------------------------------------------------
def test_fake_vectors_are_unit_float32_and_deterministic():
    a = FakeEmbedder(dim=32).encode(["the cat sat", "", "!!!", "Über straße"])
    b = FakeEmbedder(dim=32).encode(["the cat sat", "", "!!!", "Über straße"])
    assert a.dtype == np.float32 and a.shape == (4, 32)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-6)
    assert np.array_equal(a, b)


def test_fake_similar_texts_are_similar():
    e = FakeEmbedder()
    v = e.encode(["the cat sat on the mat", "the cat sat on a mat today", "bond yields rose sharply"])
    assert _cos(v[0], v[1]) > _cos(v[0], v[2])


def test_encode_deduplicates_and_serves_repeats_from_cache():
    e = FakeEmbedder()
    v = e.encode(["a b", "c d", "a b", "a b"])
    assert e.stats.encoded == 2 and e.stats.cached == 0 and e.stats.requested == 4
    assert e.texts_embedded == ["a b", "c d"]
    assert np.array_equal(v[0], v[2])
    again = e.encode(["c d", "a b", "e f"])
    assert e.stats.encoded == 3 and e.stats.cached == 2
    assert np.array_equal(again[0], v[1]) and np.array_equal(again[1], v[0])


def test_encode_empty_and_bad_input():
    e = FakeEmbedder(dim=8)
    assert e.encode([]).shape == (0, 8)
    with pytest.raises(TypeError):
        e.encode([b"bytes"])  # type: ignore[list-item]


def test_progress_reports_only_model_work():
    e = FakeEmbedder()
    calls: list[tuple[int, int]] = []
    texts = [f"text number {i}" for i in range(600)]
    e.encode(texts, progress=lambda d, t: calls.append((d, t)))
    assert calls[0] == (0, 600) and calls[-1] == (600, 600)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    calls.clear()
    e.encode(texts, progress=lambda d, t: calls.append((d, t)))
    assert calls == []  # everything cached: no progress at all


def test_disk_cache_shared_between_instances(tmp_path):
    cache = EmbeddingCache(tmp_path)
    first = FakeEmbedder(cache=cache)
    v1 = first.encode(["alpha beta", "gamma delta"])
    second = FakeEmbedder(cache=EmbeddingCache(tmp_path))  # new memory, same file
    v2 = second.encode(["gamma delta", "alpha beta"])
    assert second.stats.encoded == 0 and second.stats.cached == 2
    assert np.array_equal(v1[::-1], v2)


def test_different_models_never_share_vectors(tmp_path):
    cache = EmbeddingCache(tmp_path)
    FakeEmbedder(dim=16, cache=cache).encode(["same text"])
    other = FakeEmbedder(dim=32, cache=cache)
    assert other.encode(["same text"]).shape == (1, 32)
    assert other.stats.encoded == 1


def test_fake_token_counting_and_truncation():
    e = FakeEmbedder(max_seq_length=10)
    assert e.count_tokens(["one two three"]) == [5]
    assert not e.is_truncated("one two three")
    assert e.truncated(["w " * 8, "w " * 9]) == [False, True]


# -- model resolution, laziness ---------------------------------------------------------------
def test_missing_model_is_a_clear_error(tmp_path):
    with pytest.raises(ModelError, match="nothing is downloaded"):
        get_embedder(str(tmp_path / "no-such-model"))
    with pytest.raises(ModelError, match="not found locally"):
        get_embedder("some-org/not-a-cached-model")


def test_folder_that_is_not_a_model_fails_clearly_on_use(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    e = SentenceTransformerEmbedder(str(tmp_path), cache=EmbeddingCache.memory())
    assert str(tmp_path) in e.model_id
    with pytest.raises(ModelError, match="could not load embedding model"):
        e.encode(["hello"])


def test_get_embedder_is_one_instance_per_model_across_threads():
    seen: list[object] = []
    threads = [threading.Thread(target=lambda: seen.append(get_embedder())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(x) for x in seen}) == 1
    assert get_embedder("multilingual-e5-small") is get_embedder(None) is get_embedder("e5")
    assert get_embedder("all-MiniLM-L6-v2") is not get_embedder(None)
    assert get_embedder(quantize=True) is not get_embedder()


def test_default_embedder_metadata_without_torch():
    code = (
        "import sys; from explorer.embedding.embedder import get_embedder; e = get_embedder(); "
        "print(e.model_id, e.dim, e.max_seq_length, e.count_tokens(['hello world'])[0]); "
        "print('torch' in sys.modules, 'sentence_transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    first, second = out.stdout.strip().splitlines()
    backend = "bf16" if native_bf16() else graph_id()
    assert first == f"multilingual-e5-small+{backend} 384 512 5"  # <s> ▁hell o ▁world </s>
    assert second == "False False"


# -- the real model ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def real(tmp_path_factory):
    return SentenceTransformerEmbedder(MINILM, cache=EmbeddingCache(tmp_path_factory.mktemp("real-cache")))


@pytest.mark.model
def test_real_vectors_are_unit_norm_float32_384(real):
    v = real.encode(["A short sentence.", "Another, somewhat longer sentence about embeddings."])
    assert v.dtype == np.float32 and v.shape == (2, 384)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)


@pytest.mark.model
def test_real_paraphrase_is_nearer_than_unrelated(real):
    v = real.encode(
        [
            "The children played football in the park after school.",
            "After classes, the kids kicked a ball around in the park.",
            "The central bank raised interest rates by half a point.",
        ]
    )
    assert _cos(v[0], v[1]) > _cos(v[0], v[2]) + 0.3


@pytest.mark.model
def test_real_cache_serves_a_new_instance_without_loading_the_model(real, tmp_path):
    cache_dir = tmp_path / "c"
    texts = ["Vectors are cached on disk.", "A second sentence to cache."]
    first = real.sharing_model(EmbeddingCache(cache_dir))  # same weights, no second load
    assert first.stats.encoded == 0 and first.cache is not real.cache
    v1 = first.encode(texts)
    second = SentenceTransformerEmbedder(MINILM, cache=EmbeddingCache(cache_dir))
    v2 = second.encode(texts)
    assert second.stats.encoded == 0 and second._model is None  # torch never touched
    assert np.array_equal(v1, v2)


@pytest.mark.model
def test_real_batch_and_single_encodings_agree(real):
    texts = [f"Sentence number {i} has {'many ' * (i % 7)}words." for i in range(40)]
    batch = real.encode(texts)
    fresh = real.sharing_model(EmbeddingCache.memory())
    singles = np.stack([fresh.encode([t])[0] for t in texts[:5]])
    assert np.allclose(batch[:5], singles, atol=1e-5)  # sorting/padding does not change vectors


@pytest.mark.model
def test_real_truncation_is_reported(real):
    short = "A sentence well under the limit."
    long = "tokenisation " * 200
    counts = real.count_tokens([short, long])
    assert counts[0] < 20 and counts[1] > 256
    assert real.max_seq_length == 256
    assert not real.is_truncated(short) and real.is_truncated(long)
    assert real.truncated([short, long]) == [False, True]


@pytest.mark.model
def test_real_int8_quantised_option(real):
    q = SentenceTransformerEmbedder(MINILM, quantize=True, cache=EmbeddingCache.memory())
    assert q.model_id != real.model_id and q.model_id.endswith("+int8")
    texts = ["Quantisation makes CPU inference faster.", "The river flooded the village."]
    vq, vf = q.encode(texts), real.encode(texts)
    assert vq.dtype == np.float32 and np.allclose(np.linalg.norm(vq, axis=1), 1.0, atol=1e-5)
    assert (vq * vf).sum(axis=1).min() > 0.95  # close to fp32, but not the same vectors


# -- the packed forward pass (explorer.embedding.packed) ------------------------------------------------
_VARIED = [
    "A short one.",
    "Packing several texts into one sequence must not change any of their vectors.",
    "Ünïcödé, 東京 and emoji 🙂 go through the same tokenizer.",
    "tokenisation " * 300,  # over 256 word pieces: truncated exactly as encode() truncates
    "",
    "x",
    *(f"Sentence number {i} says {'quite ' * (i % 9)}little." for i in range(40)),
]


@pytest.mark.model
def test_real_packed_pass_gives_encodes_vectors(real):
    """The packed pass is a speed-up only: every vector equals sentence-transformers' own."""
    import torch

    assert real.packed
    model = real._load()
    with torch.inference_mode():
        want = model.encode(
            _VARIED, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
    got = real.sharing_model(EmbeddingCache.memory()).encode(_VARIED)
    assert (want * got).sum(axis=1).min() > 0.99999


def test_packed_encoder_refuses_models_it_cannot_reproduce():
    from explorer.embedding.packed import PackedEncoder

    class Transformer:  # names are what for_model looks at
        auto_model = None

    class Pooling:
        pooling_mode = "cls"

    assert PackedEncoder.for_model([Transformer(), Pooling()]) is None  # no model inside
    assert PackedEncoder.for_model([Pooling()]) is None


def test_pack_consecutive_respects_the_limit_and_order():
    from explorer.embedding.packed import pack_consecutive

    assert pack_consecutive([], 10) == []
    assert pack_consecutive([3, 4, 3, 20, 1, 1], 10) == [[0, 1, 2], [3], [4, 5]]
    sizes = [5, 9, 1, 1, 7, 3, 12, 2]
    packs = pack_consecutive(sizes, 10)
    assert [i for p in packs for i in p] == list(range(len(sizes)))
    assert all(sum(sizes[i] for i in p) <= 10 or len(p) == 1 for p in packs)


@pytest.mark.model
def test_real_contextual_sums_see_exactly_the_band(real):
    """Band 0: a sentence's vector ignores its pack neighbours (same-length edit after it changes
    nothing); band 1: the neighbour is seen. Both are cached by the pack's exact sentences."""
    emb = real.sharing_model(EmbeddingCache.memory())
    a = ["The cat sat on the mat.", "It purred quietly.", "Dogs bark at night."]
    b = ["The cat sat on the mat.", "It purred quietly.", "Birds sing at night."]
    assert emb.count_tokens(a) == emb.count_tokens(b)
    for band, same in ((0, True), (1, False)):
        sa, sb = emb.contextual_sums(a, band), emb.contextual_sums(b, band)
        assert sa.shape == (3, 384) and sa.dtype == np.float32
        assert np.allclose(sa[:2], sb[:2], atol=1e-4) == same
        assert not np.allclose(sa[2], sb[2], atol=1e-3)
    before = emb.stats.encoded
    again = emb.contextual_sums(a, 1)
    assert emb.stats.encoded == before and np.array_equal(again, emb.contextual_sums(a, 1))
    assert not np.allclose(emb.contextual_sums(a, 0)[1], again[1], atol=1e-3)  # context matters
