"""The boundary diff of Compare (explorer/render/boundaries.py): which cuts every configuration
makes, which only one makes, identical outputs, the summary line, and the markers put into
rendered chunk HTML."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from explorer.render.boundaries import (
    boundary_diff,
    cuts,
    identical_groups,
    mark_cuts,
    marker,
    pair_diff,
    summary,
)
from explorer.render.html import render_chunks
from explorer.text.chunk import Chunk

A = [(0, 10), (10, 25), (25, 40)]
B = [(0, 10), (10, 18), (18, 40)]


def test_cuts_are_starts_and_ends_inside_the_text():
    # an overlap is two cuts (8 and 10); a space between two chunks one (21, not 20 and 21)
    assert cuts([(0, 10), (8, 20), (21, 30)]) == {8, 10, 21}  # not 0 and 30: the text's edges
    assert cuts([(3, 9)]) == frozenset() and cuts([]) == frozenset()
    # six chunks with a space between each: five cuts (a user read "6 cuts only here")
    spans = [(i * 101, i * 101 + 100) for i in range(6)]
    assert len(cuts(spans)) == 5
    # the same places cut with and without the space in the chunk: the same cuts
    assert cuts([(0, 11), (11, 20)]) == cuts([(0, 10), (11, 20)]) == {11}


def test_pair_diff_of_a_known_case():
    d = pair_diff(A, B)
    assert d.shared == {10}
    assert d.only_a == {25}
    assert d.only_b == {18}
    assert not d.identical and not d.same_cuts
    assert pair_diff(A, list(A)).identical


def test_two_configurations_summary_and_markers():
    d = boundary_diff([A, B])
    assert d.shared == {10}
    assert d.unique == ({25}, {18})
    assert d.partial == (frozenset(), frozenset())
    assert summary(d, ["1", "2"]) == "1 cut shared, 1 only in 1, 1 only in 2"
    overlap = boundary_diff([A, [(0, 12), (10, 40)]])  # 2 chunks, 2 cuts: 12 and 10
    assert summary(overlap, ["1", "2"]) == (
        "1 cut shared, 1 only in 1, 1 only in 2 (where chunks overlap, one ends and the next starts at two cuts)"
    )
    assert d.twins == ((), ())


def test_identical_outputs_are_flagged():
    d = boundary_diff([A, list(A)])
    assert d.all_identical
    assert d.twins == ((1,), (0,))
    assert identical_groups(d) == [(0, 1)]
    line = summary(d, ["1", "2"])
    assert line.startswith("2 cuts shared, 0 only in 1, 0 only in 2")
    assert "identical chunks" in line


def test_three_configurations():
    c = [(0, 18), (18, 40)]
    d = boundary_diff([A, B, A])
    assert d.shared == {10}
    assert d.unique == (frozenset(), {18}, frozenset())
    assert d.partial == ({25}, frozenset(), {25})
    assert d.makers(25) == (0, 2)
    assert identical_groups(d) == [(0, 2)]
    line = summary(d, ["1", "2", "3"])
    assert line.startswith(
        "1 cut shared by all, 0 only in 1, 1 only in 2, 0 only in 3, 1 in some but not all"
    )
    assert "identical chunks: 1 and 3" in line
    d2 = boundary_diff([A, B, c])
    assert d2.shared == frozenset() and d2.partial[1] == {10, 18}
    assert not identical_groups(d2)


def test_same_cuts_but_different_chunks_are_not_identical():
    overlap = [(0, 25), (10, 40)]  # cuts 10 and 25, like A, but other chunks
    d = boundary_diff([A, overlap])
    assert not d.unique[0] and not d.unique[1]
    assert d.twins == ((), ())


spans = st.lists(st.tuples(st.integers(0, 300), st.integers(0, 300)), max_size=25).map(
    lambda xs: [(min(a, b), max(a, b)) for a, b in xs]
)


@given(spans, spans)
def test_pair_parts_make_up_each_side(a, b):
    d = pair_diff(a, b)
    assert d.shared | d.only_a == cuts(a)
    assert d.shared | d.only_b == cuts(b)
    assert not (d.shared & d.only_a) and not (d.shared & d.only_b) and not (d.only_a & d.only_b)
    assert d.identical == (a == b)
    many = boundary_diff([a, b])
    assert many.shared == d.shared and many.unique == (d.only_a, d.only_b)


@given(st.lists(spans, min_size=1, max_size=5))
def test_many_parts_make_up_each_configuration(configs):
    d = boundary_diff(configs)
    for i, mine in enumerate(d.cuts):
        assert d.shared | d.unique[i] | d.partial[i] == mine
        assert not (d.shared & d.unique[i]) and not (d.unique[i] & d.partial[i])
        for x in d.unique[i]:
            assert d.makers(x) == (i,)
        for x in d.partial[i]:
            assert 1 < len(d.makers(x)) < len(configs)
        for j in d.twins[i]:
            assert configs[j] == configs[i]


# -- markers in rendered HTML -----------------------------------------------------------------------
TEXT = "Alpha beta gamma. Delta <epsilon> zeta. Eta theta iota. Kappa lambda."


def chunks(spans_):
    return [
        Chunk("d", "t.txt", i, s, e, TEXT[s:e], e - s, "chars", "test") for i, (s, e) in enumerate(spans_)
    ]


def test_markers_sit_before_the_text_and_badges_of_a_cut():
    spans_ = [(0, 18), (18, 40), (40, len(TEXT))]
    body = render_chunks(TEXT, chunks(spans_), interactive=True, with_css=False)
    out = mark_cuts(body, {18: marker("only", 'Only "2" <cuts> here'), 999: marker("only", "nowhere")})
    assert out.count('data-cut="1"') == 1
    # the marker comes right before chunk 1's badge, which comes before the text at 18
    at = out.index('data-cut="1"')
    badge = out.index('<span class="ce-idx', at)
    text = out.index('data-o="18"', at)
    assert at < badge < text
    assert "&lt;cuts&gt;" in out and "<cuts>" not in out.replace("&lt;", "")  # the title is escaped
    # the text itself is untouched
    assert re.sub(r'<span class="ce-cut[^>]*></span>', "", out) == body


def test_markers_in_a_gap_and_at_the_window_start():
    spans_ = [(0, 17), (18, 40)]  # a space between the chunks: text at 17 with no chunk
    body = render_chunks(TEXT, chunks(spans_), lo=10, hi=60, interactive=True, with_css=False)
    out = mark_cuts(body, {10: marker("some", "a"), 17: marker("only", "b"), 40: marker("only", "c")})
    assert out.count('data-cut="1"') == 3
    assert mark_cuts(body, {}) == body
