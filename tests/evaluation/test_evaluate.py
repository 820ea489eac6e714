"""Question files and evaluation: formats, errors naming the question, hand-computed scores."""

from __future__ import annotations

import json

import pytest

from explorer import Context, Document, LoadError, ParamError
from explorer.embedding.fake import FakeEmbedder
from explorer.evaluation.answers import locate_answer
from explorer.evaluation.evaluate import evaluate, sweep
from explorer.evaluation.questions import (
    NOWHERE,
    Question,
    QuestionSet,
    left_out_note,
    load_questions,
    read_questions,
    unloaded_names,
)
from explorer.evaluation.sweep_plan import check_runnable, parse_values, sweep_steps
from explorer.strategies.config import StrategyConfig

#             0         1         2         3         4         5         6
#             0123456789012345678901234567890123456789012345678901234567890123456789
TEXT_A = "apple banana cherry date\n\nelder fig grape honey\n\nkiwi lemon mango nut"
# paragraphs: [0,24) "apple banana cherry date", [26,47) "elder fig grape honey",
#             [49,69) "kiwi lemon mango nut"
TEXT_B = "elder fig elder fig"  # 19 chars, same words as the question below, twice

# every paragraph is its own chunk: two of them joined would be over 30 characters
PARAS = StrategyConfig.make("recursive", {"chunk_size": 30, "chunk_overlap": 0, "separators": ["\n\n"]})


@pytest.fixture
def doc_a() -> Document:
    return Document("a.md", "markdown", TEXT_A)


@pytest.fixture
def doc_b() -> Document:
    return Document("b.txt", "text", TEXT_B)


def ctx() -> Context:
    return Context(embedder=FakeEmbedder(dim=256))


# -- question files ----------------------------------------------------------------------------
def test_jsonl_references_and_answers(doc_a, doc_b):
    lines = [
        {"question": "q1", "references": [{"document": "a.md", "start": 32, "end": 41}]},
        {"question": "q2", "references": [{"document": "b", "start": 0, "end": 5, "content": "elder"}]},
        {"question": "q3", "answer": "kiwi lemon"},
        {"question": "q4", "answer": ["apple", "honey"], "document": "a.md"},
    ]
    data = "\n".join(json.dumps(x) for x in lines).encode()
    qs = load_questions(data, [doc_a, doc_b])
    assert qs[0] == Question("q1", ((doc_a.id, 32, 41),))
    assert qs[1].references == ((doc_b.id, 0, 5),)  # "b" = the stem of b.txt
    assert qs[2].references == ((doc_a.id, 49, 59),)
    assert qs[3].references == ((doc_a.id, 0, 5), (doc_a.id, 42, 47))


def test_json_list_and_single_document_default(doc_a, tmp_path):
    f = tmp_path / "q.json"
    f.write_text(json.dumps([{"question": "q", "references": [{"start": 0, "end": 5}]}]))
    assert load_questions(f, [doc_a]) == [Question("q", ((doc_a.id, 0, 5),))]


def test_chroma_csv_format(doc_a, tmp_path):
    refs = json.dumps([{"content": "fig grape", "start_index": 32, "end_index": 41}])
    f = tmp_path / "questions_df.csv"
    f.write_text('question,references,corpus_id\n"What fig?","' + refs.replace('"', '""') + '",a\n')
    assert load_questions(f, [doc_a]) == [Question("What fig?", ((doc_a.id, 32, 41),))]


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"question": "where?", "answer": "zebra"}, "question 'where\\?'.*'zebra' is not an exact substring"),
        ({"question": "twice?", "answer": "elder fig"}, "question 'twice\\?'.*occurs more than once"),
        (
            {"question": "span?", "references": [{"document": "a.md", "start": 60, "end": 99}]},
            "60:99 is not inside",
        ),
        (
            {"question": "who?", "references": [{"document": "zz.md", "start": 0, "end": 1}]},
            "'zz.md' is not loaded",
        ),
        (
            {"question": "which?", "references": [{"start": 0, "end": 1}]},
            "question 'which\\?'.*no document named",
        ),
        (
            {
                "question": "moved?",
                "references": [{"document": "a.md", "start": 0, "end": 5, "content": "xx"}],
            },
            "not the reference's content",
        ),
        ({"question": "", "answer": "apple"}, '"question" is missing'),
        ({"question": "nothing?"}, 'needs "references"'),
    ],
)
def test_bad_questions_name_the_question(doc_a, doc_b, record, message):
    with pytest.raises(LoadError, match=message):
        load_questions(json.dumps(record).encode(), [doc_a, doc_b])


