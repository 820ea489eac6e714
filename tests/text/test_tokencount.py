"""Token counts from one pass over the document equal tokenising each chunk (the bundled model)."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from explorer import Document, get_strategy
from explorer.text.chunk import Chunk
from explorer.text.length import get_length
from explorer.text.token_counts import count_chunk_tokens, token_index

TRICKY = (
    "Unaffable naïve café: M. Dupont paid 3,5 € (e.g. «tarif réduit») on 12/03. "
    "東京タワーは高い。Ünïcödé e\u0301 combining, x\x00y, don't, URL https://ex.am/ple?q=1. "
    "Emoji 🙂🙃 and a veryveryveryverylongwordthatkeepsgoingwithoutanyspaceatallforsure.\n\n"
    "Code: def f(x): return x**2  # comment\n\tTabs\tand  double  spaces.\n"
)


MINILM = "all-MiniLM-L6-v2"


def exact(doc: Document, spans, model: str | None = None) -> list[int]:
    tok = get_length("tokens", model)
    return [tok(doc.text[s:e]) for s, e in spans]


def as_chunks(doc: Document, spans) -> list[Chunk]:
    return [
        Chunk(doc.id, doc.name, i, s, e, doc.text[s:e], e - s, "chars", "") for i, (s, e) in enumerate(spans)
    ]


@settings(max_examples=80, deadline=None)
@given(cuts=st.lists(st.integers(0, len(TRICKY)), min_size=2, max_size=12, unique=True))
def test_fast_counts_equal_exact_counts_at_any_cut(cuts):
    doc = Document("t.txt", "text", TRICKY)
    cuts = sorted(cuts)
    spans = [(a, b) for a, b in itertools.pairwise(cuts) if b > a]
    assert count_chunk_tokens(doc, as_chunks(doc, spans)) == exact(doc, spans)


def test_fast_path_is_used_for_word_boundaries_and_matches_strategies():
    text = (TRICKY * 30).strip()
    doc = Document("t.md", "text", text)
    index = token_index(doc.id, doc.text, MINILM)  # the fast path serves WordPiece tokenizers
    assert index.word_piece
    for strategy, params in (
        ("recursive", {"chunk_size": 300}),
        ("fixed", {"chunk_size": 200, "chunk_overlap": 50}),
    ):
        chunks = get_strategy(strategy).chunk(doc, params)
        spans = [(c.start, c.end) for c in chunks]
        assert count_chunk_tokens(doc, chunks, MINILM) == exact(doc, spans, MINILM)
    # recursive cuts between words: nearly every chunk is counted without re-tokenising
    chunks = get_strategy("recursive").chunk(doc, {"chunk_size": 300})
    fast = [index.fast_count(c.start, c.end) for c in chunks]
    assert sum(v is not None for v in fast) >= 0.8 * len(chunks)
