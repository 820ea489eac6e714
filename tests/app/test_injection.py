"""Message injection audit: hostile text in every place untrusted text reaches the page.

Untrusted text: the names of uploaded files and their contents, every query parameter of a
link (sample names, configurations, separators, questions, answers, model...), the expected
answers typed on Retrieve and the contents of question files on Evaluate. Each scenario below
sends :data:`EVIL` (a Markdown link, an image, a colour directive, LaTeX and a script tag)
through one of those paths, visits every page, and checks every element Streamlit renders as
Markdown (messages, captions, Markdown, toasts, widget labels and help, expander and tab labels,
radio options) and every HTML body: nothing from it may come out as a link, an image, coloured
text, math or a script. ``pages.ui.safe.md`` is the one way to show such text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
EVIL = (
    "[Click](http://evil.example/x) ![i](http://evil.example/i.png) :red[**x**] $x$ <script>alert(1)</script>"
)
PAGES = ("documents", "explore", "compare", "semantic", "retrieve", "evaluate", "export")
#: Fields Streamlit renders as Markdown (in any element or block).
MARKDOWN_FIELDS = {"body", "label", "help", "caption", "captions", "title", "text", "tooltip"}
#: Elements whose options are rendered as Markdown.
MARKDOWN_OPTIONS = {"radio", "button_group"}
#: Elements whose strings are HTML (or chart text that Plotly renders as HTML).
HTML_KINDS = {"html", "bidi_component", "plotly_chart", "arrow_vega_lite_chart", "vega_lite_chart"}
#: What only unescaped text produces (md() escapes every one of these characters).
RAW = ("](http://evil.example", ":red[", "$x$", "http://evil.example", "www.evil.example")
_MD = MarkdownIt("commonmark")
#: What GitHub-flavoured Markdown turns into a link in text whose escapes are resolved
#: (Streamlit links bare addresses after parsing: escaping ``:`` or ``.`` does not stop it).
_AUTOLINKED = re.compile(r"(?i)(?:https?|ftp)://[\w.-]*evil|www\.[\w.-]*evil|[\w.+-]+@[\w-]*evil")


@pytest.fixture(autouse=True)
def fake_embedder(monkeypatch, tmp_path):
    monkeypatch.setenv("CHUNK_EXPLORER_FAKE_EMBEDDER", "1")
    monkeypatch.setenv("CHUNK_EXPLORER_JOB_WAIT", "60")
    monkeypatch.setenv("CHUNK_EXPLORER_WARM", "0")
    monkeypatch.setenv("CHUNK_EXPLORER_UPLOADS_DIR", str(tmp_path / "uploads"))


# -- the checker ----------------------------------------------------------------------------
def _strings(value: Any, path: str, markdown: bool) -> Iterator[tuple[str, str]]:
    """(path, string) of every string under ``value`` that Streamlit renders as Markdown."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, f"{path}.{k}", markdown or k in MARKDOWN_FIELDS)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{path}[{i}]", markdown)
    elif isinstance(value, str) and markdown:
        yield path, value


def _markdown_problems(text: str) -> list[str]:
    found = [f"raw {r!r}" for r in RAW if r in _outside_code(text)]
    for tok in _MD.parse(text):
        for child in tok.children or []:
            href = child.attrGet("href") or child.attrGet("src") or ""
            if child.type in ("link_open", "image") and "evil" in str(href):
                found.append(f"{child.type} to {href}")
            if child.type == "text" and _AUTOLINKED.search(child.content):
                found.append(f"autolink {_AUTOLINKED.search(child.content)[0]!r}")
    return found


def _outside_code(text: str) -> str:
    """``text`` without its inline code spans (inert: shown as typed)."""
    return re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", "", text, flags=re.S)


def _html_problems(html: str) -> list[str]:
    bad = re.findall(r"<(?:script|img|a|iframe)\b[^>]*(?:evil|alert)[^>]*>|<script\b", html, flags=re.I)
    return [f"html {b[:80]!r}" for b in bad]


