"""A lead-in ("Run the installer:") goes with the code block or table it introduces.

The markdown packer filled chunks block by block, so the paragraph or list item announcing a
command could end one chunk while its command opened the next: a reader (or a retriever) got
the instruction without the command and the command without what it is for.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explorer import Document, chunk_document
from explorer.documents.markdown_blocks import markdown_blocks
from explorer.strategies.invariants import invariant_errors
from explorer.strategies.lead_ins import LEAD_IN_MAX_CHARS, lead_in_start
from tests.support.install_steps import COMMANDS

#: Top-level paragraphs, each announcing the fence after it.
LISTING = "## Install\n\n" + "".join(f"{step}:\n\n```bash\n{cmd}\n```\n\n" for step, cmd in COMMANDS)
#: Numbered steps, each command in a fence nested in its item.
STEPS = "## Install\n\n" + "".join(
    f"{i}. {step}:\n   ```bash\n   " + cmd.replace("\n", "\n   ") + "\n   ```\n"
    for i, (step, cmd) in enumerate(COMMANDS, 1)
)


def md(text: str) -> Document:
    return Document("guide.md", "markdown", text, blocks=markdown_blocks(text))


def texts(text: str, strategy: str = "markdown", **params) -> list[str]:
    doc = md(text)
    chunks = chunk_document(doc, strategy, params)
    size = params.get("chunk_size", 1000) if params.get("length", "chars") == "chars" else None
    assert not invariant_errors(doc, chunks, size)
    return [c.text for c in chunks]


def fence(cmd: str, indent: str = "") -> str:
    return f"```bash\n{cmd}\n```".replace("\n", "\n" + indent)


def test_a_paragraph_lead_in_goes_with_its_code_block():
    """At 200 the old packer ended three chunks on "...:" and opened the next on "```bash"."""
    (s1, c1), (s2, c2), (s3, c3), (s4, c4) = COMMANDS
    assert texts(LISTING, chunk_size=200) == [
        f"## Install\n\n{s1}:\n\n{fence(c1)}",
        f"{s2}:\n\n{fence(c2)}",
        f"{s3}:\n\n{fence(c3)}",
        f"{s4}:\n\n{fence(c4)}",
    ]
    chunks = chunk_document(md(LISTING), "markdown", {"chunk_size": 200})
    assert chunks[0].reason == "size limit: next block is a code block, with its lead-in"


def test_a_list_item_lead_in_goes_with_its_nested_fence():
    """ "2. Create a virtual environment ...:" ended a chunk, its fence opened the next one."""
    items = [f"{i}. {step}:\n   {fence(cmd, '   ')}" for i, (step, cmd) in enumerate(COMMANDS, 1)]
    assert texts(STEPS, chunk_size=250) == [f"## Install\n\n{items[0]}", *items[1:]]


def test_the_last_item_of_a_list_moves_with_the_fence_after_it():
    """The lead-in is the list's last item (cut off the list at its marker), not the whole list."""
    first = "- Install the package with pip and check the version it prints at the end of the run."
    second = "- Make sure the service account exists and owns the data directory before going on."
    code = "```yaml\nserver:\n  host: 0.0.0.0\n  port: 8080\n```"
    text = f"## Setup\n\n{first}\n{second}\n- Create the configuration file:\n\n{code}\n\nStart it.\n"
    assert texts(text, chunk_size=200) == [
        f"## Setup\n\n{first}\n{second}",
        f"- Create the configuration file:\n\n{code}\n\nStart it.",
    ]
    loose = text.replace("- Create the configuration file:", "- Last step.\n\n  Then create the file:")
    assert texts(loose, chunk_size=200)[1].startswith("Then create the file:\n\n```yaml")


@pytest.mark.parametrize(
    "lead",
    [
        "Lancez l'installateur :",
        "Lancez l'installateur\u00a0:",
        "**Example:**",
        "Run it, and then\nrun the check as well:",
    ],
)
def test_lead_ins_french_emphasised_and_wrapped(lead):
    body = "Some words before the command that fill most of the first chunk. " * 2
    text = f"# T\n\n{body.strip()}\n\n{lead}\n\n```sh\nsh install.sh --prefix /opt/acme\n```\n"
    assert texts(text, chunk_size=180)[-1] == f"{lead}\n\n```sh\nsh install.sh --prefix /opt/acme\n```"


