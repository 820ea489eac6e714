"""Parameter attacks: every bad value is refused with one message that names it, and
parameter sets that would make too many chunks or run a regex for minutes are bounded.

Measured on this machine (2 cores) before ``Strategy.min_chunks`` existed: ``chunk_size=1`` on
a 1 MB text took 3-10 s per strategy to be refused (the spans were built, then counted) and
20-43 s on 5 MB; with the estimate every character-capped strategy refuses in ~20 ms (1 MB).
Token units are still counted after splitting (6-14 s on 1 MB with ``chunk_size=3`` tokens):
the test below checks that path with a lowered limit instead of a big text.
"""

from __future__ import annotations

import math
import re
from itertools import pairwise
from typing import Any

import pytest

import explorer.strategies.base as base
import explorer.strategies.splitting as splitting
from explorer.documents.document import Document
from explorer.documents.loaders import load_bytes
from explorer.embedding.fake import FakeEmbedder
from explorer.errors import ExplorerError, LimitError, ModelError, ParamError
from explorer.limits import MAX_CHUNKS
from explorer.strategies import all_strategies, get_strategy
from explorer.strategies.config import StrategyConfig
from explorer.strategies.context import Context
from explorer.strategies.invariants import invariant_errors
from explorer.strategies.params import INT

PROSE = (
    "The pump station was inspected on Monday. Operators logged every reading. "
    "A deviation of 3.5 bar was reported to the superintendent, who approved the repair.\n\n"
)


def one_line(err: BaseException) -> str:
    message = str(err)
    assert message and "\n" not in message and "Traceback" not in message, message
    return message


def refused(exc: type[ExplorerError], fn, *fragments: str) -> str:
    with pytest.raises(exc) as info:
        fn()
    message = one_line(info.value)
    for f in fragments:
        assert f in message, (f, message)
    return message


@pytest.fixture(scope="module")
def prose() -> Document:
    return load_bytes((PROSE * 20).encode(), "report.txt")


@pytest.fixture(scope="module")
def megabyte() -> Document:
    """~1 MB of words: a million-chunk request with chunk_size=1."""
    return load_bytes(("word " * 210_000).encode(), "big.txt")


# -- sizes and overlaps ------------------------------------------------------------------------

INT_PARAMS = [
    (s.name, p.name, p.min) for s in all_strategies() for p in s.params if p.kind is INT and p.min is not None
]


@pytest.mark.parametrize(
    ("strategy", "param", "lowest"), INT_PARAMS, ids=[f"{s}-{p}" for s, p, _ in INT_PARAMS]
)
@pytest.mark.parametrize("delta", [1, 1000])
def test_sizes_below_the_minimum_are_refused(strategy: str, param: str, lowest: float, delta: int):
    bad = int(lowest) - delta
    refused(ParamError, lambda: get_strategy(strategy).validate({param: bad}), f"{param}={bad}", "minimum")
    # the same value as a string (CLI, URL) and as a float
    refused(ParamError, lambda: get_strategy(strategy).validate({param: str(bad)}), param)
    refused(ParamError, lambda: get_strategy(strategy).validate({param: float(bad)}), param)


OVERLAPPING = [s.name for s in all_strategies() if {"chunk_size", "chunk_overlap"} <= set(s.param_names())]


@pytest.mark.parametrize("strategy", OVERLAPPING)
@pytest.mark.parametrize("overlap", [100, 101, 100_000])
def test_overlap_not_below_size_is_refused(strategy: str, overlap: int, prose: Document):
    values = {"chunk_size": 100, "chunk_overlap": overlap}
    refused(
        ParamError,
        lambda: get_strategy(strategy).chunk(prose, values),
        f"chunk_overlap={overlap}",
        "chunk_size=100",
    )
    chunks = get_strategy(strategy).chunk(prose, {"chunk_size": 100, "chunk_overlap": 99})
    assert not invariant_errors(prose, chunks, 100)


