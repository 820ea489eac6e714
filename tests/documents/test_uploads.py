"""Uploads survive a reload: the server keeps them by content hash (bounded, 0600 files), the link
names them (``up=``), and a new session (F5, or the link in another browser) reopens them, with
the typed and kept questions. Links are untrusted: a bad value is one escaped notice."""

from __future__ import annotations

import os
import stat
import time

import pytest

from explorer.documents import uploads
from explorer.documents.uploads import UploadStore, content_hash, default_store, valid_ref
from tests.app.test_app_pages import ask, fake_embedder, ok, start  # noqa: F401  (fake_embedder: autouse)

NOTES = b"# Notes\n\nThe pumps are checked every morning before the first shift.\n"


# -- the store ----------------------------------------------------------------------------------
def test_put_and_get_by_hash_prefix_with_private_files(tmp_path):
    store = UploadStore(tmp_path / "up", max_bytes=10_000)
    digest = store.put("notes.md", NOTES)
    assert digest == content_hash(NOTES)
    kept = store.get(digest[:16])
    assert kept is not None and (kept.name, kept.data, kept.digest) == ("notes.md", NOTES, digest)
    assert store.get(digest) == kept
    assert stat.S_IMODE(os.stat(tmp_path / "up").st_mode) == 0o700
    for p in (tmp_path / "up").iterdir():
        assert stat.S_IMODE(p.stat().st_mode) == 0o600, p.name
    assert store.put("again.md", NOTES) == digest  # stored once; the name follows the last upload
    assert len(list((tmp_path / "up").glob("*.bin"))) == 1
    assert store.get(digest[:16]).name == "again.md"


@pytest.mark.parametrize(
    "ref", ["", "abc", "0123456789ABCDEF", "../../etc/passwd", "*" * 16, "0" * 65, None, 12345]
)
def test_bad_refs_are_refused_without_touching_the_disk(tmp_path, ref):
    store = UploadStore(tmp_path, max_bytes=1000)
    store.put("a.txt", b"hello")
    assert not valid_ref(ref)
    assert store.get(ref) is None


def test_unknown_tampered_and_ambiguous_refs_give_nothing(tmp_path):
    store = UploadStore(tmp_path, max_bytes=10_000)
    assert store.get("0123456789abcdef") is None
    digest = store.put("a.txt", b"hello")
    (tmp_path / f"{digest}.bin").write_bytes(b"swapped")  # bytes that no longer match their hash
    assert store.get(digest) is None
    a, b = "ab" * 8 + "0" * 48, "ab" * 8 + "1" * 48  # two hashes sharing a 16-digit prefix
    for d in (a, b):
        (tmp_path / f"{d}.bin").write_bytes(b"x")
    assert store.get("ab" * 8) is None


def test_the_byte_budget_drops_the_least_recently_used(tmp_path):
    store = UploadStore(tmp_path, max_bytes=250)
    first = store.put("1.txt", b"1" * 100)
    second = store.put("2.txt", b"2" * 100)
    old = time.time() - 100
    os.utime(tmp_path / f"{first}.bin", (old, old))
    os.utime(tmp_path / f"{second}.bin", (old + 50, old + 50))
    assert store.get(first) is not None  # used now: the second is the oldest
    third = store.put("3.txt", b"3" * 100)
    assert store.get(second) is None
    assert store.get(first) is not None and store.get(third) is not None
    assert store.total_bytes() <= 250
    assert store.put("big.txt", b"x" * 251) is None  # larger than the whole budget: not kept


def test_old_uploads_expire(tmp_path):
    store = UploadStore(tmp_path, max_bytes=10_000, max_age_s=60)
    first = store.put("1.txt", b"one")
    old = time.time() - 3600
    os.utime(tmp_path / f"{first}.bin", (old, old))
    store.put("2.txt", b"two")
    assert store.get(first) is None


def test_the_environment_sizes_or_switches_off_the_store(monkeypatch, tmp_path):
    monkeypatch.setenv("CHUNK_EXPLORER_UPLOADS_DIR", str(tmp_path / "u"))
    monkeypatch.setenv("CHUNK_EXPLORER_UPLOADS_MAX_MB", "2")
    store = default_store()
    assert store is not None and store.max_bytes == 2 * 2**20 and store.directory == tmp_path / "u"
    monkeypatch.setenv("CHUNK_EXPLORER_UPLOADS_MAX_MB", "lots")
    assert default_store().max_bytes == uploads.DEFAULT_MAX_MB * 2**20
    monkeypatch.setenv("CHUNK_EXPLORER_KEEP_UPLOADS", "0")
    assert default_store() is None
    assert uploads.clean_name("a\x00b\n.txt") == "ab.txt" and len(uploads.clean_name("x" * 999)) == 200


