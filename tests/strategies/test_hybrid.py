"""Hybrid: routing rules on real-looking documents, delegation, meta, and the invariants."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from explorer import chunk_document
from explorer.documents.loaders import load_bytes
from explorer.documents.samples import SAMPLES, load_sample
from explorer.errors import LoadError, ParamError
from explorer.strategies.hybrid import CJK_SEPARATORS, route
from explorer.strategies.invariants import invariant_errors
from explorer.text.chunk import END_OF_TEXT, HEADING
from tests.support.hostile_inputs import loadable_cases
from tests.support.install_steps import COMMANDS

PROSE = (
    "The committee met on Tuesday to review the budget. Several members raised concerns about "
    "the cost of the new building. The chair proposed a smaller design, and the vote was "
    "postponed until the next meeting. Nobody expected the debate to last so long. "
)
CODE = """def load(path):
    with open(path) as fh:
        data = fh.read()
    return parse(data)

class Parser:
    def __init__(self, strict=False):
        self.strict = strict

    def parse(self, text):
        items = []
        for line in text.splitlines():
            items.append(line.strip())
        return items
"""


def doc_of(text: str, name: str = "t.txt"):
    return load_bytes(text.encode(), name)


def chunks_of(doc, **params):
    cs = chunk_document(doc, "hybrid", params)
    size = params.get("chunk_size", 1000)
    assert invariant_errors(doc, cs, size if params.get("length", "chars") != "words" else None) == []
    return cs


def choice(c) -> str:
    return c.meta_dict()["hybrid_choice"]


# -- routing rules -------------------------------------------------------------------------------


def test_cjk_text_goes_to_recursive_with_cjk_sentence_ends():
    text = "".join(
        f"这是第{i}个句子，内容比较长一些。" if i % 3 else f"第{i}句问：为什么？" for i in range(60)
    )
    doc = doc_of(text, "zh.txt")
    (r,) = route(doc, 100)
    assert r.strategy == "recursive" and r.reason.startswith("CJK text")
    cs = chunks_of(doc, chunk_size=100)
    assert len(cs) > 5 and {choice(c) for c in cs} == {"recursive"}
    assert all(c.text[-1] in "。？！" for c in cs), [c.text[-3:] for c in cs]


def test_thai_text_without_sentence_marks_goes_to_recursive_cut_at_spaces():
    """Thai ends phrases and sentences with a space, not a mark: sentence groups found one
    "sentence" per paragraph and cut 3 of 4 chunks at characters (a helper's pass)."""
    phrases = ["วันนี้อากาศดีมาก", "เราไปเที่ยวทะเลกัน", "น้ำทะเลใสและเย็นสบาย", "ทุกคนมีความสุขมาก"]
    text = " ".join(phrases[i % 4] for i in range(60))
    doc = doc_of(text, "th.txt")
    (r,) = route(doc, 300)
    assert r.strategy == "recursive" and r.reason.startswith("Thai text")
    cs = chunks_of(doc, chunk_size=300)
    assert len(cs) > 2 and all(c.end == len(text) or text[c.end] == " " for c in cs)


def test_code_heavy_text_goes_to_recursive():
    doc = doc_of(CODE * 5, "code.txt")
    (r,) = route(doc, 300)
    assert r.strategy == "recursive" and r.reason.startswith("code-heavy")
    cs = chunks_of(doc, chunk_size=300)
    assert {choice(c) for c in cs} == {"recursive"}


#: An install section: numbered steps, each with its command in a fence nested in the item.
STEPS = (
    "# Guide\n\n## Install\n\n"
    + "".join(
        f"{i}. {step}:\n   ```bash\n   " + cmd.replace("\n", "\n   ") + "\n   ```\n"
        for i, (step, cmd) in enumerate(COMMANDS, 1)
    )
    + "\n## Use\n\nOpen the page in a browser. It lists the jobs.\n"
)


def test_code_in_a_list_does_not_make_a_section_code_heavy():
    """Steps each with a command block are more than half code by characters, but they are a
    procedure: counted as code (a03872d listed nested fences, and the share summed them), the
    section went to recursive, which knows no fences and ended chunks on "```bash" at 200 and 250.
    Code standing on its own still counts: the same commands as top-level fences are a listing."""
    doc = doc_of(STEPS, "steps.md")
    fences = [(b.start, b.end) for b in doc.blocks_of("code")]
    assert len(fences) == 4 and sum(e - s for s, e in fences) > 0.5 * len(STEPS)
    for size in (150, 200, 250, 300):
        (r,) = [r for r in route(doc, size) if "## Install" in STEPS[r.start : r.end]]
        assert not r.reason.startswith("code-heavy"), (size, r.reason)
        cs = chunks_of(doc, chunk_size=size)
        assert not [c for c in cs for s, e in fences if s < c.start < e or s < c.end < e], size
    listing = "## Install\n\n" + "".join(f"{step}:\n\n```bash\n{cmd}\n```\n\n" for step, cmd in COMMANDS)
    (r,) = route(doc_of(listing, "listing.md"), 200)
    assert r.strategy == "markdown" and r.reason.startswith("code-heavy"), r.reason


#: Top-level fences with blank lines inside: a script, then another.
SCRIPTS = """# Orion

## Install

```bash
git clone https://example.org/acme/orion.git
cd orion

python -m venv .venv
.venv/bin/pip install -r requirements.txt
```

```bash
cp settings.sample.toml settings.toml

.venv/bin/python -m orion migrate
.venv/bin/orion serve --port 8080
```

## Use

Open the page in a browser.
"""


def test_code_blocks_of_a_markdown_section_go_to_markdown_whole():
    """A section of top-level fences is code-heavy; it went to recursive, which knows no fences:
    at 200 and 250 a chunk ended on "```bash\ncp settings.sample.toml settings.toml" and the next
    began mid-script. markdown keeps each block whole (and splits one over the size at lines)."""
    doc = doc_of(SCRIPTS, "scripts.md")
    first, second = (SCRIPTS[b.start : b.end] for b in doc.blocks_of("code"))
    for size in (200, 250):
        (r,) = [r for r in route(doc, size) if "## Install" in SCRIPTS[r.start : r.end]]
        assert (r.strategy, r.reason) == (
            "markdown",
            "code-heavy (91% in code blocks): markdown keeps code blocks whole",  # the title counts as text
        ), size
        assert [c.text for c in chunks_of(doc, chunk_size=size)] == [
            f"# Orion\n\n## Install\n\n{first}",  # the title opens the first section, not a chunk alone
            second,
            "## Use\n\nOpen the page in a browser.",
        ], size
    heads = [c for c in chunks_of(doc, chunk_size=100) if "```bash" in c.text]  # over the size: at lines
    first_part, second_part = (block.split("\n\n")[0] for block in (first, second))
    assert [c.text for c in heads] == [f"# Orion\n\n## Install\n\n{first_part}", second_part]
    assert all(c.reason.endswith("inside a code block larger than chunk_size") for c in heads)


def test_code_blocks_of_markdown_without_headings_go_to_markdown_and_lead_ins_stay_with_them():
    listing = "".join(f"{step}:\n\n```bash\n{cmd}\n```\n\n" for step, cmd in COMMANDS)
    doc = doc_of(listing, "listing.md")
    (r,) = route(doc, 200)
    assert r.strategy == "markdown" and r.reason.startswith("code-heavy"), r.reason
    assert [c.text for c in chunks_of(doc, chunk_size=200)] == [
        f"{step}:\n\n```bash\n{cmd}\n```" for step, cmd in COMMANDS
    ]


#: A manual page as text: option lines and their indented French descriptions, and a text table.
MAN_PAGE = (
    "NOM\n       grep - affiche les lignes correspondant à un motif\n\n"
    "DESCRIPTION\n"
    "       grep recherche un MOTIF dans chaque FICHIER. Un FICHIER « - » désigne l'entrée\n"
    "       standard. Si aucun FICHIER n'est indiqué, les recherches récursives examinent le\n"
    "       répertoire de travail, et les recherches non récursives lisent l'entrée standard.\n\n"
    "   Options générales\n"
    "       -i, --ignore-case\n"
    "              Ignorer la casse dans les motifs et les données d'entrée, de sorte que les\n"
    "              caractères qui ne diffèrent que par la casse correspondent les uns aux autres.\n\n"
    "    |paquet   |taille |description                     |\n"
    "    |---------+-------+--------------------------------|\n"
    "    |iputils  |45     |test de la connexion au réseau  |\n\n"
)
MAKEFILE = "run: $(VENV)/.req\n\t$(PY) -m streamlit run app.py --server.port $(PORT)\n\t@echo done > $@\n\n"


def test_indented_prose_is_not_code_but_indented_code_is():
    """A manual page's indented paragraphs, option lines and text tables are prose (they read as
    82–96 % code once, "code-heavy" beside "Code blocks 0"); a Makefile's recipes stay code."""
    (r,) = route(doc_of(MAN_PAGE * 8, "man-grep.txt"), 1000)
    assert not r.reason.startswith("code-heavy"), r.reason
    (r,) = route(doc_of(MAKEFILE * 20, "Makefile.txt"), 1000)
    assert r.reason.startswith("code-heavy"), r.reason


def test_line_structured_text_goes_to_recursive():
    log = "".join(f"2024-05-0{i % 9 + 1} INFO job {i} done\n" for i in range(200))
    (r,) = route(doc_of(log, "app.log"), 500)
    assert r.strategy == "recursive" and r.reason.startswith("line-structured text")


def test_long_paragraphs_go_to_sentence_groups():
    text = "\n\n".join(PROSE * 4 for _ in range(5))  # paragraphs of ~1,000 characters
    doc = doc_of(text)
    (r,) = route(doc, 400)
    assert r.strategy == "sentence" and "long paragraphs" in r.reason
    cs = chunks_of(doc, chunk_size=400)
    assert {choice(c) for c in cs} == {"sentence"}
    assert all(c.text.endswith(".") for c in cs)  # whole sentences


def test_short_paragraphs_go_to_recursive():
    text = "\n\n".join(PROSE for _ in range(8))  # paragraphs of ~250 characters
    (r,) = route(doc_of(text), 1000)
    assert r.strategy == "recursive" and r.reason.startswith("plain prose")


def test_same_text_routes_by_chunk_size():
    text = "\n\n".join(PROSE * 2 for _ in range(6))  # ~500-character paragraphs
    assert route(doc_of(text), 2000)[0].strategy == "recursive"
    assert route(doc_of(text), 300)[0].strategy == "sentence"


def test_token_sizes_are_converted_to_characters():
    text = "\n\n".join(PROSE * 2 for _ in range(6))
    doc = doc_of(text)
    # ~500-char paragraphs are ~100 model tokens: 60 tokens is "long", 400 tokens is not
    assert route(doc, 60, "tokens")[0].strategy == "sentence"
    assert route(doc, 400, "tokens")[0].strategy == "recursive"
    chunks_of(doc, chunk_size=60, length="tokens")


MD = f"""# Project notes

Intro paragraph.

## Data

| name | size |
|------|------|
| a    | 1    |

Some words about the data.

## Listing

```python
{CODE * 3}```

## Story

{PROSE * 3}

{PROSE * 3}

## Short

Just one line.
"""


def test_markdown_sections_are_routed_one_by_one():
    doc = doc_of(MD, "notes.md")
    routes = route(doc, 500)
    got = [(doc.text[r.start : r.end].split("\n", 1)[0], r.strategy, r.reason.split(":")[0]) for r in routes]
    assert got == [
        ("# Project notes", "markdown", "section fits in one chunk"),
        ("## Data", "markdown", "section with tables"),
        ("## Listing", "markdown", "code-heavy (99% in code blocks)"),
        ("## Story", "sentence", "prose with long paragraphs (99% of it in paragraphs over chunk_size)"),
        ("## Short", "markdown", "section fits in one chunk"),
    ]
    # the routes tile the document
    assert routes[0].start == 0 and routes[-1].end == len(doc.text)
    assert all(a.end == b.start for a, b in pairwise(routes))


def test_markdown_chunks_stay_in_their_section_and_say_why():
    doc = doc_of(MD, "notes.md")
    routes = route(doc, 500)
    cs = chunks_of(doc, chunk_size=500)
    for c in cs:
        (r,) = [r for r in routes if r.start <= c.start < r.end]
        assert c.end <= r.end
        assert (c.meta_dict()["hybrid_choice"], c.meta_dict()["hybrid_reason"]) == (r.strategy, r.reason)
    # a section's last chunk ends at the next heading, not "end of text"
    ends = [c for c in cs if c.reason.startswith(END_OF_TEXT)]
    assert ends == [cs[-1]]
    assert any(c.reason == f"{HEADING}: ## Story" for c in cs)
    assert {choice(c) for c in cs} == {"markdown", "sentence"}
    assert all(c.headings[0] == "Project notes" for c in cs)


def test_cjk_markdown_keeps_structure_and_cjk_separators():
    prose = "这是一个比较长的中文句子，用来测试分块。" * 12
    md = f"# 指南\n\n## 安装\n\n{prose}\n\n## 表格\n\n| 名称 | 大小 |\n|---|---|\n| 甲 | 1 |\n\n## 结尾\n\n短句。\n"
    doc = doc_of(md, "zh.md")
    got = [(r.strategy, r.reason.split(" (")[0]) for r in route(doc, 100)]
    assert got == [  # the lone title opens the first section
        ("recursive", "CJK text"),
        ("markdown", "section with tables: markdown keeps its structure"),
        ("markdown", "section fits in one chunk: markdown keeps it whole"),
    ]
    cs = chunks_of(doc, chunk_size=100)
    cjk = [c for c in cs if choice(c) == "recursive"]
    assert cjk[0].text == "# 指南\n\n## 安装"  # recursive keeps the heading lines apart (first separator)
    assert len(cjk) > 2 and all(c.text.endswith("。") for c in cjk[1:])


def test_lone_title_over_h2_sections_cuts_at_h2():
    doc = load_sample("guide.md")
    routes = route(doc)
    starts = [doc.text[r.start : r.end].lstrip().split("\n", 1)[0] for r in routes]
    assert starts == ["---", "## Installation", "## Daily use", "## Recovery", "## Reference"]


def test_markdown_without_headings_uses_the_text_rules():
    doc = doc_of("\n\n".join(PROSE * 5 for _ in range(3)), "flat.md")
    (r,) = route(doc, 300)
    assert r.strategy == "sentence"


def test_sentence_overlap_comes_from_chunk_overlap():
    text = "\n\n".join(PROSE * 4 for _ in range(3))
    doc = doc_of(text)
    plain = chunks_of(doc, chunk_size=400)
    over = chunks_of(doc, chunk_size=400, chunk_overlap=100)
    assert all(a.end <= b.start for a, b in pairwise(plain))
    assert any(b.start < a.end for a, b in pairwise(over))


def test_params_are_checked():
    doc = doc_of(PROSE)
    with pytest.raises(ParamError, match="chunk_overlap=100 must be smaller than chunk_size=100"):
        chunk_document(doc, "hybrid", {"chunk_size": 100, "chunk_overlap": 100})
    with pytest.raises(ParamError, match="chunk_size=2 tokens leaves no room"):
        chunk_document(doc, "hybrid", {"chunk_size": 2, "length": "tokens"})
    with pytest.raises(ParamError, match="chunk_size=0 is below the minimum 1"):
        chunk_document(doc, "hybrid", {"chunk_size": 0})


def test_cjk_separators_are_valid_for_recursive():
    from explorer.strategies import get_strategy

    get_strategy("recursive").validate({"separators": list(CJK_SEPARATORS), "keep_separator": "end"})


@pytest.mark.parametrize("name", list(SAMPLES))
@pytest.mark.parametrize(
    ("size", "overlap", "unit"), [(200, 0, "chars"), (1000, 100, "chars"), (128, 16, "tokens")]
)
def test_samples_hold_the_invariants(name, size, overlap, unit):
    doc = load_sample(name)
    cs = chunks_of(doc, chunk_size=size, chunk_overlap=overlap, length=unit)
    assert cs and all(c.meta_dict()["hybrid_reason"] for c in cs)
    if doc.kind == "pdf":
        assert all(c.pages for c in cs)


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, id=c.id, marks=[pytest.mark.slow] if c.slow or not c.cache else [])
        for c in loadable_cases()
    ],
)
def test_hostile_documents(case):
    doc = load_bytes(case.data(), case.filename)
    cs = chunks_of(doc, chunk_size=500, chunk_overlap=50)
    assert cs and all(choice(c) in ("markdown", "recursive", "sentence") for c in cs)


