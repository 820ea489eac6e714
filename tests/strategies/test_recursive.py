"""The recursive strategy: LangChain parity (chunk texts), true offsets, reasons, validation."""

from __future__ import annotations

import re
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_text_splitters import RecursiveCharacterTextSplitter
from langchain_text_splitters.character import _split_text_with_regex

import explorer.strategies.recursive as rec
import explorer.strategies.scanning as scanning
import explorer.strategies.splitting as splitting
from explorer import Document, LimitError, ParamError, chunk_document
from explorer.limits import MAX_SEPARATOR_CHARS
from explorer.strategies.invariants import invariant_errors
from explorer.strategies.recursive import compile_separator
from explorer.strategies.separators import split_bounds
from explorer.strategies.splitting import OVER_SIZE
from explorer.text.chunk import UNBREAKABLE
from explorer.text.length import get_length

LC_KEEP = {"start": True, "end": "end", "false": False}
DEFAULT_SEPS = ["\n\n", "\n", " ", ""]

PROSE = (
    "Chunking splits a document into pieces small enough to embed. Each piece should still make "
    "sense on its own, which is why splitters prefer paragraph breaks to sentence ends, and "
    "sentence ends to spaces.\n\n"
    "The recursive splitter tries separators in order. It splits on the first one found, keeps "
    "the pieces that fit, and recurses into the others with the remaining separators.\n"
    "A second line in the same paragraph.\n\n\n"
    "Overlap repeats the end of one chunk at the start of the next, so a sentence cut in two is "
    "still whole somewhere. Dr. Smith measured 3.5 percent more recall with it, e.g. on U.S. "
    "reports. " * 3
)
MARKDOWN = """# Title

Intro paragraph with **bold** text and a [link](http://example.com).

## Install

```python
def main():
    print("# not a heading")
    return 42
```

| col a | col b |
|-------|-------|
| 1     | 2     |

- item one
- item two
  continued

### Deep

Final words.
"""
CODE = '''import os


class Thing:
    """A thing."""

    def __init__(self, x):
        self.x = x

    def double(self):
        return self.x * 2


def helper(values):
    total = 0
    for v in values:
        total += v
    return total
'''
CJK = (
    "自然语言处理是人工智能的一个分支。它研究如何让计算机理解人类语言。" * 6
    + "\n\n"
    + "日本語の文章も同じです。" * 5
)
LONG_WORDS = "short " + "x" * 250 + " mid " + "Donaudampfschifffahrtsgesellschaftskapitän" * 4 + " end"
BLANK_LINES = "a\n\n\n\n\nb\n\n\n\n\n\n\nc" + "\n" * 30 + "d e f\n\n\n\n" * 5
TEXTS = {
    "prose": PROSE,
    "markdown": MARKDOWN,
    "code": CODE,
    "cjk": CJK,
    "long_words": LONG_WORDS,
    "blank_lines": BLANK_LINES,
    "empty": "",
    "spaces": "   \n\n  \t ",
    "emoji": "🙂🙃 " * 40 + "👨‍👩‍👧‍👦" * 10,
}
SETTINGS = [
    # (chunk_size, chunk_overlap, separators, keep_separator)
    (1000, 200, DEFAULT_SEPS, "start"),
    (200, 50, DEFAULT_SEPS, "start"),
    (100, 0, DEFAULT_SEPS, "end"),
    (60, 20, DEFAULT_SEPS, "false"),
    (120, 30, ["\n\n", "\n", ". ", " ", ""], "start"),
    (80, 20, ["\n\n", "。", "\n", ""], "end"),
    (40, 10, ["\n", " "], "start"),  # no "" : pieces that cannot be split are kept whole
    (10, 3, DEFAULT_SEPS, "start"),
    (1, 0, DEFAULT_SEPS, "start"),
]


def doc(text: str) -> Document:
    return Document("t.txt", "text", text)


def ours(text: str, size: int, overlap: int, seps, keep: str, unit: str = "chars", regex: bool = False):
    d = doc(text)
    params = {
        "chunk_size": size,
        "chunk_overlap": overlap,
        "separators": list(seps),
        "keep_separator": keep,
        "is_separator_regex": regex,
        "length": unit,
    }
    chunks = chunk_document(d, "recursive", params)
    assert not invariant_errors(d, chunks, size if unit in ("chars", "words") else None)
    return chunks


