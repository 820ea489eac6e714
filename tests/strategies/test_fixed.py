import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from explorer import Document, ParamError, chunk_document
from explorer.strategies.invariants import invariant_errors


def doc(text: str) -> Document:
    return Document("t.txt", "text", text)


def test_char_windows_golden():
    cs = chunk_document(doc("abcdefghij"), "fixed", {"chunk_size": 4, "chunk_overlap": 1})
    assert [(c.start, c.end) for c in cs] == [(0, 4), (3, 7), (6, 10)]
    assert [c.reason for c in cs] == ["size limit", "size limit", "end of text"]


def test_no_redundant_tail():
    # 10 chars, size 6, overlap 2: windows at 0 and 4; 4..10 already reaches the end.
    cs = chunk_document(doc("abcdefghij"), "fixed", {"chunk_size": 6, "chunk_overlap": 2})
    assert [(c.start, c.end) for c in cs] == [(0, 6), (4, 10)]


def test_a_window_trimmed_to_the_previous_start_replaces_it_and_loses_nothing():
    """Size 3, overlap 1 on "on\n\nThe": the window "\n\nT" trims to "T" and the next, "The",
    trims to the same start; it was skipped as a repeat, and "he" was in no chunk."""
    d = doc("# Pump station\n\nThe pump")
    cs = chunk_document(d, "fixed", {"chunk_size": 3, "chunk_overlap": 1})
    assert not invariant_errors(d, cs, 3)
    assert (16, 19) in [(c.start, c.end) for c in cs] and (16, 17) not in [(c.start, c.end) for c in cs]
    assert len({c.start for c in cs}) == len(cs)  # one chunk per start (hits are keyed by it)


def test_overlap_must_be_smaller():
    with pytest.raises(ParamError, match="chunk_overlap=5 must be smaller than chunk_size=5"):
        chunk_document(doc("abc"), "fixed", {"chunk_size": 5, "chunk_overlap": 5})


def test_model_tokens_counts_cls_sep_and_respects_size():
    text = "The quick brown fox jumps over the lazy dog. " * 20
    cs = chunk_document(doc(text), "fixed", {"chunk_size": 12, "length": "tokens"})
    assert all(c.length <= 12 for c in cs)
    assert max(c.length for c in cs) == 12
    assert not invariant_errors(doc(text), cs, 12)


@settings(max_examples=60, deadline=None)
@given(
    st.text(min_size=0, max_size=300),
    st.integers(1, 40),
    st.data(),
    st.sampled_from(["chars", "words", "cl100k", "tokens"]),
)
def test_invariants(text, size, data, unit):
    assume(unit != "tokens" or size >= 3)  # model tokens need room beside [CLS] and [SEP]
    overlap = data.draw(st.integers(0, size - 1), label="overlap")
    d = doc(text)
    cs = chunk_document(d, "fixed", {"chunk_size": size, "chunk_overlap": overlap, "length": unit})
    assert not invariant_errors(d, cs, size if unit != "words" else None)


#: Letters with marks that belong to them: a Thai syllable, decomposed Vietnamese, a Hindi
#: conjunct, an emoji with a skin tone and a zero-width-joiner sequence.
JOINED = ["กำลัง", "tie\u0302\u0301ng", "क्षमा", "👍🏽", "👩\u200d💻", " ", "ab"]


@settings(max_examples=120, deadline=None)
@given(
    st.lists(st.sampled_from(JOINED), min_size=1, max_size=80).map("".join),
    st.integers(3, 30),
    st.data(),
    st.sampled_from(["chars", "tokens"]),
)
def test_cuts_never_split_a_character_from_its_marks(text, size, data, unit):
    """A Thai vowel sign, an accent of decomposed text, a conjunct after a virama, a skin tone
    or a joined emoji stays with the character before it (9 of 42 Thai chunks of 25 characters
    began with a vowel sign): every chunk starts and ends where a reader's character does, and
    the chunks still cover the text within the size."""
    from explorer.text.words import splits_character

    overlap = data.draw(st.integers(0, size - 1), label="overlap")
    d = doc(text)
    cs = chunk_document(d, "fixed", {"chunk_size": size, "chunk_overlap": overlap, "length": unit})
    assert not invariant_errors(d, cs, size if unit == "chars" else None)
    assert not [c for c in cs if splits_character(text, c.start) or splits_character(text, c.end)]
    for strategy in ("sentence", "paragraph"):
        params = {"chunk_size": size, "length": unit}
        assert not [c for c in chunk_document(d, strategy, params) if splits_character(text, c.start)]


