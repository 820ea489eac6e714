"""Uploaded files kept on the server, so a reload or a link on the same server opens them again.

Each file is stored once, under its content hash (sha256, hex): ``<hash>.bin`` holds the bytes
and ``<hash>.json`` its original file name and size. A link names a file by the first 16 to 64
hex digits of its hash (:func:`valid_ref`); looking one up re-hashes the bytes, so a damaged or
swapped file is never served. Files are created ``0600`` in a ``0700`` folder.

Bounds: the stored bytes stay under ``CHUNK_EXPLORER_UPLOADS_MAX_MB`` (default
:data:`DEFAULT_MAX_MB` MB; the least recently used files go first) and a file unused for
``CHUNK_EXPLORER_UPLOADS_DAYS`` days (default :data:`DEFAULT_DAYS`) is dropped.
``CHUNK_EXPLORER_KEEP_UPLOADS=0`` switches the store off (a deployment that must not keep
uploads); the folder is ``uploads/`` in the cache folder, or ``CHUNK_EXPLORER_UPLOADS_DIR``.

Why a module of its own: the app keeps a visitor's view across reloads with it, and nothing
here knows about the app (standard library only, plus the cache folder's location).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from explorer.models.local import default_cache_dir

#: Default bound on the kept uploads, in MB (``CHUNK_EXPLORER_UPLOADS_MAX_MB``; 0 keeps none).
DEFAULT_MAX_MB = 512
#: Default age, in days since last use, past which an upload is dropped (``CHUNK_EXPLORER_UPLOADS_DAYS``).
DEFAULT_DAYS = 30
#: Longest file name kept (characters); a longer one is cut.
MAX_NAME_CHARS = 200
#: What a link may carry to name an upload: 16 to 64 lowercase hex digits of its sha256.
REF_RE = re.compile(r"[0-9a-f]{16,64}")
#: Hex digits of the hash that links carry.
REF_CHARS = 32

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_LOCK = threading.Lock()


def valid_ref(value: object) -> bool:
    """Whether ``value`` can name an upload (16 to 64 lowercase hex digits)."""
    return isinstance(value, str) and REF_RE.fullmatch(value) is not None


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def clean_name(name: str) -> str:
    """The file name as kept: control characters dropped, at most :data:`MAX_NAME_CHARS`
    characters, cut in its stem so that its extension stays (the kind of a file is read from
    it: a 300-character "….md" cut to 200 loaded as plain text). Only a name: the store's own
    files are named by hash; the app escapes it when it shows it."""
    cleaned = _CONTROL.sub("", str(name)).strip() or "upload"
    if len(cleaned) <= MAX_NAME_CHARS:
        return cleaned
    stem, dot, suffix = cleaned.rpartition(".")
    if not dot or not stem or len(suffix) > 10:
        return cleaned[:MAX_NAME_CHARS]
    return stem[: MAX_NAME_CHARS - len(suffix) - 1].rstrip() + "." + suffix


@dataclass(frozen=True)
class Kept:
    """An upload read back from the store."""

    digest: str  # the full sha256, hex
    name: str
    data: bytes


def _env_number(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    try:
        value = float(raw) if raw else default
    except ValueError:
        return default
    return value if value >= 0 else default


class UploadStore:
    """Uploads in ``directory``, at most ``max_bytes`` in all, each dropped ``max_age_s`` after its
    last use. Safe to share between threads; writes land with one atomic rename."""

    def __init__(
        self, directory: str | Path, max_bytes: int, max_age_s: float = DEFAULT_DAYS * 86400
    ) -> None:
        self.directory = Path(directory).expanduser()
        self.max_bytes = int(max_bytes)
        self.max_age_s = float(max_age_s)

    # -- writing ---------------------------------------------------------------------------------
    def put(self, name: str, data: bytes) -> str | None:
        """Keep ``data`` under its hash with its file name; the hash, or None when it cannot be
        kept (larger than the whole budget, or the folder cannot be written)."""
        digest = content_hash(data)
        if len(data) > self.max_bytes:
            return None
        meta = json.dumps({"name": clean_name(name), "size": len(data)}, ensure_ascii=False).encode()
        try:
            self._make_dir()
            with _LOCK:
                if self._blob(digest).exists():
                    os.utime(self._blob(digest))  # in use again: the last to be dropped
                else:
                    self._write(self._blob(digest), data)
                self._write(self._meta(digest), meta)
                self._evict(keep=digest)
        except OSError:
            return None
        return digest

    def _make_dir(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        with contextlib.suppress(OSError):
            os.chmod(self.directory, 0o700)

    def _write(self, path: Path, data: bytes) -> None:
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".tmp-")  # created 0600
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    # -- reading ---------------------------------------------------------------------------------
    def get(self, ref: str) -> Kept | None:
        """The upload whose hash starts with ``ref`` (see :func:`valid_ref`), or None: not valid,
        unknown, named by more than one hash, or bytes that no longer match their hash."""
        if not valid_ref(ref):
            return None
        try:
            found = [p for p in self.directory.glob(f"{ref}*.bin") if REF_RE.fullmatch(p.stem)]
            if len(found) != 1:
                return None
            digest = found[0].stem
            data = found[0].read_bytes()
            meta = json.loads(self._meta(digest).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if content_hash(data) != digest or not isinstance(meta, dict):
            return None
        now = time.time()
        with contextlib.suppress(OSError):
            os.utime(found[0], (now, now))  # in use: the last to be dropped
        return Kept(digest, clean_name(str(meta.get("name") or "upload")), data)

    # -- bounds ----------------------------------------------------------------------------------
    def entries(self) -> list[tuple[float, int, str]]:
        """(last use, size, hash) of every kept upload, oldest first."""
        out = []
        with contextlib.suppress(OSError):
            for p in self.directory.glob("*.bin"):
                if REF_RE.fullmatch(p.stem) and len(p.stem) == 64:
                    with contextlib.suppress(OSError):
                        st = p.stat()
                        out.append((st.st_mtime, st.st_size, p.stem))
        return sorted(out)

    def total_bytes(self) -> int:
        return sum(size for _, size, _ in self.entries())

    def _evict(self, keep: str = "") -> None:
        """Drop uploads unused for ``max_age_s``, then the least recently used until the rest fit."""
        entries = self.entries()
        total = sum(size for _, size, _ in entries)
        now = time.time()
        for used, size, digest in entries:
            if digest == keep:
                continue
            if total > self.max_bytes or now - used > self.max_age_s:
                self.forget(digest)
                total -= size

    def forget(self, digest: str) -> None:
        for path in (self._blob(digest), self._meta(digest)):
            with contextlib.suppress(OSError):
                path.unlink()

    def _blob(self, digest: str) -> Path:
        return self.directory / f"{digest}.bin"

    def _meta(self, digest: str) -> Path:
        return self.directory / f"{digest}.json"


def keeping_uploads() -> bool:
    """False when ``CHUNK_EXPLORER_KEEP_UPLOADS`` is 0, no, off or false."""
    return os.environ.get("CHUNK_EXPLORER_KEEP_UPLOADS", "1").strip().lower() not in (
        "0",
        "no",
        "off",
        "false",
    )


def default_store() -> UploadStore | None:
    """The store the environment describes (read now), or None when uploads are not kept."""
    if not keeping_uploads():
        return None
    directory = os.environ.get("CHUNK_EXPLORER_UPLOADS_DIR") or default_cache_dir() / "uploads"
    max_bytes = int(_env_number("CHUNK_EXPLORER_UPLOADS_MAX_MB", DEFAULT_MAX_MB) * 2**20)
    if max_bytes <= 0:
        return None
    days = _env_number("CHUNK_EXPLORER_UPLOADS_DAYS", DEFAULT_DAYS)
    return UploadStore(directory, max_bytes, days * 86400 if days > 0 else DEFAULT_DAYS * 86400)
