"""Everything stays on this machine: hub downloads are switched off for the process
(:func:`offline`), and what is derived from a model or a text (the embedding cache, rebuilt
models, ONNX graphs) lives under one local cache folder (:func:`default_cache_dir`,
:func:`model_cache_root`), where a finished build lands with one race-safe rename
(:func:`publish`).

Why a module of its own: the model registry, the rebuilt e5 folder and the embedding cache
all stand on these few functions, so they sit below all of them.
"""

from __future__ import annotations

import os
from pathlib import Path

from explorer.errors import ModelError


def offline() -> None:
    """Forbid hub downloads for this process (set before transformers is imported), and let
    torch's idle OpenMP threads sleep rather than spin (set before torch is imported): on a
    shared server spinning threads take the cores page scripts need. Measured with bfloat16
    e5 beside a busy Python thread: 150 chunks in 4.6 s instead of 6.8–8.6 s, and that thread
    ran 1.5× faster; alone 2.8 s instead of 2.4–2.6 s (``bench_embed.py``)."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


def default_cache_dir() -> Path:
    """``$CHUNK_EXPLORER_CACHE`` if set, else ``~/.cache/chunk-explorer`` (XDG_CACHE_HOME honoured)."""
    env = os.environ.get("CHUNK_EXPLORER_CACHE")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or "~/.cache"
    return Path(base).expanduser() / "chunk-explorer"


def model_cache_root() -> Path:
    """Where derived models live: ``$CHUNK_EXPLORER_MODEL_CACHE``, else ``models/`` in the cache folder."""
    env = os.environ.get("CHUNK_EXPLORER_MODEL_CACHE")
    if env:
        return Path(env).expanduser()
    return default_cache_dir() / "models"


def make_model_root() -> Path:
    """:func:`model_cache_root`, created if needed (ModelError when it cannot be)."""
    root = model_cache_root()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ModelError(f"cannot create the model cache folder ({err.strerror})") from None
    return root


def publish(tmp: Path, target: Path) -> None:
    """Move a finished build into place; a concurrent process that won the race is kept."""
    try:
        tmp.rename(target)
    except OSError:
        if not target.exists():
            raise


def folder_fingerprint(folder: Path, salt: str) -> str:
    """A short id of the model in ``folder`` and what ``salt`` names (a library version): the
    names, sizes and times of its configs and weights, so a build made from other files or
    by another library version is never reused."""
    import hashlib

    h = hashlib.sha256(f"{folder.resolve()};{salt};".encode())
    for f in sorted(folder.rglob("*")):
        if f.is_file() and f.suffix in (".json", ".safetensors", ".bin"):
            st = f.stat()
            h.update(f"{f.relative_to(folder)}:{st.st_size}:{int(st.st_mtime)};".encode())
    return h.hexdigest()[:16]