def test_overlapping_counts_of_sentences_and_pieces_are_refused():
    refused(
        ParamError,
        lambda: get_strategy("sentence").validate({"sentences_per_chunk": 3, "overlap_sentences": 3}),
        "overlap_sentences=3",
        "sentences_per_chunk=3",
    )
    refused(
        ParamError,
        lambda: get_strategy("cluster").validate({"chunk_size": 200, "piece_size": 300}),
        "piece_size=300",
        "chunk_size=200",
    )
    refused(
        ParamError,
        lambda: get_strategy("semantic").validate({"min_chunk_size": 500, "max_chunk_size": 100}),
        "min_chunk_size=500",
        "max_chunk_size=100",
    )


TOKEN_SIZED = [
    (s.name, p)
    for s in all_strategies()
    for p in ("chunk_size", "max_chunk_size", "piece_size")
    if p in s.param_names() and "length" in s.param_names()
]


@pytest.mark.parametrize(("strategy", "param"), TOKEN_SIZED)
def test_token_sizes_without_room_for_cls_and_sep_are_refused(strategy: str, param: str):
    values: dict[str, Any] = {param: 2, "length": "tokens"}
    s = get_strategy(strategy)
    if "chunk_overlap" in s.param_names():
        values["chunk_overlap"] = 0
    if param == "piece_size":
        values["chunk_size"] = 250
    if param == "chunk_size" and "piece_size" in s.param_names():
        values["piece_size"] = 2
    refused(ParamError, lambda: s.validate(values), "=2", "[CLS]")


@pytest.mark.parametrize(
    "value",
    ["abc", "", "1.5", 1.5, True, "nan", float("nan"), math.inf, "-inf", "1e309", 10**30, None, [3], "0x10"],
)
def test_malformed_numbers_are_refused(value: Any):
    refused(ParamError, lambda: get_strategy("fixed").validate({"chunk_size": value}), "chunk_size=")


def test_numbers_from_strings_still_work():
    p = get_strategy("fixed").validate({"chunk_size": " 300 ", "chunk_overlap": "30.0"})
    assert p["chunk_size"] == 300 and p["chunk_overlap"] == 30


def test_unknown_strategy_and_parameter_are_named():
    names = ", ".join(s.name for s in all_strategies())
    refused(ParamError, lambda: get_strategy("magic"), "'magic'", names)
    refused(
        ParamError, lambda: get_strategy("fixed").validate({"chunk_sise": 10}), "'chunk_sise'", "chunk_size"
    )
    refused(ParamError, lambda: StrategyConfig.make("recursive", {"separator": "x"}), "'separator'")
    refused(ParamError, lambda: get_strategy("fixed").validate({"length": "bytes"}), "'bytes'", "chars")
    refused(ParamError, lambda: get_strategy("recursive").validate({"keep_separator": "both"}), "'both'")


# -- a million chunks --------------------------------------------------------------------------

MILLION = {
    "fixed": {"chunk_size": 1, "chunk_overlap": 0},
    "sentence": {"chunk_size": 1, "overlap_sentences": 0},
    "paragraph": {"chunk_size": 1},
    "recursive": {"chunk_size": 1, "chunk_overlap": 0},
    "markdown": {"chunk_size": 1},
    "cluster": {"chunk_size": 1, "piece_size": 1, "length": "chars"},
    "hybrid": {"chunk_size": 1},
    "semantic": {"max_chunk_size": 1, "length": "chars"},
}


def test_every_strategy_has_a_million_chunk_attack():
    assert set(MILLION) == {s.name for s in all_strategies()}