def test_questions_about_documents_not_loaded_are_left_out_when_asked(doc_a, doc_b):
    """The app loads a few documents of the corpus a question file covers: those questions are
    left out and counted per document; the CLI (load_questions) still refuses the file."""
    lines = [
        {"question": "q1", "references": [{"document": "a.md", "start": 32, "end": 41}]},
        {"question": "q2", "references": [{"document": "gone.txt", "start": 0, "end": 5}]},
        {"question": "q3", "answer": "kiwi lemon", "document": "gone.txt"},
        {"question": "q4", "answer": "kiwi lemon"},
        {"question": "q5", "references": [{"document": "a.md", "start": 0, "end": 5}, {"document": "other.md", "start": 0, "end": 1}]},
        {"question": "q6", "references": [{"document": "b", "start": 0, "end": 5}]},
    ]
    data = "\n".join(json.dumps(x) for x in lines).encode()
    got = read_questions(data, [doc_a, doc_b], "q.jsonl", skip_unloaded=True)
    assert [q.text for q in got.questions] == ["q1", "q4", "q6"]
    assert got.unloaded == (("gone.txt", 2), ("other.md", 1)) and got.left_out == 3
    with pytest.raises(LoadError, match=r"q\.jsonl line 2 .*'gone\.txt' is not loaded"):
        load_questions(data, [doc_a, doc_b], "q.jsonl")
    # everything loaded: nothing left out, the same questions as load_questions
    full = read_questions(data[: data.index(b"\n")], [doc_a], skip_unloaded=True)
    assert full == QuestionSet((Question("q1", ((doc_a.id, 32, 41),)),))
    # a quoted answer whose document is not named, found in no loaded document: its document may
    # be one that is not loaded (a user's file over a PDF they unloaded), so it is left out too
    quotes = b'{"question": "q1", "answer": "kiwi lemon"}\n{"question": "q2", "answer": "zebra"}'
    got = read_questions(quotes, [doc_a, doc_b], "q.jsonl", skip_unloaded=True)
    assert [q.text for q in got.questions] == ["q1"] and got.unloaded == ((NOWHERE, 1),)
    assert unloaded_names(got.unloaded) == "1 whose quoted answer is in no loaded document"
    # said apart from the documents not loaded: the answer may be mistyped (a user was told to
    # load more documents for a typo in their gold answer)
    assert left_out_note(got.unloaded) == (
        "1 question whose quoted answer is in no loaded document is left out: check its answer (a typo?) "
        "or load the document."
    )
    both = left_out_note((("gone.txt", 1), (NOWHERE, 2)), "not given")
    assert both.startswith("1 question about documents not given is left out: 'gone.txt' (1). 2 questions ")
    assert "whose quoted answers are in no loaded document are left out: check their answers" in both
    # what the reader can do about unloaded documents follows their sentence, and only theirs
    hint = "Load them."
    assert left_out_note((("gone.txt", 1), (NOWHERE, 2)), then=hint).split(hint)[0].endswith("(1). ")
    assert hint not in left_out_note(got.unloaded, then=hint)
    with pytest.raises(LoadError, match=r"line 2 .*'zebra' is not an exact substring"):
        load_questions(quotes, [doc_a, doc_b], "q.jsonl")  # the CLI scores every question or none
    # ... but when no answer is found anywhere, that is said as it was (a typo, or the wrong file)
    with pytest.raises(LoadError, match="is not an exact substring"):
        read_questions(b'{"question": "q", "answer": "zebra"}', [doc_a, doc_b], skip_unloaded=True)
    # no question left: one message naming what the file asks for and what is loaded
    only_gone = "\n".join(json.dumps(x) for x in lines[1:3]).encode()
    with pytest.raises(LoadError, match=r"none of its 2 questions is about a loaded document \(it names 'gone.txt' \(2\); loaded: 'a.md', 'b.txt'\)"):
        read_questions(only_gone, [doc_a, doc_b], "q.jsonl", skip_unloaded=True)