def test_a_quoted_lead_in_goes_with_the_fence_in_its_quote():
    text = (
        "# Notes\n\n> The operator wrote this down after the outage of last spring, word for word.\n>\n"
        "> Restart it with:\n> ~~~sh\n> systemctl restart orion\n> ~~~\n"
    )
    assert texts(text, chunk_size=100)[-1] == "> Restart it with:\n> ~~~sh\n> systemctl restart orion\n> ~~~"


def test_a_lead_in_goes_with_a_table():
    intro = "The scheduler runs on every system we test, with the command to enable it named in the table."
    table = "| System | Command |\n|---|---|\n| Debian | `tidepool schedule --systemd` |"
    text = f"## Scheduling\n\n{intro}\n\nThe options we test:\n\n{table}\n"
    assert texts(text, chunk_size=150) == [f"## Scheduling\n\n{intro}", f"The options we test:\n\n{table}"]


BIG = "```sh\n" + "echo step\n" * 20 + "```"  # 206 characters


@pytest.mark.parametrize("strategy", ["markdown", "hybrid"])
def test_a_lead_in_opens_the_first_chunk_of_a_block_bigger_than_a_chunk(strategy):
    """A block over chunk_size is split anyway: its lead-in ended the chunk before ("...Intro
    words here.\n\nRun:"), it now opens the block's first piece, which gets the room it leaves."""
    text = f"# T\n\nIntro words here.\n\nRun:\n\n{BIG}\n"
    doc = md(text)
    chunks = chunk_document(doc, strategy, {"chunk_size": 200})
    assert not invariant_errors(doc, chunks, 200)
    assert [c.text for c in chunks] == [
        "# T\n\nIntro words here.",
        "Run:\n\n```sh\n" + "echo step\n" * 17 + "echo step",  # the lines that fit beside it
        "echo step\necho step\n```",
    ]
    assert chunks[0].reason == "size limit: next block is a code block, with its lead-in"
    table = "| port | service |\n|------|---------|\n" + "".join(f"| {8000 + i} | svc{i} |\n" for i in range(10))
    text = f"# T\n\nIntro words here.\n\nThe ports:\n\n{table}\nEnd.\n"
    second = texts(text, strategy, chunk_size=100, chunk_overlap=30)[1]
    assert second.startswith("The ports:\n\n| port | service |") and len(second) <= 100


def test_what_is_not_a_lead_in_stays_where_it_was():
    """A long paragraph ending in ":", a lead-in that cannot share a chunk with its block (nor,
    the block being bigger than a chunk, leave a quarter of a chunk to its first piece), and
    headings + lead-in that together do not fit with the block: cut as before."""
    long_lead = "This paragraph explains at length why the command below is needed. " * 3 + "Run:"
    assert len(long_lead) > LEAD_IN_MAX_CHARS
    text = f"# T\n\n{long_lead}\n\n```sh\nmake\n```\n"
    assert texts(text, chunk_size=225) == [f"# T\n\n{long_lead}", "```sh\nmake\n```"]
    lead = "Run the following commands in order, as root:"  # 46 of 60: 14 left, under a quarter
    text = f"# T\n\nIntro.\n\n{lead}\n\n{BIG}\n"
    assert texts(text, chunk_size=60)[:2] == [f"# T\n\nIntro.\n\n{lead}", "```sh\n" + "echo step\n" * 4 + "echo step"]
    lead = "- Open the ports below in the firewall before the first start, one rule for each of them:"
    table = "  | port | service |\n  |------|---------|\n  | 80   | http    |\n  | 443  | https   |"
    text = f"# Setup\n\n## Ports\n\n{lead}\n{table}\n- Then reload.\n"
    assert texts(text, chunk_size=160)[0] == f"# Setup\n\n## Ports\n\n{lead}"  # no chunk of headings alone


