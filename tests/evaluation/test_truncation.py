"""The truncation audit: where each model stops reading a chunk (exact, against tokenising with
truncation), the sums per configuration, the greyed tail in the HTML, and the app's Explore and
Compare showing it (AppTest, fake embedder); on the real models, the text past the offset does
not change the vector (``@pytest.mark.model``)."""

from __future__ import annotations

import json
import random
import re
from html import unescape

import numpy as np
import pytest

from explorer.documents.samples import load_sample
from explorer.evaluation.truncation import (
    JUNCTION_MARGIN,
    ModelReading,
    Reading,
    maybe_truncated,
    model_setup,
    prefix_pieces,
    summarise,
    unread_offsets,
)
from explorer.models.paths import resolve_model_path
from explorer.render.html import render_chunks
from explorer.render.layout import segments
from explorer.text.chunk import Chunk

MODELS = ("all-MiniLM-L6-v2", "multilingual-e5-small")
HANDBOOK = "Plant operations handbook (PDF, 6 pages)"
FRENCH = "Rapport annuel (French report, text)"


def slices(n: int = 150, seed: int = 7) -> list[str]:
    """Random slices of the samples, up to 4,000 characters: French, English, a PDF's text,
    starting and ending anywhere (mid-word included), plus a few edge cases."""
    texts = [load_sample(name).text for name in (FRENCH, HANDBOOK, "Tidepool guide (Markdown)")]
    rng = random.Random(seed)
    out = ["", " ", "a", "mot " * 600, "日本語のテキスト。" * 200, "x" * 5000, "é\u0301" * 900]
    for _ in range(n):
        t = rng.choice(texts)
        a = rng.randrange(len(t))
        out.append(t[a : a + rng.randrange(1, 4000)])
    return out


def hf_read_chars(hf, prefix: str, text: str, limit: int) -> tuple[int, int]:
    """(tokens of the whole input, characters of ``text`` read) by tokenising with truncation
    the way sentence-transformers does (transformers' fast tokenizer, ``truncation=True``)."""
    full = len(hf(prefix + text)["input_ids"])
    if full <= limit:
        return full, len(text)
    enc = hf(
        prefix + text,
        truncation=True,
        max_length=limit,
        return_offsets_mapping=True,
        return_special_tokens_mask=True,
    )
    assert len(enc["input_ids"]) == limit
    ends = [e for (_, e), sp in zip(enc["offset_mapping"], enc["special_tokens_mask"], strict=True) if not sp]
    return full, min(max(max(ends, default=0) - len(prefix), 0), len(text))


@pytest.mark.parametrize("model", MODELS)
def test_offsets_are_those_of_tokenising_with_truncation(model):
    from transformers import AutoTokenizer

    mr = model_setup(model)
    assert mr.limit == (256 if "MiniLM" in model else 512)
    assert mr.prefix == ("passage: " if "e5" in model else "")
    hf = AutoTokenizer.from_pretrained(str(resolve_model_path(model)))
    texts = slices()
    got = mr.readings(texts)
    cut = 0
    for text, r in zip(texts, got, strict=True):
        tokens, read = hf_read_chars(hf, mr.prefix, text, mr.limit)
        assert (r.tokens, r.read_chars) == (tokens, read), text[:80]
        assert r.truncated == (tokens > mr.limit)
        assert r.unread_chars == len(text) - read
        cut += r.truncated
    assert 20 < cut < len(texts) - 20  # both kinds were tried


@pytest.mark.parametrize("model", MODELS)
def test_offsets_match_the_tokenizers_own_truncation(model):
    """The same model file with truncation switched on (as the ONNX backend reads it) keeps
    exactly the word pieces up to the offset: the last one kept ends there."""
    from tokenizers import Tokenizer

    mr = model_setup(model)
    tok = Tokenizer.from_file(str(resolve_model_path(model) / "tokenizer.json"))
    tok.enable_truncation(mr.limit)
    tok.no_padding()
    for text, r in zip(slices(60, seed=3), mr.readings(slices(60, seed=3)), strict=True):
        enc = tok.encode(mr.prefix + text)
        kept = [e for (_, e), sp in zip(enc.offsets, enc.special_tokens_mask, strict=True) if not sp]
        assert len(enc.ids) == r.read_tokens
        if r.truncated:
            assert max(kept) - len(mr.prefix) == r.read_chars


def test_the_prefix_counts():
    """e5 reads "passage: " first: a text just under the limit on its own is cut with it."""
    mr = model_setup("multilingual-e5-small")
    bare = ModelReading(mr.tokenizer, mr.limit, "")
    # the most words read whole without the instruction
    k = max(k for k in range(400, 600) if not bare.readings(["word " * k])[0].truncated)
    text = "word " * k
    alone, with_prefix = bare.readings([text])[0], mr.readings([text])[0]
    assert alone.tokens == mr.limit and with_prefix.truncated
    assert with_prefix.tokens == alone.tokens + prefix_pieces(mr.tokenizer, mr.prefix) - 1  # "▁" shared
    assert with_prefix.read_chars < len(text)


