"""A piece of an over-size sentence says how it was cut: "split at words" only where it ends at a
space. A URL, a base64 blob or CJK text has no space within the size, and its pieces are cut
between characters (or tokens): their reason said "split at words" beside a "cut mid-word" flag."""

from __future__ import annotations

import base64

import pytest

from explorer import Document, chunk_document

BLOB = base64.b64encode(bytes(range(256)) * 3).decode()
TEXTS = {
    "base64": f"The key is {BLOB} and nothing else. Short one.",
    "cjk": "東京は日本の首都で" * 40 + "。短い。",
    "words": "Words with spaces " * 30 + "end. Short one.",
}


def _pieces(text: str, strategy: str, params: dict) -> list:
    d = Document(name="t.txt", kind="text", text=text)
    return [c for c in chunk_document(d, strategy, params) if c.reason.startswith("size limit: sentence longer than chunk_size")]


@pytest.mark.parametrize("name", sorted(TEXTS))
@pytest.mark.parametrize(
    ("strategy", "params"),
    [
        ("sentence", {"sentences_per_chunk": 2, "overlap_sentences": 0, "chunk_size": 100}),
        ("paragraph", {"chunk_size": 100}),
        ("sentence", {"sentences_per_chunk": 2, "overlap_sentences": 0, "chunk_size": 40, "length": "tokens"}),
    ],
)
def test_split_reason_says_where_the_cut_is(name: str, strategy: str, params: dict) -> None:
    text = TEXTS[name]
    pieces = _pieces(text, strategy, params)
    assert pieces, "the long sentence was split"
    for c in pieces:
        at_space = text[c.end - 1].isspace() or text[c.end].isspace()
        assert ("split at words" in c.reason) == at_space, (c.end, c.reason)
        if not at_space:
            unit = "tokens" if params.get("length") == "tokens" else "characters"
            assert f"split between {unit}" in c.reason