@pytest.mark.parametrize("strategy", sorted(MILLION))
def test_size_one_on_a_megabyte_is_refused_before_splitting(strategy, megabyte, monkeypatch):
    s = get_strategy(strategy)
    if "chunk_size" in MILLION[strategy]:
        # refused from an estimate: split() must never run (it would build ~840,000 spans)
        def boom(*args, **kwargs):
            raise AssertionError(f"{strategy}.split ran: the chunk count was not estimated first")

        monkeypatch.setattr(type(s), "split", boom)
    message = refused(
        LimitError,
        lambda: s.chunk(megabyte, MILLION[strategy], Context(embedder=FakeEmbedder(16))),
        "'big.txt'",
        f"{MAX_CHUNKS:,}",
        "use a larger",
    )
    if "chunk_size" in MILLION[strategy]:
        assert "840,000" in message and "larger chunk size" in message
    else:  # semantic: the message names its own parameter, not recursive's
        assert "max_chunk_size=1" in message and "recursive" not in message


def test_the_estimate_never_refuses_what_fits(monkeypatch):
    """At the limit exactly: 200 characters in chunks of 2 with MAX_CHUNKS=100."""
    monkeypatch.setattr(base, "MAX_CHUNKS", 100)
    doc = load_bytes(b"a" * 200, "t.txt")
    for name in ("fixed", "paragraph", "hybrid", "markdown"):
        chunks = get_strategy(name).chunk(doc, {"chunk_size": 2})
        assert len(chunks) == 100 and not invariant_errors(doc, chunks, 2)
    doc = load_bytes(b"a" * 201 + b" " * 50, "t.txt")
    refused(LimitError, lambda: get_strategy("fixed").chunk(doc, {"chunk_size": 2}), "at least 101")


def test_long_words_without_char_separator_are_not_refused_by_the_estimate():
    """Recursive without "": a long word is one unbreakable chunk, so no estimate applies."""
    doc = load_bytes(b"a" * 300_000, "a.txt")
    chunks = get_strategy("recursive").chunk(
        doc, {"chunk_size": 1, "chunk_overlap": 0, "separators": ["\n\n", " "]}
    )
    assert len(chunks) == 1 and chunks[0].reason.startswith("unbreakable")


def test_token_units_are_counted_after_splitting(prose, monkeypatch):
    monkeypatch.setattr(base, "MAX_CHUNKS", 50)
    for name, values in [
        ("fixed", {"chunk_size": 3, "length": "tokens"}),
        ("recursive", {"chunk_size": 3, "chunk_overlap": 0, "length": "cl100k"}),
        ("paragraph", {"chunk_size": 1, "length": "words"}),
    ]:
        refused(LimitError, lambda n=name, v=values: get_strategy(n).chunk(prose, v), "over the limit of 50")


def test_openai_tokens_on_more_than_a_million_characters(megabyte):
    """bpe-openai refuses 1,000,000+ characters or 200,000+ tokens at once: explorer.text.length
    encodes in pieces, so cl100k/o200k chunking of big documents works."""
    from explorer.text.length import get_length

    for unit in ("cl100k", "o200k"):
        length = get_length(unit)
        assert length(megabyte.text) == 210_001  # "word", then " word" x 209,999, then " "
        spans = length.spans(megabyte.text)
        assert spans[0] == (0, 4) and spans[-1][1] == len(megabyte.text)
    chunks = get_strategy("fixed").chunk(megabyte, {"chunk_size": 4000, "length": "cl100k"})
    assert not invariant_errors(megabyte, chunks, 4000)


def test_openai_pieces_give_the_same_tokens(monkeypatch):
    import bpe_openai

    import explorer.text.length as length_mod

    text = (PROSE + "Mme Martin: « c'est cher » — 3,50 €! 中文测试。 👩‍💻\t_x_ !!\n\n") * 40
    whole = bpe_openai.get_encoding("cl100k_base").encode_ordinary(text)
    monkeypatch.setattr(length_mod, "OPENAI_PIECE_CHARS", 300)
    assert length_mod.OpenAITokenLength("cl100k")._encode(text) == whole


