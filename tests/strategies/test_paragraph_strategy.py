"""The `paragraph` strategy: greedy paragraph merging, over-size paragraphs, errors, invariants."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from explorer import Document, ParamError, chunk_document
from explorer.strategies.invariants import invariant_errors
from explorer.text.sentences import paragraph_spans, sentence_spans

P1 = "First paragraph. It has two sentences."  # 38 chars
P2 = "Second one is short."  # 20
P3 = "Third paragraph, M. Dupont wrote it. He was tired. It ends here."  # 64
TEXT = f"{P1}\n\n{P2}\n\n\n{P3}"


def doc(text: str) -> Document:
    return Document("t.txt", "text", text)


def spans(chunks):
    return [(c.start, c.end, c.reason) for c in chunks]


def test_golden_greedy_merge():
    assert (len(P1), len(P2), len(P3)) == (38, 20, 64)
    p3 = TEXT.index(P3)
    # P1 + blank line + P2 = 60; P3 (64) fits alone but not beside them
    for size in (64, 125):
        cs = chunk_document(doc(TEXT), "paragraph", {"chunk_size": size})
        assert spans(cs) == [
            (0, 60, "paragraph end: 2 paragraphs"),
            (p3, len(TEXT), "end of text: 1 paragraph"),
        ]
        assert cs[0].text == f"{P1}\n\n{P2}"
    cs = chunk_document(doc(TEXT), "paragraph", {"chunk_size": 59})  # P1 + P2 = 60 > 59
    assert [c.text for c in cs][:2] == [P1, P2]
    cs = chunk_document(doc(TEXT), "paragraph", {"chunk_size": 127})  # the whole text is 127
    assert len(TEXT) == 127 and spans(cs) == [(0, 127, "end of text: 3 paragraphs")]


def test_everything_in_one_chunk_when_it_fits():
    cs = chunk_document(doc(TEXT), "paragraph", {"chunk_size": 1000})
    assert spans(cs) == [(0, len(TEXT), "end of text: 3 paragraphs")]


def test_paragraph_over_size_is_split_by_sentences():
    cs = chunk_document(doc(TEXT), "paragraph", {"chunk_size": 40})
    p3 = TEXT.index(P3)
    assert [c.text for c in cs] == [
        P1,
        P2,
        "Third paragraph, M. Dupont wrote it.",
        "He was tired. It ends here.",
    ]
    assert cs[0].reason == "paragraph end: 1 paragraph"
    assert cs[2].reason == "sentence end (paragraph over size)"
    assert cs[3].reason == "end of text"
    assert cs[2].start == p3


def test_sentence_over_size_is_split_at_words():
    cs = chunk_document(doc(TEXT), "paragraph", {"chunk_size": 20})
    assert not invariant_errors(doc(TEXT), cs, 20)
    reasons = [c.reason for c in cs]
    assert any(r.startswith("size limit: sentence longer than chunk_size, split at words") for r in reasons)
    assert "sentence end (paragraph over size)" in reasons
    assert all(c.length <= 20 for c in cs)


def test_word_over_size_in_chars_is_cut_into_windows():
    text = "a" * 25 + "\n\nend"
    cs = chunk_document(doc(text), "paragraph", {"chunk_size": 10})
    assert [(c.start, c.end) for c in cs] == [(0, 10), (10, 20), (20, 25), (27, 30)]
    assert not invariant_errors(doc(text), cs, 10)


def test_unbreakable_unit_is_reported():
    # one emoji is several cl100k tokens: over chunk_size=1 and not splittable
    text = "😀\n\nok"
    cs = chunk_document(doc(text), "paragraph", {"chunk_size": 1, "length": "cl100k"})
    assert cs[0].text == "😀" and cs[0].reason.startswith("unbreakable unit over size")
    assert not invariant_errors(doc(text), cs, 1)


def test_token_counts_are_not_additive():
    # cl100k: "ok" = 1 token, but "ok\n\nok" = 3 ("\n\n" is a token): measured whole
    cs = chunk_document(doc("ok\n\nok"), "paragraph", {"chunk_size": 2, "length": "cl100k"})
    assert [c.text for c in cs] == ["ok", "ok"]


def test_words_unit():
    # P1 = 6 words, P2 = 4, P3 = 12 (over 10: sentences of 6, 3 and 3 words)
    cs = chunk_document(doc(TEXT), "paragraph", {"chunk_size": 10, "length": "words"})
    assert [c.length for c in cs] == [10, 9, 3]
    assert [c.reason for c in cs] == [
        "paragraph end: 2 paragraphs",
        "sentence end (paragraph over size)",
        "end of text",
    ]


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"chunk_size": 0}, "chunk_size=0 is below the minimum 1"),
        ({"chunk_size": 2, "length": "tokens"}, "chunk_size=2 tokens leaves no room"),
        ({"chunk_overlap": 5}, "paragraph has no parameter 'chunk_overlap'"),
    ],
)
def test_bad_params(params, message):
    with pytest.raises(ParamError, match=message):
        chunk_document(doc(TEXT), "paragraph", params)


def test_real_corpus(chroma_dir):
    text = (chroma_dir / "corpora" / "state_of_the_union.md").read_text(encoding="utf-8")
    d = doc(text)
    para_ends = {e for _, e in paragraph_spans(text)}
    sent_ends = {e for _, e in sentence_spans(text)}
    for params, size in (({"chunk_size": 400}, 400), ({"chunk_size": 128, "length": "tokens"}, 128)):
        cs = chunk_document(d, "paragraph", params)
        assert not invariant_errors(d, cs, size)
        for c in cs:
            if c.reason.startswith(("paragraph end", "end of text")):
                assert c.end in para_ends
            elif c.reason.startswith("sentence end"):
                assert c.end in sent_ends
            else:
                assert "split at words" in c.reason or "split between" in c.reason


_TEXT = st.one_of(
    st.text(max_size=250),
    st.lists(
        st.sampled_from(
            ["Dr. Who. ", "Hi! ", "ok ", "。", "😀", "\n\n", "\n", "x" * 30, "\n \n", "p. 12 ", "«a» "]
        ),
        max_size=40,
    ).map("".join),
)


@settings(max_examples=120, deadline=None)
@given(_TEXT, st.integers(1, 80), st.sampled_from(["chars", "words", "cl100k", "tokens"]))
def test_invariants(text, size, unit):
    assume(unit != "tokens" or size >= 3)  # model tokens need room beside [CLS] and [SEP]
    d = doc(text)
    cs = chunk_document(d, "paragraph", {"chunk_size": size, "length": unit})
    assert not invariant_errors(d, cs, size)
    for a, b in itertools.pairwise(cs):
        assert b.start >= a.end  # no overlap in this strategy


#: French typography: marks spaced from their word by a no-break space (or a plain one).
FRENCH_MARKS = (
    "Quelle est la différence entre un paquet binaire Debian\u00a0? Le texte «\u00a0autre\u00a0» "
    "coûte 10\u202f% de plus\u00a0; la chose : oui ! Et « encore » une phrase qui continue un peu ici."
)
_NO_BREAK = "\u00a0\u202f\u2007"


@pytest.mark.parametrize("strategy", ["paragraph", "sentence"])
@pytest.mark.parametrize("unit", ["chars", "words"])
def test_a_long_sentence_is_never_cut_at_a_no_break_space_nor_leaves_a_mark_alone(strategy, unit):
    """Pieces of a sentence over the size: no cut at a no-break space ("Debian" | "? ..."), no piece
    that is only "?" or "!" or that ends on "«", wherever the size falls (the words had been
    runs of non-space characters, and a no-break space is a space to ``\\S``)."""
    for size in range(1, 90) if unit == "chars" else range(1, 12):
        params = {"chunk_size": size, "length": unit}
        if strategy == "sentence":
            params |= {"sentences_per_chunk": 1, "overlap_sentences": 0}
        chunks = chunk_document(doc(FRENCH_MARKS), strategy, params)
        # below the longest word with its mark, the words are cut apart again, never into a
        # window that is only the no-break space
        assert not invariant_errors(doc(FRENCH_MARKS), chunks), size
        if size < (12 if unit == "chars" else 3):
            continue
        for c in chunks:
            where = (size, c.text)
            assert FRENCH_MARKS[c.start - 1 : c.start] not in tuple(_NO_BREAK), where
            assert FRENCH_MARKS[c.end : c.end + 1] not in tuple(_NO_BREAK), where
            assert any(ch.isalnum() for ch in c.text), where
            assert not c.text.endswith("«"), where
