"""Documents: the visitor's sources (samples, uploads) in the session, loaded with the clean-up.

Uploads are also kept on the server (:mod:`explorer.documents.uploads`, unless switched off), so
that the link, which names them by their hash (:mod:`pages.ui.url`), reopens them after a reload.
"""

from __future__ import annotations

from collections.abc import Sequence

from explorer.documents import uploads
from explorer.documents.cleanup import Cleanup
from explorer.documents.document import Document, repeats
from pages.ui.compute import load_sample, load_upload, warm
from pages.ui.safe import named_controls
from pages.ui.state import Source, W, session

#: URL short name -> (Cleanup field, toggle label, help).
CLEANUP_FLAGS = {
    "blank": ("collapse_blank_lines", "Collapse blank lines", "Runs of blank lines become one blank line."),
    "hyphen": (
        "join_hyphenated",
        "Join hyphenated words",
        "Words split with a hyphen at a PDF line end are joined again.",
    ),
    "headers": (
        "drop_headers_footers",
        "Drop page headers/footers",
        "Lines repeated at the top or bottom of most PDF pages are removed.",
    ),
}


def cleanup_steps(report: Sequence[str]) -> list[str]:
    """A document's clean-up report (``"join_hyphenated: joined 4 words…"``) as the toggles say
    it, in their order ("Join hyphenated words: joined 4 words…"); a step that does not apply
    to the document (headers and footers of a text without pages) is left out."""
    said = dict(step.split(": ", 1) for step in report if ": " in step)
    return [
        f"{label}: {said[field]}"
        for field, label, _ in CLEANUP_FLAGS.values()
        if field in said and not said[field].startswith("skipped")
    ]


def add_sample(name: str) -> None:
    key = f"sample:{name}"
    if any(s["key"] == key for s in session.sources):
        return
    session.sources.append(
        {
            "key": key,
            "name": name,
            "kind": "sample",
            "sample": name,
            "data": None,
            "digest": "",
            "kept": False,
        }
    )


def keep_upload(name: str, data: bytes) -> str | None:
    """Keep an uploaded file (a document or a question file) on the server when the store is on;
    its full hash, or None (the store is off, or it could not keep the file: then a notice says a
    reload or a link will not reopen it)."""
    store = uploads.default_store()
    digest = store.put(name, data) if store is not None else None
    if store is not None and digest is None:
        session.notices.append(
            f"{name} is not kept on this server (over the {store.max_bytes // 2**20} MB kept for uploads, "
            "or the folder cannot be written): a reload or a link will not reopen it."
        )
    return digest


def add_upload(name: str, data: bytes) -> str:
    """Add an uploaded file (and keep it on the server when the store is on); its source key.
    The same bytes as an upload already loaded are not added again, and a notice says so: the
    link names an upload by its hash, so a second name for them would not come back."""
    digest = uploads.content_hash(data)
    same = next((s for s in session.sources if s["kind"] == "upload" and digest.startswith(s["digest"])), None)
    if same is not None:
        if same["name"] != uploads.clean_name(name):
            session.notices.append(f"{name} has the same bytes as {same['name']}, already loaded: not added again.")
        return same["key"]
    kept = keep_upload(name, data) is not None
    return _add_upload_source(uploads.clean_name(name), data, digest, kept)


def take_uploads(widget_key: str) -> None:
    """The uploader's files become documents, the last one the active one, and a fresh empty
    uploader takes its place (the document list is the source of truth).

    A callback: it runs at the start of the run the upload triggers, before any page's code and
    whatever page that run is for, so the upload is taken in even when the user has already
    clicked another page."""
    files = session.widget(widget_key) or []
    for f in files:
        session.doc_key = add_upload(f.name, f.getvalue())
    if files:
        del session.chunk_sel
        session.uploader_gen += 1


def add_kept_upload(kept: uploads.Kept) -> str:
    """Add an upload read back from the server's store (a link or a reload); its source key."""
    return _add_upload_source(kept.name, kept.data, kept.digest, True)