def problems(at: AppTest) -> list[str]:
    """Every place on the page where hostile text would render as something."""
    out = []
    for node in at._tree:
        proto = getattr(node, "proto", None)
        if proto is None or not hasattr(proto, "DESCRIPTOR"):
            continue
        kind = getattr(node, "type", "")
        if kind == "table":  # st.table renders every cell and header as Markdown
            frame = node.value
            cells = [str(c) for c in frame.columns] + [v for v in frame.to_numpy().ravel() if isinstance(v, str)]
            out += [f"table cell: {p} in {c[:160]!r}" for c in cells for p in _markdown_problems(c)]
            continue
        data = MessageToDict(proto, preserving_proto_field_name=True)
        if kind in HTML_KINDS:  # HTML bodies, chart specs (Plotly renders <a href> in its text)
            for key, text in _strings(data, kind, True):
                out += [f"{kind} {key}: {p}" for p in _html_problems(text)]
            continue
        if kind == "markdown" and data.get("allow_html"):
            out += [f"markdown(html): {p}" for p in _html_problems(data.get("body", ""))]
        if kind in MARKDOWN_OPTIONS:
            data = {**data, "label_options": data.pop("options", [])}
        for key, text in _strings(data, kind, False):
            out += [f"{kind} {key}: {p} in {text[:160]!r}" for p in _markdown_problems(text)]
        if kind in MARKDOWN_OPTIONS:
            for key, text in _strings(data.get("label_options", []), f"{kind}.options", True):
                out += [f"{key}: {p} in {text[:160]!r}" for p in _markdown_problems(text)]
    return out


def report(found: list[str]) -> str:
    """One line per element found (each can hold several problems)."""
    seen: dict[str, None] = {}
    for f in found:
        seen.setdefault(re.sub(r": (?:raw|link_open|image|html) .*? in ", ": ", f)[:300])
    return "\n".join(seen)


def visit(at: AppTest, pages: tuple[str, ...] = PAGES) -> dict[str, list[str]]:
    """Run each page; what ``problems`` finds on it, by page."""
    found = {}
    for page in pages:
        at.switch_page(f"pages/{page}.py").run()
        assert not at.exception, (page, [e.message for e in at.exception])
        found[page] = problems(at)
    return found


