"""The paragraph strategy and headings: a heading opens the chunk of its text.

Chunks ended on "### First configuration" (guide.md) and, in handbook.pdf, where a heading read
from the fonts has no blank line around it, a paragraph over the size was cut at sentence ends
that left "3. Coagulation and chemical dosing" at a chunk's end. Now a heading is a paragraph of
its own, a chunk that would end on headings ends before them, and headings over a paragraph
that is over the size open its first part.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.documents.samples import load_sample
from tests.support.sentence_docs import chunks_of, md


@pytest.mark.parametrize("name", ["guide.md", "handbook.pdf"])
@pytest.mark.parametrize("size", [300, 1000])
def test_no_chunk_ends_on_a_heading_nor_inside_one(name, size):
    d = load_sample(name)
    chunks = chunks_of(d, "paragraph", chunk_size=size)
    ends = {h.end: d.text[h.start : h.end] for h in d.headings}
    assert [ends[c.end] for c in chunks[:-1] if c.end in ends] == []
    for h in d.headings:
        assert not any(h.start < at < h.end for c in chunks for at in (c.start, c.end)), d.text[h.start : h.end]


def test_a_heading_opens_the_first_part_of_a_long_paragraph_after_it():
    long = " ".join(f"Sentence {i} of a long paragraph." for i in range(8))
    text = f"Intro paragraph here.\n\n## Details\n\n{long}\n"
    chunks = chunks_of(md(text), "paragraph", chunk_size=100)
    assert chunks[0].text == "Intro paragraph here."
    assert chunks[0].reason == "paragraph end: 1 paragraph, the next is a heading"
    assert chunks[1].text.startswith("## Details\n\nSentence 0 of a long paragraph.")


def test_a_heading_opens_the_first_piece_of_a_sentence_cut_at_words_after_it():
    """A heading over a paragraph whose first sentence is over the size made a chunk of its own
    ("# Tidepool user guide" in guide.md at 100 characters), its text all in the next chunks; it
    now opens the first piece of that sentence, wherever the size falls."""
    long = "This first sentence of the section runs on and on, " * 4 + "to its end."
    text = f"Intro paragraph here.\n\n## Details\n\n{long} A short one.\n"
    for size in range(25, len(long)):
        chunks = chunks_of(md(text), "paragraph", chunk_size=size)
        assert chunks[1].text.startswith("## Details\n\nThis first"), (size, chunks[1].text)
        assert chunks[1].reason.startswith("size limit: sentence longer than chunk_size"), chunks[1].reason


PARTS = st.one_of(
    st.integers(1, 6).map(lambda n: " ".join(["Words of prose here."] * n)),
    st.integers(1, 3).map(lambda n: "#" * n + " Title here"),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(PARTS, min_size=1, max_size=10), size=st.integers(15, 300))
def test_a_chunk_ends_on_a_heading_only_when_it_holds_nothing_else(parts, size):
    text = "\n\n".join(parts) + "\n"
    d = md(text)
    chunks = chunks_of(d, "paragraph", chunk_size=size)
    heads = [(h.start, h.end) for h in d.headings]
    for c in chunks[:-1]:
        if any(e == c.end for _, e in heads):
            rest = [" " if any(s <= i < e for s, e in heads) else text[i] for i in range(c.start, c.end)]
            assert not "".join(rest).strip(), (text[c.start : c.end], size)
