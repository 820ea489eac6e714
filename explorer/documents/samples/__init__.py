"""Bundled sample documents, so a first-time user sees chunks within seconds.

All three are original texts written for Chunk Explorer: a French business report (plain
text with tricky sentence boundaries), a Markdown guide (front matter, three heading levels,
lists, two tables, code fences, one holding a ``#`` comment) and a six-page PDF handbook
(running header and footer, words hyphenated at line ends) made by ``make_pdf.py``.
"""

from __future__ import annotations

from importlib import resources

from explorer.documents.cleanup import Cleanup
from explorer.documents.document import Document
from explorer.errors import LoadError

#: Display name → file name. The names are stable: the app puts them in shared URLs.
SAMPLES: dict[str, str] = {
    "Rapport annuel (French report, text)": "rapport_annuel.txt",
    "Tidepool guide (Markdown)": "guide.md",
    "Plant operations handbook (PDF, 6 pages)": "handbook.pdf",
}
#: The sample the app opens on.
DEFAULT_SAMPLE = "Plant operations handbook (PDF, 6 pages)"

_NO_CLEANUP = Cleanup()


def sample_bytes(name: str) -> tuple[str, bytes]:
    """(file name, bytes) of a sample given its display name or its file name."""
    filename = SAMPLES.get(name, name)
    if filename not in SAMPLES.values():
        files, shown = ", ".join(map(repr, SAMPLES.values())), ", ".join(map(repr, SAMPLES))
        raise LoadError(f"unknown sample {name!r}; choose one of {files} (or by name: {shown})")
    return filename, resources.files(__package__).joinpath(filename).read_bytes()


def load_sample(name: str, cleanup: Cleanup = _NO_CLEANUP) -> Document:
    """Load a bundled sample (display name or file name) like an uploaded file."""
    from explorer.documents.loaders import load_bytes

    filename, data = sample_bytes(name)
    return load_bytes(data, filename, cleanup)


#: Questions about the samples, with answers quoted from them (``questions.jsonl``).
QUESTIONS_FILE = "questions.jsonl"


def sample_questions(loaded: set[str] | None = None) -> bytes:
    """The bundled question file (JSONL), keeping only the questions whose ``document`` is in
    ``loaded`` (file names) when given: a question about a sample that is not loaded could not
    be located."""
    import json

    raw = resources.files(__package__).joinpath(QUESTIONS_FILE).read_bytes()
    if loaded is None:
        return raw
    lines = [
        ln for ln in raw.decode("utf-8").splitlines() if ln.strip() and json.loads(ln)["document"] in loaded
    ]
    return "".join(ln + "\n" for ln in lines).encode("utf-8")