def test_bad_files(doc_a, tmp_path):
    with pytest.raises(LoadError, match="line 2 is not valid JSON"):
        load_questions(b'{"question": "q", "answer": "apple"}\n{oops\n', [doc_a])
    with pytest.raises(LoadError, match="cannot read question file"):
        load_questions(tmp_path / "missing.jsonl", [doc_a])
    with pytest.raises(LoadError, match="missing: references"):
        load_questions(b"question,answer\nq,a\n", [doc_a])
    with pytest.raises(LoadError, match="empty"):
        load_questions(b"  \n", [doc_a])
    with pytest.raises(LoadError, match="not UTF-8"):
        load_questions(b'{"question": "\xff"}', [doc_a])


def test_locate_answer_is_exact(doc_a):
    assert locate_answer("grape honey", [doc_a]) == (doc_a.id, 36, 47)
    with pytest.raises(LoadError):
        locate_answer("Grape", [doc_a])  # case matters: gold answers are exact


def test_real_chroma_questions_match_the_loaded_corpora(chroma_dir):
    """All 472 questions / 790 excerpts of the benchmark, against the corpora as our loader
    reads them: every excerpt's content is checked against ``text[start:end]``."""
    from explorer.documents.loaders import load_path

    docs = [load_path(p) for p in sorted((chroma_dir / "corpora").glob("*.md"))]
    qs = load_questions(chroma_dir / "questions_df.csv", docs)
    assert len(qs) == 472
    assert sum(len(q.references) for q in qs) == 790


# -- evaluation (fake embedder: bag of words, so rankings are predictable) -------------------------
def test_evaluate_by_hand(doc_a):
    q1 = Question("elder fig?", ((doc_a.id, 32, 41),))  # "fig grape"
    q2 = Question("kiwi lemon?", ((doc_a.id, 0, 12),))  # "apple banana": the wrong paragraph is retrieved
    (r,) = evaluate([doc_a], [PARAS], [q1, q2], k=1, ctx=ctx())
    s = r.scores
    # q1 retrieves [26,47) (21 chars): I = 9 -> recall 1, precision 9/21, IoU 9/21, rank 1
    # q2 retrieves [49,69): I = 0 -> all 0
    assert [q.recall for q in s.questions] == [1.0, 0.0]
    assert s.recall.mean == 0.5 and s.recall.std == 0.5
    assert s.precision.mean == pytest.approx((9 / 21) / 2)
    assert s.iou.mean == pytest.approx((9 / 21) / 2)
    assert (s.hit_rate.mean, s.mrr.mean) == (0.5, 0.5)
    # precision_Ω: q1 touches [26,47) -> 9/21; q2 touches [0,24) -> 12/24
    assert s.omegas == pytest.approx((9 / 21, 0.5))
    # chunks: 24, 21, 20 chars; the fake embedder counts 4 words + 2 special tokens each
    assert r.chunk_count == 3
    assert r.mean_chars == pytest.approx(65 / 3)
    assert r.mean_tokens == 6
    d = r.to_dict(per_question=True)
    assert d["recall"] == 0.5 and d["questions"] == 2 and len(d["per_question"]) == 2


