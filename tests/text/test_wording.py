"""Counts in words and shares in percent: one helper for every message that counts things."""

from explorer.text.wording import percent, percent_value, plural


def test_plural_counts_with_thousands_and_an_s_unless_one():
    assert plural(1, "chunk") == "1 chunk"
    assert plural(0, "question") == "0 questions"
    assert plural(1200, "kept question") == "1,200 kept questions"
    assert plural(2, "index", "indexes") == "2 indexes" and plural(1, "index", "indexes") == "1 index"


def test_percent_never_rounds_a_part_to_none_or_to_all():
    assert percent(0.0) == "0.0%" and percent(1.0) == "100.0%" and percent(0.25) == "25.0%"
    assert percent(0.0002) == "<0.1%"  # an IoU of a sliver is not "0.0%"
    assert percent(0.9997) == ">99.9%"  # nor a near miss "100.0%"
    assert percent(0.004, 0) == "<1%" and percent(0.996, 0) == ">99%" and percent(0.5, 0) == "50%"
    assert percent(0.0123) == "1.2%"
    assert percent(0.005, 0) == "<1%" and percent(0.995, 0) == ">99%"  # 0.5 and 99.5 round to even
    assert percent_value(0.0002) == 0.1 and percent_value(0.9997) == 99.9 and percent_value(0.25) == 25.0
    assert percent_value(0.0) == 0.0 and percent_value(1.0) == 100.0 and percent_value(1.5) == 150.0


def test_brief_number_quotes_any_whole_number_in_three_figures():
    from explorer.text.wording import brief_number

    assert brief_number(10**309) == "1e+309" and brief_number(-(10**400)) == "-1e+400"  # past a float's range
    assert brief_number(1999999999999999999) == "2e+18"  # rounded, as .3g rounds a float
    assert brief_number(123456789012345678) == "1.23e+17" and brief_number(-12) == "-12" and brief_number(1.5e300) == "1.5e+300"