# -- property test -------------------------------------------------------------------------------

_PIECES = st.sampled_from(
    [
        "# Title",
        "## Section",
        "### Sub",
        "```",
        "```py",
        "    indented()",
        "def f(x):",
        "    return x;",
        "| a | b |",
        "|---|---|",
        "- item",
        "1. step",
        "> quote",
        "Plain sentence here. Another one follows!",
        "Une phrase de M. Dupont, p. 12.",
        "这是中文句子。还有一句！",
        "مرحبا بالعالم.",
        "😀👩‍💻 emoji",
        "x" * 120,
        "",
        "",
        "   ",
        "\t",
    ]
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.one_of(_PIECES, st.text(max_size=40)), min_size=1, max_size=30),
    st.sampled_from(["t.md", "t.txt"]),
    st.integers(1, 300),
    st.integers(0, 100),
    st.sampled_from(["chars", "words", "cl100k"]),
)
def test_hybrid_invariants(lines, name, size, overlap, unit):
    if overlap >= size:
        overlap = size // 2
    try:
        doc = load_bytes("\n".join(lines).encode("utf-8", "surrogatepass"), name)
    except LoadError:
        reject()  # empty or binary: the loader refuses it (tested elsewhere)
    cs = chunk_document(doc, "hybrid", {"chunk_size": size, "chunk_overlap": overlap, "length": unit})
    assert invariant_errors(doc, cs, size if unit != "words" else None) == []
    routes = route(doc, size, unit)
    for c in cs:
        (r,) = [r for r in routes if r.start <= c.start < r.end]
        assert c.end <= r.end and choice(c) == r.strategy


def test_a_title_alone_before_the_first_section_opens_it():
    """A lone H1 over H2 sections cut the document at the H2s, and the title, the text before
    the first cut, was a section and so a chunk of its own ("# Orion"). It now opens the first
    section; a title followed by text before the first H2 is still a section."""
    doc = doc_of("# Orion\n\n## Install\n\nRun the installer.\n\n## Use\n\nOpen the page.\n", "t.md")
    assert chunks_of(doc, chunk_size=200)[0].text == "# Orion\n\n## Install\n\nRun the installer."
    intro = "# Orion\n\nOrion serves pages.\n\n## Install\n\nRun the installer.\n\n## Use\n\nOpen the page.\n"
    assert chunks_of(doc_of(intro, "i.md"), chunk_size=30)[0].text == "# Orion\n\nOrion serves pages."
