"""A link the server reads back (:mod:`pages.ui.url_fit`), and links that ask for more than the
app opens: each is said, never dropped silently."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import test_app_pages
from test_app_pages import fake_embedder, ok  # noqa: F401 (its autouse fixture: no model, no warm-up)

from pages.ui.url_fit import MAX_LINK_CHARS, fit_link, link_chars


def test_a_short_link_is_written_as_it_is():
    want = {"samples": ["guide.md"], "q": "Quand ?", "kq": ['{"q": "a"}']}
    assert fit_link(want) == (want, "")


def test_a_link_too_long_for_the_server_leaves_out_kept_questions_last_first():
    """Ten kept questions with 2,000-character Japanese answers: each character is nine in the
    address, 180,000 characters in all, past the ~128 KB request line Tornado reads."""
    kept = [json.dumps({"q": f"質問{i}", "a": "答" * 2000}, ensure_ascii=False) for i in range(10)]
    want = {"samples": ["guide.md"], "q": "質問", "kq": kept, "cfg": ['{"s": "fixed"}']}
    assert link_chars(want) > 150_000
    out, left = fit_link(want)
    assert link_chars(out) <= MAX_LINK_CHARS and len(urlencode(out, doseq=True)) <= MAX_LINK_CHARS
    assert out["kq"] == kept[: len(out["kq"])] and 0 < len(out["kq"]) < 10  # the first ones kept
    assert left == f"{10 - len(out['kq'])} kept questions"
    assert out["q"] == "質問" and out["cfg"] == want["cfg"]
    # a question and answer that alone are too long are clipped, and said
    huge = {"q": "問" * 3000, "qa": "答" * 9000}
    out, left = fit_link(huge)
    assert link_chars(out) <= MAX_LINK_CHARS and out["q"] == huge["q"] and "answer" in left
    # clipped by its length in the address, no more: a CJK character is nine characters there
    out, left = fit_link({"cfg": ["x" * 50_000], "q": "q" * 400, "qa": "答" * 2000})
    assert MAX_LINK_CHARS - 9 < link_chars(out) <= MAX_LINK_CHARS and len(out["qa"]) > 1000
    # what clipping cannot bring under the limit is not clipped
    assert fit_link({"cfg": ["x" * 70_000], "q": "abc"}) == ({"cfg": ["x" * 70_000], "q": "abc"}, "")


def test_a_link_with_more_strategies_than_the_sidebar_holds_says_so():
    cfgs = [json.dumps({"s": "fixed", "p": {"chunk_size": 100 + i}}) for i in range(8)]
    at = test_app_pages.start(query={"cfg": cfgs})
    ok(at)
    said = " ".join(w.value for w in at.warning)
    assert "The link has 8 strategies; only the first 6 are opened" in said


def test_each_chunk_notice_names_its_page():
    at = test_app_pages.start(query={"chunk": "x", "schunk": "-5"})
    ok(at)
    said = [w.value.replace("\\", "") for w in at.warning]
    assert any("opens on Explore (chunk=x)" in s for s in said)
    assert any("opens on Semantic (schunk=-5)" in s for s in said)


def test_the_loaders_limit_is_the_uploaders_as_the_browser_counts_it():
    """Streamlit's uploader counts 10**6 bytes a megabyte (2**20 on Windows only): a 49 MiB
    file was marked red in the browser while the CLI took it."""
    import tomllib
    from pathlib import Path

    from explorer import limits

    config = tomllib.loads((Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] * 10**6 == limits.MAX_FILE_BYTES