def langchain(text: str, size: int, overlap: int, seps, keep: str, unit: str = "chars", regex: bool = False):
    length = len if unit == "chars" else get_length(unit)
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=size,
        chunk_overlap=overlap,
        separators=list(seps),
        keep_separator=LC_KEEP[keep],
        is_separator_regex=regex,
        length_function=length,
    )
    return splitter.split_text(text)


def assert_same_chunks(lc: list[str], mine: list[str]) -> None:
    """Our chunks are LangChain's, except the documented drops: whitespace-only chunks, a
    chunk starting where the next one starts (it is then a prefix of it, or equal to the one
    before), and a chunk inside the one before (then its suffix)."""
    p = 0
    for j, c in enumerate(lc):
        if p < len(mine) and mine[p] == c:
            p += 1
            continue
        droppable = (
            not c.strip() or (j + 1 < len(lc) and lc[j + 1].startswith(c)) or (j > 0 and lc[j - 1].endswith(c))
        )
        assert droppable, f"chunk {j} differs: LangChain {c!r}, ours {mine[p] if p < len(mine) else None!r}"
    assert p == len(mine), f"extra chunks of ours: {mine[p:]!r}"


def no_separator_runs(text: str, seps) -> str:
    """Collapse runs of a separator (which LangChain re-joins with one separator when
    keep_separator is False: not a slice of the text, a documented deviation)."""
    changed = True
    while changed:
        changed = False
        for s in seps:
            if s and s + s in text:
                text = text.replace(s + s, s)
                changed = True
    return text


# -- parity on fixed texts ---------------------------------------------------------------------
@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: f"{s[0]}-{s[1]}-{s[3]}-{len(s[2])}seps")
@pytest.mark.parametrize("name", list(TEXTS))
def test_langchain_parity_chars(name, setting):
    size, overlap, seps, keep = setting
    text = TEXTS[name]
    if keep == "false":
        text = no_separator_runs(text, seps)
    mine = [c.text for c in ours(text, size, overlap, seps, keep)]
    assert_same_chunks(langchain(text, size, overlap, seps, keep), mine)


@pytest.mark.parametrize("unit", ["tokens", "cl100k", "words"])
@pytest.mark.parametrize(
    ("size", "overlap", "keep"), [(64, 16, "start"), (30, 0, "end"), (12, 4, "false"), (250, 0, "start")]
)
@pytest.mark.parametrize("name", ["prose", "markdown", "code", "cjk", "long_words"])
def test_langchain_parity_token_lengths(name, size, overlap, keep, unit):
    text = TEXTS[name]
    seps = ["\n\n", "\n", ".", "?", "!", " ", ""] if size == 250 else DEFAULT_SEPS
    if keep == "false":
        text = no_separator_runs(text, seps)
    chunks = ours(text, size, overlap, seps, keep, unit)
    assert_same_chunks(langchain(text, size, overlap, seps, keep, unit), [c.text for c in chunks])
    for c in chunks:  # token counts are not additive: an over-size chunk says why
        if c.length > size:
            assert OVER_SIZE in c.reason or c.reason.startswith(UNBREAKABLE), (c.length, c.reason)


def test_langchain_parity_on_chroma_corpus(chroma_dir):
    text = (chroma_dir / "corpora" / "state_of_the_union.md").read_text(encoding="utf-8")
    for size, overlap, seps, keep in [
        (400, 100, DEFAULT_SEPS, "start"),
        (250, 0, ["\n\n", "\n", ".", "?", "!", " ", ""], "start"),
    ]:
        mine = [c.text for c in ours(text, size, overlap, seps, keep)]
        assert_same_chunks(langchain(text, size, overlap, seps, keep), mine)
        assert len(mine) > 50


def test_parity_with_model_tokens_like_the_chroma_report(chroma_dir):
    text = (chroma_dir / "corpora" / "wikitexts.md").read_text(encoding="utf-8")[:30_000]
    seps = ["\n\n", "\n", ".", "?", "!", " ", ""]
    chunks = ours(text, 250, 0, seps, "start", "tokens")
    assert_same_chunks(langchain(text, 250, 0, seps, "start", "tokens"), [c.text for c in chunks])
    assert all(c.length <= 250 for c in chunks)  # the +2 per piece makes LangChain's count generous