def start(query: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


# -- the checker works -------------------------------------------------------------------------
def test_the_checker_sees_raw_text_and_passes_escaped_text():
    from pages.ui.safe import md

    assert _markdown_problems(EVIL)
    assert _markdown_problems("see [x](http://evil.example)")
    assert not _markdown_problems(md(EVIL))
    assert _markdown_problems("http\\://evil\\.example/x")  # escaped, and still a link in GFM
    for bare in ("see http://evil.example/x", "www.evil.example", "me@evil.example"):
        assert _markdown_problems(bare) and not _markdown_problems(md(bare)), bare
    assert not _markdown_problems(f"`{EVIL}`")
    assert _html_problems('<img src="http://evil.example/i.png">') and not _html_problems("&lt;script&gt;")


def test_bidirectional_controls_are_named_not_obeyed():
    """A file name with a right-to-left override reads reversed after it ("reportexe.txt")."""
    from pages.ui.safe import md

    shown = md("report\u202etxt.exe \u2066x\u2069").replace("\\", "")
    assert shown == "report<U+202E>txt.exe <U+2066>x<U+2069>"
    assert md("שלום world") == "שלום world"  # right-to-left text itself is left as it is


def _widgets_app(text: str) -> None:
    import streamlit as st

    st.warning(text)
    st.selectbox(text, ["a"], help=text)
    st.radio("Pick", [text])
    st.segmented_control("Seg", [text])
    with st.expander(text):
        st.caption(text)
    st.tabs([text])
    st.metric(text, 1, help=text)
    st.toast(text)
    st.table({"configuration": [text]})


def test_the_checker_reads_labels_options_and_blocks():
    from pages.ui.safe import md

    raw = AppTest.from_function(_widgets_app, args=(EVIL,)).run()
    where = {p.split(":")[0].split(" ")[0] for p in problems(raw)}
    assert where >= {
        "warning",
        "selectbox",
        "radio.options[0]",
        "button_group.options[0].content",
        "expander",
    }
    assert where >= {"caption", "tab", "metric", "toast", "table"}
    assert problems(AppTest.from_function(_widgets_app, args=(md(EVIL),)).run()) == []


# -- the scenarios -------------------------------------------------------------------------------
#: (scenario, page) -> the line that shows the text unescaped, in files whose owners fix them
#: (route each through pages.ui.safe.md, e.g. ``st.error(md(err_text(err)))``). The test
#: fails if one of these is fixed (remove it here) or if anything else shows up.
KNOWN: dict[tuple[str, str], str] = {}


def check(scenario: str, found: dict[str, list[str]]) -> None:
    """Nothing found but the KNOWN lines of others' files, and each of those still found."""
    new = [f"{page}: {p}" for page, ps in found.items() for p in ps if (scenario, page) not in KNOWN]
    assert not new, f"{scenario}: hostile text rendered as Markdown:\n" + report(new)
    fixed = [KNOWN[(scenario, page)] for page, ps in found.items() if (scenario, page) in KNOWN and not ps]
    assert not fixed, f"{scenario}: fixed, remove from KNOWN: {fixed}"


def upload(at: AppTest, files: list[tuple[str, bytes, str]]) -> None:
    at.switch_page("pages/documents.py").run()
    at.file_uploader[0].set_value(files).run()
    assert not at.exception, [e.message for e in at.exception]


def test_uploaded_file_names_and_contents_stay_inert():
    at = start()
    content = f"# {EVIL}\n\nA paragraph about {EVIL}.\n\n## Second {EVIL}\n\nMore text here. " * 3
    upload(
        at,
        [
            (f"{EVIL}.md", content.encode(), "text/markdown"),
            (f"{EVIL} empty.txt", b"", "text/plain"),
            (f"{EVIL} image.txt", b"\x89PNG\r\n\x1a\n" + bytes(64), "text/plain"),
            (f"{EVIL} notpdf.pdf", b"hello, not a pdf", "application/pdf"),
        ],
    )
    check("uploads", {"upload": problems(at), **visit(at)})


def test_errors_that_quote_a_document_name_stay_inert(monkeypatch):
    """Refusals name the document (here: semantic and cluster over a lowered limit)."""
    from explorer import limits

    monkeypatch.setattr(limits, "MAX_EMBED_CHARS", 100)
    cfgs = [json.dumps({"s": "semantic", "p": {}}), json.dumps({"s": "cluster", "p": {}})]
    at = start({"cfg": cfgs, "samples": "none"})  # the upload alone: every error names it
    upload(at, [(f"{EVIL}.txt", ("A sentence about rivers and lakes. " * 20).encode(), "text/plain")])
    found = visit(at)
    at.switch_page("pages/retrieve.py").run()
    at.text_input(key="w.question").set_value("Where are the lakes?")
    next(b for b in at.button if b.label == "Search").click().run()
    assert not at.exception, [e.message for e in at.exception]
    check("errors", {**found, "search": problems(at)})


LINK_VALUES = {
    "samples": EVIL,
    "doc": EVIL,
    "up": EVIL,
    "clean": EVIL,
    "model": EVIL,
    "backend": EVIL,
    "cfgsel": EVIL,
    "q": EVIL,
    "qa": EVIL,
    "qr": EVIL,
    "kq": json.dumps({"q": EVIL, "a": EVIL, "r": EVIL}),
    "qf": EVIL,
    "sem": json.dumps({"s": "semantic", "p": {"breakpoint_mode": EVIL}}),
}
CFG_VALUES = [
    EVIL,
    json.dumps({"s": EVIL, "p": {}}),
    json.dumps({"s": "recursive", "p": {"separators": [EVIL, "\n\n"], "chunk_size": EVIL}}),
    json.dumps({"s": "recursive", "p": {"separators": [EVIL[:60], " "], "chunk_size": 300}}),
    json.dumps({"s": "fixed", "p": {EVIL: 1}}),
]


@pytest.mark.parametrize("name", sorted(LINK_VALUES))
def test_every_link_parameter_stays_inert(name):
    at = start({name: LINK_VALUES[name]})
    check(f"link:{name}", {"start": problems(at), **visit(at)})


def test_link_configurations_stay_inert():
    at = start({"cfg": CFG_VALUES})
    check("cfg", {"start": problems(at), **visit(at)})


def test_link_separators_stay_inert():
    """A valid configuration whose separators hold the payload, active on every page (its
    label, Explore's caption, Compare's panels, Retrieve's columns, Export's warnings)."""
    seps = json.dumps({"s": "recursive", "p": {"separators": [EVIL[:60], "\n\n", " "], "chunk_size": 300}})
    short = json.dumps({"s": "recursive", "p": {"separators": ["$x$"], "chunk_size": 300}})  # whole in its label
    at = start({"cfg": [seps, json.dumps({"s": "fixed", "p": {}}), short]})
    assert at.session_state["configs"][0]["params"]["separators"][0] == EVIL[:60]
    found = {"start": problems(at), **visit(at)}
    at.switch_page("pages/retrieve.py").run()
    at.text_input(key="w.question").set_value("How do I install it?")
    next(b for b in at.button if b.label == "Search").click().run()
    check("separators", {**found, "search": problems(at)})


def test_questions_and_expected_answers_stay_inert():
    at = start({"q": EVIL, "qa": EVIL})
    at.switch_page("pages/retrieve.py").run()
    at.text_input(key="w.question").set_value(EVIL)
    at.text_area(key="w.answer").set_value(EVIL)
    next(b for b in at.button if b.label == "Search").click().run()
    assert not at.exception, [e.message for e in at.exception]
    found = {"search": problems(at)}
    next(b for b in at.button if b.label == "Keep the question").click().run()
    found["keep"] = problems(at)
    check("questions", {**found, **visit(at)})


QUESTION_FILES = (
    "\n".join(
        [
            json.dumps({"question": EVIL, "answer": EVIL}),
            json.dumps({"question": EVIL, "references": [{"document": EVIL, "start": 0, "end": 5}]}),
        ]
    ),
    EVIL,
    json.dumps([{"question": EVIL, "answer": "Tidepool"}]),
    json.dumps({EVIL: EVIL}),
    f"question,references,corpus_id\n{EVIL},{EVIL},{EVIL}\n",
    # a scorable question beside one about a document that is not loaded: the note names it
    "\n".join(
        [
            json.dumps({"question": EVIL, "answer": "or after 72 hours in service"}),
            json.dumps({"question": EVIL, "references": [{"document": EVIL, "start": 0, "end": 5}]}),
        ]
    ),
)


@pytest.mark.parametrize("content", QUESTION_FILES, ids=range(len(QUESTION_FILES)))
def test_question_files_stay_inert(content):
    at = start()
    at.switch_page("pages/evaluate.py").run()
    ext = "csv" if content.startswith("question,") else "jsonl"
    at.file_uploader[0].set_value((f"{EVIL}.{ext}", content.encode(), "application/json")).run()
    assert not at.exception, [e.message for e in at.exception]
    if "72 hours" in content:  # the note on the question left out is what is checked here
        assert any("left out" in i.value for i in at.info), [i.value for i in at.info]
    found = problems(at)
    run = [b for b in at.button if b.key == "w.eval_run" and not b.disabled]
    if run:
        run[0].click().run()
        found += problems(at)
    check("qfile", {"evaluate": found})
