"""What a corpus is: files, folders (every file under them) and glob patterns, plus bundled
samples, listed once in a fixed order without reading a byte; each entry is read when its turn
comes.

Why a module of its own: the listing decides the order of the documents (and so the tie rule
of the rankings), and the runner, both engines and the CLI read it the same way.
"""

from __future__ import annotations

import glob
import hashlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from explorer.documents.cleanup import Cleanup
from explorer.documents.document import Document
from explorer.errors import LoadError, ParamError

_GLOB_CHARS = "*?["


@dataclass(frozen=True, slots=True)
class Source:
    """One document of the corpus: ``n`` its place, ``name`` its file name (what question files
    call it, as :attr:`Document.name`), ``path`` the file, or ``sample`` a bundled sample."""

    n: int
    name: str
    path: str = ""
    sample: str = ""

    @property
    def key(self) -> str:
        """How the results file names it (the absolute path, or ``sample:NAME``)."""
        return self.path or f"sample:{self.sample}"

    def stat(self) -> tuple[int, int]:
        """(size, modification time in ns), to tell that a file changed since it was finished;
        (0, 0) for a sample."""
        if not self.path:
            return 0, 0
        try:
            st = os.stat(self.path)
        except OSError as err:
            raise LoadError(f"cannot read {self.path!r}: {err.strerror or err}") from None
        return st.st_size, st.st_mtime_ns

    def read(self) -> bytes:
        """The file's bytes (size checked first, as the loaders do)."""
        if self.sample:
            from explorer.documents.samples import sample_bytes

            return sample_bytes(self.sample)[1]
        from explorer.documents.loaders import _check_size

        p = Path(self.path)
        try:
            if not p.is_file():
                raise LoadError(f"{self.path!r} is not a file")
            _check_size(p.stat().st_size, p.name)
            return p.read_bytes()
        except OSError as err:
            raise LoadError(f"cannot read {self.path!r}: {err.strerror or err}") from None

    def load(self, cleanup: Cleanup) -> tuple[Document, str]:
        """The document and the sha256 of the file's bytes."""
        from explorer.documents.loaders import load_bytes

        data = self.read()
        return load_bytes(data, self.name, cleanup), hashlib.sha256(data).hexdigest()


def _is_hidden(path: Path, top: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(top).parts)


def _files_of(item: str) -> list[str]:
    """The files an item names: a folder gives every file under it that is not hidden (no part
    of its path starts with a dot), sorted; a pattern its matches (``**`` for any depth)."""
    p = Path(item)
    if p.is_dir():
        top = p
        found = sorted(str(f) for f in top.rglob("*") if f.is_file() and not _is_hidden(f, top))
        if not found:
            raise ParamError(f"--corpus {item!r}: the folder holds no files")
        return found
    if p.exists():
        return [item]
    if any(c in item for c in _GLOB_CHARS):
        found = sorted(f for f in glob.glob(item, recursive=True) if os.path.isfile(f))
        if not found:
            raise ParamError(f"--corpus {item!r}: no file matches this pattern")
        return found
    raise LoadError(f"cannot read {item!r}: No such file or directory")


def expand_paths(items: Iterable[str], skip: Iterable[str] = ()) -> list[str]:
    """Every file the ``--corpus`` items name, in order, each once, as given or found (``skip``:
    paths to leave out, such as the results file and its cache folder)."""
    skipped = {os.path.abspath(s) for s in skip}
    seen: set[str] = set()
    out = []
    for item in items:
        for f in _files_of(item):
            a = os.path.abspath(f)
            if a in seen or a in skipped or any(a.startswith(s + os.sep) for s in skipped):
                continue
            seen.add(a)
            out.append(f)
    return out


def list_sources(paths: Sequence[str], samples: Sequence[str] = ()) -> list[Source]:
    """The corpus in order: the files (already expanded), then the samples."""
    from explorer.documents.loaders import file_name
    from explorer.documents.samples import sample_bytes

    out = [Source(n, file_name(p), path=os.path.abspath(p)) for n, p in enumerate(paths)]
    for name in samples:
        filename, _ = sample_bytes(name)  # an unknown sample fails now
        out.append(Source(len(out), filename, sample=filename))
    return out