@pytest.mark.parametrize("keep", ["start", "end"])
def test_regex_separators_parity(keep):
    seps = [r"\n\n+", r"(?<=[.!?])\s+", r"\s", ""]
    mine = [c.text for c in ours(PROSE, 90, 20, seps, keep, regex=True)]
    assert_same_chunks(langchain(PROSE, 90, 20, seps, keep, regex=True), mine)


def test_keep_false_is_refused_where_langchain_drops_text():
    # LangChain re-joins with the pattern itself: "\\." ends up in the chunk text
    lc = langchain("One. Two. Three.", 20, 0, [r"\. ", ""], "false", regex=True)
    assert lc == ["One\\. Two\\. Three."]
    with pytest.raises(ParamError, match="is_separator_regex=true is refused"):
        ours("One. Two. Three.", 20, 0, [r"\. ", ""], "false", regex=True)
    # a literal separator with text in it would lose that text at chunk boundaries
    assert "".join(langchain("One. Two. Three.", 8, 0, [". ", ""], "false")).count(".") < 3
    with pytest.raises(ParamError, match=r"would drop the separator '\. '"):
        ours("One. Two. Three.", 8, 0, [". ", ""], "false")


# -- parity on generated texts -----------------------------------------------------------------
FRAGMENTS = st.sampled_from(
    [
        " ",
        "  ",
        "\n",
        "\n\n",
        "\n\n\n\n",
        ". ",
        "word",
        "other",
        "longerwordwithoutspaces",
        "é",
        "中文字符",
        "。",
        "🙂",
        "\t",
        "# Heading\n",
        "```\ncode\n```\n",
        "| a | b |\n",
        "x" * 40,
    ]
)
GEN_TEXT = st.one_of(
    st.lists(FRAGMENTS, max_size=60).map("".join),
    st.text(max_size=200),
    st.text(alphabet=" \n.ab中", max_size=200),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=GEN_TEXT,
    size=st.integers(1, 60),
    overlap_frac=st.floats(0, 0.9),
    keep=st.sampled_from(["start", "end", "false"]),
    seps=st.sampled_from(
        [DEFAULT_SEPS, ["\n\n", "\n", ". ", " ", ""], ["\n", " "], ["\n\n", "中", ""], [" "]]
    ),
    vector=st.booleans(),
)
def test_langchain_parity_generated(text, size, overlap_frac, keep, seps, vector):
    """``vector``: one-character separators found with numpy even in short texts."""
    overlap = min(int(size * overlap_frac), size - 1)
    if keep == "false":
        if any(s.strip() for s in seps):
            with pytest.raises(ParamError, match="would drop the separator"):
                ours(text, size, overlap, seps, keep)
            return
        text = no_separator_runs(text, seps)
    with patch.object(scanning, "VECTOR_MIN_CHARS", 0 if vector else 10**9):
        mine = [c.text for c in ours(text, size, overlap, seps, keep)]
    assert_same_chunks(langchain(text, size, overlap, seps, keep), mine)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=GEN_TEXT,
    size=st.integers(1, 60),
    overlap_frac=st.floats(0, 0.95),
    seps=st.sampled_from([DEFAULT_SEPS, ["\n", " "], [" "], ["\n\n", "中", ""], ["e", " ", ""]]),
)
def test_scanned_split_is_the_general_split(text, size, overlap_frac, seps):
    """Characters with one-character separators kept at the start are scanned with
    ``str.rfind`` instead of listing pieces: the same pieces and reasons as the general path."""
    overlap = min(int(size * overlap_frac), size - 1)

    def pieces(scan: bool):
        splitter = splitting.RecursiveSplitter(text, chunk_size=size, chunk_overlap=overlap, separators=seps)
        splitter.scan = scan
        return splitter.split()

    assert pieces(True) == pieces(False)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=GEN_TEXT,
    size=st.integers(3, 60),
    overlap_frac=st.floats(0, 0.9),
    model=st.sampled_from(["all-MiniLM-L6-v2", None]),
)
def test_gap_counted_split_is_the_general_split(text, size, overlap_frac, model):
    """With model tokens, line and word pieces are looked up in the index's gap counts (from
    one separator to the next) instead of counted per split: the same pieces and reasons."""
    tokens = get_length("tokens", model)
    overlap = min(int(size * overlap_frac), size - 1)
    with patch.object(splitting, "TOKEN_INDEX_MIN_CHARS", 0):
        counter = splitting.token_counter(text, tokens)

    def pieces(gaps: bool):
        splitter = splitting.RecursiveSplitter(
            text, chunk_size=size, chunk_overlap=overlap, length=tokens, span_length=counter
        )
        assert splitter._gap_index is not None
        if not gaps:
            splitter._gap_index = None
        return splitter.split()

    assert pieces(True) == pieces(False)
    index = counter.__self__
    for sep in ("\n", " "):
        pos, counts = index.gap_counts(sep)
        direct = [tokens(text[p:q]) for p, q in zip(pos[:-1].tolist(), pos[1:].tolist(), strict=True)]
        assert counts.tolist() == direct


