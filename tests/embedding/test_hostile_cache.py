"""The embedding cache against damage that ``test_cache.py`` does not produce: a file cut in
half, pages overwritten, a junk write-ahead log, a folder or an empty file where the database
should be, a vector row that decodes to NaN, and a process killed while an embedder writes.
Whatever the damage, the embedder returns the same vectors as with no cache at all.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np
import pytest

from explorer.embedding import cache_file
from explorer.embedding.cache import DB_NAME, CacheWarning, EmbeddingCache, text_hash
from explorer.embedding.fake import FakeEmbedder

ROOT = Path(__file__).resolve().parents[2]
TEXTS = [f"sentence number {i} about pumps, valves and readings" for i in range(600)]


def fresh_vectors(texts: list[str] = TEXTS) -> np.ndarray:
    return FakeEmbedder(32).encode(texts)  # memory-only cache: the reference


def fill(directory: Path) -> None:
    emb = FakeEmbedder(32, cache=EmbeddingCache(directory))
    emb.encode(TEXTS)
    emb.cache.close()
    con = sqlite3.connect(directory / DB_NAME)  # fold the WAL into the main file
    con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    con.close()
    for side in directory.glob(f"{DB_NAME}-*"):
        side.unlink()


def encode_through(directory: Path) -> tuple[np.ndarray, FakeEmbedder]:
    emb = FakeEmbedder(32, cache=EmbeddingCache(directory))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CacheWarning)
        return emb.encode(TEXTS), emb


def assert_recovers(directory: Path) -> None:
    """Correct vectors now; a sound file afterwards, which serves them without the model."""
    vectors, _ = encode_through(directory)
    assert np.array_equal(vectors, fresh_vectors())
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)
        again, emb = encode_through(directory)
    assert np.array_equal(again, vectors)
    assert emb.texts_embedded == [], "the rebuilt cache serves every vector"
    con = sqlite3.connect(directory / DB_NAME)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()


def test_file_cut_in_half(tmp_path):
    fill(tmp_path)
    db = tmp_path / DB_NAME
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])
    assert_recovers(tmp_path)
    assert list(tmp_path.glob(f"{DB_NAME}.corrupt-*"))


def test_pages_overwritten_with_noise(tmp_path):
    fill(tmp_path)
    db = tmp_path / DB_NAME
    data = bytearray(db.read_bytes())
    rng = random.Random(5)
    for offset in range(4096, len(data), 4096):
        data[offset : offset + 64] = rng.randbytes(64)
    db.write_bytes(bytes(data))
    assert_recovers(tmp_path)


def test_junk_write_ahead_log(tmp_path):
    fill(tmp_path)
    (tmp_path / f"{DB_NAME}-wal").write_bytes(random.Random(1).randbytes(50_000))
    assert_recovers(tmp_path)


def test_folder_where_the_file_should_be(tmp_path):
    (tmp_path / DB_NAME).mkdir()
    assert_recovers(tmp_path)


def test_empty_file(tmp_path):
    (tmp_path / DB_NAME).write_bytes(b"")
    assert_recovers(tmp_path)


def test_row_that_decodes_to_nan_is_a_miss(tmp_path):
    """SQLite has no checksums: a damaged vector of the right length passes every check, so
    the cache refuses non-finite values itself (and the embedder replaces them)."""
    fill(tmp_path)
    con = sqlite3.connect(tmp_path / DB_NAME)
    nan = np.full(32, np.nan, dtype=np.float32).tobytes()
    con.execute("UPDATE vectors SET vec=? WHERE hash=?", (nan, text_hash(TEXTS[7])))
    con.commit()
    con.close()
    vectors, emb = encode_through(tmp_path)
    assert np.isfinite(vectors).all()
    assert np.array_equal(vectors, fresh_vectors())
    assert emb.texts_embedded == [TEXTS[7]]
    assert_recovers(tmp_path)


_KILLED_CHILD = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {root!r})
    from explorer.embedding.cache import EmbeddingCache
    from explorer.embedding.fake import FakeEmbedder
    emb = FakeEmbedder(32, cache=EmbeddingCache({dir!r}))
    print("ready", flush=True)
    i = 0
    while True:  # the parent kills us in here, most likely inside a write
        emb.encode([f"text {{i}}-{{j}} " + "word " * (j % 50) for j in range(300)])
        i += 1
    """
)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
@pytest.mark.parametrize("after_s", [0.3, 0.9])
def test_embedder_killed_while_writing(tmp_path, after_s):
    code = _KILLED_CHILD.format(root=str(ROOT), dir=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(after_s)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)  # a kill never leaves a file to rebuild
        cache = EmbeddingCache(tmp_path)
        assert cache.count() > 0, "batches committed before the kill are kept"
        emb = FakeEmbedder(32, cache=cache)
        probe = ["text 0-5 " + "word " * 5, "never seen before"]
        assert np.array_equal(emb.encode(probe), fresh_vectors(probe))
    assert_recovers(tmp_path)