#: Characters of several code points that hold no combining mark: flags (pairs of regional
#: indicators, a run of them read pair by pair) and decomposed Hangul (NFD Korean, as macOS writes it).
FLAGS_AND_JAMO = ["🇫🇷", "🇩🇪🇯🇵", "\u1112\u1161\u11ab\u1100\u116e\u11a8", "\u110b\u1165", " ", "ab"]


@settings(max_examples=120, deadline=None)
@given(
    st.lists(st.sampled_from(FLAGS_AND_JAMO), min_size=1, max_size=60).map("".join),
    st.integers(1, 30),
    st.data(),
    st.sampled_from(["chars", "tokens"]),
)
def test_cuts_fall_where_unicode_says_a_character_ends(text, size, data, unit):
    """Every chunk of ``fixed`` starts and ends on a grapheme cluster boundary as the ``regex``
    module's ``\\X`` finds them (UAX #29): "🇫🇷🇩🇪" had been cut into "🇫" and "🇷🇩🇪" (two
    letters in boxes and a flag of no country), 한 into ᄒ and ᅡᆫ."""
    import regex

    assume(unit != "tokens" or size >= 3)
    bounds = {0} | {m.end() for m in regex.finditer(r"\X", text)}
    overlap = data.draw(st.integers(0, size - 1), label="overlap")
    d = doc(text)
    cs = chunk_document(d, "fixed", {"chunk_size": size, "chunk_overlap": overlap, "length": unit})
    assert not invariant_errors(d, cs)
    assert [(c.start, c.end) for c in cs if c.start not in bounds or c.end not in bounds] == []


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 400), st.integers(1, 40), st.data())
def test_character_windows_are_the_arithmetic_ones_where_no_cut_splits_a_character(n, size, data):
    from explorer.strategies.fixed import _window_starts
    from explorer.strategies.packing import character_windows

    step = size - data.draw(st.integers(0, size - 1), label="overlap")
    text = "ab c" * (n // 4 + 1)
    expected = [(i, min(i + size, len(text))) for i in _window_starts(len(text), size, step)]
    assert character_windows(text, size, step) == expected


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from([*JOINED, *FLAGS_AND_JAMO, "அவன் ", "வந்தான்", "க்ஷ", "\u200d", "\u0301", "🇫"]), max_size=60).map("".join))
def test_joined_at_is_every_offset_that_splits_a_character(text):
    """One scan finds what the per-offset check says (fixed filters token starts by it); a
    Tamil pulli (a virama) before a space ends a word and is no cut inside one (a reviewer's
    case: every Tamil chunk ending at a space was flagged mid-word)."""
    from explorer.text.words import cut_in_word, joined_at, splits_character

    assert joined_at(text) == {i for i in range(len(text) + 1) if splits_character(text, i)}
    tamil = "அவன் வந்தான்"
    assert not cut_in_word(tamil, 4) and splits_character("क्षमा", 2)


@pytest.mark.parametrize("unit", ["cl100k", "o200k"])
def test_token_windows_of_a_long_text_without_a_letter_before_a_space(unit):
    """Chinese lines ending in "。" (no letter or digit before any space in 32 KB) leave the token
    index inexact, with no token starts: ``fixed`` had made the whole 57,000 characters one
    "unbreakable" chunk of 48,000 tokens. Its windows now come from the tokenizer's own spans."""
    from explorer.text.token_counts import INDEX_PIECE_CHARS

    text = "这是一个关于中文文本处理的测试句子。\n" * 3000
    assert len(text) > INDEX_PIECE_CHARS
    d = doc(text)
    cs = chunk_document(d, "fixed", {"chunk_size": 200, "chunk_overlap": 20, "length": unit})
    assert not invariant_errors(d, cs, 200)
    assert len(cs) > 100 and max(c.length for c in cs) <= 200