def test_evaluate_pools_documents_into_one_index(doc_a, doc_b):
    q = Question("elder fig?", ((doc_a.id, 32, 41),))
    (r1,) = evaluate([doc_a, doc_b], [PARAS], [q], k=1, ctx=ctx())
    # b.txt "elder fig elder fig" is parallel to the question (cosine 1) and ranks first:
    # nothing of a.md retrieved -> recall 0; precision 0; no hit
    assert (r1.scores.recall.mean, r1.scores.hit_rate.mean) == (0.0, 0.0)
    (r2,) = evaluate([doc_a, doc_b], [PARAS], [q], k=2, ctx=ctx())
    # + a.md [26,47) at rank 2: I = 9; Σ|r| = 19 + 21 = 40 -> precision = IoU = 9/40; MRR 1/2
    assert r2.scores.recall.mean == 1.0
    assert r2.scores.precision.mean == pytest.approx(9 / 40)
    assert r2.scores.iou.mean == pytest.approx(9 / 40)
    assert r2.scores.mrr.mean == 0.5
    assert r2.chunk_count == 4


def test_evaluate_k_retrieves_everything(doc_a):
    q1 = Question("elder fig?", ((doc_a.id, 32, 41),))
    q2 = Question("kiwi lemon?", ((doc_a.id, 0, 12),))
    (r,) = evaluate([doc_a], [PARAS], [q1, q2], k=3, ctx=ctx())
    # all 65 chunk characters retrieved: recall 1 each; precision 9/65 and 12/65
    assert r.scores.recall.mean == 1.0 and r.scores.hit_rate.mean == 1.0
    assert r.scores.precision.mean == pytest.approx((9 / 65 + 12 / 65) / 2)


def test_evaluate_checks_input(doc_a, doc_b):
    q = Question("q", ((doc_b.id, 0, 5),))
    with pytest.raises(ParamError, match="not loaded"):
        evaluate([doc_a], [PARAS], [q], ctx=ctx())
    with pytest.raises(ParamError, match="no questions"):
        evaluate([doc_a], [PARAS], [], ctx=ctx())
    with pytest.raises(ParamError, match="k=0"):
        evaluate([doc_a], [PARAS], [q], k=0, ctx=ctx())


def test_evaluate_reports_progress_and_steps(doc_a):
    seen, steps = [], []
    q = Question("elder fig?", ((doc_a.id, 32, 41),))
    evaluate(
        [doc_a], [PARAS], [q], k=1, ctx=ctx(), progress=lambda d, t: seen.append((d, t)), on_step=steps.append
    )
    assert seen and seen[-1][0] == seen[-1][1]
    assert steps[-1] == PARAS.display


# -- sweeps ----------------------------------------------------------------------------------------
def test_parse_values():
    assert parse_values("chunk_size=100:800:100", "recursive") == (
        "chunk_size",
        [100, 200, 300, 400, 500, 600, 700, 800],
    )
    assert parse_values("chunk_size=250, 500", "recursive") == ("chunk_size", [250, 500])
    assert parse_values("breakpoint_amount=0.1:0.3:0.1", "semantic") == ("breakpoint_amount", [0.1, 0.2, 0.3])
    for bad, msg in [
        ("chunk_size", "expected PARAM="),
        ("nope=1:2:1", "no parameter 'nope'"),
        ("chunk_size=10:1:1", "START <= STOP"),
        ("chunk_size=1:1000:1", "at most 50"),
        ("chunk_size=a:b:c", "must be numbers"),
        # a step so small the count overflows: OverflowError crashed Evaluate (a link's swv=)
        ("chunk_size=0:1:1e-320", "over a billion values; at most 50"),
        ("chunk_size=1:1e300:1e-10", "over a billion values; at most 50"),
        ("chunk_size=100:5100:100", "gives 51 values; at most 50"),
        # "1e999" reads as a number but an infinite one: named as typed, not "need START <= STOP"
        ("chunk_size=1:1e999:1", "'1e999' is not a finite number"),
        ("chunk_size=-inf:10:1", "'-inf' is not a finite number"),
        ("chunk_size=1:10:nan", "'nan' is not a finite number"),
    ]:
        with pytest.raises((ParamError, ValueError), match=msg):
            parse_values(bad, "recursive")
    # an integer range with a fractional step, or a list naming a value twice: each value once
    assert parse_values("chunk_size=100:101:0.5", "recursive") == ("chunk_size", [100, 101])
    assert parse_values("chunk_size=300,300,600", "recursive") == ("chunk_size", [300, 600])