# -- the app: a new session (F5) with the link ---------------------------------------------------
def test_a_reload_keeps_uploads_and_questions():
    at = start("documents")
    name = "notes :red[x] ![i](http://e.x/p.png).md"
    at.file_uploader[0].set_value((name, NOTES, "text/markdown")).run()
    ok(at)
    link = {k: at.query_params[k] for k in at.query_params}
    assert link["up"] == content_hash(NOTES)[: uploads.REF_CHARS] == link["doc"]
    at.switch_page("pages/retrieve.py").run()
    ask(at, "When are the pumps checked?", "checked every\nmorning")
    next(b for b in at.button if b.label == "Keep the question").click().run()
    ok(at)
    link = {k: at.query_params[k] for k in at.query_params}

    again = start("documents", query=link)  # F5: a new session, the same link
    ok(again)
    restored = [s for s in again.session_state["sources"] if s["kind"] == "upload"]
    assert [(s["name"], s["data"]) for s in restored] == [(name, NOTES)]
    assert again.session_state["doc_key"] == restored[0]["key"]
    shown = " ".join(m.value for m in again.markdown)
    assert "\\:\u2060red\\[x\\]" in shown and ":red[x]" not in shown  # the kept name is shown escaped
    assert [q["question"] for q in again.session_state["questions"]] == ["When are the pumps checked?"]
    assert again.session_state["ret_query"]["answer"] == "checked every\nmorning"
    again.switch_page("pages/retrieve.py").run()
    ok(again)
    assert again.text_input(key="w.question").value == "When are the pumps checked?"
    assert len([c.value for c in again.caption if c.value.startswith("Recall")]) == 2
    assert not again.warning


def test_bad_upload_refs_in_a_link_are_one_escaped_notice():
    at = start(query={"up": ["zz<script>", "0123456789abcdef0123", "**bold**"], "kq": ["{nope", "[1]"]})
    ok(at)
    notices = [w.value for w in at.warning]
    uploads_notice = [w for w in notices if "uploaded files" in w]
    assert len(uploads_notice) == 1
    assert "0123456789ab" in uploads_notice[0] and "2 that are not a file reference" in uploads_notice[0]
    assert "<script" not in " ".join(notices) and "**bold**" not in " ".join(notices)
    assert any("2 kept question" in w for w in notices)
    assert [s["kind"] for s in at.session_state["sources"]] == ["sample"] * 3


def test_a_server_that_keeps_no_uploads_says_so(monkeypatch):
    monkeypatch.setenv("CHUNK_EXPLORER_KEEP_UPLOADS", "0")
    at = start("documents")
    at.file_uploader[0].set_value(("n.md", NOTES, "text/markdown")).run()
    ok(at)
    assert "up" not in at.query_params
    assert any("browser session only" in c.value for c in at.caption)
    again = start(query={"up": content_hash(NOTES)[:32]})
    ok(again)
    assert any("does not keep uploads" in w.value for w in again.warning)


def test_the_same_bytes_twice_are_one_upload_and_said():
    """A second name for bytes already uploaded adds nothing (the link names an upload by its
    hash, so it would not come back after a reload): a notice says so, and a reload reopens
    the one upload under its first name."""
    at = start("documents")
    at.file_uploader[0].set_value(("notes.md", NOTES, "text/markdown")).run()
    at.file_uploader[0].set_value(("copy <b>of</b> notes.txt", NOTES, "text/plain")).run()
    ok(at)
    ups = [s["name"] for s in at.session_state["sources"] if s["kind"] == "upload"]
    assert ups == ["notes.md"]
    said = [w.value.replace("\\", "") for w in at.warning]
    assert any("copy <b>of</b> notes.txt has the same bytes as notes.md, already loaded" in w for w in said), said
    again = start("documents", query={k: at.query_params[k] for k in at.query_params})
    assert [s["name"] for s in again.session_state["sources"] if s["kind"] == "upload"] == ["notes.md"]


def test_a_text_loaded_twice_counts_once():
    """An upload whose text is a loaded sample's (a document's id is its text's hash): its card
    says so, and the indexes hold its chunks once."""
    from explorer.documents.samples import sample_bytes

    at = start("retrieve")
    ask(at, "When are the pumps checked?")
    before = [c.value for c in at.caption if "chunks indexed" in c.value]
    at.switch_page("pages/documents.py").run()
    at.file_uploader[0].set_value(("my-guide.md", sample_bytes("guide.md")[1], "text/markdown")).run()
    ok(at)
    said = [w.value.replace("\\", "") for w in at.warning]
    assert any("The same text as guide.md, loaded above" in w for w in said), said
    at.switch_page("pages/retrieve.py").run()
    ask(at, "When are the pumps checked?")
    ok(at)
    assert [c.value for c in at.caption if "chunks indexed" in c.value] == before


def test_a_long_name_is_cut_in_its_stem_and_keeps_its_extension():
    """A 300-character "….md" cut to 200 lost ".md" and loaded as plain text, without headings."""
    from explorer.documents.loaders import load_bytes

    name = uploads.clean_name("A" * 300 + ".md")
    assert len(name) == uploads.MAX_NAME_CHARS and name.endswith("A.md")
    assert load_bytes(b"# Title\n\ntext\n", name).kind == "markdown"
    assert uploads.clean_name("x." + "y" * 300) == ("x." + "y" * 300)[: uploads.MAX_NAME_CHARS]  # no short extension

