"""A chunk's heading path names the deepest heading over its content.

It was read at the chunk's first character: a chunk opening with an empty "## Troubleshooting"
joined to "### The pod restarts in a loop" and its text got only "Troubleshooting", while the
next chunk of the same sub-section got the sub-heading.
"""

from __future__ import annotations

import json

import pytest

from explorer import Context, Document, chunk_document
from explorer.cli.main import main
from explorer.documents.markdown_blocks import markdown_blocks
from explorer.embedding.fake import FakeEmbedder
from explorer.export.data import chunks_to_csv, chunks_to_jsonl
from explorer.strategies.registry import get_strategy, strategy_names

GUIDE = """# Deployment Guide

A rollback restores the previous image tag. It takes about two minutes to complete.

## Troubleshooting

### The pod restarts in a loop

Check the liveness probe. A common cause is a `timeout_s` shorter than the time the service needs
to warm its cache at startup, which is about 40 seconds on a cold node.

### Requests time out

Increase `workers` before you increase `timeout_s`. Each worker uses about 300 MB of memory.
"""
POD = ("Deployment Guide", "Troubleshooting", "The pod restarts in a loop")


def md(text: str) -> Document:
    return Document("guide.md", "markdown", text, blocks=markdown_blocks(text))


def chunks_of(doc: Document, strategy: str, **params):
    ctx = Context(embedder=FakeEmbedder()) if get_strategy(strategy).needs_embedder else Context()
    return chunk_document(doc, strategy, params, ctx)


@pytest.mark.parametrize("size", [1000, 200])
def test_an_empty_section_joined_to_its_sub_section_takes_the_sub_heading(size):
    doc = md(GUIDE)
    chunks = chunks_of(doc, "markdown", chunk_size=size)
    pod = [c for c in chunks if GUIDE.index("## Troubleshooting") <= c.start < GUIDE.index("### Requests")]
    assert pod and pod[0].text.startswith("## Troubleshooting\n\n### The pod")
    assert all(c.headings == POD for c in pod), [(c.start, c.headings) for c in pod]


@pytest.mark.parametrize("strategy", strategy_names())
def test_every_strategy_reads_the_path_after_the_leading_headings(strategy):
    text = "# Guide\n\n## Part\n\nBody text of the part, one sentence long enough to read.\n"
    doc = md(text)
    params = {"chunk_size": 500} if "chunk_size" in get_strategy(strategy).param_names() else {}
    chunks = chunks_of(doc, strategy, **params)
    body = [c for c in chunks if "Body" in c.text]
    assert body and all(c.headings == ("Guide", "Part") for c in body)
    assert chunks[0].start == 0 and (chunks[0].headings == ("Guide",)) == ("Body" not in chunks[0].text)


def test_a_chunk_of_headings_only_keeps_its_first_heading_path():
    text = "# Guide\n\n## Part\n\n### Sub\n"
    chunks = chunks_of(md(text), "fixed", chunk_size=17, chunk_overlap=0)
    assert chunks[0].text.rstrip() == "# Guide\n\n## Part"
    assert chunks[0].headings == ("Guide",)


def test_a_chunk_cut_inside_a_heading_line_is_not_moved():
    text = "# Guide\n\n## Part\n\nBody.\n"
    chunks = chunks_of(md(text), "fixed", chunk_size=4, chunk_overlap=0)
    assert [(c.text, c.headings) for c in chunks[:2]] == [("# Gu", ("Guide",)), ("ide", ("Guide",))]


def test_exports_and_the_cli_carry_it(tmp_path, capsysbinary):
    chunks = chunks_of(md(GUIDE), "markdown")
    pod = next(c for c in chunks if "### The pod" in c.text)
    rows = [json.loads(line) for line in chunks_to_jsonl(chunks).splitlines()]
    assert rows[pod.index]["headings"] == list(POD)
    assert " > ".join(POD) in chunks_to_csv(chunks)
    path = tmp_path / "guide.md"
    path.write_text(GUIDE, encoding="utf-8")
    assert main(["chunk", str(path), "--strategy", "markdown"]) == 0
    out = [json.loads(line) for line in capsysbinary.readouterr()[0].decode().splitlines()]
    assert out[pod.index]["headings"] == list(POD)


