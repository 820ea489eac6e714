"""The markdown strategy: sections before headings, heading paths, whole code fences and tables."""

from __future__ import annotations

from itertools import pairwise
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import explorer.strategies.splitting as splitting
from explorer import Block, Document, ParamError, chunk_document
from explorer.strategies.invariants import invariant_errors
from explorer.strategies.splitting import OVER_SIZE
from explorer.text.chunk import UNBREAKABLE, inside_any
from explorer.text.length import get_length

GUIDE = """# Guide

Intro paragraph about the tool. It has two sentences.

## Install

Run this:

```bash
pip install thing
# not a heading
make run
```

| option | meaning |
|--------|---------|
| -v     | verbose |
| -q     | quiet   |

### Details

Some details here that are long enough to be split when the size is small. More words follow here and there.

# Second

- item one
- item two
"""


def hand_blocks(text: str) -> tuple[Block, ...]:
    """GUIDE's block structure written by hand (what the loader's markdown-it pass reports)."""

    def at(snippet: str, kind: str, level: int = 0, info: str = "") -> Block:
        s = text.index(snippet)
        return Block(kind, s, s + len(snippet), level, info)

    return (
        at("# Guide", "heading", 1, "Guide"),
        at("Intro paragraph about the tool. It has two sentences.", "paragraph"),
        at("## Install", "heading", 2, "Install"),
        at("Run this:", "paragraph"),
        at("```bash\npip install thing\n# not a heading\nmake run\n```", "code", 0, "bash"),
        at("| option | meaning |\n|--------|---------|\n| -v     | verbose |\n| -q     | quiet   |", "table"),
        at("### Details", "heading", 3, "Details"),
        at(
            "Some details here that are long enough to be split when the size is small. More words "
            "follow here and there.",
            "paragraph",
        ),
        at("# Second", "heading", 1, "Second"),
        at("- item one\n- item two", "list", 0, "bullet"),
    )


def md_doc(text: str = GUIDE, blocks: tuple[Block, ...] | None = None) -> Document:
    if blocks is None:
        from explorer.documents.markdown_blocks import markdown_blocks

        blocks = markdown_blocks(text)
    return Document("guide.md", "markdown", text, blocks=blocks)


def chunks_of(doc: Document, **params):
    chunks = chunk_document(doc, "markdown", params)
    size = params.get("chunk_size", 1000) if params.get("length", "chars") in ("chars", "words") else None
    assert not invariant_errors(doc, chunks, size)
    return chunks


def protected_cut(doc: Document, chunks, size: int, measure=len) -> list[str]:
    """Code blocks and tables that fit in size but have a chunk boundary strictly inside."""
    bad = []
    for b in doc.blocks_of("code", "table"):
        if measure(doc.text[b.start : b.end]) > size:
            continue
        for c in chunks:
            if b.start < c.start < b.end or b.start < c.end < b.end:
                bad.append(f"{b.kind} {b.start}:{b.end} cut by chunk {c.start}:{c.end}")
    return bad


def test_hand_made_blocks_give_the_same_chunks_as_the_parser():
    hand = chunks_of(md_doc(GUIDE, hand_blocks(GUIDE)), chunk_size=80)
    parsed = chunks_of(md_doc(GUIDE), chunk_size=80)
    assert [(c.start, c.end, c.reason) for c in hand] == [(c.start, c.end, c.reason) for c in parsed]


def test_sections_are_chunks_with_heading_paths_and_reasons():
    chunks = chunks_of(md_doc(GUIDE, hand_blocks(GUIDE)))
    assert [c.text.split("\n", 1)[0] for c in chunks] == ["# Guide", "## Install", "### Details", "# Second"]
    assert [c.headings for c in chunks] == [
        ("Guide",),
        ("Guide", "Install"),
        ("Guide", "Install", "Details"),
        ("Second",),
    ]
    assert [c.reason for c in chunks] == [
        "next heading: ## Install",
        "next heading: ### Details",
        "next heading: # Second",
        "end of text",
    ]
    # the "# not a heading" line inside the fence did not start a section
    assert "# not a heading" in chunks[1].text