def test_overlap_leaves_room_for_the_lead_in_and_its_block():
    """The overlap before a moved lead-in left room for the lead-in only: a chunk held the
    overlap and "Run this now:", and the next one "Run this now:" again with the code."""
    p1, p2 = "Alpha " * 24 + "end.", "Beta words here, short one. x x x x x x"
    code = "```bash\n" + "echo hi\n" * 17 + "```"
    text = f"# Doc\n\n{p1}\n\n{p2}\n\nRun this now:\n\n{code}\n"
    assert texts(text, chunk_size=200, chunk_overlap=50) == [f"# Doc\n\n{p1}\n\n{p2}", f"Run this now:\n\n{code}"]
    short = "```bash\n" + "echo hi\n" * 10 + "```"
    assert texts(text.replace(code, short), chunk_size=200, chunk_overlap=50) == [
        f"# Doc\n\n{p1}\n\n{p2}",
        f"{p2}\n\nRun this now:\n\n{short}",
    ]


def test_token_sizes_take_the_rule_too():
    """Each lead-in and its fence are 41-43 model tokens: at 60 each pair is a chunk (the old
    packer ended chunks on the lead-ins); at 40 a pair does not fit and the cut is as before."""
    pairs = [f"{step}:\n\n{fence(cmd)}" for step, cmd in COMMANDS]
    assert texts(LISTING, chunk_size=60, length="tokens") == [f"## Install\n\n{pairs[0]}", *pairs[1:]]
    assert texts(LISTING, chunk_size=40, length="tokens")[1] == f"{COMMANDS[1][0]}:"


def test_lead_in_start():
    text = "- one\n- two:\n"
    assert lead_in_start(text, 0, 12, "list") == 6
    assert lead_in_start(text, 0, 12, "paragraph") == 0
    assert lead_in_start(text, 0, 12, "code") is None
    assert lead_in_start("Run it.", 0, 7, "paragraph") is None
    wrapped = "- a long item\n  that wraps:"
    assert lead_in_start(wrapped, 0, len(wrapped), "list") == 0
    para = "- item\n\n  Then:"
    assert lead_in_start(para, 0, len(para), "list") == para.index("Then")


PARTS = st.one_of(
    st.integers(1, 12).map(lambda n: "Words of prose. " * n),
    st.integers(1, 6).map(lambda n: "Now run " + "this " * n + ":"),
    st.integers(1, 8).map(lambda n: "```sh\n" + "make it\n" * n + "```"),
    st.integers(1, 3).map(lambda n: f"{n}. Then do:\n   ```sh\n" + "   make it\n" * n + "   ```"),
    st.just("| a | b |\n|---|---|\n| 1 | 2 |"),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(PARTS, min_size=1, max_size=14), size=st.integers(20, 300), frac=st.floats(0, 0.6))
def test_a_lead_in_that_fits_with_its_block_shares_a_chunk_with_it(parts, size, frac):
    text = "# Doc\n\n" + "\n\n".join(parts) + "\n"
    doc = md(text)
    overlap = min(int(size * frac), size - 1)
    chunks = chunk_document(doc, "markdown", {"chunk_size": size, "chunk_overlap": overlap})
    assert not invariant_errors(doc, chunks, size)
    for b in doc.blocks_of("code", "table"):
        if b.end - b.start <= size:  # fits: never cut inside
            assert any(c.start <= b.start and b.end <= c.end for c in chunks), b
        before = text[: b.start].rstrip()
        lead = before.rfind("\n\n") + 2
        head = before[lead:]
        after_title = lead == len("# Doc\n\n")  # the title stays with it, fitting or not
        if not head.endswith(":") or "```" in head or after_title:
            continue
        if b.end - lead <= size:
            assert any(c.start <= lead and b.end <= c.end for c in chunks), (head, size)
        elif b.end - b.start > size and b.start - lead <= size // 2:  # split anyway, room left
            assert any(c.start <= lead and b.start < c.end for c in chunks), (head, size)
