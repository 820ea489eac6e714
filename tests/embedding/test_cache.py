"""The embedding cache: exact round trips, corrupt or stale files rebuilt, kills mid-write survived."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from explorer.embedding.cache import DB_NAME, CacheWarning, EmbeddingCache, get_cache, text_hash
from explorer.models.local import default_cache_dir

ROOT = Path(__file__).resolve().parents[2]


def _vectors(n: int, dim: int = 16, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, dim)).astype(np.float32)


def _hashes(n: int, prefix: str = "t") -> list[bytes]:
    return [text_hash(f"{prefix}{i}") for i in range(n)]


def test_round_trip_is_exact_across_instances(tmp_path):
    vecs = _vectors(50)
    hashes = _hashes(50)
    EmbeddingCache(tmp_path).put_many("m", hashes, vecs)
    fresh = EmbeddingCache(tmp_path)  # new process-like instance: empty memory, reads disk
    got = fresh.get_many("m", hashes, dim=16)
    assert len(got) == 50
    for h, v in zip(hashes, vecs, strict=True):
        assert got[h].dtype == np.float32
        assert np.array_equal(got[h], v)  # bit for bit
    assert fresh.count("m") == 50
    assert fresh.get_many("other-model", hashes) == {}


def test_keys_are_exact_text(tmp_path):
    assert text_hash("a") != text_hash("a ")
    assert text_hash("\ud800") == text_hash("\ud800")  # lone surrogates hash, never raise
    c = EmbeddingCache(tmp_path)
    c.put_many("m", [text_hash("a")], _vectors(1))
    assert c.get_many("m", [text_hash("a ")]) == {}


def test_garbage_file_is_moved_aside_and_rebuilt(tmp_path):
    db = tmp_path / DB_NAME
    db.write_bytes(b"this is not a database \x00\xff" * 200)
    c = EmbeddingCache(tmp_path)
    with pytest.warns(CacheWarning, match="unusable"):
        assert c.get_many("m", _hashes(3)) == {}
    assert c.rebuilds == 1
    assert list(tmp_path.glob(f"{DB_NAME}.corrupt-*")), "the damaged file is kept for inspection"
    c.put_many("m", _hashes(3), _vectors(3))
    assert len(EmbeddingCache(tmp_path).get_many("m", _hashes(3))) == 3
    assert c.persist


def test_file_corrupted_while_open_is_rebuilt(tmp_path):
    c = EmbeddingCache(tmp_path)
    c.put_many("m", _hashes(5), _vectors(5))
    c.close()
    (tmp_path / DB_NAME).write_bytes(b"\x13" * 8192)
    for side in tmp_path.glob(f"{DB_NAME}-*"):
        side.unlink()
    c.clear_memory()
    with pytest.warns(CacheWarning):
        got = c.get_many("m", _hashes(5))
    assert got == {}
    c.put_many("m", _hashes(2), _vectors(2))
    assert len(c.get_many("m", _hashes(2))) == 2


def test_stale_schema_is_rebuilt(tmp_path):
    conn = sqlite3.connect(tmp_path / DB_NAME)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("CREATE TABLE vectors (model TEXT, hash BLOB, vec BLOB)")
    conn.execute("INSERT INTO meta VALUES ('schema', '0')")
    conn.commit()
    conn.close()
    c = EmbeddingCache(tmp_path)
    with pytest.warns(CacheWarning, match="schema version"):
        c.put_many("m", _hashes(2), _vectors(2))
    assert len(EmbeddingCache(tmp_path).get_many("m", _hashes(2))) == 2


def test_foreign_database_is_rebuilt(tmp_path):
    conn = sqlite3.connect(tmp_path / DB_NAME)
    conn.execute("CREATE TABLE something_else (x)")
    conn.commit()
    conn.close()
    with pytest.warns(CacheWarning, match="unexpected tables"):
        EmbeddingCache(tmp_path).get_many("m", _hashes(1))


def test_dimension_mismatch_is_a_miss_and_gets_replaced(tmp_path):
    c = EmbeddingCache(tmp_path)
    h = _hashes(1)
    c.put_many("m", h, _vectors(1, dim=8))
    fresh = EmbeddingCache(tmp_path)
    assert fresh.get_many("m", h, dim=16) == {}  # stale 8-d row ignored, not returned
    new = _vectors(1, dim=16, seed=3)
    fresh.put_many("m", h, new)
    assert np.array_equal(EmbeddingCache(tmp_path).get_many("m", h, dim=16)[h[0]], new[0])


def test_unwritable_directory_falls_back_to_memory(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    c = EmbeddingCache(blocker / "sub")  # parent is a file: mkdir fails
    with pytest.warns(CacheWarning, match="disabled"):
        c.put_many("m", _hashes(2), _vectors(2))
    assert not c.persist
    assert len(c.get_many("m", _hashes(2))) == 2


def test_memory_only_cache_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("CHUNK_EXPLORER_CACHE", str(tmp_path))
    c = EmbeddingCache.memory()
    c.put_many("m", _hashes(2), _vectors(2))
    assert len(c.get_many("m", _hashes(2))) == 2
    assert not (tmp_path / DB_NAME).exists()


def test_memory_limit_evicts_but_disk_still_serves(tmp_path):
    c = EmbeddingCache(tmp_path, memory_bytes=16 * 4 * 10)  # room for 10 vectors of 16 floats
    vecs = _vectors(30)
    c.put_many("m", _hashes(30), vecs)
    assert len(c._mem) == 10
    got = c.get_many("m", _hashes(30))
    assert len(got) == 30 and np.array_equal(got[_hashes(30)[0]], vecs[0])


def test_default_directory_follows_env(tmp_path, monkeypatch):
    monkeypatch.setenv("CHUNK_EXPLORER_CACHE", str(tmp_path / "here"))
    assert default_cache_dir() == tmp_path / "here"
    assert get_cache().path == (tmp_path / "here").resolve() / DB_NAME
    assert get_cache() is get_cache()
    monkeypatch.delenv("CHUNK_EXPLORER_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "chunk-explorer"


def test_threads_share_one_cache(tmp_path):
    c = EmbeddingCache(tmp_path)
    errors: list[BaseException] = []

    def work(t: int) -> None:
        try:
            for i in range(20):
                hs = _hashes(5, prefix=f"{t}-{i}-")
                c.put_many("m", hs, _vectors(5, seed=t * 100 + i))
                assert len(c.get_many("m", hs)) == 5
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    assert EmbeddingCache(tmp_path).count("m") == 6 * 20 * 5


_CHILD = textwrap.dedent(
    """
    import os, sys
    import numpy as np
    sys.path.insert(0, {root!r})
    from explorer.embedding import cache_file
    from explorer.embedding.cache import EmbeddingCache, text_hash
    c = EmbeddingCache({dir!r})
    rng = np.random.default_rng(0)
    c.put_many("m", [text_hash(f"kept{{i}}") for i in range(100)], rng.standard_normal((100, 32)).astype("float32"))
    mode = {mode!r}
    if mode == "exit-in-transaction":
        def rows():
            for i in range(5000):
                if i == 2500:
                    os._exit(3)  # dies inside the open write transaction
                yield ("m", text_hash(f"lost{{i}}"), rng.standard_normal(32).astype("float32").tobytes())
        c._db_call(cache_file.insert, rows())
    else:
        print("ready", flush=True)
        i = 0
        while True:  # the parent kills us somewhere in here
            c.put_many("m", [text_hash(f"loop{{i}}-{{j}}") for j in range(200)],
                       rng.standard_normal((200, 32)).astype("float32"))
            i += 1
    """
)


def _child(tmp_path: Path, mode: str) -> subprocess.Popen:
    code = _CHILD.format(root=str(ROOT), dir=str(tmp_path), mode=mode)
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)


def _reopen_checks(tmp_path: Path) -> EmbeddingCache:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheWarning)  # a valid file must open without a rebuild
        c = EmbeddingCache(tmp_path)
        assert len(c.get_many("m", [text_hash(f"kept{i}") for i in range(100)], dim=32)) == 100
        c.put_many("m", [text_hash("after")], _vectors(1, dim=32))
        assert c.rebuilds == 0
    conn = sqlite3.connect(tmp_path / DB_NAME)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    return c


def test_process_exit_inside_a_write_leaves_a_valid_cache(tmp_path):
    proc = _child(tmp_path, "exit-in-transaction")
    assert proc.wait(timeout=120) == 3
    c = _reopen_checks(tmp_path)
    assert c.get_many("m", [text_hash("lost0"), text_hash("lost100")]) == {}  # uncommitted batch gone


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_during_write_loop_leaves_a_valid_cache(tmp_path):
    proc = _child(tmp_path, "loop")
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.4)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    c = _reopen_checks(tmp_path)
    assert c.count("m") % 200 == 101 % 200  # 100 kept + 1 after + whole batches of 200 only


# -- size bound: least recently used rows go first --------------------------------------------
def _days(path: Path) -> dict[bytes, int]:
    conn = sqlite3.connect(path / DB_NAME)
    try:
        return dict(conn.execute("SELECT hash, used FROM vectors").fetchall())
    finally:
        conn.close()


def _set_day(path: Path, hashes: list[bytes], day: int) -> None:
    conn = sqlite3.connect(path / DB_NAME)
    conn.executemany("UPDATE vectors SET used=? WHERE hash=?", [(day, h) for h in hashes])
    conn.commit()
    conn.close()


def _live_bytes(path: Path) -> int:
    conn = sqlite3.connect(path / DB_NAME)
    try:
        page = conn.execute("PRAGMA page_size").fetchone()[0]
        pages = (
            conn.execute("PRAGMA page_count").fetchone()[0]
            - conn.execute("PRAGMA freelist_count").fetchone()[0]
        )
        return pages * page
    finally:
        conn.close()


def test_first_layout_is_upgraded_in_place(tmp_path):
    """A cache written before rows had a day keeps its vectors (no rebuild, no warning)."""
    conn = sqlite3.connect(tmp_path / DB_NAME)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute(
        "CREATE TABLE vectors (model TEXT NOT NULL, hash BLOB NOT NULL, vec BLOB NOT NULL, "
        "PRIMARY KEY (model, hash)) WITHOUT ROWID"
    )
    conn.execute("INSERT INTO meta VALUES ('schema', '1')")
    vecs = _vectors(3)
    conn.executemany(
        "INSERT INTO vectors VALUES ('m', ?, ?)",
        [(h, v.tobytes()) for h, v in zip(_hashes(3), vecs, strict=True)],
    )
    conn.commit()
    conn.close()
    c = EmbeddingCache(tmp_path)
    got = c.get_many("m", _hashes(3))
    assert c.rebuilds == 0 and len(got) == 3
    assert np.array_equal(got[_hashes(3)[1]], vecs[1])
    assert set(_days(tmp_path).values()) == {int(time.time() // 86400)}  # read today


def test_reads_mark_rows_used_today(tmp_path):
    c = EmbeddingCache(tmp_path)
    c.put_many("m", _hashes(4), _vectors(4))
    _set_day(tmp_path, _hashes(4), 100)
    EmbeddingCache(tmp_path).get_many("m", _hashes(2))  # a new process: nothing in memory
    days = _days(tmp_path)
    today = int(time.time() // 86400)
    assert [days[h] for h in _hashes(4)] == [today, today, 100, 100]


def test_size_bound_deletes_least_recently_used_rows(tmp_path):
    dim = 256  # 1 KB a row
    c = EmbeddingCache(tmp_path, max_bytes=0)
    hashes = _hashes(600)
    c.put_many("m", hashes, _vectors(600, dim))
    c.close()
    old, recent = hashes[:300], hashes[300:]
    _set_day(tmp_path, old, 10)
    _set_day(tmp_path, recent, 20)
    bound = int(0.7 * _live_bytes(tmp_path))  # pruned to 80 % of it: 56 % of the rows stay
    reopened = EmbeddingCache(tmp_path, max_bytes=bound)
    found = reopened.get_many("m", hashes, dim)
    assert reopened.pruned > 200
    assert sum(h in found for h in old) == len(old) - reopened.pruned  # the oldest went first
    assert all(h in found for h in recent)  # the recently used stayed
    conn = sqlite3.connect(tmp_path / DB_NAME)
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    live = (
        conn.execute("PRAGMA page_count").fetchone()[0] - conn.execute("PRAGMA freelist_count").fetchone()[0]
    )
    conn.close()
    assert live * page <= bound
    # under the bound: a new process deletes nothing
    again = EmbeddingCache(tmp_path, max_bytes=bound)
    again.get_many("m", recent[:1], dim)
    assert again.pruned == 0


def test_size_bound_from_the_environment(monkeypatch):
    from explorer.embedding.cache import MAX_MB, max_cache_bytes

    monkeypatch.setenv("CHUNK_EXPLORER_CACHE_MAX_MB", "1.5")
    assert max_cache_bytes() == int(1.5 * 1024 * 1024)
    monkeypatch.setenv("CHUNK_EXPLORER_CACHE_MAX_MB", "0")
    assert max_cache_bytes() == 0
    monkeypatch.setenv("CHUNK_EXPLORER_CACHE_MAX_MB", "lots")
    assert max_cache_bytes() == MAX_MB * 1024 * 1024


def test_new_files_store_a_vector_in_about_two_kilobytes(tmp_path):
    """16 KB pages: a 384-d float32 row (1,536 bytes of vector) costs ~1.9 KB, not ~4.7 KB."""
    c = EmbeddingCache(tmp_path, max_bytes=0)
    c.put_many("all-MiniLM-L6-v2", _hashes(2000), _vectors(2000, 384))
    c.close()
    assert _live_bytes(tmp_path) / 2000 < 2100
