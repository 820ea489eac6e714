"""Markdown blocks as character ranges (markdown-it-py line maps → offsets)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from explorer.documents.document import Document
from explorer.documents.loaders import load_bytes
from explorer.documents.markdown_blocks import block_at, count_list_items, markdown_blocks, top_level
from explorer.text.markdown_parse import front_matter_lines


def blocks(text: str) -> list[tuple[str, int, str, str]]:
    return [(b.kind, b.level, b.info, text[b.start : b.end]) for b in markdown_blocks(text)]


def test_every_kind_with_exact_ranges():
    text = (
        "---\ntitle: x\n---\n\n"
        "# Title #\n\nSome *para* text\ncontinued.\n\n"
        "Setext H2\n---------\n\n"
        "```python\n# not a heading\nx = 1\n```\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n"
        "1. one\n2. two\n   - nested\n\n"
        "<div>\nhtml\n</div>\n\n"
        "> quote\n> # inside\n\n"
        "    indented code\n\n"
        "***\n"
    )
    assert blocks(text) == [
        ("front_matter", 0, "yaml", "---\ntitle: x\n---"),
        ("heading", 1, "Title", "# Title #"),
        ("paragraph", 0, "", "Some *para* text\ncontinued."),
        ("heading", 2, "Setext H2", "Setext H2\n---------"),
        ("code", 0, "python", "```python\n# not a heading\nx = 1\n```"),
        ("table", 0, "", "| a | b |\n|---|---|\n| 1 | 2 |"),
        ("list", 0, "ordered", "1. one\n2. two\n   - nested"),
        ("html", 0, "", "<div>\nhtml\n</div>"),
        ("blockquote", 0, "", "> quote\n> # inside"),
        ("code", 0, "", "indented code"),
        ("hr", 0, "", "***"),
    ]
    assert count_list_items(text) == 3


def test_offsets_are_characters_not_bytes():
    text = "😀 émoji 中文\n\n## 見出し\n\nTexte après.\n"
    (para, head, after) = markdown_blocks(text)
    assert text[head.start : head.end] == "## 見出し" and head.info == "見出し"
    assert text[after.start : after.end] == "Texte après."
    assert para.start == 0


def test_fences_hide_headings():
    text = "~~~\n# a\n~~~\n\n````md\n```\n# b\n```\n````\n\n# real\n"
    got = blocks(text)
    assert [k for k, *_ in got] == ["code", "code", "heading"]
    assert got[1][2] == "md" and got[2][3] == "# real"


def test_unclosed_fence_runs_to_end():
    text = "# T\n\n```\n# no\n\n## nor\ntext"
    assert blocks(text)[-1] == ("code", 0, "", "```\n# no\n\n## nor\ntext")


def test_seven_hashes_and_no_space():
    assert blocks("####### x\n") == [("paragraph", 0, "", "####### x")]
    assert blocks("#x\n") == [("paragraph", 0, "", "#x")]
    assert blocks("###### six\n")[0][:3] == ("heading", 6, "six")


def test_headings_only():
    text = "# A\n## B\n### C\n# D"
    doc = Document("h.md", "markdown", text, blocks=markdown_blocks(text))
    assert [h.info for h in doc.headings] == ["A", "B", "C", "D"]
    assert doc.heading_path(text.index("### C") + 2) == ("A", "B", "C")
    assert doc.heading_path(len(text) - 1) == ("D",)


def test_front_matter_rules():
    assert front_matter_lines("---\na: 1\n---\nbody") == 3
    assert front_matter_lines("---\na: 1\n...\nbody") == 3
    assert front_matter_lines("---\nno end\n") == 0  # unclosed: it is a rule, then text
    assert front_matter_lines("\n---\na: 1\n---\n") == 0  # not at the top
    assert front_matter_lines("----\na\n----\n") == 0
    assert [k for k, *_ in blocks("---\nno end\n")] == ["hr", "paragraph"]
    # a front matter never becomes a setext heading or a rule
    got = blocks("---\ntitle: A\n---\n# H\n")
    assert got == [("front_matter", 0, "yaml", "---\ntitle: A\n---"), ("heading", 1, "H", "# H")]


def test_nested_headings_are_not_top_level():
    assert [k for k, *_ in blocks("- # in a list\n\n> ## in a quote\n")] == ["list", "blockquote"]


def test_nested_code_blocks_and_tables_follow_their_container():
    text = (
        "- a\n  ```py\n  x\n  ```\n- b\n\n> ~~~\n> y\n> ~~~\n\n1. c\n\n       indented\n\n"
        "- d\n  | k | v |\n  |---|---|\n  | 1 | 2 |\n- e\n\n> | k |\n> |---|\n> | 3 |\n"
    )
    assert blocks(text) == [
        ("list", 0, "bullet", "- a\n  ```py\n  x\n  ```\n- b"),
        ("code", 0, "py", "```py\n  x\n  ```"),
        ("blockquote", 0, "", "> ~~~\n> y\n> ~~~"),
        ("code", 0, "", "> ~~~\n> y\n> ~~~"),
        ("list", 0, "ordered", "1. c\n\n       indented"),
        ("code", 0, "", "indented"),
        ("list", 0, "bullet", "- d\n  | k | v |\n  |---|---|\n  | 1 | 2 |\n- e"),
        ("table", 0, "", "| k | v |\n  |---|---|\n  | 1 | 2 |"),
        ("blockquote", 0, "", "> | k |\n> |---|\n> | 3 |"),
        ("table", 0, "", "> | k |\n> |---|\n> | 3 |"),
    ]
    bs = markdown_blocks(text)
    assert block_at(bs, text.index("x")).kind == "code"
    assert block_at(bs, text.index("- b")).kind == "list"  # after the nested code, still the list
    assert block_at(bs, text.index("| 1")).kind == "table"
    assert block_at(bs, text.index("- e")).kind == "list"
    assert [b.kind for b in top_level(bs)] == ["list", "blockquote", "list", "list", "blockquote"]


def test_a_line_of_tildes_under_text_is_an_underline_not_a_fence():
    """The one departure from CommonMark: "Install" over "~~~~~~~" (reStructuredText, vimtutor's
    rules) made the rest of the text one code block, "# Usage" included. The sentence splitter
    reads its fences from the same parse, so plain text needs it too."""
    text = "Install\n~~~~~~~\nRun it.\n\n# Usage\n\nCall it.\n"
    assert [k for k, *_ in blocks(text)] == ["paragraph", "heading", "paragraph"]
    # shorter than the text, after a blank line, or with an info string: a fence as before
    for text in ("A long title\n~~~\nx\n~~~", "Text.\n\n~~~~~~~~\nx\n~~~~~~~~", "Intro\n~~~~~~~~ py\nx\n~~~~~~~~"):
        assert [k for k, *_ in blocks(text)][-1] == "code", text


def test_html_and_script_are_blocks_not_executed():
    got = blocks('<script>alert("x")</script>\n\n<img src=x onerror=alert(1)>\n')
    assert [k for k, *_ in got] == ["html", "html"]


def test_block_at():
    text = "# A\n\npara\n"
    bs = markdown_blocks(text)
    assert block_at(bs, 0).kind == "heading"
    assert block_at(bs, text.index("para")).kind == "paragraph"
    assert block_at(bs, 3) is None  # the newline between blocks


def test_empty_and_whitespace():
    assert markdown_blocks("") == ()
    assert markdown_blocks("\n\n  \n") == ()


def test_loader_uses_it_for_md_only():
    assert load_bytes(b"# T\n", "a.md").blocks[0].kind == "heading"
    assert load_bytes(b"# T\n", "a.txt").blocks == ()


_LINES = st.sampled_from(
    [
        "# H1",
        "## H2 title",
        "####### seven",
        "Setext",
        "===",
        "---",
        "```",
        "```py",
        "~~~",
        "# inside?",
        "| a | b |",
        "|---|---|",
        "- item",
        "  - nested",
        "  ```",
        "> ```",
        "  | a | b |",
        "  |---|---|",
        "> | c |",
        "> |---|",
        "1. one",
        "> quote",
        "    code",
        "<div>",
        "</div>",
        "",
        "",
        "plain words here",
        "中文。",
        "😀 emoji",
        "\t tab",
    ]
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_LINES, max_size=40))
def test_blocks_are_sorted_disjoint_trimmed_slices(lines):
    """Top-level blocks are disjoint; a nested code block or table lies inside the container before it."""
    text = "\n".join(lines)
    bs = markdown_blocks(text)
    prev_end = 0
    container = None
    for b in bs:
        nested = b.kind in ("code", "table")
        if container is not None and nested and container.start <= b.start < container.end:
            assert b.end <= container.end and b.start < b.end, (b, container)
            assert block_at(bs, b.start) == b
            continue
        assert prev_end <= b.start < b.end <= len(text), (b, prev_end)
        container = b if b.kind in ("list", "blockquote") else None
        piece = text[b.start : b.end]
        assert piece == piece.strip() and piece
        if b.kind == "heading":
            assert 1 <= b.level <= 6
            if "\n" not in piece:  # ATX (a setext heading's text may start with 7 #: CommonMark)
                assert piece.startswith("#") and not piece.startswith("#######")
        prev_end = b.end