def test_a_value_out_of_bounds_is_a_skipped_step_and_values_none_of_which_run_are_refused():
    """``max_heading_level=0:3:1`` was refused whole for its 0 (below the minimum 1), where a
    value in conflict with another setting was a skipped row: the bounds are checked per step
    now, and the step says the value and the range allowed. Not a number is still refused."""
    assert parse_values("max_heading_level=0:3:1", "markdown") == ("max_heading_level", [0, 1, 2, 3])
    assert parse_values("chunk_size=0:10:5", "recursive") == ("chunk_size", [0, 5, 10])
    base = StrategyConfig.make("markdown", {})
    steps = sweep_steps(base, "max_heading_level", [0, 2, 7], None)
    assert [s.config is None for s in steps] == [True, False, True]
    assert steps[0].error == "max_heading_level=0 is out of range (allowed: 1 to 6)"
    assert steps[2].error == "max_heading_level=7 is out of range (allowed: 1 to 6)"
    check_runnable(steps, "Values '0,2,7'")  # one runs: no error
    check_runnable([], "Values ''")
    with pytest.raises(ParamError, match=r"^Values '7:9:1': no value can run: max_heading_level=7 is out of range"):
        check_runnable(sweep_steps(base, "max_heading_level", [7, 8, 9], None), "Values '7:9:1'")
    with pytest.raises(ParamError, match="must be numbers"):
        parse_values("max_heading_level=a:b:c", "markdown")
    with pytest.raises(ParamError, match="'x' is not a valid int"):
        parse_values("max_heading_level=1,x", "markdown")


def test_sweep_rows_and_invalid_values(doc_a):
    base = StrategyConfig.make("recursive", {"chunk_size": 30, "chunk_overlap": 20, "separators": ["\n\n"]})
    q = Question("elder fig?", ((doc_a.id, 32, 41),))
    rows = sweep([doc_a], base, "chunk_size", [10, 30, 100], [q], k=1, ctx=ctx())
    assert [r.value for r in rows] == [10, 30, 100]
    assert rows[0].result is None and "chunk_overlap=20 must be smaller" in rows[0].error
    assert rows[1].result.chunk_count == 3
    # 100 chars hold the whole 69-char text: one chunk, recall 1, precision 9/69
    assert rows[2].result.chunk_count == 1
    assert rows[2].result.scores.precision.mean == pytest.approx(9 / 69)
    assert rows[2].to_dict()["value"] == 100 and "error" in rows[0].to_dict()


def test_a_swept_size_below_an_unset_overlap_lowers_the_overlap(doc_a):
    """Issue 13: the overlap the user never set follows the swept size; one they set does not."""
    base = StrategyConfig.make("recursive", {"chunk_size": 300, "separators": ["\n\n", " "]})
    q = Question("elder fig?", ((doc_a.id, 32, 41),))
    rows = sweep([doc_a], base, "chunk_size", [20, 300], [q], k=1, ctx=ctx(), user_set={"separators"})
    assert all(r.result is not None for r in rows), [r.error for r in rows]
    assert rows[0].result.config.param_dict["chunk_overlap"] < 20
    strict = sweep([doc_a], base, "chunk_size", [20], [q], k=1, ctx=ctx(), user_set={"chunk_overlap"})
    assert strict[0].result is None and "must be smaller than chunk_size=20" in strict[0].error