# -- a PDF's headings, read from its fonts ---------------------------------------------------------


@pytest.fixture(scope="module")
def report_pdf() -> Document:
    pytest.importorskip("fpdf")
    from explorer.documents.loaders import load_bytes
    from tests.support.styled_pdf import REPORT, styled_pdf

    return load_bytes(styled_pdf(REPORT, header=("Rapport 2024 - usage interne", 8, ""), footer="Page {n}"), "r.pdf")


@pytest.mark.parametrize("size", [1000, 300])
def test_markdown_and_hybrid_cut_a_pdf_at_its_sections(report_pdf, size):
    """A PDF's blocks are its headings only: ``markdown`` cuts before each (up to its level), the
    text between two split as prose; ``hybrid`` routes each top-level section (the chapters)."""
    doc = report_pdf
    for strategy, levels in (("markdown", (1, 2, 3)), ("hybrid", (2,))):  # hybrid: the level used twice
        chunks = chunks_of(doc, strategy, chunk_size=size)
        starts = {c.start: c for c in chunks}
        cuts = [h for h in doc.headings if h.level in levels and h.start > 0]
        assert cuts and all(h.start in starts for h in cuts), strategy
        ends = {c.end: c for c in chunks}
        before = [(ends[doc.text.rindex("\n", 0, h.start)].reason, h) for h in cuts if h.level > 1]
        # named by its text and level: the PDF has no "##" for a reason to quote
        assert all(r == f"next heading: {h.info} (level {h.level})" for r, h in before), before


@pytest.mark.parametrize("strategy", ["markdown", "hybrid"])
def test_a_markdown_heading_reason_quotes_its_marks(strategy):
    """Markdown's text writes its headings' marks: the reason quotes them as they stand."""
    reasons = [c.reason for c in chunks_of(md(GUIDE), strategy, chunk_size=200)]
    assert "next heading: ### Requests time out" in reasons, reasons
    assert all("(level" not in r for r in reasons)


@pytest.mark.parametrize("strategy", strategy_names())
def test_every_strategy_gives_pdf_chunks_their_heading_path(report_pdf, strategy):
    doc = report_pdf
    params = {"chunk_size": 500} if "chunk_size" in get_strategy(strategy).param_names() else {}
    last = doc.headings[-1]
    assert last.info == "3.1 Calendrier des interventions"
    chunks = chunks_of(doc, strategy, **params)
    want = ("Rapport d'exploitation 2024", "3. Maintenance préventive", "3.1 Calendrier des interventions")
    assert chunks[-1].headings in (want, want[:2])  # a chunk that opens before 3.1 is under 3.
    assert all(c.headings == want for c in chunks if c.start >= last.start)


def test_the_cli_and_exports_carry_a_pdfs_heading_paths(report_pdf, tmp_path, capsysbinary):
    from tests.support.styled_pdf import REPORT, styled_pdf

    chunks = chunks_of(report_pdf, "markdown")
    rows = [json.loads(line) for line in chunks_to_jsonl(chunks).splitlines()]
    wrapped = "2. Sécurité des installations et procédures d'arrêt d'urgence"
    assert any(r["headings"][-1:] == [wrapped] for r in rows)
    assert f"Rapport d'exploitation 2024 > {wrapped}" in chunks_to_csv(chunks)
    path = tmp_path / "r.pdf"
    path.write_bytes(styled_pdf(REPORT, header=("Rapport 2024 - usage interne", 8, ""), footer="Page {n}"))
    assert main(["chunk", str(path), "--strategy", "markdown"]) == 0
    out = [json.loads(line) for line in capsysbinary.readouterr()[0].decode().splitlines()]
    assert [o["headings"] for o in out] == [list(c.headings) for c in chunks]
