"""The per-session cache switch (``CHUNK_EXPLORER_PRIVATE_CACHE=1``, explorer.embedding.private).

Why it exists: the shared embedding cache answers a text somebody already embedded in
milliseconds, so a visitor who times a request learns whether another visitor embedded that
exact text. Under the switch each session embeds through its own view of the shared model:
its own memory-only cache, its own model id, nothing written to disk.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from explorer.embedding.cache import EmbeddingCache
from explorer.embedding.fake import FakeEmbedder
from explorer.embedding.private import PRIVATE_ENV, private_cache_enabled, private_view

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TEXTS = ["A first sentence about rivers.", "A second one about mountains.", "And a third on policy."]


def test_the_switch_reads_the_environment(monkeypatch):
    for value, on in (("1", True), ("true", True), ("", False), ("0", False), ("off", False)):
        monkeypatch.setenv(PRIVATE_ENV, value)
        assert private_cache_enabled() is on
    monkeypatch.delenv(PRIVATE_ENV)
    assert not private_cache_enabled()


def test_a_view_shares_the_model_not_the_cache(tmp_path):
    disk = EmbeddingCache(tmp_path / "shared")
    shared = FakeEmbedder(cache=disk)
    a, b = private_view(shared, "a"), private_view(shared, "b")
    va = a.encode(TEXTS)
    assert a.stats.encoded == 3
    vb = b.encode(TEXTS)
    assert b.stats.encoded == 3, "the second view found the first one's vectors"
    assert np.allclose(va, vb)  # same model
    a.encode(TEXTS)
    assert a.stats.encoded == 3 and a.stats.cached == 3  # each view keeps its own
    assert a.model_id != b.model_id != shared.model_id
    assert shared.stats.encoded == 0
    assert not list(tmp_path.rglob("*")), "a private view wrote to disk"
    shared.encode(TEXTS)  # the control: the shared embedder does write its file
    assert disk.count() == 3 and (tmp_path / "shared" / "embeddings.sqlite3").exists()


def test_a_view_made_before_the_model_loads_loads_it_once_in_the_shared_embedder():
    class Lazy(FakeEmbedder):
        loads = 0

        def __init__(self) -> None:
            super().__init__()
            self._model = None

        def _load(self):
            if self._model is None:
                Lazy.loads += 1
                self._model = object()
            return self._model

        def _embed(self, texts):
            self._load()
            return super()._embed(texts)

    shared = Lazy()
    views = [private_view(shared, str(i)) for i in range(3)]
    for v in views:
        v.encode(TEXTS)
    assert Lazy.loads == 1 and all(v._model is shared._model for v in views)


def test_a_private_cache_is_bounded_by_bytes():
    cache = EmbeddingCache.private(memory_bytes=4 * 64 * 10)  # ten 64-d float32 vectors
    view = private_view(FakeEmbedder(), "s", cache)
    view.encode([f"text number {i}" for i in range(50)])
    assert cache.count() <= 10


# -- the app: two sessions ----------------------------------------------------------------------
@pytest.fixture
def app_env(monkeypatch, tmp_path):
    monkeypatch.setenv("CHUNK_EXPLORER_FAKE_EMBEDDER", "1")
    monkeypatch.setenv("CHUNK_EXPLORER_JOB_WAIT", "60")
    monkeypatch.setenv("CHUNK_EXPLORER_WARM", "0")
    monkeypatch.setenv("CHUNK_EXPLORER_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CHUNK_EXPLORER_KEEP_UPLOADS", "0")
    embedded: list[str] = []
    real = FakeEmbedder._embed

    def counting(self, texts):
        embedded.extend(texts)
        return real(self, texts)

    monkeypatch.setattr(FakeEmbedder, "_embed", counting)
    return tmp_path / "cache", embedded


def _semantic_session(text: str) -> AppTest:
    """A visitor uploading ``text`` and opening Semantic (which embeds its sentences)."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("pages/documents.py").run()
    at.file_uploader[0].set_value(("notes.txt", text.encode(), "text/plain")).run()
    at.switch_page("pages/semantic.py").run()
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _unique_text() -> str:
    tag = uuid.uuid4().hex
    return " ".join(f"Sentence {i} of {tag} talks about topic {i % 7}." for i in range(40))


def test_two_sessions_do_not_share_cached_vectors(app_env, monkeypatch):
    cache_dir, embedded = app_env
    monkeypatch.setenv(PRIVATE_ENV, "1")
    text = _unique_text()
    _semantic_session(text)
    first = len(embedded)
    assert first > 0
    _semantic_session(text)
    assert len(embedded) - first >= first, "the second session reused the first one's vectors"
    assert not cache_dir.exists() or not list(cache_dir.rglob("*")), "something was written to the cache"


def test_without_the_switch_the_second_session_reuses_the_vectors(app_env):
    """The control for the test above: the shared cache is what the switch turns off."""
    _, embedded = app_env
    text = _unique_text()
    _semantic_session(text)
    first = len(embedded)
    assert first > 0
    _semantic_session(text)
    assert len(embedded) == first
