"""Code blocks and tables nested in list items and quotes are kept whole, as top-level ones are.

The block list held only top-level blocks, so a list holding a fence or a table was one prose
block and the recursive splitter cut through it (a chunk ended on a fence's opening line, or
between a table's rows).
"""

from __future__ import annotations

import pytest

from explorer import Context, Document, chunk_document
from explorer.documents.markdown_blocks import block_at, markdown_blocks
from explorer.embedding.fake import FakeEmbedder
from explorer.strategies.invariants import invariant_errors
from explorer.strategies.profile import profile
from explorer.strategies.semantic import semantic_curve

LIST_FENCE = """# Setup

## Steps

- Install the package with pip and check the version printed at the end of the run.
- Create the configuration file:
  ```yaml
  server:
    host: 0.0.0.0
    port: 8080
  database:
    url: postgres://db/orion
  ```
- Start the service and watch the logs for the line that says it is ready to serve.
"""

QUOTE_FENCE = """# Notes

> The operator wrote this down after the outage of last spring, word for word.
> ~~~sh
> systemctl restart orion
> journalctl -u orion --since today
> ~~~
> Nobody has needed it since, but keep it close at hand in case it comes back.
"""

#: An indented fence left open: CommonMark closes it where its list item ends.
UNCLOSED = """# Steps

1. Write the settings below into the file that the service reads when it starts up.
   ```ini
   [server]
   port = 8080
   workers = 4
2. Restart the service and check that the port in the log line is the one you set.
"""


def md(text: str) -> Document:
    return Document("n.md", "markdown", text, blocks=markdown_blocks(text))


def fence(text: str, first: str, last: str) -> tuple[int, int]:
    s = text.index(first)
    return s, text.index(last, s) + len(last)


def chunks_of(doc: Document, strategy: str = "markdown", **params):
    chunks = chunk_document(doc, strategy, params)
    assert not invariant_errors(doc, chunks, params.get("chunk_size", 1000))
    return chunks


def cut_inside(chunks, s: int, e: int) -> list[tuple[int, int]]:
    return [(c.start, c.end) for c in chunks if s < c.start < e or s < c.end < e]


@pytest.mark.parametrize("strategy", ["markdown", "hybrid"])
def test_a_fence_in_a_list_item_is_not_cut(strategy):
    s, e = fence(LIST_FENCE, "```yaml", "  ```")
    chunks = chunks_of(md(LIST_FENCE), strategy, chunk_size=150)
    assert not cut_inside(chunks, s, e)
    assert any(c.start <= s and e <= c.end for c in chunks)
    code = next(c for c in chunks if c.start <= s < c.end)
    # with its lead-in, the item that announces it (which ended the chunk before)
    assert code.text.startswith("- Create the configuration file:\n  ```yaml") and code.text.endswith("```")


def test_a_fence_in_a_quote_is_not_cut():
    s, e = fence(QUOTE_FENCE, "> ~~~sh", "> ~~~")
    doc = md(QUOTE_FENCE)
    assert [b.kind for b in doc.blocks] == ["heading", "blockquote", "code"]
    for size in (90, 110, 140):
        assert not cut_inside(chunks_of(doc, chunk_size=size), s, e), size


def test_an_unclosed_indented_fence_ends_with_its_list_item():
    doc = md(UNCLOSED)
    code = doc.blocks_of("code")
    assert len(code) == 1 and doc.text[code[0].start : code[0].end].endswith("workers = 4")
    s, e = code[0].start, code[0].end
    for size in (60, 100, 130):
        chunks = chunks_of(doc, chunk_size=size)
        assert not cut_inside(chunks, s, e), size
    assert block_at(doc.blocks, s + 3).kind == "code"
    assert block_at(doc.blocks, UNCLOSED.index("2. Restart")).kind == "list"


def test_a_nested_fence_bigger_than_the_size_is_cut_inside_and_says_so():
    s, e = fence(LIST_FENCE, "```yaml", "  ```")
    chunks = chunks_of(md(LIST_FENCE), chunk_size=60)
    lead = LIST_FENCE.index("- Create the configuration file:")
    inside = [c for c in chunks if lead <= c.start and c.end <= e]
    assert len(inside) >= 2
    assert all("inside a code block larger than chunk_size" in c.reason for c in inside[:-1])
    crossing = [c for c in chunks if c.start < s < c.end]  # the fence starts a chunk, or its lead-in does
    assert [c.start for c in crossing] == [lead] and inside[0] is crossing[0]


def test_the_profile_counts_nested_code_blocks():
    text = LIST_FENCE + "\n```sh\nmake run\n```\n\n" + QUOTE_FENCE
    doc = md(text)
    assert profile(doc).n_code_blocks == 3
    assert [doc.text[b.start : b.end][:7] for b in doc.blocks_of("code")] == ["```yaml", "```sh\nm", "> ~~~sh"]


