"""Every loadable hostile input through every strategy, then through the HTML renderer.

The corpus is ``hostile_inputs.py`` (loaders' side: ``test_hostile_loaders.py``). Each loadable
case is chunked by every registered strategy twice, with its default parameters and with small
ones (many chunks, overlap, fallbacks to character splits); semantic and cluster get the fake
embedder. The documented outcome is exact: where a character-capped parameter set cannot fit in
``MAX_CHUNKS`` chunks (every non-space character sits in a chunk of at most ``chunk_size``
characters), a one-line :class:`LimitError`; otherwise chunks that hold every invariant
(offsets, coverage, size, pages and headings taken from the document). The multi-megabyte
cases leave out the slowest strategies (``SKIP``).

Then the text of each document goes through :mod:`explorer.render.html`: the markup must contain
only the renderer's own tags and attributes, and the text read back from it must be the
document's text, character for character (so ``<script>`` stays text, never a tag).
"""

from __future__ import annotations

import html
from functools import cache
from html.parser import HTMLParser
from typing import Any

import pytest

from explorer.documents.document import Document, heading_title
from explorer.documents.loaders import load_bytes
from explorer.embedding.fake import FakeEmbedder
from explorer.errors import ExplorerError, LimitError
from explorer.limits import MAX_CHUNKS, MAX_HEADING_CHARS
from explorer.render.html import facts, legend, render_chunks
from explorer.render.snippet import fold_start, render_snippet
from explorer.strategies import all_strategies, get_strategy
from explorer.strategies.context import Context
from explorer.strategies.invariants import invariant_errors
from explorer.text.chunk import Chunk
from tests.support.hostile_inputs import BY_ID, MD_HTML, Case, loadable_cases

#: Small parameters per strategy: sizes in characters so the size cap is checkable exactly.
SMALL: dict[str, dict[str, Any]] = {
    "fixed": {"chunk_size": 50, "chunk_overlap": 10},
    "sentence": {"sentences_per_chunk": 2, "overlap_sentences": 1, "chunk_size": 40},
    "paragraph": {"chunk_size": 40},
    "recursive": {"chunk_size": 40, "chunk_overlap": 10},
    "markdown": {"chunk_size": 40, "chunk_overlap": 5, "max_heading_level": 6},
    "semantic": {"buffer_size": 0, "min_chunk_size": 10, "max_chunk_size": 80},
    "cluster": {"chunk_size": 40, "piece_size": 10, "length": "chars"},
    "hybrid": {"chunk_size": 40, "chunk_overlap": 5},
}
#: Strategies left out on the biggest inputs, to keep the run short (measured on 2 cores with
#: the fake embedder: cluster 5-14 s on 0.6-1 MB and 47 s on 5 MB; the others 3-5 s on 5 MB).
SKIP = {
    "pdf-300-pages": {"cluster"},
    "text-1mb-single-line": {"cluster"},
    "text-5mb-one-char": {"cluster", "sentence", "markdown", "semantic"},
}


def test_every_strategy_has_small_params():
    """A new strategy must be added here (and so to the hostile runs) to pass."""
    names = {s.name for s in all_strategies()}
    assert names == set(SMALL), names ^ set(SMALL)
    for name, values in SMALL.items():
        get_strategy(name).validate(values)


def _runs() -> list[Any]:
    out = []
    for case in loadable_cases():
        big = case.id in SKIP
        for s in all_strategies():
            if s.name in SKIP.get(case.id, ()):
                continue
            for label in ("default", "small"):
                marks = [pytest.mark.slow] if big or case.slow else []
                out.append(pytest.param(case, s.name, label, id=f"{case.id}-{s.name}-{label}", marks=marks))
    return out


@cache
def _doc(case_id: str) -> Document:
    case = BY_ID[case_id]
    return load_bytes(case.data(), case.filename)


def _char_cap(name: str, p: dict[str, Any]) -> int | None:
    """The size every chunk must respect, in characters (None: no character cap)."""
    if p.get("length", "chars") != "chars":
        return None
    size = p.get("max_chunk_size") if name == "semantic" else p.get("chunk_size")
    return size or None


def _nonspace(text: str) -> int:
    return sum(map(len, text.split()))


