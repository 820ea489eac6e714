"""The values a sweep offers before the user types any (explorer.evaluation.sweep_values)."""

from __future__ import annotations

import pytest

from explorer.errors import ParamError
from explorer.evaluation.sweep_values import format_values, suggested_values
from explorer.strategies.config import StrategyConfig
from explorer.strategies.params import FLOAT, INT
from explorer.strategies.registry import get_strategy, strategy_names

RECURSIVE = StrategyConfig.make("recursive", {"chunk_size": 1000, "chunk_overlap": 200})
FIXED = StrategyConfig.make("fixed", {"chunk_size": 500})


def test_sizes_from_a_quarter_to_double_the_median_and_valid_beside_each_overlap():
    assert suggested_values([RECURSIVE, FIXED], "chunk_size") == [250, 500, 1000, 1500, 2000]
    wide = StrategyConfig.make("recursive", {"chunk_size": 400, "chunk_overlap": 300})
    assert suggested_values([wide], "chunk_size") == [400, 600, 800]  # 100 and 200 <= overlap 300
    # overlaps stay below every configuration's chunk size (fixed: 500)
    assert suggested_values([RECURSIVE, FIXED], "chunk_overlap") == [0, 50, 100, 200, 300, 400]  # fixed: 0
    assert suggested_values([FIXED], "chunk_overlap") == [0, 50, 100, 150, 200]  # none: around 200
    # each configuration's own size is a point of the curve (recursive's 300 beside fixed's 500)
    small = StrategyConfig.make("recursive", {"chunk_size": 300, "chunk_overlap": 50})
    assert suggested_values([small, FIXED], "chunk_size") == [120, 250, 300, 500, 750, 1000]


def test_real_valued_parameters_get_a_finer_look_within_their_checks():
    percentile = StrategyConfig.make("semantic", {"breakpoint_mode": "percentile", "breakpoint_amount": 95})
    assert suggested_values([percentile], "breakpoint_amount") == [86.0, 90.0, 95.0, 100.0]  # 104.5: > 100
    std = StrategyConfig.make("semantic", {"breakpoint_mode": "standard_deviation", "breakpoint_amount": 3})
    assert format_values(suggested_values([std], "breakpoint_amount")) == "2.7,2.8,3,3.2,3.3"


def test_a_parameter_no_configuration_has_offers_nothing():
    assert suggested_values([FIXED], "sentences_per_chunk") == []
    assert suggested_values([RECURSIVE], "separators") == []  # not a number


@pytest.mark.parametrize("name", strategy_names())
def test_every_offered_value_is_valid_and_the_configurations_own_is_among_them(name):
    strategy = get_strategy(name)
    config = StrategyConfig.make(name, {})
    own = strategy.validate(config.param_dict)
    for param in (p for p in strategy.params if p.kind in (INT, FLOAT)):
        values = suggested_values([config, config], param.name)
        assert values == sorted(set(values)) and 1 <= len(values) <= 6, (param.name, values)
        assert own[param.name] in values, (param.name, values)
        for v in values:
            try:
                strategy.validate({**config.param_dict, param.name: v})
            except ParamError as err:  # pragma: no cover - the failure message
                pytest.fail(f"{name}.{param.name}={v}: {err}")


def test_an_own_value_outside_the_first_strategys_bounds_is_left_out():
    """sentence's chunk_size 0 ("no cap") beside recursive's (at least 1): not offered, no error."""
    sentence = StrategyConfig.make("sentence", {})
    assert suggested_values([RECURSIVE, sentence], "chunk_size") == [250, 500, 1000, 1500, 2000]


def test_sizes_come_from_the_configurations_in_the_first_ones_unit():
    """A 1000-character markdown beside sizes in tokens made a median of 120 and offered 30–240
    (characters, for the markdown line): the values come from the configurations counted in
    the unit of the first one (the sweep's first line), and are still valid for every one."""
    markdown = StrategyConfig.make("markdown", {"chunk_size": 1000})
    tokens = StrategyConfig.make("recursive", {"chunk_size": 120, "chunk_overlap": 20, "length": "tokens"})
    fixed_tokens = StrategyConfig.make("fixed", {"chunk_size": 100, "length": "tokens"})
    assert suggested_values([markdown, tokens, fixed_tokens], "chunk_size") == [250, 500, 1000, 1500, 2000]
    assert suggested_values([tokens, markdown, fixed_tokens], "chunk_size") == [30, 60, 100, 120, 180, 240]


def test_a_size_of_zero_is_no_cap_and_not_counted_as_a_size():
    """sentence's chunk_size 0 ("no cap") counted as a size: two of them beside fixed's 500 made
    the median 0 and the values 50–200; the median is of the sizes there are."""
    sentence = StrategyConfig.make("sentence", {})
    threes = StrategyConfig.make("sentence", {"sentences_per_chunk": 3, "overlap_sentences": 0})
    assert suggested_values([sentence, threes, FIXED], "chunk_size") == [120, 250, 500, 750, 1000]
    assert suggested_values([sentence], "chunk_size") == [0, 50, 100, 150, 200]  # its own 0: no cap


def test_adjustments_are_said_once_per_kind_with_each_steps_numbers():
    """Five steps that each kept the overlap's share read as one line, not five alike; a move
    made by one step, or a note without a leading number, stays on its own line."""
    from types import SimpleNamespace as Row

    from explorer.evaluation.sweep_values import adjustments_said

    note = "({} % of chunk_size, as the configuration's 200 of 1000)"
    rows = [Row(param="chunk_size", value=v, adjusted=(f"chunk_overlap {v // 5} {note.format(20)}",)) for v in (250, 500)]
    rows.append(Row(param="chunk_size", value=750, adjusted=()))
    rows.append(Row(param="chunk_size", value=1000, adjusted=("length chars (kept)", f"chunk_overlap 200 {note.format(20)}")))
    assert adjustments_said(rows) == [
        f"chunk_size=250, 500, 1000: chunk_overlap 50, 100, 200 {note.format(20)}",
        "chunk_size=1000: length chars (kept)",
    ]
    assert adjustments_said(rows[:1]) == [f"chunk_size=250: chunk_overlap 50 {note.format(20)}"]
    assert adjustments_said([]) == []