def test_a_fence_on_the_list_marker_line_is_code_and_the_rest_is_the_list():
    """A fence opening a list is the piece at the list's start: it is code (not prose the
    heading before it may be split into), and the list after it is named as a list."""
    text = (
        "## Build\n\n- ```sh\n  make build\n  make test\n  make release\n  ```\n"
        "- Then tag the release and push the tag so that the pipeline publishes it everywhere."
    )
    s, e = fence(text, "- ```sh", "  ```")
    for size in (55, 60, 75):  # the fence is 53 characters
        chunks = chunks_of(md(text), chunk_size=size)
        assert not cut_inside(chunks, s, e), size
    chunks = chunks_of(md(text), chunk_size=75)
    code = next(c for c in chunks if c.start <= s < c.end)
    assert code.reason == "size limit: next block is a list"


#: Steps whose commands sit in a fence indented under the item (4 spaces: the sentence splitter's
#: own fence regex allowed 3) and in a quote inside an item; full stops and "#" lines in both.
STEPS = """## Deploy

1. Build the image and tag it with the release number that the changelog gives.

    ```bash
    make image. Then
    # push it to the registry
    docker push registry/app:1.2
    ```

2. Restart the service. Watch the logs until it says it is ready.
   > ```
   > journalctl -u app. Now
   > systemctl status app
   > ```
3. Check the health page. It should say ok.
"""


def nested_fences(doc: Document) -> list[tuple[int, int]]:
    code = [(b.start, b.end) for b in doc.blocks if b.kind == "code"]
    assert [doc.text[s : s + 7] for s, _ in code] == ["```bash", "> ```\n "]
    return code


@pytest.mark.parametrize(
    ("strategy", "params"),
    [("sentence", {"sentences_per_chunk": 1, "overlap_sentences": 0}), ("paragraph", {"chunk_size": 100})],
)
def test_sentence_strategies_keep_a_nested_fence_whole(strategy, params):
    """The sentence splitter cut "make image." off its fence and each quoted line apart."""
    doc = md(STEPS)
    chunks = chunks_of(doc, strategy, **params)
    for s, e in nested_fences(doc):
        assert not cut_inside(chunks, s, e), (strategy, doc.text[s:e])
    if strategy == "sentence":  # one sentence a chunk: each fence is one
        assert {(c.start, c.end) for c in chunks} >= set(nested_fences(doc))


def test_semantic_sentences_keep_a_nested_fence_whole():
    doc = md(STEPS)
    curve = semantic_curve(doc, {"buffer_size": 0}, Context(embedder=FakeEmbedder(dim=16)))
    for s, e in nested_fences(doc):
        assert (s, e) in curve.sentences


#: A pipe table in a tight list item (no blank line around it: the prose splitter's "\n\n" does
#: not fall around it, so its "\n" fell between the rows).
LIST_TABLE = """# Setup

## Ports

- Open the ports below in the firewall before the first start, one rule for each of them:
  | port | service |
  |------|---------|
  | 80   | http    |
  | 443  | https   |
  | 5432 | db      |
- Then reload the firewall and check with a scan from outside that only these ports answer.
"""

QUOTE_TABLE = """# Notes

> The ports that the firewall lets through, as the operator listed them after the audit:
> | port | service |
> |------|---------|
> | 80   | http    |
> | 443  | https   |
>
> Nothing else should answer from outside, and a scan every week checks that it stays so.
"""


def table(text: str, first: str, last: str) -> tuple[int, int]:
    s, e = fence(text, first, last)
    assert [(b.start, b.end) for b in md(text).blocks_of("table")] == [(s, e)]
    return s, e


@pytest.mark.parametrize("strategy", ["markdown", "hybrid"])
def test_a_table_in_a_list_item_is_not_cut(strategy):
    s, e = fence(LIST_TABLE, "| port", "| db      |")
    for size in (110, 130, 150, 200):  # the table is 102 characters
        chunks = chunks_of(md(LIST_TABLE), strategy, chunk_size=size)
        assert not cut_inside(chunks, s, e), (strategy, size)
    chunks = chunks_of(md(LIST_TABLE), strategy, chunk_size=130)
    before, inside = (next(c for c in chunks if c.start <= s < c.end) for s in (0, s))
    assert before.reason == "size limit: next block is a table"
    assert inside.text.startswith("| port") and inside.reason == "size limit: next block is a list"


def test_a_table_in_a_quote_is_not_cut():
    s, e = table(QUOTE_TABLE, "> | port", "| https   |")
    for size in (85, 100, 120):  # the table is 83 characters
        assert not cut_inside(chunks_of(md(QUOTE_TABLE), chunk_size=size), s, e), size


def test_a_nested_table_bigger_than_the_size_is_cut_between_rows_and_says_so():
    s, e = table(LIST_TABLE, "| port", "| db      |")
    chunks = chunks_of(md(LIST_TABLE), chunk_size=50)
    inside = [c for c in chunks if s <= c.start and c.end <= e]
    assert len(inside) >= 2 and all(c.text.endswith("|") for c in inside)
    assert all("inside a table larger than chunk_size" in c.reason for c in inside[:-1])


def test_the_profile_counts_nested_tables():
    assert profile(md(LIST_TABLE + "\n" + QUOTE_TABLE)).n_tables == 2

