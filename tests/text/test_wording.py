"""Counts in words: one helper for every message that counts things."""

from explorer.text.wording import plural


def test_plural_counts_with_thousands_and_an_s_unless_one():
    assert plural(1, "chunk") == "1 chunk"
    assert plural(0, "question") == "0 questions"
    assert plural(1200, "kept question") == "1,200 kept questions"
    assert plural(2, "index", "indexes") == "2 indexes" and plural(1, "index", "indexes") == "1 index"