def test_max_heading_level():
    doc = md_doc(GUIDE, hand_blocks(GUIDE))
    assert [c.text.split("\n", 1)[0] for c in chunks_of(doc, max_heading_level=1)] == ["# Guide", "# Second"]
    assert len(chunks_of(doc, max_heading_level=2)) == 3


def test_small_size_keeps_code_and_tables_whole_and_headings_with_text():
    doc = md_doc(GUIDE, hand_blocks(GUIDE))
    chunks = chunks_of(doc, chunk_size=90)
    code = doc.blocks_of("code")[0]
    table = doc.blocks_of("table")[0]
    assert not protected_cut(doc, chunks, 90)
    assert any(c.start <= code.start and code.end <= c.end for c in chunks)
    assert any(c.start == table.start and c.end == table.end for c in chunks)
    # a heading never ends up alone when the text after it could start its chunk
    assert all(c.text not in ("### Details", "## Install") for c in chunks)
    details = next(c for c in chunks if c.text.startswith("### Details"))
    assert details.text.startswith("### Details\n\nSome details")
    assert details.headings == ("Guide", "Install", "Details")
    reasons = [c.reason for c in chunks]
    assert "size limit: next block is a table" in reasons


def test_code_block_bigger_than_size_is_split_inside_and_says_so():
    doc = md_doc(GUIDE, hand_blocks(GUIDE))
    chunks = chunks_of(doc, chunk_size=30)
    code = doc.blocks_of("code")[0]
    inside = [c for c in chunks if code.start <= c.start and c.end <= code.end]
    assert len(inside) >= 2
    assert any("inside a code block larger than chunk_size" in c.reason for c in inside)
    assert all(c.length <= 30 or c.reason.startswith(UNBREAKABLE) for c in chunks)


def test_merge_small_sections():
    doc = md_doc(GUIDE, hand_blocks(GUIDE))
    plain = chunks_of(doc, chunk_size=300)
    merged = chunks_of(doc, chunk_size=300, merge_small_sections=True)
    assert len(merged) < len(plain)
    assert all(c.length <= 300 for c in merged)
    assert merged[0].text.startswith("# Guide") and "## Install" in merged[0].text
    # merging never cuts a section: every chunk boundary is a section boundary
    starts = {c.start for c in plain}
    assert {c.start for c in merged} <= starts


def test_overlap_repeats_blocks_inside_a_section_only():
    text = "# A\n\n" + "\n\n".join(f"Paragraph number {i} of the first part." for i in range(8))
    text += "\n\n# B\n\nLast."
    doc = md_doc(text)
    chunks = chunks_of(doc, chunk_size=120, chunk_overlap=50)
    overlapping = [(a, b) for a, b in pairwise(chunks) if b.start < a.end]
    assert overlapping, "expected overlapping chunks inside the long section"
    b_start = text.index("# B")
    assert all(not (c.start < b_start < c.end) for c in chunks)
    no_overlap = chunks_of(doc, chunk_size=120)
    assert all(b.start >= a.end for a, b in pairwise(no_overlap))


def test_overlap_never_makes_a_chunk_of_repeated_text_alone():
    """The overlap before a heading left room for the heading only: the next block did not fit
    beside overlap + heading, so the chunk closed before the heading, holding the overlap alone
    (a repeat of the previous chunk's end). It now leaves room for the heading and its block, or
    none when those two fill a chunk."""
    p1, p2, p3 = "Alpha " * 24 + "end.", "Beta words here, short one. x x x x x x", "Gamma " * 24 + "end."
    text = f"# Doc\n\n{p1}\n\n{p2}\n\n### Next part\n\n{p3}\n"
    chunks = chunks_of(md_doc(text), chunk_size=200, chunk_overlap=50, max_heading_level=1)
    assert [c.text for c in chunks] == [f"# Doc\n\n{p1}\n\n{p2}", f"### Next part\n\n{p3}"]
    short = "Gamma " * 20 + "end."  # room for overlap + heading + block: the overlap is kept
    chunks = chunks_of(md_doc(text.replace(p3, short)), chunk_size=200, chunk_overlap=50, max_heading_level=1)
    assert [c.text for c in chunks] == [f"# Doc\n\n{p1}\n\n{p2}", f"{p2}\n\n### Next part\n\n{short}"]