# -- separators and regular expressions --------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "fragments"),
    [
        ({"separators": []}, ("separators=[]", "at least one")),
        ({"separators": "[]"}, ("separators=[]",)),
        ({"separators": "not json"}, ("separators=",)),
        ({"separators": [1, 2]}, ("separators=",)),
        ({"separators": ["x" * 100]}, ("100 characters", "64")),
        ({"separators": ["[", ""], "is_separator_regex": True}, ("'['", "not a valid regular expression")),
        ({"separators": ["(?<=a+)"], "is_separator_regex": True}, ("(?<=a+)",)),
        ({"separators": ["\\1"], "is_separator_regex": True}, ("'\\\\1'",)),
        ({"separators": ["(a+)+$"], "is_separator_regex": True}, ("'(a+)+$'", "capturing group")),
        ({"separators": ["(?:a+)+$"], "is_separator_regex": True}, ("catastrophic backtracking",)),
        ({"separators": ["(?:a|aa)*c"], "is_separator_regex": True}, ("alternation",)),
        ({"separators": ["(?:\\w+\\s?)*$"], "is_separator_regex": True}, ("catastrophic backtracking",)),
        ({"separators": ["(?P<x>a)(?P=x)"], "is_separator_regex": True}, ("(?P<x>a)(?P=x)",)),
        ({"keep_separator": "false", "separators": [". "]}, ("'. '", "keep_separator")),
        ({"is_separator_regex": "maybe"}, ("is_separator_regex='maybe'",)),
    ],
)
def test_bad_separators_are_refused(values, fragments, prose):
    params = {"chunk_size": 100, "chunk_overlap": 0, **values}
    refused(ParamError, lambda: get_strategy("recursive").chunk(prose, params), *fragments)


def test_catastrophic_pattern_on_its_worst_text_is_refused_at_once():
    """The classic ``(a+)+$`` on "aaaa…b": refused before any matching, in both spellings."""
    doc = load_bytes(b"a" * 50_000 + b"b", "evil.txt")
    for pattern in ("(a+)+$", "(?:a+)+$", "(?:a*)*$", "(?:a|a)+$"):
        params = {
            "chunk_size": 100,
            "chunk_overlap": 0,
            "separators": [pattern, ""],
            "is_separator_regex": True,
        }
        refused(ParamError, lambda p=params: get_strategy("recursive").chunk(doc, p), repr(pattern))


def test_polynomial_patterns_finish(prose):
    """Patterns that pass the structural check but backtrack polynomially on a long run: the
    regex module (with its timeout) handles them; nothing runs for minutes."""
    evil = load_bytes(b"a" * 20_000 + b" " * 20_000 + b"b", "run.txt")
    for pattern in ("a*a*a*a*a*c", "\\s*\\s*\\s*\\s*x", "(?:a?){25}a{25}", "[a-z]*[a-z]*0"):
        params = {
            "chunk_size": 1000,
            "chunk_overlap": 0,
            "separators": [pattern, " ", ""],
            "is_separator_regex": True,
        }
        chunks = get_strategy("recursive").chunk(evil, params)
        assert not invariant_errors(evil, chunks, 1000)


def test_regex_time_budget_gives_a_limit_error(monkeypatch):
    monkeypatch.setattr(splitting, "REGEX_TIME_BUDGET_S", 0.0)
    doc = load_bytes(b"alpha beta " * 5_000, "t.txt")
    params = {"chunk_size": 100, "chunk_overlap": 0, "separators": ["\\s", ""], "is_separator_regex": True}
    refused(LimitError, lambda: get_strategy("recursive").chunk(doc, params), "'\\\\s'", "simplify")


