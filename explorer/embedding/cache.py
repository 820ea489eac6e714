"""Embedding cache: (model id, sha256 of the exact text) → float32 vector, in memory and on disk.

Why: embedding is the slow part of everything (hundreds of sentences per second on a laptop
CPU), while re-chunking, moving a semantic threshold or comparing strategies that share chunk
texts asks for the same vectors again and again. The cache makes each distinct text cost one
model call, ever.

Disk store: one SQLite file (``embeddings.sqlite3``) in ``CHUNK_EXPLORER_CACHE`` or
``~/.cache/chunk-explorer``. SQLite in WAL mode with one transaction per batch means a process
killed mid-write leaves a valid database (the unfinished batch is simply missing). A file that
is not a database, has another schema, or fails SQLite's quick check is moved aside
(``*.corrupt-<time>``) and rebuilt with a :class:`CacheWarning`; if even that fails the cache
carries on in memory only. Nothing here ever raises for a bad cache file.

Size: every row remembers the day it was last used. When a process first opens a file whose
rows take more than ``CHUNK_EXPLORER_CACHE_MAX_MB`` (default 2048 MB, about a million 384-d
vectors; 0 = no limit), the least recently used rows are deleted down to 80 % of it and the
file is compacted. A file of the first layout (no day) is
upgraded in place, its vectors kept. The SQL itself is in :mod:`explorer.embedding.cache_file`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from explorer import limits
from explorer.embedding import cache_file
from explorer.models.local import default_cache_dir

#: Default bound on the rows' size on disk, in MB (``CHUNK_EXPLORER_CACHE_MAX_MB``).
MAX_MB = 2048
DB_NAME = "embeddings.sqlite3"
#: Vectors kept in memory (bytes); least recently used ones are dropped first (they stay on disk).
MEMORY_BYTES = 512 * 1024 * 1024
#: Files moved aside as damaged that are kept (the newest); older ones are deleted.
KEEP_ASIDE = 2


class CacheWarning(UserWarning):
    """The on-disk cache had to be rebuilt or disabled (nothing the user has to do)."""


def max_cache_bytes() -> int:
    """``$CHUNK_EXPLORER_CACHE_MAX_MB`` in bytes (0 = no limit); a bad value falls back to the default."""
    raw = os.environ.get("CHUNK_EXPLORER_CACHE_MAX_MB", "").strip()
    try:
        mb = float(raw) if raw else MAX_MB
    except ValueError:
        mb = MAX_MB
    return max(0, int(mb * 1024 * 1024))


def text_hash(text: str) -> bytes:
    """32-byte sha256 of the exact text (surrogates kept, so every Python str hashes)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class EmbeddingCache:
    """Thread-safe two-level cache. ``directory=None`` uses :func:`default_cache_dir`;
    ``persist=False`` keeps vectors in memory only (tests, or an unwritable disk)."""

    def __init__(
        self,
        directory: str | Path | None = None,
        *,
        persist: bool = True,
        memory_bytes: int = MEMORY_BYTES,
        max_bytes: int | None = None,
    ) -> None:
        self.directory = Path(directory).expanduser() if directory is not None else default_cache_dir()
        self.max_bytes = max_cache_bytes() if max_bytes is None else max_bytes
        self.pruned = 0  # rows deleted by the size bound when this file was opened
        self.path = self.directory / DB_NAME
        self.persist = persist
        self.memory_bytes = memory_bytes
        self._mem: OrderedDict[tuple[str, bytes], np.ndarray] = OrderedDict()
        self._mem_used = 0
        self._lock = threading.RLock()
        self._local = threading.local()
        self._generation = 0  # bumped when the DB file is replaced: threads reconnect
        self._ready = False
        self.rebuilds = 0  # how many times a bad file was moved aside (tests read it)
        #: False once the file cannot be written (read-only, disk full): its vectors are still
        #: read, new ones stay in memory. :attr:`status` says why.
        self.writable = True
        self.status = ""

    @classmethod
    def memory(cls) -> EmbeddingCache:
        return cls(persist=False)

    @classmethod
    def private(cls, memory_bytes: int | None = None) -> EmbeddingCache:
        """One visitor's cache on a shared server (:mod:`explorer.embedding.private`): memory
        only, never read from or written to disk, bounded by bytes
        (:data:`explorer.limits.PRIVATE_CACHE_BYTES` unless given)."""
        return cls(
            persist=False, memory_bytes=limits.PRIVATE_CACHE_BYTES if memory_bytes is None else memory_bytes
        )

    # -- public API --------------------------------------------------------------------------
    def get_many(
        self, model_id: str, hashes: Sequence[bytes], dim: int | None = None
    ) -> dict[bytes, np.ndarray]:
        """Vectors found for ``hashes`` (memory first, then disk). Wrong-sized rows are ignored."""
        found: dict[bytes, np.ndarray] = {}
        missing: list[bytes] = []
        with self._lock:
            for h in hashes:
                v = self._mem.get((model_id, h))
                if v is not None and (dim is None or v.shape[0] == dim):
                    self._mem.move_to_end((model_id, h))
                    found[h] = v
                else:
                    missing.append(h)
        if missing and self.persist:
            rows = self._db_call(cache_file.select, model_id, list(dict.fromkeys(missing)))
            for h, blob in rows or ():
                if len(blob) % 4 or (dim is not None and len(blob) != 4 * dim):
                    continue
                v = np.frombuffer(blob, dtype=np.float32)
                if not np.isfinite(v).all():  # a damaged row: a miss, re-embedded and replaced
                    continue
                found[h] = v
                self._remember(model_id, h, v)
        return found

    def put_many(self, model_id: str, hashes: Sequence[bytes], vectors: np.ndarray) -> None:
        """Store ``vectors[i]`` under ``hashes[i]`` (one transaction: all or nothing on disk)."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        rows = []
        for h, v in zip(hashes, vectors, strict=True):
            v = v.copy()
            v.setflags(write=False)
            self._remember(model_id, h, v)
            rows.append((model_id, h, v.tobytes()))
        if rows and self.persist and self.writable:
            self._db_call(cache_file.insert, rows)

    def clear_memory(self) -> None:
        with self._lock:
            self._mem.clear()
            self._mem_used = 0

    def count(self, model_id: str | None = None) -> int:
        """Vectors on disk (for ``model_id`` or all); memory-only caches count memory."""
        if not self.persist:
            with self._lock:
                return sum(1 for k in self._mem if model_id is None or k[0] == model_id)
        n = self._db_call(cache_file.count, model_id)
        return int(n or 0)

    # -- memory level ------------------------------------------------------------------------
    def _remember(self, model_id: str, h: bytes, v: np.ndarray) -> None:
        with self._lock:
            key = (model_id, h)
            old = self._mem.pop(key, None)
            if old is not None:
                self._mem_used -= old.nbytes
            self._mem[key] = v
            self._mem_used += v.nbytes
            while self._mem_used > self.memory_bytes and self._mem:
                _, dropped = self._mem.popitem(last=False)
                self._mem_used -= dropped.nbytes

    # -- disk level --------------------------------------------------------------------------
    def _db_call(self, fn, *args):
        """Run ``fn(conn, *args)``; on a damaged file rebuild once and retry; never raise."""
        if not self.persist:
            return None
        for attempt in range(2):
            try:
                conn = self._conn()
                if conn is None:
                    return None
                return fn(conn, *args)
            except sqlite3.DatabaseError as err:  # includes "file is not a database", malformed
                if cache_file.is_busy(err):
                    _warn(f"embedding cache {self.path} is busy ({err}); continuing without it for now")
                    return None
                # the file is fine, the disk or its permissions are not
                if cache_file.is_write_fault(err, self.path):
                    self._stop_writing(str(err))
                    return None
                if attempt == 0:
                    self._rebuild(f"{type(err).__name__}: {err}")
                else:
                    self._disable(f"still failing after a rebuild ({err})")
            except OSError as err:
                self._disable(str(err))
        return None

    def _conn(self) -> sqlite3.Connection | None:
        with self._lock:
            if not self.persist:
                return None
            if not self._ready:
                self._open_checked()
                if not self.persist:
                    return None
            gen = self._generation
        conn = getattr(self._local, "conn", None)
        if conn is None or getattr(self._local, "gen", -1) != gen:
            if conn is not None:
                conn.close()
            conn = cache_file.connect(self.path, self.writable)
            self._local.conn, self._local.gen = conn, gen
        return conn

    def _stop_writing(self, why: str) -> None:
        """Keep the file and read from it; new vectors stay in memory (read-only, disk full)."""
        with self._lock:
            if self.writable:
                self.writable = False
                self.status = f"the embedding cache is not being written ({why}); its vectors are still used"
                self._close_local()
                self._generation += 1
                _warn(f"embedding cache {self.path}: {self.status}")

    def _open_checked(self) -> None:
        """First use in this process: create or verify the file (schema, integrity)."""
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            self._disable(f"cannot create {self.directory}: {err}")
            return
        for attempt in range(2):
            try:
                problem = self._verify_or_create()
            except sqlite3.DatabaseError as err:
                if cache_file.is_busy(err):
                    self._disable(f"{self.path} is locked by another process ({err})")
                    return
                if cache_file.is_write_fault(err, self.path) and self.writable:
                    self._stop_writing(str(err))  # then verify it read-only: no move, no loss
                    continue
                problem = f"{type(err).__name__}: {err}"
            except PermissionError as err:
                if self.path.exists() and self.writable:
                    self._stop_writing(str(err))
                    continue
                self._disable(str(err))
                return
            except OSError as err:
                self._disable(str(err))
                return
            if problem is None:
                self._ready = True
                self._prune()
                return
            if attempt == 0:
                self._move_aside(problem)
        self._disable("could not create a fresh cache file")

    def _verify_or_create(self) -> str | None:
        conn = cache_file.connect(self.path, self.writable)
        try:
            return cache_file.create_or_check(conn) if self.writable else cache_file.verify(conn)
        finally:
            conn.close()

    def _prune(self) -> None:
        """Delete the least recently used rows if they take more than ``max_bytes`` on disk."""
        if not self.max_bytes or not self.writable:
            return
        self.pruned += int(self._db_call(cache_file.delete_oldest, self.max_bytes) or 0)

    def _rebuild(self, problem: str) -> None:
        with self._lock:
            self._close_local()
            self._move_aside(problem)
            self._ready = False
            self._generation += 1

    def _move_aside(self, problem: str) -> None:
        self.rebuilds += 1
        stamp = time.strftime("%Y%m%d-%H%M%S") + f".{time.time_ns() % 10**9:09d}"  # two in a second
        target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}-{os.getpid()}")
        try:
            if self.path.exists():
                os.replace(self.path, target)
            for suffix in ("-wal", "-shm", "-journal"):
                side = self.path.with_name(self.path.name + suffix)
                if side.exists():
                    side.unlink()
            _warn(
                f"embedding cache {self.path} was unusable ({problem}); moved it to {target.name} and rebuilt it"
            )
            self._prune_aside()
        except OSError as err:
            self._disable(f"cannot move the damaged cache aside: {err}")

    def _prune_aside(self) -> None:
        """Keep the newest :data:`KEEP_ASIDE` files moved aside (to look at), delete older ones."""
        aside = sorted(self.directory.glob(f"{self.path.name}.corrupt-*"), key=lambda f: f.stat().st_mtime)
        for old in aside[:-KEEP_ASIDE] if len(aside) > KEEP_ASIDE else []:
            with contextlib.suppress(OSError):
                old.unlink()

    def _disable(self, why: str) -> None:
        if self.persist:
            _warn(f"embedding cache on disk disabled ({why}); vectors are kept in memory only")
        self.persist = False

    def _close_local(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def close(self) -> None:
        """Close this thread's connection (others close when their thread ends)."""
        self._close_local()


def _warn(message: str) -> None:
    warnings.warn(message, CacheWarning, stacklevel=3)


_caches: dict[tuple[Path, bool], EmbeddingCache] = {}
_caches_lock = threading.Lock()


def get_cache(directory: str | Path | None = None, *, persist: bool = True) -> EmbeddingCache:
    """The process-wide cache for ``directory`` (default: :func:`default_cache_dir`, read now,
    so changing ``CHUNK_EXPLORER_CACHE`` selects another cache)."""
    path = (Path(directory).expanduser() if directory is not None else default_cache_dir()).resolve()
    with _caches_lock:
        cache = _caches.get((path, persist))
        if cache is None:
            cache = _caches[(path, persist)] = EmbeddingCache(path, persist=persist)
        return cache
