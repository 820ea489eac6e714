"""The sentence strategy on tables and code blocks longer than a group or than its cap.

A table row whose cell held ". " was two sentences, so a group could end inside the row; a
group could end after the header row, the rows in the next group; the overlap repeated a row
without its header (or a whole code block); and a fence over ``chunk_size`` was split at words,
mid-line. Now a row is one unit (the header and delimiter rows one with the first row), the
overlap never repeats a row or a code block, and a block over the cap is cut at line ends as ``markdown`` cuts it (the shared
:class:`~explorer.strategies.block_split.BlockSplitter`).
"""

from __future__ import annotations

from itertools import pairwise

from hypothesis import strategies as st

from tests.support.sentence_docs import chunks_of, drawn_chunks, given_documents, md

ROWS = "".join(f"| {i} | Valve {i}. Check it weekly | ok |\n" for i in range(1, 9))
TABLE = "| id | part | state |\n|---|---|---|\n" + ROWS.rstrip("\n")
CODE = "```sh\n" + "\n".join(f"echo step-{i} && run --flag value-{i}" for i in range(1, 7)) + "\n```"




def test_a_long_table_is_cut_between_rows_never_inside_one_nor_after_its_header():
    text = f"Intro here. The valves:\n\n{TABLE}\n\nThat is all.\n"
    chunks = chunks_of(md(text), sentences_per_chunk=4, overlap_sentences=1)
    # the lead-in opens the table's first group (a group of the header alone, or cut inside
    # row 1 at "Valve 1. Check", before); the overlap repeats no row
    assert [c.text for c in chunks] == [
        "Intro here.",
        "The valves:\n\n" + TABLE[: TABLE.index("| 4 |") - 1],
        TABLE[TABLE.index("| 4 |") : TABLE.index("| 8 |") - 1],
        TABLE[TABLE.index("| 8 |") :] + "\n\nThat is all.",
    ]


def test_a_fence_over_the_cap_is_cut_at_line_ends_its_lead_in_opening_it():
    text = f"Some prose first. Then run:\n\n{CODE}\n\nDone.\n"
    chunks = chunks_of(md(text), sentences_per_chunk=3, overlap_sentences=0, chunk_size=120)
    inside = [c for c in chunks if "echo" in c.text]
    assert inside[0].text.startswith("Then run:\n\n```sh\necho step-1")
    assert all(text[c.end] == "\n" for c in inside)  # each ends a line
    assert "".join(c.text.replace("Then run:\n\n", "") + "\n" for c in inside) == CODE + "\n"
    assert inside[-1].reason == "sentence end: end of a code block longer than chunk_size"


def test_an_indented_code_block_is_one_unit():
    text = "Look at this. It is code:\n\n    x = 1. Then y\n    y = 2\n\nAfter. More. Again.\n"
    chunks = chunks_of(md(text), sentences_per_chunk=2, overlap_sentences=0)
    assert chunks[1].text == "It is code:\n\n    x = 1. Then y\n    y = 2"


def _table(rows: int, dots: bool) -> str:
    cell = "Part one. Check it" if dots else "part one"
    return "| h | k |\n|---|---|\n" + "\n".join(f"| {i} {cell} | x |" for i in range(rows))


PARTS = st.one_of(
    st.integers(1, 3).map(lambda n: " ".join(["Words of prose here."] * n)),
    st.just("See below:"),
    st.tuples(st.integers(0, 9), st.booleans()).map(lambda a: _table(*a)),
    st.integers(1, 6).map(lambda n: "```sh\n" + "\n".join(["make it so"] * n) + "\n```"),
)


@given_documents(PARTS, 8)
def test_cuts_in_tables_and_fences_fall_at_line_ends_and_repeat_no_row(parts, per, data, cap):
    text, d, chunks, _ = drawn_chunks(parts, per, data, cap)
    for b in d.blocks_of("code", "table"):
        lines = _lines(text, b.start, b.end)
        # where a chunk may start or end inside the block: at a line's ends, a table's after its first row
        skip = 2 if b.kind == "table" else 0
        ok = {s for s, _ in lines[skip + 1 :]} | {e for _, e in lines[skip:]}
        head = lines[min(2, len(lines) - 1)][1] - b.start  # a table's header, delimiter, first row
        fits = not cap or (all(e - s <= cap for s, e in lines) and (b.kind == "code" or head <= cap))
        for c in chunks:
            for at in (c.start, c.end):
                if b.start < at < b.end and fits:
                    assert at in ok, (b.kind, text[b.start : b.end], at)
        for s, e in lines:  # the overlap repeats no row and no code: the chunks' parts are disjoint
            parts = [(max(c.start, s), min(c.end, e)) for c in chunks if c.start < e and s < c.end]
            assert all(a[1] <= b[0] for a, b in pairwise(parts)), text[s:e]


def _lines(text: str, s: int, e: int) -> list[tuple[int, int]]:
    out, pos = [], s
    for line in text[s:e].split("\n"):
        out.append((pos, pos + len(line)))
        pos += len(line) + 1
    return out