@settings(max_examples=60, deadline=None)
@given(
    text=GEN_TEXT,
    size=st.integers(3, 40),
    keep=st.sampled_from(["start", "end", "false"]),
    use_index=st.booleans(),
)
def test_langchain_parity_generated_model_tokens(text, size, keep, use_index):
    """Also with the token index (counts from one pass over the text) forced on short texts,
    and then with one-character separators found in numpy (counts as arrays)."""
    if keep == "false":
        text = no_separator_runs(text, DEFAULT_SEPS)
    with (
        patch.object(splitting, "TOKEN_INDEX_MIN_CHARS", 0 if use_index else 10**9),
        patch.object(scanning, "VECTOR_MIN_CHARS", 0 if use_index else 10**9),
        patch.object(splitting, "VECTOR_MIN_CHARS", 0 if use_index else 10**9),
    ):
        mine = [c.text for c in ours(text, size, size // 4, DEFAULT_SEPS, keep, "tokens")]
    assert_same_chunks(langchain(text, size, size // 4, DEFAULT_SEPS, keep, "tokens"), mine)


@settings(max_examples=100, deadline=None)
@given(text=GEN_TEXT, data=st.data())
def test_token_index_counts_are_exact(text, data):
    """What the splitter relies on: a count from the index is the tokenizer's own count, for
    MiniLM's WordPiece and e5's SentencePiece tokenizers."""
    model = data.draw(st.sampled_from(["all-MiniLM-L6-v2", None]))
    tokens = get_length("tokens", model)
    with patch.object(splitting, "TOKEN_INDEX_MIN_CHARS", 0):
        count = splitting.token_counter(text, tokens)
    assert count is not None
    s = data.draw(st.integers(0, len(text)))
    e = data.draw(st.integers(s, len(text)))
    assert count([s], [e]) == [tokens(text[s:e]) if e > s else tokens.special]


@settings(max_examples=150, deadline=None)
@given(
    text=st.text(alphabet="ab \n.", max_size=60),
    pattern=st.sampled_from(["a", "ab", " ", "\n\n", r"\s+", r"b*", r"(?<=\.)", r"(?=a)", r"\n|\.", "[ab]"]),
    keep=st.sampled_from(["start", "end", "false"]),
)
def test_pieces_are_langchains_splits(text, pattern, keep):
    """The split step alone: our (start, end) pieces are exactly re.split's pieces, for regex
    and literal separators, on a whole text or a range of it."""
    expected = _split_text_with_regex(text, pattern, keep_separator=LC_KEEP[keep])
    starts, ends = split_bounds(text, 0, len(text), pattern, keep, compile_separator(pattern), 5.0)
    assert [text[s:e] for s, e in zip(starts, ends, strict=True)] == expected
    literal = _split_text_with_regex(text, re.escape(pattern), keep_separator=LC_KEEP[keep])
    starts, ends = split_bounds(text, 0, len(text), pattern, keep)
    assert [text[s:e] for s, e in zip(starts, ends, strict=True)] == literal
    padded = "xy" + text + "z"
    starts, ends = split_bounds(padded, 2, 2 + len(text), pattern, keep)
    assert [padded[s:e] for s, e in zip(starts, ends, strict=True)] == literal


# -- offsets, reasons, deviations ----------------------------------------------------------------
def test_offsets_are_true_where_find_would_be_wrong():
    text = "same words again. " * 40
    chunks = ours(text, 50, 20, DEFAULT_SEPS, "start")
    # LangChain's add_start_index searches the text; ours come from construction and differ
    # from str.find's first match for the repeated chunks.
    assert any(text.find(c.text) != c.start for c in chunks)
    assert all(text[c.start : c.end] == c.text for c in chunks)
    assert [c.start for c in chunks] == sorted({c.start for c in chunks})


def test_reasons_golden():
    text = "First paragraph here.\n\nSecond one is a good deal longer than the first.\n\nThird."
    chunks = ours(text, 30, 0, DEFAULT_SEPS, "start")
    assert [(c.text, c.reason) for c in chunks] == [
        ("First paragraph here.", "separator '\\n\\n'"),
        ("Second one is a good deal", "separator ' '"),
        ("longer than the first.", "separator '\\n\\n'"),
        ("Third.", "end of text"),
    ]
    assert [c.start for c in chunks] == [0, 23, 49, 73]


def test_reason_size_limit_when_split_between_characters():
    chunks = ours("abcdefghijklmnop", 5, 0, DEFAULT_SEPS, "start")
    assert [c.text for c in chunks] == ["abcde", "fghij", "klmno", "p"]
    assert [c.reason for c in chunks] == ["size limit"] * 3 + ["end of text"]


def test_unbreakable_piece_is_kept_whole_and_says_so():
    text = "short line\n" + "y" * 50 + "\nend"
    chunks = ours(text, 20, 0, ["\n"], "start")
    assert [c.text for c in chunks] == ["short line", "\n" + "y" * 50, "end"]
    assert chunks[1].reason.startswith(UNBREAKABLE)
    assert chunks[1].length == 51
    assert langchain(text, 20, 0, ["\n"], "start") == [c.text for c in chunks]


def test_keep_separator_false_deviation_is_the_true_slice():
    text = "a\n\n\n\nb"
    assert langchain(text, 10, 0, DEFAULT_SEPS, "false") == ["a\n\nb"]  # not in the text
    chunks = ours(text, 10, 0, DEFAULT_SEPS, "false")
    assert [c.text for c in chunks] == ["a\n\n\n\nb"]
    assert (chunks[0].start, chunks[0].end) == (0, 6)


def test_whitespace_only_pieces_and_same_start_chunks_are_dropped():
    # keep start: "\n" alone is a piece; with overlap LangChain then emits two chunks that
    # start at the same character, the first a prefix of the second. We keep the longer one.
    text = "para.\n\n\nxxxxxxxxx\nyyyyyyyyy"
    assert langchain(text, 20, 10, DEFAULT_SEPS, "start") == ["para.", "xxxxxxxxx", "xxxxxxxxx\nyyyyyyyyy"]
    chunks = ours(text, 20, 10, DEFAULT_SEPS, "start")
    assert [c.text for c in chunks] == ["para.", "xxxxxxxxx\nyyyyyyyyy"]
    assert chunks[1].start == 8
    # an unsplittable whitespace-only piece: LangChain returns it, we do not
    text = "word\n" + " " * 30 + "\nnext"
    assert langchain(text, 5, 0, ["\n"], "start") == ["word", "\n" + " " * 30, "\nnext"]
    assert [c.text for c in ours(text, 5, 0, ["\n"], "start")] == ["word", "\nnext"]


def test_a_chunk_inside_the_previous_one_is_dropped():
    # keep end: " " ends the piece "installer: "; with overlap LangChain's next chunk is the
    # previous one's last 5 characters and that blank, stripped: "ller:", inside "installer:"
    text = "installer: \nnext"
    assert langchain(text, 10, 5, DEFAULT_SEPS, "end") == ["installer:", "ller:", "next"]
    chunks = ours(text, 10, 5, DEFAULT_SEPS, "end")
    assert [(c.start, c.end, c.text) for c in chunks] == [(0, 10, "installer:"), (12, 16, "next")]
    assert chunks[0].reason == "separator ' '"  # the dropped chunk's: the blank ends it


def test_defaults_and_params():
    from explorer import get_strategy

    s = get_strategy("recursive")
    d = s.defaults()
    assert (d["chunk_size"], d["chunk_overlap"], d["keep_separator"]) == (1000, 200, "start")
    assert list(d["separators"]) == DEFAULT_SEPS
    chunks = chunk_document(doc(PROSE), "recursive", {"separators": '["\\n\\n", " "]'})
    assert chunks and all(c.length <= 1000 for c in chunks)


# -- validation ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"chunk_size": 100, "chunk_overlap": 100}, "chunk_overlap=100 must be smaller than chunk_size=100"),
        ({"chunk_size": 10, "chunk_overlap": 50}, "chunk_overlap=50 must be smaller than chunk_size=10"),
        ({"separators": []}, "separators=\\[\\] is empty"),
        ({"separators": ["x" * (MAX_SEPARATOR_CHARS + 1)]}, f"is {MAX_SEPARATOR_CHARS + 1} characters long"),
        ({"separators": ["(unclosed"], "is_separator_regex": True}, "not a valid regular expression"),
        ({"separators": ["(a)b"], "is_separator_regex": True}, "capturing group"),
        ({"separators": ["(?:a+)+$"], "is_separator_regex": True}, "quantifier inside a repeated group"),
        ({"separators": ["(?:a|ab)*c"], "is_separator_regex": True}, "alternation inside a repeated group"),
        ({"separators": ["(?P<x>a)(?P=x)"], "is_separator_regex": True}, "capturing group"),
        ({"keep_separator": "both"}, "keep_separator='both' is not one of"),
        ({"chunk_size": 2, "chunk_overlap": 0, "length": "tokens"}, "no room beside"),
        ({"separators": "not json"}, "separators="),
    ],
)
def test_bad_params_name_the_value(params, message):
    with pytest.raises(ParamError, match=message):
        chunk_document(doc("some text"), "recursive", params)


def test_unsafe_regex_is_refused_but_literal_is_fine():
    # as a literal the same characters are harmless
    chunks = chunk_document(doc("a(a+)+b " * 20), "recursive", {"chunk_size": 30, "chunk_overlap": 0,
                                                                 "separators": ["(a+)+", " "]})  # fmt: skip
    assert chunks
    safe = [r"\n#{1,6} ", r"(?<=[.!?])\s+", r"\s*\n\s*", r"(?:\r?\n){2,}"]
    for pattern in safe:
        chunk_document(
            doc("x. y\n\nz"), "recursive", {"separators": [pattern, ""], "is_separator_regex": True}
        )
    assert re.compile(safe[0])


def test_regex_time_budget_gives_a_clear_error(monkeypatch):
    text = ("word " * 50 + "\n") * 2000
    params = {
        "chunk_size": 50,
        "chunk_overlap": 0,
        "separators": [r"\s+(?=w)", ""],
        "is_separator_regex": True,
    }
    assert chunk_document(doc(text[:5000]), "recursive", params)
    monkeypatch.setattr(splitting, "REGEX_TIME_BUDGET_S", 1e-6)
    with pytest.raises(LimitError, match=r"regex separators \['\\\\s\+\(\?=w\)'\] took over"):
        chunk_document(doc(text), "recursive", params)


def test_regex_matching_is_fast_where_re_is_quadratic():
    # Python's re needs ~0.4 s for 10k spaces with r"\s+x" and grows with the square; the
    # regex module rejects it at once. Not a timing assertion: it must simply finish.
    text = "a" + " " * 200_000 + "b"
    chunks = ours(text, 1000, 0, [r"\s+x", " ", ""], "start", regex=True)
    assert [c.text for c in chunks] == ["a", "b"]


def test_too_many_chunks_is_refused_before_splitting(monkeypatch):
    monkeypatch.setattr(rec, "MAX_CHUNKS", 100)
    with pytest.raises(LimitError, match=r"recursive would make over 100 chunks of 't\.txt'"):
        chunk_document(doc("abcdefghij " * 200), "recursive", {"chunk_size": 10, "chunk_overlap": 0})
    # spaces do not count: this one fits in 100 chunks of 10 characters
    assert chunk_document(doc("x" + " " * 5000), "recursive", {"chunk_size": 10, "chunk_overlap": 0})


def test_a_line_without_separators_is_cut_by_arithmetic_not_a_list_of_characters():
    """The "" separator on 2 M characters with no space: windows of chunk_size found without a
    list of every character's offsets (~90 bytes a character: 1.8 GB for a 20 MB upload)."""
    import tracemalloc

    doc = Document("line.txt", "text", "word" * 500_000)
    tracemalloc.start()
    try:
        chunks = chunk_document(doc, "recursive", {"chunk_size": 1000, "chunk_overlap": 200})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [(c.start, c.end) for c in chunks[:3]] == [(0, 1000), (800, 1800), (1600, 2600)]
    assert chunks[-1].end == len(doc.text) and len(chunks) == 2500
    assert peak < 40 * 2**20, f"{peak / 2**20:.0f} MB"  # 178 MB before


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.text(alphabet=st.sampled_from("ab,.é\u2003\t\x1c-"), min_size=1, max_size=300),
    size=st.integers(2, 40),
    overlap_share=st.floats(0, 0.9),
)
def test_words_cut_a_run_without_whitespace_as_characters_and_as_before(text, size, overlap_share):
    """In words, each character of a range without whitespace is one word, so the "" separator
    cuts it by the characters' arithmetic (a 20 MB line took 3.9 GB listing every character);
    the chunks and reasons are those the general path gives, whitespace of every kind around."""
    params = {"chunk_size": size, "chunk_overlap": int(size * overlap_share), "length": "words"}
    fast = chunk_document(doc(text), "recursive", params)
    with patch.object(splitting.RecursiveSplitter, "_a_word_each", lambda self, a, b: False):
        general = chunk_document(doc(text), "recursive", params)
    assert [(c.start, c.end, c.reason) for c in fast] == [(c.start, c.end, c.reason) for c in general]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.text(alphabet=st.sampled_from("ab,.é中ー\u200b\x1c-😀Q\u0301"), min_size=1, max_size=300),
    size=st.integers(3, 30),
    overlap_share=st.floats(0, 0.9),
    unit=st.sampled_from(["tokens", "cl100k", "words"]),
)
def test_tokens_cut_a_run_without_whitespace_by_each_characters_count_as_before(text, size, overlap_share, unit):
    """In model or OpenAI tokens, the "" separator's pieces (every character) are measured as
    each distinct character alone, in arrays (a 20 MB line listed and counted 20 million pieces:
    over 60 s and 2.1 GB); chunks, reasons and lengths are those of the general path, with
    characters of several tokens, of none (a zero-width space) and combining marks."""
    params = {"chunk_size": size, "chunk_overlap": int(size * overlap_share), "length": unit}
    with patch.object(splitting, "VECTOR_MIN_CHARS", 0):
        fast = chunk_document(doc(text), "recursive", params)
    with patch.object(splitting, "VECTOR_MIN_CHARS", 10**9):
        general = chunk_document(doc(text), "recursive", params)
    assert [(c.start, c.end, c.reason, c.length) for c in fast] == [
        (c.start, c.end, c.reason, c.length) for c in general
    ]


def test_a_line_without_separators_in_tokens_is_not_a_list_of_characters():
    """500 K characters with no space in e5's tokens: each distinct character counted once, the
    pieces kept as arrays (the general path: 16 s and 96 MB traced here; 20 MB: 2.1 GB)."""
    import string
    import tracemalloc

    alphabet = string.ascii_letters + string.digits + "+/"
    text = "".join(alphabet[(i * 7919) % 61 % len(alphabet)] for i in range(500_000))
    counted: list[int] = []
    tokens = get_length("tokens")
    real = type(tokens).count_batch
    with patch.object(type(tokens), "count_batch", lambda self, xs: counted.append(len(xs)) or real(self, xs)):
        tracemalloc.start()
        try:
            chunks = chunk_document(doc(text), "recursive", {"chunk_size": 256, "chunk_overlap": 0, "length": "tokens"})
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert chunks[-1].end == len(text) and all(c.length <= 256 for c in chunks)
    assert counted and counted[0] <= len(alphabet), counted[:3]  # distinct characters, not 500 K pieces
    assert peak < 48 * 2**20, f"{peak / 2**20:.0f} MB"
