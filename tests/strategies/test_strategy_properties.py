"""Invariants of EVERY registered strategy on generated text and generated parameters.

For each strategy in the registry (new ones are picked up automatically): hypothesis draws a
text (Unicode, CJK, emoji, very long words, no separators at all, many newlines, Markdown-ish
lines; Markdown texts also get their block structure) and a parameter set within each Param's
bounds (small sizes), and ``invariant_errors`` must be empty: chunks are true slices, never
empty or whitespace-only, starts strictly increase, every non-space character is covered, and
(in characters, where re-measuring is exact) no chunk is over ``chunk_size`` unless its reason
says the unit was unbreakable. Strategies that embed run with the deterministic FakeEmbedder.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from explorer import Context, Document, ParamError, all_strategies
from explorer.documents.markdown_blocks import markdown_blocks
from explorer.embedding.fake import FakeEmbedder
from explorer.strategies.invariants import invariant_errors
from explorer.strategies.params import BOOL, CHOICE, FLOAT, INT, Param

STRATEGIES = all_strategies()

EMOJI = ["🙂", "👍🏽", "👨‍👩‍👧‍👦", "🇫🇷", "❤️", "🧪"]
MD_LINES = [
    "# Title",
    "## Section two",
    "### Deep heading",
    "####### seven hashes",
    "Setext title",
    "======",
    "```",
    "```python",
    "def f(x):",
    "    return x  # not a heading",
    "| a | b |",
    "|---|---|",
    "| 1 | 2 |",
    "- item",
    "  - nested item",
    "1. first",
    "> quoted text",
    "<div>html</div>",
    "---",
    "A paragraph line with words. And a second sentence!",
    "Run the installer:",
    "2. Create the file :",
    "",
    "",
]

#: Thai words (a space between two ends a sentence), with a number, a Latin word and ๆ beside them.
THAI_PIECES = ["ภาษาไทย", "ดีมาก", " ", "  ", "\n", "2566", "Python", "ๆ"]

#: Pieces that text from the wild joins in ways the other generators rarely draw: no-break spaces
#: beside marks (French typography), decomposed accents, flags, decomposed Hangul, a soft hyphen,
#: a BOM or a zero-width space inside a line, line and paragraph separators.
ODD_PIECES = [
    "mot", "é", "e\u0301", "\u00a0", "\u202f", " ", "\n", "\n\n", "?", "!", ":", "«", "»", "🇫🇷",
    "\u1112\u1161\u11ab", "\u00ad", "\ufeff", "\u200b", "\u2028", "Dr.", "...", "# T", "```", "| a |",
]

TEXTS = st.one_of(
    st.lists(st.sampled_from(ODD_PIECES), max_size=60).map("".join),
    st.text(max_size=300),
    st.text(
        alphabet=st.characters(min_codepoint=0x4E00, max_codepoint=0x4FFF) | st.sampled_from("。！？\n"),
        max_size=300,
    ),
    st.lists(st.sampled_from([*EMOJI, " ", "\n", "x"]), max_size=80).map("".join),
    st.text(alphabet="abcXYZé", min_size=1, max_size=500),  # one very long word, no separator
    st.lists(st.sampled_from(["\n", "\n\n\n", "word", " ", "\t", ".", "Mr. A. said so."]), max_size=80).map(
        "".join
    ),
    st.lists(st.sampled_from(MD_LINES), max_size=40).map("\n".join),
    st.lists(st.sampled_from(THAI_PIECES), max_size=60).map("".join),
)


def _int_param(p: Param, name: str) -> st.SearchStrategy[int]:
    lo = int(p.min if p.min is not None else 0)
    hi = int(p.max if p.max is not None else lo + 1000)
    cap = 200 if "size" in name else 12  # small sizes make many chunks and edge cases
    return st.integers(lo, max(lo, min(hi, lo + cap)))


def _param_value(p: Param) -> st.SearchStrategy:
    if p.kind is INT:
        return _int_param(p, p.name)
    if p.kind is FLOAT:
        if p.min is None or p.max is None:
            return st.just(p.default)
        return st.floats(p.min, p.max, allow_nan=False)
    if p.kind is BOOL:
        return st.booleans()
    if p.kind is CHOICE:
        return st.sampled_from(p.choices)
    return st.just(p.default)  # str_list, str: the default (recursive's own tests vary them)


@st.composite
def params_for(draw, strategy) -> dict:
    values = {p.name: draw(_param_value(p)) for p in strategy.params}
    return {k: v for k, v in values.items() if v is not None}  # None = "the default" (e.g. floats)


def make_doc(text: str, markdown: bool) -> Document:
    if markdown:
        text = text.replace("\r", "\n")  # the loader's line-end normalisation
        return Document("gen.md", "markdown", text, blocks=markdown_blocks(text))
    return Document("gen.txt", "text", text)


def size_to_check(p: dict) -> int | None:
    """chunk_size where re-measuring is exact (characters) and the strategy has one."""
    size = p.get("chunk_size")
    if size and p.get("length", "chars") == "chars":
        return size
    return None


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.name)
@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
@given(data=st.data(), text=TEXTS, markdown=st.booleans())
def test_invariants_hold(strategy, data, text, markdown):
    raw = data.draw(params_for(strategy), label="params")
    try:
        p = strategy.validate(raw)
    except ParamError:
        reject()
    doc = make_doc(text, markdown)
    ctx = Context(embedder=FakeEmbedder()) if strategy.needs_embedder else Context()
    chunks = strategy.chunk(doc, p, ctx)
    assert not invariant_errors(doc, chunks, size_to_check(p))
    if doc.text.strip():
        assert chunks, "a document with text produced no chunk"


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.name)
def test_defaults_on_edge_texts(strategy):
    ctx = Context(embedder=FakeEmbedder()) if strategy.needs_embedder else Context()
    for text in ["", " \n\t ", "x", "a" * 5000, "\n" * 100 + "end", "中" * 3000, "🙂" * 2000]:
        doc = make_doc(text, markdown=False)
        chunks = strategy.chunk(doc, {}, ctx)
        assert not invariant_errors(doc, chunks, size_to_check(strategy.validate({})))


#: Markdown whose blocks outgrow small sizes: long paragraphs and items, lead-ins, fences, tables.
LONG_MD_BLOCKS = [
    "# Install",
    "## Steps",
    "A paragraph long enough to be split into several pieces at small sizes. It has words.",
    "Run the installer with these requirements:",
    "```bash\npip install chunk-explorer\npython -m explorer chunk --help\n```",
    "| name | value |\n|---|---|\n| size | 10 |\n| overlap | 5 |",
    "- a first item of a list that goes on\n- 2. Create the file:\n\n  ```\n  x = 1\n  ```",
    "> a quoted paragraph, quite long as well, ending here.",
    "words words words words words words \n\n",
]
#: Words as long as a small size, then whitespace: an overlap window there ends in blanks only.
WORDS_AND_BLANKS = st.lists(
    st.sampled_from(["a", "word", "installer:", "abcdefghijklmnop", " ", " \n", "\n\n", "\t"]), max_size=40
).map("".join)


@st.composite
def small_sizes(draw, strategy) -> dict:
    """Parameters with every size small and every overlap drawn below its size."""
    raw = draw(params_for(strategy))
    size = draw(st.integers(2, 24))
    for p in strategy.params:
        if p.kind is INT and p.name.endswith("size"):
            raw[p.name] = size
    if "chunk_overlap" in raw:
        raw["chunk_overlap"] = draw(st.integers(0, size - 1))
    if "overlap_sentences" in raw:
        raw["overlap_sentences"] = draw(st.integers(0, raw["sentences_per_chunk"] - 1))
    return raw


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.name)
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    text=st.one_of(
        TEXTS, WORDS_AND_BLANKS, st.lists(st.sampled_from(LONG_MD_BLOCKS), max_size=12).map("\n\n".join)
    ),
)
def test_no_chunk_lies_inside_the_previous_one(strategy, data, text):
    """Overlap at small sizes: every chunk ends strictly past the previous chunk's end (a chunk
    inside the previous one, e.g. the overlap of a split block and then only whitespace, adds
    nothing), and starts strictly increase."""
    try:
        p = strategy.validate(data.draw(small_sizes(strategy), label="params"))
    except ParamError:
        reject()
    doc = make_doc(text, markdown=True)
    ctx = Context(embedder=FakeEmbedder()) if strategy.needs_embedder else Context()
    chunks = strategy.chunk(doc, p, ctx)
    for a, b in itertools.pairwise(chunks):
        assert b.start > a.start and b.end > a.end, (a.start, a.end, b.start, b.end, b.reason)