def check_chunks(doc: Document, chunks: list[Chunk], cap: int | None) -> None:
    """Invariants plus the metadata that must come from the document, not from the strategy."""
    assert chunks, "a loaded document always has non-space text, so at least one chunk"
    errors = invariant_errors(doc, chunks, cap)
    assert not errors, errors[:5]
    page_numbers = {p.number for p in doc.pages}
    heading_titles = {heading_title(h.info) for h in doc.headings} if doc.headings else set()
    for c in chunks:
        assert c.doc_id == doc.id and c.doc_name == doc.name
        assert set(c.pages) <= page_numbers, (c.pages, page_numbers)
        assert list(c.pages) == sorted(set(c.pages))
        if doc.pages:
            assert c.pages, f"chunk {c.index} of a paged document has no page"
        assert set(c.headings) <= heading_titles, (c.headings, heading_titles)
        assert c.reason and "\n" not in c.reason


@pytest.mark.parametrize(("case", "strategy", "label"), _runs())
def test_case_through_strategy(case: Case, strategy: str, label: str):
    doc = _doc(case.id)
    s = get_strategy(strategy)
    values = {} if label == "default" else SMALL[strategy]
    p = s.validate(values)
    cap = _char_cap(strategy, p)
    ctx = Context(embedder=FakeEmbedder(64))
    over_limit = cap is not None and -(-_nonspace(doc.text) // cap) > MAX_CHUNKS
    if over_limit:
        with pytest.raises(LimitError) as info:
            s.chunk(doc, values, ctx)
        message = str(info.value)
        assert "\n" not in message and repr(doc.name) in message and f"{MAX_CHUNKS:,}" in message
        return
    try:
        chunks = s.chunk(doc, values, ctx)
    except ExplorerError as err:  # pragma: no cover - reported as a failure with the message
        pytest.fail(f"{strategy} refused {case.id} with {type(err).__name__}: {err}")
    check_chunks(doc, chunks, cap)


# -- rendering ---------------------------------------------------------------------------------

#: Everything explorer.render.html may emit; anything else came from the document.
RENDER_TAGS = {"style", "div", "span", "details", "summary"}
RENDER_ATTRS = {"class", "style", "title"}
#: Spans whose content is the renderer's own words (badges, window notes), not document text.
CHROME = {"ce-idx", "ce-warn", "ce-more"}


class _Reader(HTMLParser):
    """Collects tags, attributes and the document text shown (outside chrome and CSS)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []
        self._stack: list[bool] = []  # True where inside CSS or chrome

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        classes = set((dict(attrs).get("class") or "").split())
        hidden = tag == "style" or bool(classes & CHROME) or (bool(self._stack) and self._stack[-1])
        self._stack.append(hidden)

    def handle_endtag(self, tag: str) -> None:
        if self._stack:
            self._stack.pop()

    def handle_data(self, data: str) -> None:
        if not (self._stack and self._stack[-1]):
            self.text.append(data)


def read_markup(markup: str) -> _Reader:
    r = _Reader()
    r.feed(markup)
    r.close()
    return r


def assert_inert(markup: str) -> _Reader:
    r = read_markup(markup)
    for tag, attrs in r.tags:
        assert tag in RENDER_TAGS, f"live <{tag}> tag in the rendered HTML"
        for name, value in attrs:
            assert name in RENDER_ATTRS, f"attribute {name}={value!r} on <{tag}>"
            assert "javascript:" not in (value or "").lower() or name == "title"
            if name == "style":
                assert "url(" not in (value or "").lower(), value
    return r


HOSTILE_TEXT = (
    '<script>alert("x")</script> <img src=x onerror=alert(1)> '
    "[a](javascript:alert(1)) ![t](http://evil.example/t.png) <a href='http://evil.example'>x</a>\n\n"
    '"><svg onload=alert(2)> &lt;already&gt; &amp; </div></span><style>*{x:url(http://evil.example)}</style>\n'
    "<iframe src=//evil.example></iframe> <!-- c --> ]]> {{7*7}} `code` :red[x]"
)


@pytest.mark.parametrize(
    "case_id",
    ["text-html-script", "md-html-blocks", "text-mixed-scripts", "text-nul-and-controls", "pdf-named-txt"],
)
@pytest.mark.parametrize("strategy", ["fixed", "recursive", "markdown"])
def test_rendered_hostile_text_is_inert_and_exact(case_id: str, strategy: str):
    doc = _doc(case_id)
    chunks = get_strategy(strategy).chunk(doc, SMALL[strategy])
    flags = {0: ("over_limit",), 1: ("mid_word",)}
    markup = render_chunks(doc.text, chunks, selected=1, flags=flags, marks=[(0, min(5, len(doc.text)))])
    r = assert_inert(markup)
    assert "".join(r.text) == doc.text, "the text shown is exactly the document text"


def test_render_escapes_every_trick():
    doc = load_bytes(HOSTILE_TEXT.encode(), "xss<img src=x onerror=alert(9)>.md")
    for strategy in ("fixed", "recursive", "markdown", "sentence"):
        chunks = get_strategy(strategy).chunk(doc, SMALL[strategy])
        markup = render_chunks(doc.text, chunks, selected=0, flags={0: ("tiny",)})
        r = assert_inert(markup)
        assert "".join(r.text) == doc.text
        low = markup.lower()
        for live in ("<script", "<img", "<svg", "<iframe", "<a ", "<!--", "</div></span><style>"):
            assert live not in low, live
    snippet = render_snippet(doc.text, 0, len(doc.text), marks=[(3, 40)])
    assert "".join(assert_inert(snippet).text) == doc.text
    deep = fold_start(doc.text, 0, len(doc.text) - 1)  # a card opened near the end, the rest folded
    folded = render_snippet(doc.text, 0, len(doc.text), marks=[(3, 40)], best_piece=(deep, len(doc.text)), fold=deep)
    assert deep > 0 and "".join(assert_inert(folded).text) == doc.text
    shown = facts([("Name", doc.name), ("<b>label</b>", '"><script>alert(1)</script>', '"><b onclick=x>')])
    r = assert_inert(shown)
    assert "<b>" not in shown and '"><script>' not in shown and '"><b' not in shown
    assert "".join(r.text) == "Name" + doc.name + "<b>label</b>" + '"><script>alert(1)</script>'
    assert_inert(legend())


def test_render_window_of_a_hostile_markdown_file():
    """A window (``lo``/``hi``) cut inside a tag-like run still shows text, never a tag."""
    text = (MD_HTML * 400)[:20_000]
    doc = load_bytes(text.encode(), "html.md")
    chunks = get_strategy("recursive").chunk(doc, {"chunk_size": 100, "chunk_overlap": 30})
    for lo in (1, 7, 333, 5_001):
        markup = render_chunks(doc.text, chunks, lo=lo, hi=lo + 3_000, max_chars=3_000)
        r = assert_inert(markup)
        assert "".join(r.text) == doc.text[lo : lo + 3_000]
    assert html.escape("<script>") in render_chunks(doc.text, chunks)


@pytest.mark.parametrize("strategy", ["recursive", "markdown", "hybrid", "sentence"])
def test_a_megabyte_heading_is_cut_in_every_chunks_heading_path_and_reason(strategy: str):
    """Every chunk under a heading carries its path: a 1 MB heading line made 1,252 chunks carry
    1 MB each (1.25 GB of CLI output; the app's chunk table passed Streamlit's 200 MB message
    limit). Titles are cut at MAX_HEADING_CHARS, so a chunk's metadata stays small."""
    import json

    text = "# " + "H" * 1_000_000 + "\n\n## Next\n\n" + "Body text here. " * 200
    doc = load_bytes(text.encode(), "heading.md")
    chunks = get_strategy(strategy).chunk(doc, {}, Context(embedder=FakeEmbedder(64)))
    assert len(chunks) > 10
    for c in chunks:
        assert all(len(h) <= MAX_HEADING_CHARS for h in c.headings), c.index
        assert len(c.reason) <= MAX_HEADING_CHARS + 20
    assert chunks[-1].headings == ("H" * (MAX_HEADING_CHARS - 1) + "…", "Next")
    size = sum(len(json.dumps(c.to_dict())) for c in chunks)
    assert size < 3 * len(text)

