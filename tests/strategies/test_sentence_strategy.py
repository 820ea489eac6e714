"""The `sentence` strategy: golden groups, overlap, the size cap, errors, and invariants."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from explorer import Context, Document, ParamError, chunk_document
from explorer.strategies.invariants import invariant_errors
from explorer.text.sentences import sentence_spans

TEXT = "Dr. Smith came. He sat down. M. Dupont arrived. Il parla. Then silence."
#        0               16            29                 48         59


def doc(text: str) -> Document:
    return Document("t.txt", "text", text)


def spans(chunks):
    return [(c.start, c.end, c.reason) for c in chunks]


def test_golden_pairs_with_overlap():
    cs = chunk_document(doc(TEXT), "sentence", {"sentences_per_chunk": 2, "overlap_sentences": 1})
    assert spans(cs) == [
        (0, 28, "sentence end: 2 sentences"),
        (16, 47, "sentence end: 2 sentences"),
        (29, 57, "sentence end: 2 sentences"),
        (48, 71, "end of text: 2 sentences"),
    ]
    assert cs[1].text == "He sat down. M. Dupont arrived."


def test_golden_no_overlap_last_group_short():
    cs = chunk_document(doc(TEXT), "sentence", {"sentences_per_chunk": 3, "overlap_sentences": 0})
    assert spans(cs) == [(0, 47, "sentence end: 3 sentences"), (48, 71, "end of text: 2 sentences")]


def test_defaults_five_sentences_overlap_one_no_redundant_tail():
    text = " ".join(f"Sentence number {i} is here." for i in range(12))
    sents = sentence_spans(text)
    cs = chunk_document(doc(text), "sentence")
    # groups [0,5), [4,9), [8,12): the last reaches the end, so no tail made of overlap only
    assert [(c.start, c.end) for c in cs] == [
        (sents[0][0], sents[4][1]),
        (sents[4][0], sents[8][1]),
        (sents[8][0], sents[11][1]),
    ]
    assert cs[-1].reason == "end of text: 4 sentences"


def test_cap_closes_group_early_and_overlap_is_dropped_when_it_does_not_fit():
    # sentences of 15, 12, 18, 9, 13 chars; cap 30
    cs = chunk_document(
        doc(TEXT), "sentence", {"sentences_per_chunk": 3, "overlap_sentences": 1, "chunk_size": 30}
    )
    assert spans(cs) == [
        (0, 28, "size limit: 2 sentences, the next would exceed chunk_size"),
        (29, 57, "size limit: 2 sentences, the next would exceed chunk_size"),
        (48, 71, "end of text: 2 sentences"),
    ]
    # "He sat down." (the overlap) + "M. Dupont arrived." = 31 > 30: the overlap was dropped
    assert all(c.length <= 30 for c in cs)


def test_sentence_over_cap_is_split_at_words_and_says_so():
    long = "This sentence is much longer than the tiny cap allows for it."
    text = f"Short one. {long} Done."
    cs = chunk_document(
        doc(text), "sentence", {"sentences_per_chunk": 2, "overlap_sentences": 1, "chunk_size": 20}
    )
    assert not invariant_errors(doc(text), cs, 20)
    inner = [c for c in cs if long.startswith(c.text) or c.text in long]
    assert len(inner) >= 3
    assert all("split at words" in c.reason for c in inner)
    assert inner[-1].reason.startswith("sentence end")
    assert cs[0].text == "Short one." and cs[-1].text == "Done."
    # pieces are cut at whitespace, never inside a word
    for c in inner:
        assert text[c.start - 1].isspace() and (c.end == len(text) or not text[c.end].isalpha())


def test_word_over_cap_in_tokens_is_split_at_token_boundaries():
    text = "Pneumonoultramicroscopicsilicovolcanoconiosis is long."
    cs = chunk_document(doc(text), "sentence", {"chunk_size": 4, "length": "cl100k"})
    assert not invariant_errors(doc(text), cs, 4)
    assert "".join(c.text for c in cs[:3]).startswith("Pneumono")


def test_cap_in_model_tokens_counts_cls_sep():
    text = "The quick brown fox jumps over the lazy dog. " * 10
    cs = chunk_document(
        doc(text),
        "sentence",
        {"sentences_per_chunk": 4, "chunk_size": 30, "length": "tokens"},
        Context(model="all-MiniLM-L6-v2"),
    )
    assert not invariant_errors(doc(text), cs, 30)
    assert max(c.length for c in cs) <= 30
    assert cs[0].length == 2 + 2 * 10  # two sentences of 10 word pieces, plus [CLS] and [SEP]


def test_overlap_must_be_smaller_names_both_values():
    with pytest.raises(ParamError, match="overlap_sentences=3 must be smaller than sentences_per_chunk=3"):
        chunk_document(doc(TEXT), "sentence", {"sentences_per_chunk": 3, "overlap_sentences": 3})


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"sentences_per_chunk": 0}, "sentences_per_chunk=0 is below the minimum 1"),
        ({"sentences_per_chunk": 201}, "sentences_per_chunk=201 is above the maximum 200"),
        ({"chunk_size": -1}, "chunk_size=-1 is below the minimum 0"),
        ({"chunk_size": 2, "length": "tokens"}, "chunk_size=2 tokens"),
        ({"length": "bytes"}, "length='bytes' is not one of"),
    ],
)
def test_bad_params(params, message):
    with pytest.raises(ParamError, match=message):
        chunk_document(doc(TEXT), "sentence", params)


def test_empty_document():
    assert chunk_document(doc(" \n\n "), "sentence") == []


def test_cjk_and_french():
    text = (
        "今天天气很好。我们去公园吧！你来吗？好的。\n\nM. Dupont est arrivé. « Vous venez ? » demanda-t-il."
    )
    cs = chunk_document(doc(text), "sentence", {"sentences_per_chunk": 2, "overlap_sentences": 0})
    assert [c.text for c in cs] == [
        "今天天气很好。我们去公园吧！",
        "你来吗？好的。",
        "M. Dupont est arrivé. « Vous venez ? » demanda-t-il.",
    ]


def test_thai_paragraph_is_grouped_by_its_sentences():
    """Thai has no end mark: the spaces between its words end sentences, so a paragraph is
    grouped whole sentence by sentence rather than cut at words once it exceeds the size."""
    sents = [
        "ประเทศไทยมีประชากรประมาณ 66 ล้านคน",  # a number inside: no end there
        "กรุงเทพมหานครเป็นเมืองหลวง",
        "ภาษาราชการคือภาษาไทย",
        "นักท่องเที่ยวหลายล้านคนมาเยือนทุกปี",
    ]
    text = " ".join(sents)
    params = {"sentences_per_chunk": 3, "overlap_sentences": 0, "chunk_size": 50}
    cs = chunk_document(doc(text), "sentence", params)
    assert not invariant_errors(doc(text), cs, 50)
    assert [c.text for c in cs] == [sents[0], " ".join(sents[1:3]), sents[3]]
    assert not any("split at words" in c.reason for c in cs)


def test_real_corpus_invariants(chroma_dir):
    text = (chroma_dir / "corpora" / "state_of_the_union.md").read_text(encoding="utf-8")
    d = doc(text)
    cs = chunk_document(
        d,
        "sentence",
        {"sentences_per_chunk": 6, "overlap_sentences": 2, "chunk_size": 120, "length": "tokens"},
    )
    assert not invariant_errors(d, cs, 120)
    sent_starts = {s for s, _ in sentence_spans(text)}
    # every chunk that is not a word-split piece starts at a sentence start
    assert all(c.start in sent_starts for c in cs if not c.reason.startswith("size limit: sentence"))


_TEXT = st.one_of(
    st.text(max_size=250),
    st.lists(
        st.sampled_from(
            ["Dr. Who. ", "Hi! ", "ok ", "。", "😀", "\n\n", "\n", "x" * 30, "e.g. ", "12. ", "«a» "]
        ),
        max_size=40,
    ).map("".join),
)


@settings(max_examples=120, deadline=None)
@given(
    _TEXT,
    st.integers(1, 6),
    st.data(),
    st.one_of(st.just(0), st.integers(1, 60)),
    st.sampled_from(["chars", "words", "cl100k", "tokens"]),
)
def test_invariants(text, per, data, size, unit):
    assume(unit != "tokens" or not 0 < size < 3)  # model tokens need room beside [CLS] and [SEP]
    overlap = data.draw(st.integers(0, per - 1), label="overlap")
    d = doc(text)
    params = {"sentences_per_chunk": per, "overlap_sentences": overlap, "chunk_size": size, "length": unit}
    cs = chunk_document(d, "sentence", params)
    assert not invariant_errors(d, cs, size or None)
    # no chunk is contained in the previous one (no redundant tails)
    for a, b in itertools.pairwise(cs):
        assert b.end > a.end


def test_token_counts_are_not_additive_group_is_measured_whole():
    # cl100k: "a." = 2 tokens, "12." = 2 tokens, but "a. 12." = 5 (" " becomes its own token)
    text = "a. 12."
    cs = chunk_document(
        doc(text),
        "sentence",
        {"sentences_per_chunk": 2, "overlap_sentences": 0, "chunk_size": 4, "length": "cl100k"},
    )
    assert [c.text for c in cs] == ["a.", "12."]
    assert cs[0].reason.startswith("size limit")
