"""The sentence strategy's lead-ins: "Install the requirements:" goes with the fenced code block
or table after it (the rule of :mod:`explorer.strategies.lead_ins`, shared with markdown).

A group could end on the lead-in while the code it announces opened the next group, or end in
the middle of the table it announces.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer import Document, chunk_document
from explorer.documents.markdown_blocks import markdown_blocks
from explorer.strategies.invariants import invariant_errors
from explorer.text.markdown_parse import fenced_code
from explorer.text.sentences import sentence_spans

FENCE = "```bash\npip install -r requirements.txt\n```"
TEXT = (
    "The tool needs Python 3.11. It runs on Linux and macOS. It is small. Install the requirements:\n\n"
    f"{FENCE}\n\nThen start it. It listens on port 8080.\n"
)
TABLE = "| port | use |\n|---|---|\n| 80 | http |\n| 443 | https |"


def doc(text: str, markdown: bool) -> Document:
    if markdown:
        return Document("t.md", "markdown", text, blocks=markdown_blocks(text))
    return Document("t.txt", "text", text)


def chunks_of(d: Document, **params):
    chunks = chunk_document(d, "sentence", params)
    assert not invariant_errors(d, chunks, params.get("chunk_size") or None)
    return chunks


@pytest.mark.parametrize("markdown", [False, True])
def test_a_lead_in_opens_the_group_of_its_fence(markdown):
    """At 4 sentences a group the first group ended on "Install the requirements:"."""
    chunks = chunks_of(doc(TEXT, markdown), sentences_per_chunk=4, overlap_sentences=0)
    assert [c.text for c in chunks] == [
        "The tool needs Python 3.11. It runs on Linux and macOS. It is small.",
        f"Install the requirements:\n\n{FENCE}\n\nThen start it. It listens on port 8080.",
    ]
    assert chunks[0].reason == "sentence end: 3 sentences, the next leads in to a code block"


def test_with_a_cap_the_overlap_gives_way_to_the_lead_in_and_its_fence():
    """The first group (94 characters with the lead-in) ended on it; the next keeps one of its
    two overlap sentences, the room the lead-in and its fence leave under 100."""
    chunks = chunks_of(doc(TEXT, False), sentences_per_chunk=5, overlap_sentences=2, chunk_size=100)
    assert [c.text for c in chunks][:2] == [
        "The tool needs Python 3.11. It runs on Linux and macOS. It is small.",
        f"It is small. Install the requirements:\n\n{FENCE}\n\nThen start it.",
    ]


def test_a_group_no_longer_ends_inside_the_table_its_lead_in_announces():
    """A table counts a unit per row, its header and delimiter rows with the first (5 with the
    four sentences before it and the one after; it counted 8 before)."""
    text = f"# Ports\n\nWe use a few ports. They are fixed. The ports:\n\n{TABLE}\n\nDone here.\n"
    chunks = chunks_of(doc(text, True), sentences_per_chunk=5, overlap_sentences=0)
    assert [c.text for c in chunks] == ["# Ports\n\nWe use a few ports. They are fixed.", f"The ports:\n\n{TABLE}\n\nDone here."]
    assert chunks[0].reason.endswith("the next leads in to a table")


def test_what_does_not_fit_or_is_no_lead_in_stays_where_it_was():
    # lead-in + fence: 71 characters, over a cap of 60
    chunks = chunks_of(doc(TEXT, False), sentences_per_chunk=4, overlap_sentences=0, chunk_size=60)
    assert chunks[1].text == "It is small. Install the requirements:"
    long_lead = "This sentence explains at length why the command below is needed, " * 3 + "so run:"
    text = TEXT.replace("Install the requirements:", long_lead)
    chunks = chunks_of(doc(text, False), sentences_per_chunk=4, overlap_sentences=0)
    assert chunks[0].text.endswith(long_lead)


PARTS = st.one_of(
    st.integers(1, 4).map(lambda n: " ".join(["Words of prose here."] * n)),
    st.integers(1, 4).map(lambda n: "Now run " + "this " * n + ":"),
    st.integers(1, 4).map(lambda n: "```sh\n" + "make it\n" * n + "```"),
    st.integers(1, 3).map(lambda n: "| a | b |\n|---|---|\n" + "| 1 | 2 |\n" * n),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    parts=st.lists(PARTS, min_size=1, max_size=12),
    markdown=st.booleans(),
    per=st.integers(1, 8),
    data=st.data(),
    cap=st.one_of(st.just(0), st.integers(20, 300)),
)
def test_a_lead_in_shares_a_group_with_its_block_when_they_fit(parts, markdown, per, data, cap):
    text = "\n\n".join(parts) + "\n"
    overlap = data.draw(st.integers(0, per - 1))
    d = doc(text, markdown)
    chunks = chunks_of(d, sentences_per_chunk=per, overlap_sentences=overlap, chunk_size=cap)
    sents = sentence_spans(text)
    blocks = _fences_and_tables(d)
    for i in range(len(sents) - 1):
        s, e = sents[i]
        block = next((b for b in blocks if b[0] == sents[i + 1][0]), None)
        if block is None or not text[s:e].endswith(":"):
            continue
        m = sum(1 for a, _ in sents if a < block[1])
        if m - i <= per and (not cap or block[1] - s <= cap):
            assert any(c.start <= s and block[1] <= c.end for c in chunks), (text[s:e], per, cap)


def _fences_and_tables(d: Document) -> list[tuple[int, int]]:
    return [(b.start, b.end) for b in d.blocks_of("code", "table")] + list(fenced_code(d.text))