@pytest.mark.parametrize("model", MODELS)
def test_the_shortcut_never_misses_a_cut_chunk(model):
    """``maybe_truncated`` (own counts + prefix + margin) keeps every text that is cut."""
    mr = model_setup(model)
    texts = slices(120, seed=11)
    own = ModelReading(mr.tokenizer, mr.limit, "").readings(texts)
    todo = set(maybe_truncated([r.tokens for r in own], mr.limit, prefix_pieces(mr.tokenizer, mr.prefix)))
    for i, r in enumerate(mr.readings(texts)):
        if r.truncated:
            assert i in todo
        assert r.tokens <= own[i].tokens + prefix_pieces(mr.tokenizer, mr.prefix) + JUNCTION_MARGIN


def chunk(start: int, end: int, text: str, index: int = 0, doc: str = "d") -> Chunk:
    return Chunk(doc, "doc.txt", index, start, end, text[start:end], end - start, "chars", "size")


def test_summary_sums_tails_and_counts_text_no_vector_reads():
    text = "a" * 100
    # three chunks: 0-40 read to 30; 30-70 (overlap 30-40, read whole); 60-100 read to 80
    chunks = [chunk(0, 40, text, 0), chunk(30, 70, text, 1), chunk(60, 100, text, 2)]
    reads = [Reading(300, 256, 40, 30), Reading(100, 256, 40, 40), Reading(300, 256, 40, 20)]
    s = summarise(chunks, reads, 100)
    assert (s.chunks, s.truncated, s.unread_chars) == (3, 2, 10 + 20)
    # 30-40 is read by chunk 1 and 60-70 too: only 80-100 is read by no vector
    assert s.never_read == 20 and s.share_never_read == pytest.approx(0.2)
    assert unread_offsets(chunks, enumerate(reads)) == {0: 30, 2: 80}
    assert s.to_dict()["never_read_share"] == 0.2


def test_audit_with_counts_reads_only_the_chunks_that_may_be_cut():
    mr = model_setup("all-MiniLM-L6-v2")
    doc = load_sample(FRENCH)
    from explorer import chunk_document

    chunks = [
        *chunk_document(doc, "recursive", {"chunk_size": 1000, "chunk_overlap": 0}),
        *chunk_document(doc, "recursive", {"chunk_size": 300, "chunk_overlap": 0}),
    ]
    counts = [r.tokens for r in mr.readings([c.text for c in chunks])]
    full = mr.audit(chunks)
    quick = mr.audit(chunks, counts)
    assert set(quick) < set(full)
    assert {p for p, r in full.items() if r.truncated} == {p for p, r in quick.items() if r.truncated}
    assert all(full[p] == r for p, r in quick.items())
    assert mr.summary(chunks, quick, len(doc.text)) == mr.summary(chunks, full, len(doc.text))


def test_reading_sentence():
    r = Reading(tokens=700, limit=512, chars=3000, read_chars=2100)
    assert r.sentence() == (
        "The model reads 512 of 700 tokens; the last 900 characters of this chunk are never embedded."
    )
    assert "nothing is cut" in Reading(100, 512, 400, 400).sentence()


# -- drawn on the text --------------------------------------------------------------------------
def test_segments_are_cut_where_reading_stops():
    segs = segments([(0, 10), (6, 16)], 0, 16, unread={0: 4})
    assert [(s.start, s.end, s.chunks, s.unread) for s in segs] == [
        (0, 4, (0,), ()),
        (4, 6, (0,), (0,)),
        (6, 10, (0, 1), (0,)),
        (10, 16, (1,), ()),
    ]


def test_render_greys_the_unread_tail_only_and_explains_it():
    text = "First chunk text <b>tail</b>. Second chunk."
    chunks = [chunk(0, 30, text, 0), chunk(30, len(text), text, 1)]
    cut = text.index("<b>")
    html = render_chunks(text, chunks, unread={0: cut}, with_legend=True, interactive=True)
    body = html.split('class="ce-text"', 1)[1]
    tails = re.findall(r'<span class="[^"]*ce-unread[^"]*"[^>]*>([^<]*)</span>', body)
    assert "".join(unescape(t) for t in tails) == text[cut:30]
    assert "<b>" not in html  # still escaped
    assert "never embedded (over the token limit)" in html  # the legend's entry
    assert "Never embedded as part of chunk 0" in html
    assert "ce-unread" not in render_chunks(text, chunks, with_legend=True).split("</style>", 1)[1]