def test_a_split_block_makes_no_chunk_inside_the_previous_one():
    """A word as long as the size, then a blank: the block's splitter cut it as characters with
    overlap, and its last window (the word's last 5 characters and the blank), stripped, was
    "ller:", inside "installer:" before it."""
    text = "# Setup\n\nInstall it with the installer: \nthen restart.\n"
    chunks = chunks_of(md_doc(text), chunk_size=10, chunk_overlap=5)
    assert [c.text for c in chunks] == ["# Setup", "Install", "it with", "with the", "installer:", "then", "restart."]
    assert all(b.end > a.end for a, b in pairwise(chunks))
    assert chunks[4].reason == "separator ' '"


def test_plain_text_falls_back_to_recursive():
    text = ("Plain text without any structure. " * 30 + "\n\n") * 3
    doc = Document("p.txt", "text", text)
    for params in ({"chunk_size": 200, "chunk_overlap": 40}, {"chunk_size": 50, "chunk_overlap": 0}):
        md = chunk_document(doc, "markdown", params)
        rec = chunk_document(doc, "recursive", params)
        assert [(c.start, c.end, c.reason) for c in md] == [(c.start, c.end, c.reason) for c in rec]


def test_token_sizes_are_exact():
    doc = md_doc(GUIDE, hand_blocks(GUIDE))
    tokens = get_length("tokens")
    code = doc.blocks_of("code")[0]
    assert 12 < tokens(doc.text[code.start : code.end]) <= 25
    for size in (12, 25, 60):
        chunks = chunks_of(doc, chunk_size=size, length="tokens")
        assert all(
            c.length <= size or c.reason.startswith(UNBREAKABLE) or OVER_SIZE in c.reason for c in chunks
        )
        assert not protected_cut(doc, chunks, size, tokens)
        whole = any(c.start <= code.start and code.end <= c.end for c in chunks)
        assert whole == (size >= 25), size


def test_token_index_gives_the_same_chunks_as_tokenizing():
    samples = pytest.importorskip("explorer.documents.samples")
    guide = samples.load_sample("guide.md")
    assert len(guide.text) > splitting.TOKEN_INDEX_MIN_CHARS  # the index is used by default here
    tokens = get_length("tokens")
    for params in ({"chunk_size": 64}, {"chunk_size": 30, "chunk_overlap": 8}, {"chunk_size": 128}):
        fast = chunks_of(guide, length="tokens", **params)
        with patch.object(splitting, "TOKEN_INDEX_MIN_CHARS", 10**9):
            slow = chunks_of(guide, length="tokens", **params)
        assert [(c.start, c.end, c.reason) for c in fast] == [(c.start, c.end, c.reason) for c in slow]
        assert not protected_cut(guide, fast, params["chunk_size"], tokens)
        over = [c for c in fast if c.length > params["chunk_size"]]
        assert all(c.reason.startswith(UNBREAKABLE) or OVER_SIZE in c.reason for c in over)


def test_nested_code_inside_a_list_is_not_cut():
    text = "# T\n\n- step one\n\n  ```\n  code line one\n  code line two\n  ```\n- step two\n\nAfter."
    code_start = text.index("  ```") + 2
    code_end = text.index("  ```\n- step") + 5
    blocks = (
        Block("heading", 0, 3, 1, "T"),
        Block("list", 5, text.index("\n\nAfter."), 0, "bullet"),
        Block("code", code_start, code_end),
        Block("paragraph", text.index("After."), len(text)),
    )
    doc = md_doc(text, blocks)
    chunks = chunks_of(doc, chunk_size=45)
    assert not protected_cut(doc, chunks, 45)
    # a block reported inside the fence (another parser might) does not cut it either
    inner = text.index("code line two")
    doc = md_doc(text, (*blocks[:3], Block("paragraph", inner, inner + 13), blocks[3]))
    assert not protected_cut(doc, chunks_of(doc, chunk_size=45), 45)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"chunk_size": 50, "chunk_overlap": 50}, "chunk_overlap=50 must be smaller than chunk_size=50"),
        ({"max_heading_level": 7}, "max_heading_level=7 is above the maximum 6"),
        ({"max_heading_level": 0}, "max_heading_level=0 is below the minimum 1"),
        ({"chunk_size": 2, "length": "tokens"}, "no room beside"),
    ],
)
def test_bad_params(params, message):
    with pytest.raises(ParamError, match=message):
        chunk_document(md_doc(), "markdown", params)