def test_ties_go_to_the_first_copy():
    """Identical texts score the same: the copy that comes first wins, whatever FAISS returns,
    even when more copies tie than the first fetch holds."""
    from explorer.retrieval.ranking import ranked_hits
    from explorer.retrieval.search import build_index

    text = "\n\n".join(["alpha beta"] * 40 + ["gamma delta"])
    d = Document("dup.txt", "text", text)
    c = ctx()
    paras = StrategyConfig.make("recursive", {"chunk_size": 13, "chunk_overlap": 0, "separators": ["\n\n"]})
    index = build_index([d], paras, c)
    # one chunk per paragraph, copies every 12 characters ("alpha beta" + "\n\n")
    assert [(x.start, x.text) for x in index.chunks[:3]] == [
        (0, "alpha beta"),
        (12, "alpha beta"),
        (24, "alpha beta"),
    ]
    assert len(index.chunks) == 41
    qv = c.get_embedder().encode(["alpha beta"])
    (hits,) = ranked_hits(index, qv, 3)
    assert [(h.rank, h.chunk.start) for h in hits] == [(1, 0), (2, 12), (3, 24)]
    q = Question("alpha beta", ((d.id, 12, 22),))  # the gold copy is the second one
    (r,) = evaluate([d], [paras], [q], k=1, ctx=c)
    assert r.scores.recall.mean == 0.0  # the first copy is retrieved, deterministically
    (r,) = evaluate([d], [paras], [q], k=2, ctx=c)
    assert r.scores.recall.mean == 1.0 and r.scores.mrr.mean == 0.5


def test_questions_round_trip_through_a_question_file():
    """What the app's kept questions download as: read back to the same spans, with the text
    checked, even for a passage that occurs twice (a typed answer could not say which)."""
    from explorer.evaluation.questions import questions_to_jsonl

    text = "Header line.\nBody one.\nHeader line.\nBody two."
    a = Document("a.txt", "text", text)
    b = Document("b.md", "markdown", "Another « document » 😀 here.")
    second = text.index("Header line.", 1)
    qs = [
        Question("Which header?", ((a.id, second, second + len("Header line.")),)),
        Question("Emoji?", ((b.id, b.text.index("😀"), b.text.index("😀") + 1), (b.id, 0, 7))),
    ]
    data = questions_to_jsonl(qs, [a, b])
    assert load_questions(data.encode("utf-8"), [a, b], "kept.jsonl") == qs
    assert '"content": "Header line."' in data


def test_kept_questions_with_line_separators_in_their_text_read_back():
    """JSON strings may hold U+2028, U+2029 and U+0085 as they are; reading JSONL with
    ``splitlines()`` cut a question there, and the app's own download could not be read back."""
    from explorer.evaluation.questions import questions_to_jsonl

    text = "First part\u2028second part\u2029third\x85end. Plain line."
    doc = Document("sep.txt", "text", text)
    qs = [Question("What\u2028spans?", ((doc.id, 0, text.index(" Plain")),))]
    data = questions_to_jsonl(qs, [doc])
    assert "\u2028" not in data and len(data.splitlines()) == 1  # written as escapes
    assert load_questions(data.encode("utf-8"), [doc], "kept.jsonl") == qs
    raw = json.dumps({"question": qs[0].text, "answer": text[: text.index(" Plain")]}, ensure_ascii=False)
    assert "\u2028" in raw and load_questions(raw.encode("utf-8"), [doc], "other.jsonl") == qs  # read raw too
    two = data + data  # lines ended by carriage returns alone (old Mac files) still end there
    assert load_questions(two.replace("\n", "\r").encode("utf-8"), [doc], "kept.jsonl") == qs + qs
