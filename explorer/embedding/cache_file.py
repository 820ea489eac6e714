"""The embedding cache's SQLite file: its table layout and version, the statements that read,
write, count and prune rows, and how SQLite says that the disk (not the file) is at fault.

Why apart from :mod:`explorer.embedding.cache`: that module decides what happens when the file
is damaged, locked or read-only (rebuilt, read only, memory only); this one only speaks SQL.

Layout: ``meta`` (``schema`` → :data:`SCHEMA_VERSION`) and ``vectors`` (model, text hash,
float32 bytes, the day the row was last used). A file of version 1 (no day) is upgraded in place.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

#: Bump when the table layout changes: an older file is then moved aside and rebuilt
#: (version 1, the same table without the ``used`` day, is upgraded in place).
SCHEMA_VERSION = 2
#: Pruning deletes least recently used rows down to this share of the bound.
PRUNE_TO = 0.8
#: Page size of a new cache file (bytes).
PAGE_SIZE = 16384
_SQL_BATCH = 500  # keys per SELECT ... IN (...)
#: SQLite's words for a file that is fine but cannot be written (permissions, a full disk).
_WRITE_FAULTS = ("readonly", "read-only", "disk is full")


def today() -> int:
    return int(time.time() // 86400)


def connect(path: Path, writable: bool) -> sqlite3.Connection:
    """A connection to the file at ``path``; read-only and immutable unless ``writable``."""
    if not writable:  # read what is there; nothing (not even -shm) is written
        uri = f"{path.resolve().as_uri()}?mode=ro&immutable=1"
        return sqlite3.connect(uri, uri=True, timeout=10.0, isolation_level=None)
    if not path.exists():  # created private: the vectors tell what was embedded
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    conn = sqlite3.connect(path, timeout=10.0, isolation_level=None)
    conn.execute("PRAGMA busy_timeout=10000")
    return conn


def create_or_check(conn: sqlite3.Connection) -> str | None:
    """Create the tables in an empty file, upgrade a version 1 file, then :func:`verify`:
    None when the file is usable, else what is wrong with it."""
    # 16 KB pages hold a 384-d vector row in ~1.9 KB; SQLite's 4 KB default took ~4.7 KB
    # (measured). Only a new file takes it: it must come before the first write.
    conn.execute(f"PRAGMA page_size={PAGE_SIZE}")
    conn.execute("PRAGMA journal_mode=WAL")
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not tables:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute(
            "CREATE TABLE IF NOT EXISTS vectors (model TEXT NOT NULL, hash BLOB NOT NULL, "
            "vec BLOB NOT NULL, used INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (model, hash)) "
            "WITHOUT ROWID"
        )
        conn.execute(
            "INSERT OR REPLACE INTO meta VALUES ('schema', ?)",
            (str(SCHEMA_VERSION),),
        )
        conn.execute("COMMIT")
        return None
    if not {"meta", "vectors"} <= tables:
        return f"unexpected tables {sorted(tables)}"
    row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
    if row is not None and row[0] == "1":  # same table, no day yet: upgrade in place
        conn.execute("BEGIN IMMEDIATE")
        cols = {r[1] for r in conn.execute("PRAGMA table_info(vectors)")}
        if "used" not in cols:
            conn.execute("ALTER TABLE vectors ADD COLUMN used INTEGER NOT NULL DEFAULT 0")
        conn.execute("UPDATE meta SET value=? WHERE key='schema'", (str(SCHEMA_VERSION),))
        conn.execute("COMMIT")
        row = (str(SCHEMA_VERSION),)
    if row is None or row[0] != str(SCHEMA_VERSION):
        return f"schema version {row[0] if row else None!r}, expected {SCHEMA_VERSION}"
    return verify(conn)


def verify(conn: sqlite3.Connection) -> str | None:
    """None when the tables, the version and SQLite's quick check are right, else what is wrong."""
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if not {"meta", "vectors"} <= tables:
        return f"unexpected tables {sorted(tables)}"
    row = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
    if row is None or row[0] != str(SCHEMA_VERSION):
        return f"schema version {row[0] if row else None!r}, expected {SCHEMA_VERSION}"
    check = conn.execute("PRAGMA quick_check").fetchone()
    if check is None or check[0] != "ok":
        return f"integrity check failed: {check[0] if check else 'no answer'}"
    return None


@contextmanager
def _transaction(conn: sqlite3.Connection) -> Iterator[None]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


def delete_oldest(conn: sqlite3.Connection, max_bytes: int) -> int:
    """Delete the least recently used rows down to :data:`PRUNE_TO` of ``max_bytes`` if the rows
    take more than that on disk, and compact the file; how many rows went."""
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    used = (
        conn.execute("PRAGMA page_count").fetchone()[0] - conn.execute("PRAGMA freelist_count").fetchone()[0]
    ) * page
    if used <= max_bytes:
        return 0
    rows = conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
    drop = rows - int(rows * PRUNE_TO * max_bytes / used)
    if drop <= 0:
        return 0
    with _transaction(conn):
        conn.execute(
            "DELETE FROM vectors WHERE (model, hash) IN "
            "(SELECT model, hash FROM vectors ORDER BY used LIMIT ?)",
            (drop,),
        )
    conn.execute("VACUUM")  # give the space back to the disk (rare: only past the bound)
    return drop


def select(conn: sqlite3.Connection, model_id: str, hashes: list[bytes]) -> list[tuple[bytes, bytes]]:
    """The rows found; rows last used before today are marked used today (what pruning
    goes by), in one statement per batch and only where the day changed."""
    out: list[tuple[bytes, bytes]] = []
    day = today()
    for i in range(0, len(hashes), _SQL_BATCH):
        part = hashes[i : i + _SQL_BATCH]
        marks = ",".join("?" * len(part))
        rows = conn.execute(
            f"SELECT hash, vec, used FROM vectors WHERE model=? AND hash IN ({marks})",
            (model_id, *part),
        ).fetchall()
        out.extend((h, v) for h, v, _ in rows)
        stale = [h for h, _, used in rows if used < day]
        if stale:
            try:
                conn.execute(
                    f"UPDATE vectors SET used=? WHERE model=? AND hash IN ({','.join('?' * len(stale))})",
                    (day, model_id, *stale),
                )
            except sqlite3.OperationalError as err:  # busy: the day waits for the next read
                if not is_busy(err):
                    raise
    return out


def insert(conn: sqlite3.Connection, rows: Iterable[tuple[str, bytes, bytes]]) -> None:
    """Write ``(model, hash, vector bytes)`` rows in one transaction, used today."""
    with _transaction(conn):
        day = today()
        conn.executemany(
            "INSERT OR REPLACE INTO vectors (model, hash, vec, used) VALUES (?, ?, ?, ?)",
            ((m, h, v, day) for m, h, v in rows),
        )


def count(conn: sqlite3.Connection, model_id: str | None) -> int:
    if model_id is None:
        return conn.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]
    return conn.execute("SELECT COUNT(*) FROM vectors WHERE model=?", (model_id,)).fetchone()[0]


def is_busy(err: sqlite3.DatabaseError) -> bool:
    return isinstance(err, sqlite3.OperationalError) and "locked" in str(err).lower()


def is_write_fault(err: sqlite3.DatabaseError, path: Path) -> bool:
    """A fault of the disk or its permissions, not of the file (which is then kept). "Unable to
    open" counts only where a regular file is there (a folder in its place is moved aside)."""
    if not isinstance(err, sqlite3.OperationalError):
        return False
    msg = str(err).lower()
    return any(w in msg for w in _WRITE_FAULTS) or ("unable to open" in msg and path.is_file())