def test_through_the_loader_and_the_bundled_sample():
    loaders = pytest.importorskip("explorer.documents.loaders")
    doc = loaders.load_bytes(GUIDE.encode("utf-8"), "guide.md")
    assert doc.blocks, "the loader should fill the Markdown block structure"
    chunks = chunks_of(doc, chunk_size=80)
    assert not protected_cut(doc, chunks, 80)
    assert chunks[0].headings == ("Guide",)

    samples = pytest.importorskip("explorer.documents.samples")
    guide = samples.load_sample("guide.md")
    for params in ({}, {"chunk_size": 300}, {"chunk_size": 120, "chunk_overlap": 30}, {"chunk_size": 60}):
        size = params.get("chunk_size", 1000)
        chunks = chunks_of(guide, **params)
        assert not protected_cut(guide, chunks, size)
        first_heading = guide.headings[0].start
        assert all(c.headings for c in chunks if c.start >= first_heading)
        assert not any(c.text.startswith("#") and "\n" not in c.text for c in chunks), "a heading alone"
    fences = guide.blocks_of("code")
    assert any("#" in guide.text[b.start : b.end] for b in fences)


# -- generated Markdown --------------------------------------------------------------------------
LINES = [
    "# Top",
    "## Sub section",
    "### Third",
    "#### Fourth",
    "```",
    "```python",
    "x = 1  # comment",
    "# inside fence?",
    "| a | b |",
    "|---|---|",
    "| 1 | 2 |",
    "- item",
    "  ```",
    "   ~~~yaml",
    "  nested: code",
    "  | nested | table |",
    "  |---|---|",
    "1. first",
    "> quote",
    "Some sentence of prose. Another one here!",
    "Run the installer:",
    "- Create the file :",
    "averyveryverylongwordwithoutanyspacesatalltosplitinside",
    "",
    "",
    "",
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lines=st.lists(st.sampled_from(LINES), max_size=50),
    size=st.integers(5, 250),
    overlap_frac=st.floats(0, 0.8),
    level=st.integers(1, 6),
    merge=st.booleans(),
)
def test_generated_markdown(lines, size, overlap_frac, level, merge):
    from explorer.documents.markdown_blocks import markdown_blocks

    text = "\n".join(lines)
    doc = md_doc(text, markdown_blocks(text))
    overlap = min(int(size * overlap_frac), size - 1)
    chunks = chunks_of(
        doc, chunk_size=size, chunk_overlap=overlap, max_heading_level=level, merge_small_sections=merge
    )
    assert not protected_cut(doc, chunks, size)
    if not merge:  # no chunk crosses a section heading, except after a heading-only section
        for h in doc.headings:
            if h.level <= level:
                for c in chunks:
                    if c.start < h.start < c.end:
                        before = [b for b in doc.blocks if c.start <= b.start < h.start]
                        assert all(b.kind == "heading" for b in before), (h, c)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 60), st.integers(0, 30)), max_size=12), st.integers(-5, 100))
def test_inside_a_protected_block_by_bisection_is_the_scan_it_replaced(raw, c):
    """The cut filter of a long section asks whether an offset is strictly inside a code block or
    table; it scanned every block for every offset (47 s for 20,000 code blocks), and now bisects.
    Spans sorted by start, nested or overlapping as blocks may be (a running maximum of ends)."""
    spans = sorted((a, a + n) for a, n in raw)
    assert inside_any(spans)(c) == any(a < c < b for a, b in spans)