# -- the app ------------------------------------------------------------------------------------
@pytest.fixture()
def app_env(monkeypatch):
    monkeypatch.setenv("CHUNK_EXPLORER_FAKE_EMBEDDER", "1")
    monkeypatch.setenv("CHUNK_EXPLORER_JOB_WAIT", "60")
    monkeypatch.setenv("CHUNK_EXPLORER_WARM", "0")


def start(page: str | None, configs: list[dict], sample: str = HANDBOOK):
    from streamlit.testing.v1 import AppTest

    from tests.app.test_app_pages import APP

    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["cfg"] = [json.dumps({"s": "recursive", "p": p}) for p in configs]
    at.query_params["doc"] = sample
    at.run()
    if page:
        at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_explore_marks_the_unread_tail_and_the_inspector_says_how_much(app_env):
    from tests.app.test_app_pages import text_boxes, text_views

    at = start(None, [{"chunk_size": 3000, "chunk_overlap": 200}])
    doc = load_sample(HANDBOOK)
    mr = model_setup(None)  # the default model: e5, 512 tokens, "passage: "
    from explorer import chunk_document

    chunks = chunk_document(doc, "recursive", {"chunk_size": 3000, "chunk_overlap": 200})
    reads = mr.readings([c.text for c in chunks])
    cut = [i for i, r in enumerate(reads) if r.truncated]
    assert cut, "the handbook in chunks of 3,000 characters should have chunks over 512 tokens"
    (line,) = [c.value for c in at.caption if "Truncation:" in c.value]
    total = sum(r.unread_chars for r in reads)
    assert f"**{len(cut):,}** of {len(chunks):,} chunks" in line and f"**{total:,}** characters" in line
    at.toggle(key="w.table_show").set_value(True).run()  # the table of all chunks, shown on asking
    (table,) = [d.value for d in at.dataframe if "never embedded (chars)" in d.value.columns]
    assert list(table["never embedded (chars)"]) == [r.unread_chars for r in reads]
    html = text_views(at)[0]["html"]
    assert "never embedded (over the token limit)" in html
    tails = re.findall(r'<span class="[^"]*ce-unread[^"]*"[^>]*data-o="(\d+)"[^>]*>([^<]*)</span>', html)
    starts = {chunks[i].start + reads[i].read_chars for i in cut}
    assert starts <= {int(o) for o, _ in tails}
    # the inspector of a cut chunk
    at.number_input(key="w.chunk").set_value(cut[0]).run()
    r = reads[cut[0]]
    notes = [m.value for m in at.markdown if "content_cut: truncated" in m.value]
    assert len(notes) == 1
    assert f"reads {r.read_tokens:,} of {r.tokens:,} tokens; the last {r.unread_chars:,} characters" in notes[0]
    assert any(f"Never embedded: the last {r.unread_chars:,} characters" in c.value for c in at.caption)
    assert text_boxes(at)["w.box.unread"] == chunks[cut[0]].text[r.read_chars :]


def test_compare_sums_truncation_per_configuration(app_env):
    at = start("compare", [{"chunk_size": 3000, "chunk_overlap": 200}, {"chunk_size": 400, "chunk_overlap": 50}])
    table = at.dataframe[0].value
    big, small = table.iloc[0], table.iloc[1]
    assert big["truncated"] > 0 and big["unread chars"] > 0 and big["never read %"] > 0
    assert small["truncated"] == 0 and small["unread chars"] == 0 and small["never read %"] == 0
    (view,) = [
        json.loads(e.proto.json)
        for e in at.get("bidi_component")
        if e.proto.component_name == "chunk_explorer.compare_view"
    ]
    _, first, second = view["html"].split('class="ce-cmp-body"')
    assert 'class="ce-s ce-flag ce-unread"' in first and "ce-unread" not in second
    assert "never embedded (over the token limit)" in view["html"]


# -- on the real models -------------------------------------------------------------------------
@pytest.mark.model
@pytest.mark.parametrize("model", MODELS)
def test_the_model_never_sees_the_text_past_the_offset(model):
    """Embedding a cut chunk gives the same vector as embedding only the part the audit says is
    read; dropping some of that part changes it."""
    from explorer.embedding.embedder import get_embedder

    emb = get_embedder(model)
    mr = model_setup(model)
    assert emb.max_seq_length == mr.limit and emb.passage_prefix == mr.prefix
    text = load_sample(FRENCH).text[1000:6000]
    r = mr.readings([text])[0]
    assert r.truncated and 0 < r.read_chars < len(text)
    full, read, shorter = emb.encode([text, text[: r.read_chars], text[: r.read_chars - 300]])
    assert float(np.dot(full, read)) > 0.9999
    assert float(np.dot(full, shorter)) < 0.999
