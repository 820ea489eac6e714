"""The sentence strategy and headings: a group does not end on a heading, its text in the next.

Groups of sentences ended on "## Daily use" (guide.md) or "3. Coagulation and chemical dosing"
(handbook.pdf, read from its fonts), and the sentence splitter cut "Appendix A. Normal operating
ranges" after "A.", joined to the running header above it. Now a heading is one unit, a group
that would end on headings ends before them, and a group opening with a heading repeats nothing
from the section before it.
"""

from __future__ import annotations

import pytest
from hypothesis import strategies as st

from explorer import Document
from explorer.documents.samples import load_sample
from tests.support.sentence_docs import chunks_of, drawn_chunks, given_documents, md


def _ends_on_heading(d: Document, chunks) -> list[str]:
    ends = {h.end: d.text[h.start : h.end] for h in d.headings}
    return [ends[c.end] for c in chunks[:-1] if c.end in ends]


@pytest.mark.parametrize("name", ["guide.md", "handbook.pdf"])
@pytest.mark.parametrize("params", [{}, {"sentences_per_chunk": 3, "overlap_sentences": 0, "chunk_size": 400}])
def test_no_group_ends_on_a_heading_nor_inside_one(name, params):
    d = load_sample(name)
    chunks = chunks_of(d, **params)
    assert _ends_on_heading(d, chunks) == []
    for h in d.headings:
        assert not any(h.start < at < h.end for c in chunks for at in (c.start, c.end)), d.text[h.start : h.end]


def test_a_group_opening_with_a_heading_repeats_nothing_before_it():
    text = "One is here. Two is here. Three is here.\n\n## Next\n\nFour is here. Five is here.\n"
    d = md(text)
    chunks = chunks_of(d, sentences_per_chunk=4, overlap_sentences=1)
    assert [c.text for c in chunks] == [
        "One is here. Two is here. Three is here.",
        "## Next\n\nFour is here. Five is here.",
    ]
    assert chunks[0].reason == "sentence end: 3 sentences, the next is a heading"


PARTS = st.one_of(
    st.integers(1, 3).map(lambda n: " ".join(["Words of prose here."] * n)),
    st.integers(1, 3).map(lambda n: "#" * n + " Title here"),
    st.just("Run this:"),
    st.just("```sh\nmake it\n```"),
)


@given_documents(PARTS, 10)
def test_a_chunk_ends_on_a_heading_only_when_its_new_text_is_all_headings(parts, per, data, cap):
    text, d, chunks, overlap = drawn_chunks(parts, per, data, cap)
    heads = [(h.start, h.end) for h in d.headings]
    prev_end = 0
    for c in chunks[:-1]:
        if any(e == c.end for _, e in heads):  # its new text, headings blanked out, is blank
            a = max(prev_end, c.start)
            new = [" " if any(s <= i < e for s, e in heads) else text[i] for i in range(a, c.end)]
            assert not "".join(new).strip(), (text[c.start : c.end], per, overlap, cap)
        prev_end = c.end


@pytest.mark.parametrize("overlap", [0, 1])
def test_a_heading_opens_the_first_piece_of_a_sentence_cut_at_words_after_it(overlap):
    """Headings before a sentence over the cap made a chunk of their own ("# Tidepool user guide"
    alone in guide.md at 100 characters); they now open the first piece of that sentence."""
    long = "This first sentence of the section runs on and on, " * 4 + "to its end."
    text = f"Intro paragraph here.\n\n## Details\n\n### More\n\n{long} A short one.\n"
    for size in range(40, len(long)):
        params = {"chunk_size": size, "sentences_per_chunk": 3, "overlap_sentences": overlap}
        chunks = chunks_of(md(text), "sentence", **params)
        assert chunks[1].text.startswith("## Details\n\n### More\n\nThis first"), (size, chunks[1].text)
        assert [c.text for c in chunks if c.text.strip("#\n ") in ("Details", "More")] == []


def test_a_paragraph_made_a_heading_by_an_underline_keeps_its_sentences():
    """A line of "=" under a paragraph makes it a (setext) heading; pubmed.md has one of 400
    characters: its sentences stay units, not one unit over the cap split at words."""
    para = " ".join(f"Sentence number {i} of a long paragraph." for i in range(12))
    text = f"{para}\n=\n\nAfter it. The end.\n"
    d = md(text)
    assert d.headings and d.headings[0].end - d.headings[0].start > 300
    chunks = chunks_of(d, sentences_per_chunk=3, overlap_sentences=0, chunk_size=200)
    assert chunks[0].text == para[: para.index(" Sentence number 3")]
    assert not any("split at words" in c.reason for c in chunks)