def _add_upload_source(name: str, data: bytes, full_hash: str, kept: bool) -> str:
    digest = full_hash[: uploads.REF_CHARS]
    key = f"upload:{digest}:{name}"
    if not any(s["key"] == key for s in session.sources):
        session.sources.append(
            {
                "key": key,
                "name": name,
                "kind": "upload",
                "sample": "",
                "data": data,
                "digest": digest,
                "kept": kept,
            }
        )
    return key


def kept_uploads() -> list[str]:
    """The link names of the uploads kept on the server, in order (each once)."""
    return list(dict.fromkeys(s["digest"] for s in session.sources if s["kind"] == "upload" and s["kept"]))


def remove_source(key: str) -> None:
    session.sources = [s for s in session.sources if s["key"] != key]
    if session.doc_key == key:
        session.doc_key = session.sources[0]["key"] if session.sources else None


def sample_names() -> list[str]:
    """The samples among the sources, in order."""
    return [s["sample"] for s in session.sources if s["kind"] == "sample"]


def set_samples() -> None:
    """Callback of the samples multiselect: the sources follow what it holds."""
    chosen = session.widget(W.SAMPLES)
    for s in [s for s in session.sources if s["kind"] == "sample" and s["sample"] not in chosen]:
        remove_source(s["key"])
    for name in chosen:
        add_sample(name)
    if chosen and not current_source():
        session.doc_key = f"sample:{chosen[-1]}"


def open_source(key: str) -> None:
    """Make ``key`` the document the pages work on (from its first chunk)."""
    session.doc_key = key
    del session.chunk_sel


def cleanup() -> Cleanup:
    return Cleanup(**session.cleanup)


def _clean_tuple() -> tuple:
    c = cleanup()
    return (c.collapse_blank_lines, c.join_hyphenated, c.drop_headers_footers)


def load(source: Source) -> tuple[Document | None, str]:
    """The source's document with the current clean-up, or (None, the loader's message)."""
    if source["kind"] == "sample":
        return load_sample(source["sample"], _clean_tuple())
    return load_upload(source["digest"], source["name"], _clean_tuple(), source["data"])


def loaded() -> list[tuple[Source, Document]]:
    """Every source that loads, with its document, in order, each text once (failed ones and
    repeated texts are reported on the Documents page). Loading a new set of documents starts
    embedding them in the background."""
    out = loaded_as_is()
    warm([d for _, d in out])
    return out


def loaded_as_is() -> list[tuple[Source, Document]]:
    """:func:`loaded` without starting anything: for what only reads the documents (the
    sidebar's model warning), on a page that has called :func:`loaded` already."""
    pairs = _loaded_pairs()
    twins = repeats([d for _, d in pairs])
    return [p for i, p in enumerate(pairs) if i not in twins]


def duplicates() -> dict[str, str]:
    """Source key -> the name of an earlier source with the same text: such a source is shown
    but left out of the corpus (:func:`explorer.documents.document.repeats`)."""
    pairs = _loaded_pairs()
    return {pairs[i][0]["key"]: pairs[j][1].name for i, j in repeats([d for _, d in pairs]).items()}


def _loaded_pairs() -> list[tuple[Source, Document]]:
    return [(src, doc) for src in session.sources if (doc := load(src)[0]) is not None]


def documents() -> list[Document]:
    """Every document that loads, in order (see :func:`loaded`)."""
    return [d for _, d in loaded()]


def current_source() -> Source | None:
    key = session.doc_key
    for s in session.sources:
        if s["key"] == key:
            return s
    return None


def source_key_of(doc_id: str) -> str | None:
    for s in session.sources:
        doc, _ = load(s)
        if doc is not None and doc.id == doc_id:
            return s["key"]
    return None


def doc_label(source: Source, doc: Document) -> str:
    kind = {"pdf": "PDF", "markdown": "Markdown", "text": "text"}.get(doc.kind, doc.kind)
    pages = f", {doc.n_pages} p." if doc.n_pages else ""
    return named_controls(f"{doc.name} ({kind}{pages})")  # a select box's option: plain text, bidi obeyed