# -- faults of the disk, not of the file: the vectors are kept -----------------------------------
def _rows(directory: Path) -> int:
    con = sqlite3.connect(directory / DB_NAME)
    try:
        return con.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
    finally:
        con.close()


def test_disk_full_stops_writing_and_keeps_the_file(tmp_path, monkeypatch):
    fill(tmp_path)
    before = _rows(tmp_path)

    def full(*_a, **_k):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(cache_file, "insert", full)
    cache = EmbeddingCache(tmp_path)
    emb = FakeEmbedder(dim=32, cache=cache)
    with pytest.warns(CacheWarning, match="not being written"):
        emb.encode(["a new text the file has no room for"])
    assert not cache.writable and "disk is full" in cache.status
    assert cache.rebuilds == 0 and not list(tmp_path.glob("*.corrupt-*"))
    emb.encode(["another new text"])  # no second warning, no write attempt
    assert np.array_equal(emb.encode(TEXTS[:50]), fresh_vectors(TEXTS[:50]))
    assert emb.texts_embedded == ["a new text the file has no room for", "another new text"]  # the rest read
    monkeypatch.undo()
    assert _rows(tmp_path) == before


def test_read_only_file_is_read_not_replaced(tmp_path, monkeypatch):
    fill(tmp_path)
    before = _rows(tmp_path)
    real = EmbeddingCache._verify_or_create

    def read_only(self):
        if self.writable:  # what SQLite says when the file or its folder cannot be written
            raise sqlite3.OperationalError("attempt to write a readonly database")
        return real(self)

    monkeypatch.setattr(EmbeddingCache, "_verify_or_create", read_only)
    cache = EmbeddingCache(tmp_path)
    emb = FakeEmbedder(dim=32, cache=cache)
    with pytest.warns(CacheWarning, match="readonly"):
        vectors = emb.encode(TEXTS)
    assert np.array_equal(vectors, fresh_vectors())
    assert emb.texts_embedded == []  # every vector came from the read-only file
    assert not cache.writable and cache.rebuilds == 0 and not list(tmp_path.glob("*.corrupt-*"))
    emb.encode(["new text kept in memory"])
    assert _rows(tmp_path) == before and (tmp_path / DB_NAME).is_file()


def test_new_cache_file_is_private_and_old_damaged_copies_are_pruned(tmp_path):
    fill(tmp_path)
    assert (tmp_path / DB_NAME).stat().st_mode & 0o777 == 0o600
    for i in range(5):
        (tmp_path / DB_NAME).write_bytes(b"not a database at all " * 50)
        _, emb = encode_through(tmp_path)
        assert emb.cache.rebuilds == 1
        time.sleep(0.01 * (i + 1))  # distinct modification times
    assert len(list(tmp_path.glob(f"{DB_NAME}.corrupt-*"))) == 2  # the newest two, to look at