# -- semantic thresholds -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "amount", "fragment"),
    [
        ("percentile", 150, "0..100"),
        ("percentile", -5, "0..100"),
        ("gradient", 101, "0..100"),
        ("threshold", 1.5, "-1..1"),
        ("threshold", -2, "-1..1"),
        ("standard_deviation", -1, "0..10"),
        ("interquartile", -0.5, "0..10"),
        ("percentile", "nan", "not a valid float"),
        ("threshold", "inf", "not a valid float"),
        ("bogus", 50, "'bogus'"),
    ],
)
def test_threshold_outside_its_range_is_refused(mode, amount, fragment, prose):
    values = {"breakpoint_mode": mode, "breakpoint_amount": amount}
    ctx = Context(embedder=FakeEmbedder(16))
    message = refused(ParamError, lambda: get_strategy("semantic").chunk(prose, values, ctx), fragment)
    assert "breakpoint_" in message


def test_threshold_at_its_bounds_works(prose):
    ctx = Context(embedder=FakeEmbedder(16))
    for mode, amount in [("percentile", 0), ("percentile", 100), ("threshold", -1), ("threshold", 1)]:
        values = {"breakpoint_mode": mode, "breakpoint_amount": amount}
        chunks = get_strategy("semantic").chunk(prose, values, ctx)
        assert not invariant_errors(prose, chunks)


# -- models ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "model", ["no-such-model", "/nonexistent/model/dir", "..", "sentence-transformers/x"]
)
def test_unknown_model_is_a_model_error(model, prose):
    from explorer.embedding.embedder import get_embedder

    refused(ModelError, lambda: get_embedder(model), repr(model))
    refused(ModelError, lambda: Context(model=model).get_embedder(), repr(model))
    refused(ModelError, lambda: get_strategy("semantic").chunk(prose, {}, Context(model=model)), repr(model))
    refused(
        ModelError,
        lambda: get_strategy("fixed").chunk(prose, {"length": "tokens"}, Context(model=model)),
        repr(model),
    )


def test_embedding_work_is_bounded(monkeypatch):
    """More new texts than MAX_EMBED_TEXTS are refused before the model runs; cached ones don't count."""
    from explorer import limits
    from explorer.embedding.fake import FakeEmbedder

    monkeypatch.setattr(limits, "MAX_EMBED_TEXTS", 5)
    emb = FakeEmbedder(16)
    emb.encode([f"text {i}" for i in range(5)])  # at the limit: fine
    with pytest.raises(LimitError, match="would embed 6 new texts, over the limit of 5"):
        emb.encode([f"other {i}" for i in range(6)])
    # the five cached ones plus five new ones: only the new ones count
    assert emb.encode([f"text {i}" for i in range(5)] + [f"new {i}" for i in range(5)]).shape == (10, 16)


@pytest.mark.parametrize(
    ("strategy", "values"),
    [
        ("fixed", {"chunk_size": 3, "chunk_overlap": 0, "length": "tokens"}),
        ("recursive", {"chunk_size": 3, "chunk_overlap": 0, "length": "tokens"}),
        ("paragraph", {"chunk_size": 1, "length": "cl100k"}),
    ],
)
def test_token_sizes_are_refused_before_splitting_when_counted_over(strategy, values, monkeypatch):
    """100,000 words of 2 units each with room for 1 unit a chunk: the word count alone (a
    floor) stays under the limit, the unit count does not, and split() never runs."""
    doc = load_bytes(("internationalisation " * 100_000).encode(), "long.txt")
    monkeypatch.setattr(base, "MAX_CHUNKS", 150_000)
    s = get_strategy(strategy)

    def boom(*args, **kwargs):
        raise AssertionError(f"{strategy}.split ran: the units were not counted first")

    monkeypatch.setattr(type(s), "split", boom)
    message = refused(LimitError, lambda: s.chunk(doc, values), "'long.txt'", "use a larger chunk size")
    assert values["length"] in message


