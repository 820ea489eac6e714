"""Parameters adapt (issue 13): what the user set is kept or flagged, the rest follows it.

``Strategy.adapt(values, user_set)`` holds only the parameters the user set; every other one
takes its default, adjusted by the strategy's rules, with a note. ``Strategy.switched_from``
carries what the user set to another strategy. ``parse``/``validate`` still refuse conflicts.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer.documents.document import Document
from explorer.documents.markdown_blocks import markdown_blocks
from explorer.embedding.fake import FakeEmbedder
from explorer.errors import ParamError
from explorer.strategies import all_strategies, get_strategy
from explorer.strategies.context import Context
from explorer.strategies.invariants import invariant_errors
from explorer.strategies.params import BOOL, CHOICE, FLOAT, INT, STR_LIST, Param

STRATEGIES = all_strategies()
RECURSIVE = get_strategy("recursive")
SEMANTIC = get_strategy("semantic")
CLUSTER = get_strategy("cluster")

TEXT = (
    "# Pump station\n\nThe pump station was inspected on Monday. Operators logged every reading.\n\n"
    "## Repair\n\nA deviation of 3.5 bar was reported to the superintendent, who approved the repair. "
    "Work starts next week!\n"
)


def refusal(strategy, values) -> str:
    with pytest.raises(ParamError) as info:
        strategy.parse(values)
    return str(info.value)


# -- the issue's cases ------------------------------------------------------------------------
def test_a_size_below_the_default_overlap_lowers_the_overlap_with_a_note():
    got = RECURSIVE.adapt({"chunk_size": 130}, {"chunk_size"})
    assert got.ok and not got.conflicts
    assert got.values["chunk_size"] == 130 and got.values["chunk_overlap"] == 26
    assert got.notes == ("chunk_overlap 200 → 26 to stay below chunk_size 130",)
    assert got.user_set == {"chunk_size"}
    assert RECURSIVE.validate(got.values) == got.values
    refusal(RECURSIVE, {"chunk_size": 130})  # parse still refuses the same values


def test_an_overlap_the_user_set_is_flagged_with_the_checks_message():
    values = {"chunk_size": 130, "chunk_overlap": 200}
    got = RECURSIVE.adapt(values, {"chunk_size", "chunk_overlap"})
    assert got.values is None and not got.ok and got.notes == ()
    assert got.conflicts == {"chunk_overlap": "chunk_overlap=200 must be smaller than chunk_size=130"}
    assert got.conflicts["chunk_overlap"] == refusal(RECURSIVE, values)
    assert got.user_set == {"chunk_size", "chunk_overlap"}  # still the user's: flagged, not dropped


def test_the_overlap_goes_back_to_its_default_when_it_fits_again():
    small = RECURSIVE.adapt({"chunk_size": 130}, {"chunk_size"}).values
    got = RECURSIVE.adapt({**small, "chunk_size": 900}, {"chunk_size"})  # overlap 26 was not the user's
    assert got.values["chunk_overlap"] == 200 and got.notes == ()


def test_a_mode_change_resets_an_amount_set_for_the_old_mode():
    before = SEMANTIC.adapt({"breakpoint_amount": 80}, {"breakpoint_amount"}).values
    assert before["breakpoint_amount"] == 80
    now = {**before, "breakpoint_mode": "standard_deviation"}
    got = SEMANTIC.adapt(now, {"breakpoint_amount", "breakpoint_mode"}, before=before)
    assert got.ok and got.values["breakpoint_amount"] == 3.0
    assert got.user_set == {"breakpoint_mode"}  # the amount is the mode's default again
    assert got.notes == (
        "breakpoint_amount 80 → 3 (the default for breakpoint_mode 'standard_deviation'; "
        "it was set for 'percentile')",
    )


def test_an_amount_set_with_the_new_mode_is_kept_or_flagged():
    before = SEMANTIC.validate({"breakpoint_amount": 80})
    both = {"breakpoint_amount", "breakpoint_mode"}
    kept = SEMANTIC.adapt(
        {**before, "breakpoint_mode": "standard_deviation", "breakpoint_amount": 2}, both, before=before
    )
    assert kept.values["breakpoint_amount"] == 2 and kept.notes == ()
    # without `before` (the CLI: both given at once) an amount out of the mode's range is a conflict
    values = {"breakpoint_mode": "standard_deviation", "breakpoint_amount": 80}
    got = SEMANTIC.adapt(values, both)
    assert got.values is None
    assert got.conflicts == {"breakpoint_amount": refusal(SEMANTIC, values)}
    assert "outside 0..10" in got.conflicts["breakpoint_amount"]


def test_an_amount_the_user_did_not_set_follows_the_mode():
    got = SEMANTIC.adapt({"breakpoint_mode": "threshold", "breakpoint_amount": 95.0}, {"breakpoint_mode"})
    assert got.values["breakpoint_amount"] == 0.5 and got.notes == ()


def test_switching_strategy_applies_the_new_defaults():
    old = RECURSIVE.validate({"chunk_size": 810})
    got = CLUSTER.switched_from(RECURSIVE, old, {"chunk_size"})
    assert got.ok and not got.conflicts
    assert got.values == CLUSTER.validate({})  # 250 cl100k tokens, not 810 characters
    assert got.user_set == frozenset()
    assert got.notes == ("chunk_size 810 not carried: it counted chars, cluster counts cl100k",)


def test_switching_carries_what_the_user_set_where_it_means_the_same():
    old = RECURSIVE.validate({"chunk_size": 810})
    fixed = get_strategy("fixed").switched_from(RECURSIVE, old, {"chunk_size"})
    assert fixed.values == {"chunk_size": 810, "chunk_overlap": 0, "length": "chars"}  # not recursive's 200
    assert fixed.user_set == {"chunk_size"}
    assert fixed.notes == ("chunk_size 810 kept from recursive (default 500)",)
    # a unit the user chose travels with the sizes counted in it
    old = RECURSIVE.validate({"chunk_size": 300, "length": "words"})
    got = CLUSTER.switched_from(RECURSIVE, old, {"chunk_size", "length"})
    assert (got.values["chunk_size"], got.values["length"]) == (300, "words")


def test_a_carried_value_that_conflicts_is_dropped_with_a_note():
    old = RECURSIVE.validate({"chunk_overlap": 600})  # fits recursive's 1000, not fixed's 500
    got = get_strategy("fixed").switched_from(RECURSIVE, old, {"chunk_overlap"})
    assert got.ok and not got.conflicts and got.values["chunk_overlap"] == 0
    assert got.user_set == frozenset()
    assert got.notes == (
        "chunk_overlap 600 → 0 (dropped: chunk_overlap=600 must be smaller than chunk_size=500)",
    )


def test_the_issue_chain_ends_on_clusters_defaults():
    """recursive(810) → sentence → cluster: the size reaches sentence as its cap, never cluster."""
    sentence = get_strategy("sentence").switched_from(
        RECURSIVE, RECURSIVE.validate({"chunk_size": 810}), {"chunk_size"}
    )
    assert sentence.values["chunk_size"] == 810
    got = CLUSTER.switched_from(get_strategy("sentence"), sentence.values, sentence.user_set)
    assert got.values == CLUSTER.validate({})


# -- other rules ------------------------------------------------------------------------------
def test_each_sized_pair_follows():
    sentence = get_strategy("sentence").adapt({"sentences_per_chunk": 1}, {"sentences_per_chunk"})
    assert sentence.values["overlap_sentences"] == 0
    assert sentence.notes == ("overlap_sentences 1 → 0 to stay below sentences_per_chunk 1",)
    cluster = CLUSTER.adapt({"chunk_size": 30}, {"chunk_size"})
    assert cluster.values["piece_size"] == 6
    assert cluster.notes == ("piece_size 50 → 6 to stay within chunk_size 30",)
    tokens = CLUSTER.adapt({"chunk_size": 5, "length": "tokens"}, {"chunk_size", "length"})
    assert tokens.values["piece_size"] == 3  # room beside [CLS] and [SEP]
    flagged = CLUSTER.adapt({"chunk_size": 100, "piece_size": 120}, {"chunk_size", "piece_size"})
    assert flagged.conflicts == {"piece_size": "piece_size=120 must not exceed chunk_size=100"}
    for name in ("fixed", "markdown", "hybrid"):
        s = get_strategy(name)
        got = s.adapt({"chunk_size": 1}, {"chunk_size"})
        assert got.values["chunk_overlap"] == 0 and not got.conflicts, name


def test_semantic_max_follows_min():
    got = SEMANTIC.adapt({"min_chunk_size": 500}, {"min_chunk_size"})
    assert got.values["max_chunk_size"] == 500
    assert got.notes == ("max_chunk_size 256 → 500 to stay at or above min_chunk_size 500",)
    values = {"min_chunk_size": 500, "max_chunk_size": 300}
    both = SEMANTIC.adapt(values, {"min_chunk_size", "max_chunk_size"})
    assert both.conflicts == {"max_chunk_size": refusal(SEMANTIC, values)}
    off = SEMANTIC.adapt({"min_chunk_size": 500, "max_chunk_size": 0}, {"min_chunk_size", "max_chunk_size"})
    assert off.values["max_chunk_size"] == 0 and off.notes == ()


def test_bad_single_values_are_conflicts_only_when_the_user_set_them():
    values = {"chunk_size": "lots", "chunk_overlap": -3, "length": "furlongs", "nope": 1}
    got = RECURSIVE.adapt(values, {"chunk_size", "nope"})
    assert got.values is None
    assert got.conflicts == {
        "chunk_size": "chunk_size='lots' is not a valid int",
        "nope": refusal(RECURSIVE, {"nope": 1}),
    }
    ignored = RECURSIVE.adapt(values, set())  # not the user's: defaults
    assert ignored.values == RECURSIVE.validate({}) and ignored.notes == ()
    lenient = RECURSIVE.adapt(values, {"chunk_size", "nope"}, lenient=True)
    assert lenient.values == RECURSIVE.validate({}) and lenient.user_set == frozenset()
    assert lenient.notes[0].startswith("nope dropped: recursive has no parameter 'nope'")
    assert lenient.notes[1] == "chunk_size 'lots' → 1000 (dropped: chunk_size='lots' is not a valid int)"


def test_a_pair_the_user_set_flags_the_parameter_the_message_names():
    got = get_strategy("sentence").adapt({"chunk_size": 2, "length": "tokens"}, {"chunk_size", "length"})
    assert list(got.conflicts) == ["chunk_size"]
    got = RECURSIVE.adapt(
        {"keep_separator": "false", "is_separator_regex": True}, {"keep_separator", "is_separator_regex"}
    )
    assert list(got.conflicts) == ["keep_separator"]


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.name)
def test_nothing_set_is_the_defaults(strategy):
    got = strategy.adapt({}, ())
    assert got.values == strategy.validate({}) and got.notes == () and not got.conflicts


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.name)
def test_rules_name_the_strategys_own_parameters(strategy):
    names = set(strategy.param_names())
    for rule in strategy.rules:
        refs = {v for v in vars(rule).values() if isinstance(v, str)}
        assert rule.param in names and refs <= names, (strategy.name, rule)


# -- properties -------------------------------------------------------------------------------
GARBAGE = st.sampled_from([None, "", "abc", "1.5", 1.5, -1, True, [], {"a": 1}, float("nan"), "1e400", 10**9])


def _value(p: Param) -> st.SearchStrategy:
    if p.kind is INT:
        lo, hi = int(p.min or 0), int(p.max if p.max is not None else 1000)
        valid = st.integers(lo, min(hi, lo + (300 if "size" in p.name else 12)))
        return st.one_of(valid, valid.map(str), st.integers(lo - 3, lo + 2), GARBAGE)
    if p.kind is FLOAT:
        return st.one_of(st.floats(-2, 120, allow_nan=False), st.none(), GARBAGE)
    if p.kind is BOOL:
        return st.one_of(st.booleans(), st.sampled_from(["yes", "off", "maybe"]), GARBAGE)
    if p.kind is CHOICE:
        return st.one_of(st.sampled_from(p.choices), st.just("bogus"))
    if p.kind is STR_LIST:
        lists = [list(p.default), [], ["\n", " "], ["(a)", ""], [". ", ""], ["\\s+"], ["x" * 300]]
        return st.one_of(st.sampled_from(lists), st.just('["\\n", ""]'), GARBAGE)
    return st.one_of(st.text(max_size=8), GARBAGE)


@st.composite
def user_values(draw, strategy):
    values = {p.name: draw(_value(p), label=p.name) for p in strategy.params if draw(st.booleans())}
    if draw(st.booleans()):
        values["not_a_parameter"] = 1
    names = sorted(values)
    user_set = draw(st.sets(st.sampled_from(names))) if names else set()
    return values, user_set


def _ctx(strategy) -> Context:
    return Context(embedder=FakeEmbedder()) if strategy.needs_embedder else Context()


def _doc() -> Document:
    return Document("pump.md", "markdown", TEXT, blocks=markdown_blocks(TEXT))


def _user_kept_or_flagged(strategy, values, user_set, got) -> None:
    """Each value the user set is in ``got.values`` as they set it, or in ``got.conflicts``, or
    released by a rule with a note. ``got`` is lenient (never None): a strict call with conflicts
    keeps the same values apart from the conflicting ones (checked by the caller)."""
    for name in user_set:
        if name in got.conflicts or name not in values:
            continue
        if values[name] is None and strategy.param(name).default is None:
            continue  # an optional value left empty is the default
        if name not in got.user_set:  # released by a rule (needs `before`), or dropped: said in a note
            assert any(n.startswith(f"{name} ") for n in got.notes), (name, got)
            continue
        assert got.values[name] == strategy.param(name).coerce(values[name]), name


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.name)
@SETTINGS
@given(data=st.data())
def test_adapt_never_raises_and_keeps_or_flags_what_the_user_set(strategy, data):
    values, user_set = data.draw(user_values(strategy), label="user")
    before = data.draw(st.none() | user_values(strategy).map(lambda v: v[0]), label="before")
    got = strategy.adapt(values, user_set, before=before)
    assert set(got.conflicts) <= set(user_set) and got.user_set <= set(user_set)
    assert all(m and "\n" not in m for m in got.conflicts.values())
    assert (got.values is None) == bool(got.conflicts)
    lenient = strategy.adapt(values, user_set, before=before, lenient=True)
    assert lenient.values is not None and not lenient.conflicts
    assert lenient.user_set == got.user_set - got.conflicts.keys()
    if got.values is not None:
        assert lenient.values == got.values and lenient.notes == got.notes
    _user_kept_or_flagged(strategy, values, set(user_set) - got.conflicts.keys(), lenient)
    mine = {n: values[n] for n in user_set if n in values}
    try:
        plain = strategy.validate(mine)
    except ParamError:
        plain = None
    if plain is not None and before is None:  # what parse accepts, adapt leaves alone
        assert got.values == plain and got.notes == ()
    for result in (got.values, lenient.values):
        if result is not None:
            assert strategy.validate(result) == result
            doc = _doc()
            chunks = strategy.chunk(doc, result, _ctx(strategy))
            assert chunks and not invariant_errors(doc, chunks, None)


@pytest.mark.parametrize("old", STRATEGIES, ids=lambda s: s.name)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_switch_never_raises_and_gives_defaults_for_the_rest(old, data):
    new = data.draw(st.sampled_from(STRATEGIES), label="new")
    values, user_set = data.draw(user_values(old), label="user")
    got = new.switched_from(old, values, user_set)
    assert got.values is not None and not got.conflicts
    assert new.validate(got.values) == got.values
    assert got.user_set <= set(user_set) & set(new.param_names())
    for name in got.user_set:
        assert got.values[name] == new.param(name).coerce(values[name])
    # the defaults given what the user set (semantic's amount follows its mode)
    kept = {n: values[n] for n in got.user_set}
    unset = {n: v for n, v in new.adapt(kept, tuple(kept)).values.items() if n not in got.user_set}
    followed = {n for n in new.param_names() if any(note.startswith(f"{n} ") for note in got.notes)}
    for name, default in unset.items():
        assert got.values[name] == default or name in followed, name


def test_a_mode_back_to_its_default_releases_the_amount_too():
    before = SEMANTIC.validate({"breakpoint_mode": "gradient", "breakpoint_amount": 80})
    got = SEMANTIC.adapt({**before, "breakpoint_mode": "percentile"}, {"breakpoint_amount"}, before=before)
    assert got.values["breakpoint_amount"] == 95.0 and got.user_set == frozenset()
    same = SEMANTIC.adapt(before, {"breakpoint_mode", "breakpoint_amount"}, before=before)
    assert same.values == before and same.notes == ()


def test_a_default_that_follows_another_parameter_is_not_labelled_as_set():
    """Semantic's breakpoint_amount defaults to its mode's (95 for percentile): the default
    configuration is "semantic", its exported command line sets nothing, a real change shows."""
    from explorer.export.code import config_to_code
    from explorer.strategies.config import StrategyConfig

    default = StrategyConfig.make("semantic", {})
    assert default.param_dict["breakpoint_amount"] == 95.0
    assert default.changed_params() == {} and default.display == "semantic"
    assert "breakpoint_amount" not in config_to_code([default], ["doc.txt"])["cli"]
    assert StrategyConfig.make("semantic", {"breakpoint_amount": 90}).display == "semantic(breakpoint_amount=90.0)"
    mode = StrategyConfig.make("semantic", {"breakpoint_mode": "standard_deviation"})
    assert mode.changed_params() == {"breakpoint_mode": "standard_deviation"}  # its amount is that mode's


@pytest.mark.parametrize(
    ("kind", "typed"),
    [(INT, "1e999"), (INT, "-inf"), (INT, "nan"), (INT, 300.5), (FLOAT, "1e999"), (FLOAT, "nan")],
)
def test_a_number_refused_is_named_as_it_was_typed(kind, typed):
    """'1e999' overflows to inf on the way in; the message names what the user typed."""
    param = Param("size", kind, 1, "a size")
    with pytest.raises(ParamError) as err:
        param.coerce(typed)
    assert str(err.value) == f"size={typed!r} is not a valid {kind.name}"


@pytest.mark.parametrize(
    ("typed", "read"),
    [("12345678901234567890123", 12345678901234567890123), (" +0300 ", 300), ("-7", -7), ("3e2", 300), ("300.0", 300)],
)
def test_a_whole_number_typed_is_read_exactly(typed, read):
    """Digits were read through a float: 23 of them lost their last ones (…567890123 → …567890000)."""
    got = Param("size", INT, 1, "a size").coerce(typed)
    assert got == read and isinstance(got, int)