def test_the_unit_count_never_refuses_what_fits(monkeypatch):
    """Counted, 60 one-token words in chunks of one token fit a limit of 100."""
    monkeypatch.setattr(base, "MAX_CHUNKS", 100)
    doc = load_bytes(b"a " * 60, "t.txt")
    chunks = get_strategy("fixed").chunk(doc, {"chunk_size": 3, "length": "tokens"})
    assert len(chunks) == 60 and not invariant_errors(doc, chunks, 3)
    refused(
        LimitError,
        lambda: get_strategy("fixed").chunk(
            load_bytes(b"a " * 120, "t.txt"), {"chunk_size": 3, "length": "tokens"}
        ),
        "at least 120",
    )


@pytest.mark.parametrize(
    ("value", "shown"),
    [(1e308, "1e+308"), (10**40, "1e+40"), (-(10**30), "-1e+30"), (10**309, "1e+309"), (-(10**400), "-1e+400")],
)
def test_a_huge_number_is_quoted_short(value, shown):
    """A link's 1e308 became a 309-digit whole number in the note that says it was dropped; a
    whole number past a float's range (JSON has no limit) raised OverflowError while the message
    was written, and the app failed on every reload of the link."""
    got = get_strategy("recursive").adapt({"chunk_size": value}, ["chunk_size"], lenient=True)
    (note,) = got.notes
    assert f"chunk_size {shown} → " in note and f"chunk_size={shown} is" in note and len(note) < 120, note
    with pytest.raises(ParamError, match=rf"^chunk_size={re.escape(shown)} is (above|below)"):
        get_strategy("recursive").parse({"chunk_size": value})
    (note,) = get_strategy("semantic").adapt({"breakpoint_amount": value}, ["breakpoint_amount"], lenient=True).notes
    assert f"breakpoint_amount={shown} is " in note and len(note) < 200, note


def test_a_long_bad_value_or_strategy_name_is_quoted_cut_short():
    with pytest.raises(ParamError) as bad:
        get_strategy("recursive").parse({"chunk_size": "x" * 5000})
    assert len(str(bad.value)) < 120 and str(bad.value).startswith("chunk_size='xxx")
    with pytest.raises(ParamError) as bad:
        get_strategy("n" * 5000)
    assert len(str(bad.value)) < 200 and "nnn…'" in str(bad.value)


def test_a_run_without_spaces_is_cut_in_openai_tokens_exactly():
    """A base64 image in Markdown is one long run with no space: the recursive splitter falls to
    single characters and measures each, and the tokenizer view worked out every piece's offsets
    (1 MB took 54 s; offsets are now worked out only when read). The counts stay exact."""
    import base64

    from explorer.text.length import OpenAITokenLength
    from explorer.text.openai_tokens import OpenAITokenizerView

    run = base64.b64encode(bytes(range(256)) * 60).decode()  # 20,480 characters, no space
    doc = Document("image.md", "markdown", f"An image:\n\n![x](data:image/png;base64,{run})\n\nThe end.\n")
    length = OpenAITokenLength("cl100k")
    chunks = get_strategy("recursive").chunk(doc, {"chunk_size": 500, "chunk_overlap": 0, "length": "cl100k"})
    assert not invariant_errors(doc, chunks, 500) and len(chunks) > 10
    assert [length(c.text) for c in chunks] == length.slices(doc.text, [(c.start, c.end) for c in chunks])
    enc = length._enc
    view = OpenAITokenizerView(enc)
    texts = [run[k : k + 7] for k in range(0, 700, 7)] + [run, "Le « pré » coûte 3,50 € !"]
    for batch in (texts[:100], texts):  # short texts (in this thread) and mixed ones (in threads)
        got = view.encode_batch(batch)
        assert [e.ids for e in got] == [enc.encode_ordinary(t) for t in batch]
    offsets = got[-1].offsets  # worked out when read: the tokens tile the text
    assert offsets[0][0] == 0 and offsets[-1][1] == len(texts[-1]) and len(offsets) == len(got[-1].ids)
    assert all(b == c for (_, b), (c, _) in pairwise(offsets))
