"""The corpus runner: streamed document by document, it scores exactly as ``evaluate`` does on the
same inputs; an interrupted run resumes without doing a finished document again; bad input is
one ``error:`` line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from bench.make_corpus import make_corpus
from explorer import Context, LoadError
from explorer.cli import inputs as cli_inputs
from explorer.cli.main import main
from explorer.documents.loaders import load_path
from explorer.embedding.cache import EmbeddingCache
from explorer.embedding.fake import FakeEmbedder
from explorer.evaluation.corpus import work as corpus_work
from explorer.evaluation.corpus.plan import QuestionPlan
from explorer.evaluation.corpus.runner import run_corpus
from explorer.evaluation.corpus.sources import expand_paths, list_sources
from explorer.evaluation.corpus.work import WorkSpec
from explorer.evaluation.evaluate import evaluate
from explorer.evaluation.questions import load_questions
from explorer.retrieval.vectors import EmbedOptions
from explorer.strategies.config import StrategyConfig
from tests.cli.test_cli import run_main

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = (
    StrategyConfig.make("recursive", {"chunk_size": 300, "chunk_overlap": 0}),
    StrategyConfig.make("fixed", {"chunk_size": 200, "chunk_overlap": 40}),
)
#: What may differ between two runs of the same evaluation: how long they took.
TIMING = ("seconds", "embed_seconds", "from_cache", "with_model_load", "cold")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, Path]:
    """30 generated documents (two folders' worth of names), a question about each."""
    return make_corpus(tmp_path_factory.mktemp("corpus"), 30, every=1)


@pytest.fixture
def fake_cli(monkeypatch) -> FakeEmbedder:
    """The CLI's runs in this process embed with the fake embedder (as tests/test_cli.py does)."""
    emb = FakeEmbedder(dim=128)

    def make_context(model, progress=None, quantize=False, backend="auto"):
        return Context(model=model, embedder=emb, progress=progress, quantize=quantize)

    monkeypatch.setattr(cli_inputs, "make_context", make_context)
    return emb


def _plain(results) -> list[dict]:
    """Results as JSON, without timings (per question included)."""
    out = []
    for r in results:
        d = r.to_dict(per_question=True) if hasattr(r, "to_dict") else dict(r)
        for key in TIMING:
            d.pop(key, None)
            if isinstance(d.get("cost"), dict):
                d["cost"].pop(key, None)
        out.append(d)
    return out


def _in_memory(corpus, retriever="dense", mode="exact", configs=CONFIGS, embedder=None, **kw):
    paths = expand_paths([str(corpus[0])])
    docs = [load_path(p) for p in paths]
    questions = load_questions(corpus[1], docs)
    ctx = Context(embedder=embedder or FakeEmbedder(dim=64))
    return evaluate(docs, configs, questions, 5, ctx, retriever=retriever, mode=mode, **kw), questions


def _streamed(corpus, retriever="dense", mode="exact", configs=CONFIGS, embedder=None, **kw):
    sources = list_sources(expand_paths([str(corpus[0])]))
    plan = QuestionPlan.read(corpus[1], [s.name for s in sources])
    spec = WorkSpec(tuple(configs), plan, EmbedOptions(), retriever=retriever, mode=mode)
    ctx = Context(embedder=embedder or FakeEmbedder(dim=64))
    return run_corpus(sources, spec, ctx, 5, **kw)


@pytest.mark.parametrize("retriever", ["dense", "bm25", "hybrid", "rrf"])
def test_streaming_gives_the_scores_of_evaluate(corpus, retriever):
    expected, questions = _in_memory(corpus, retriever)
    got, got_questions, stats = _streamed(corpus, retriever)
    assert got_questions == questions
    assert _plain(got) == _plain(expected)
    assert (stats.documents, stats.processed, stats.resumed) == (30, 30, 0)
    assert 0 < got[0].scores.recall.mean <= 1


def test_preview_mode_streams_the_same_vectors(corpus):
    expected, _ = _in_memory(corpus, "dense", "preview", force_preview=True)
    got, _, _ = _streamed(corpus, "dense", "preview", force_preview=True)
    assert _plain(got) == _plain(expected)


def test_the_results_file_and_its_cache(corpus, tmp_path):
    out = tmp_path / "results.jsonl"
    got, _, _ = _streamed(corpus, "hybrid", out=out)
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert lines[0]["kind"] == "run" and lines[0]["documents"] == 30
    docs = [x for x in lines if x["kind"] == "document"]
    assert [d["n"] for d in docs] == list(range(30))
    assert all(len(d["questions"]) == 1 for d in docs)  # each document holds its question's span
    assert [x["strategy"] for x in lines if x["kind"] == "result"] == [c.display for c in CONFIGS]
    assert lines[-1]["kind"] == "done" and lines[-1]["processed"] == 30
    assert len(list((tmp_path / "results.jsonl.chunks").rglob("*.npz"))) == 30
    # a run that finds everything finished does no document and scores the same
    again, _, stats = _streamed(corpus, "hybrid", out=out, resume=True)
    assert (stats.processed, stats.resumed) == (0, 30)
    assert _plain(again) == _plain(got)


class _Stop(Exception):
    pass


def test_an_interrupted_run_resumes_without_redoing_a_finished_document(corpus, tmp_path, monkeypatch):
    done: list[str] = []
    real = corpus_work.process_document

    def counting(source, spec, ctx):
        done.append(source.name)
        return real(source, spec, ctx)

    monkeypatch.setattr(corpus_work, "process_document", counting)
    monkeypatch.setattr(corpus_work, "BATCH_DOCS", 4)  # the local engine embeds 4 documents at a time

    def stop_after_7(stats):
        if stats.done == 7:
            raise _Stop

    out = tmp_path / "r.jsonl"
    with pytest.raises(_Stop):
        _streamed(corpus, "dense", out=out, on_document=stop_after_7)
    finished = {json.loads(x)["name"] for x in out.read_text().splitlines() if '"document"' in x}
    assert len(finished) == 7
    done.clear()
    got, _, stats = _streamed(corpus, "dense", out=out, resume=True)
    assert (stats.processed, stats.resumed) == (23, 7)
    assert len(done) == 23 and not finished & set(done)
    expected, _ = _in_memory(corpus, "dense")
    assert _plain(got) == _plain(expected)
    names = [json.loads(x)["name"] for x in out.read_text().splitlines() if '"document"' in x]
    assert sorted(names) == sorted(set(names)) and len(names) == 30  # each document once


def test_a_changed_file_is_done_again(corpus, tmp_path):
    import shutil

    src = tmp_path / "c"
    shutil.copytree(corpus[0], src)
    out = tmp_path / "r.jsonl"
    sources = list_sources(expand_paths([str(src)]))
    plan = QuestionPlan.read(corpus[1], [s.name for s in sources])
    spec = WorkSpec(CONFIGS[:1], plan, retriever="bm25")
    run_corpus(sources, spec, Context(embedder=FakeEmbedder(64)), out=out)
    path = Path(sources[5].path)
    path.write_text(path.read_text() + "\nOne more line.\n")
    _, _, stats = run_corpus(sources, spec, Context(embedder=FakeEmbedder(64)), out=out, resume=True)
    assert (stats.processed, stats.resumed) == (1, 29)


@pytest.mark.parametrize(
    "damage",
    ["deep line", "number line", "record without its name", "empty cache file", "cut cache file",
     "negative offset", "offset past the end", "token counts of another length", "word id past the vocabulary"],
)  # fmt: skip
def test_a_damaged_run_is_refused_on_resume_with_one_message(corpus, tmp_path, damage):
    """``--resume`` reads the results file and each document's ``.npz``: a line nested 10,000
    deep raised RecursionError, an empty or cut ``.npz`` EOFError (tracebacks), and offsets
    edited into a cache file came out as results (negative token means, 10^12 LLM tokens)."""
    sources = list_sources(expand_paths([str(corpus[0])]))
    plan = QuestionPlan.read(corpus[1], [s.name for s in sources])
    spec = WorkSpec(CONFIGS[:1], plan, retriever="bm25")
    out = tmp_path / "r.jsonl"
    run_corpus(sources, spec, Context(embedder=FakeEmbedder(64)), out=out)
    lines = out.read_text().splitlines()
    caches = sorted(Path(f"{out}.chunks").rglob("*.npz"))
    npz = caches[0]
    arrays = dict(np.load(npz))
    if damage == "deep line":
        lines[1] = "[" * 10_000
    elif damage == "number line":
        lines[1] = "5"
    elif damage == "record without its name":
        lines[1] = json.dumps({k: v for k, v in json.loads(lines[1]).items() if k != "name"})
    elif damage == "empty cache file":
        npz.write_bytes(b"")
    elif damage == "cut cache file":
        npz.write_bytes(npz.read_bytes()[:200])
    elif damage == "negative offset":
        arrays["s0"][0] = -99_999
    elif damage == "offset past the end":
        arrays["e0"][-1] = 10**12
    elif damage == "word id past the vocabulary":
        arrays["i0"][0] = 10**6
    else:
        arrays["t0"] = arrays["t0"][:-1]
    if damage not in ("deep line", "number line", "record without its name", "empty cache file", "cut cache file"):
        with npz.open("wb") as fh:
            np.savez(fh, **arrays)
    out.write_text("\n".join(lines) + "\n")
    with pytest.raises(LoadError, match="damaged"):
        run_corpus(sources, spec, Context(embedder=FakeEmbedder(64)), out=out, resume=True)


def test_question_plan_resolves_like_load_questions(corpus, tmp_path):
    """Answers (verbatim, tolerant, scoped), references by file name, stem and id."""
    paths = expand_paths([str(corpus[0])])
    docs = [load_path(p) for p in paths]
    t3 = docs[3].text
    records = [
        {"question": "a?", "answer": t3[t3.index("In ") : t3.index("district.") + 9]},
        {
            "question": "b?",
            "answer": docs[4].text.split("\n\n")[1][:40].replace(" ", "\n"),
            "document": "doc_00004",
        },
        {"question": "c?", "references": [{"document": docs[7].id, "start": 0, "end": 9}]},
        {"question": "d?", "references": [{"document": "doc_00008", "start": 3, "end": 12}]},
    ]
    qfile = tmp_path / "q.jsonl"
    qfile.write_text("".join(json.dumps(r) + "\n" for r in records))
    sources = list_sources(paths)
    plan = QuestionPlan.read(qfile, [s.name for s in sources])
    outcomes = [plan.match(d, n) for n, d in enumerate(docs)]
    assert plan.resolve([d.id for d in docs], outcomes) == load_questions(qfile, docs)


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"question": "q", "answer": "not in any document at all"}, "is not an exact substring"),
        ({"question": "q", "answer": "the northern district."}, "occurs more than once"),
        (
            {"question": "q", "references": [{"document": "doc_00002.txt", "start": 0, "end": 10**6}]},
            "is not inside",
        ),
        (
            {"question": "q", "references": [{"document": "nope.txt", "start": 0, "end": 2}]},
            "'nope.txt' is not loaded",
        ),
        ({"question": "q", "references": [{"start": 0, "end": 2}]}, "no document named"),
    ],
)
def test_question_mistakes_stop_the_run(corpus, tmp_path, record, message):
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(json.dumps(record) + "\n")
    sources = list_sources(expand_paths([str(corpus[0])]))
    with pytest.raises(LoadError, match=message):
        plan = QuestionPlan.read(qfile, [s.name for s in sources])
        run_corpus(sources, WorkSpec(CONFIGS[:1], plan, retriever="bm25"), Context(embedder=FakeEmbedder(64)))


# -- the command line --------------------------------------------------------------------------
def _cli(corpus, *rest: str) -> list[str]:
    return ["--corpus", str(corpus[0]), "--questions", str(corpus[1]), "--format", "json", *rest]


def test_cli_streams_to_the_same_json(capsysbinary, corpus, tmp_path, fake_cli):
    groups = ["--strategy", "recursive", "--set", "chunk_size=300", "--strategy", "fixed", "--k", "3"]
    rc, plain, _ = run_main(capsysbinary, "evaluate", *_cli(corpus, *groups, "--per-question"))
    assert rc == 0
    out = tmp_path / "r.jsonl"
    rc, streamed, err = run_main(
        capsysbinary, "evaluate", *_cli(corpus, *groups, "--per-question", "--out", str(out))
    )
    assert rc == 0, err
    assert _plain(json.loads(streamed)) == _plain(json.loads(plain))
    assert "documents 30/30" in err and "30 processed, 0 resumed" in err
    vary = ["--strategy", "recursive", "--vary", "chunk_size=200,400"]
    rc, plain, _ = run_main(capsysbinary, "sweep", *_cli(corpus, *vary))
    rc2, streamed, err = run_main(capsysbinary, "sweep", *_cli(corpus, *vary, "--engine", "local", "-q"))
    assert rc == rc2 == 0 and err == ""
    assert _plain(json.loads(streamed)) == _plain(json.loads(plain))


@pytest.mark.parametrize("streamed", [False, True], ids=["in-memory", "streamed"])
def test_cli_skip_unloaded_scores_the_rest_and_says_what_it_left_out(capsysbinary, corpus, tmp_path, fake_cli, streamed):
    """A question file for a larger corpus: without --skip-unloaded one error line that names
    the flag; with it, the scores of the file's other questions, and a note per document."""
    extra = [
        {"question": "x?", "references": [{"document": "elsewhere.txt", "start": 0, "end": 5}]},
        {"question": "y?", "answer": "anything", "document": "elsewhere.txt"},
        {"question": "z?", "references": [{"document": "doc_00002.txt", "start": 0, "end": 5}, {"document": "gone.md", "start": 0, "end": 5}]},
    ]
    bigger = tmp_path / "bigger.jsonl"
    bigger.write_text(corpus[1].read_text() + "".join(json.dumps(r) + "\n" for r in extra))
    args = ["--corpus", str(corpus[0]), "--format", "json", "--retriever", "bm25", "-q"]
    args += ["--engine", "local"] if streamed else []
    rc, out, err = run_main(capsysbinary, "evaluate", *args, "--questions", str(bigger))
    assert rc == 2 and out == ""
    (line,) = err.splitlines()
    assert line.startswith("error:") and "'elsewhere.txt' is not loaded" in line and "--skip-unloaded" in line
    rc, skipped, err = run_main(capsysbinary, "evaluate", *args, "--questions", str(bigger), "--skip-unloaded")
    assert rc == 0, err
    assert err == "note: --skip-unloaded: 3 questions about documents not given are left out: 'elsewhere.txt' (2), 'gone.md' (1).\n"
    rc, whole, _ = run_main(capsysbinary, "evaluate", *args, "--questions", str(corpus[1]))
    assert rc == 0 and _plain(json.loads(skipped)) == _plain(json.loads(whole))


@pytest.mark.parametrize("streamed", [False, True], ids=["in-memory", "streamed"])
def test_cli_a_name_two_loaded_files_share_is_refused_with_how_to_tell_them_apart(
    capsysbinary, tmp_path, fake_cli, streamed
):
    """Two folders' ``notes.txt``: a question naming ``notes.txt`` could mean either, and one error
    line says to name it by its id (which the in-memory run can quote)."""
    texts = {"one": "The pump starts at dawn.", "two": "The valve closes at dusk."}
    for folder, text in texts.items():
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "notes.txt").write_text(text)
    q = tmp_path / "q.jsonl"
    q.write_text(json.dumps({"question": "When?", "answer": "at dawn", "document": "notes.txt"}) + "\n")
    args = ["--corpus", str(tmp_path / "one"), str(tmp_path / "two"), "--questions", str(q), "--retriever", "bm25"]
    rc, out, err = run_main(capsysbinary, "evaluate", *args, *(["--engine", "local"] if streamed else []))
    (line,) = err.splitlines()
    assert rc == 2 and out == "" and line.startswith("error:")
    assert "'notes.txt' matches 2 loaded documents" in line and "name it by its id" in line
    if not streamed:
        ids = [load_path(tmp_path / f / "notes.txt").id for f in texts]
        assert all(i in line for i in ids)
        by_id = tmp_path / "by_id.jsonl"
        by_id.write_text(json.dumps({"question": "When?", "answer": "at dawn", "document": ids[0]}) + "\n")
        rc, out, err = run_main(capsysbinary, "evaluate", *args[:-4], "--questions", str(by_id), *args[-2:])
        assert rc == 0, err


def test_cli_reads_folders_and_patterns(capsysbinary, corpus, tmp_path, fake_cli):
    args = ["--questions", str(corpus[1]), "--format", "json", "--retriever", "bm25", "-q"]
    rc, by_folder, _ = run_main(capsysbinary, "evaluate", "--corpus", str(corpus[0]), *args)
    rc2, by_glob, _ = run_main(capsysbinary, "evaluate", "--corpus", f"{corpus[0]}/**/*.txt", *args)
    assert rc == rc2 == 0
    assert _plain(json.loads(by_folder)) == _plain(json.loads(by_glob))


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--corpus", "{tmp}/none/*.txt"], "no file matches this pattern"),
        (["--corpus", "{tmp}/missing"], "cannot read"),
        (["--address", "127.0.0.1:1"], "use it with --engine ray"),
        (["--resume"], "give --out"),
        (["--engine", "spark"], "invalid choice: 'spark'"),
        (["--engine", "ray", "--address", "127.0.0.1:1"], "no Ray cluster reachable"),
    ],
)
def test_cli_bad_corpus_input_is_one_error_line(capsysbinary, corpus, tmp_path, extra, message, fake_cli):
    extra = [x.replace("{tmp}", str(tmp_path)) for x in extra]
    argv = ["evaluate", "--corpus", str(corpus[0]), "--questions", str(corpus[1]), *extra]
    if extra[0] == "--corpus":
        argv = ["evaluate", *extra, "--questions", str(corpus[1])]
    if "--engine" in extra and "ray" in extra:
        pytest.importorskip("ray", reason="ray is not installed (requirements-scale.txt)")
    try:
        rc = main(argv)
    except SystemExit as e:  # argparse's own errors
        rc = e.code
    err = capsysbinary.readouterr().err.decode()
    assert rc == 2
    assert err.count("\n") == 1 and err.startswith("error:") and message in err


def test_cli_refuses_to_mix_runs(capsysbinary, corpus, tmp_path, fake_cli):
    out = tmp_path / "r.jsonl"
    assert (
        run_main(capsysbinary, "evaluate", *_cli(corpus, "--retriever", "bm25", "--out", str(out), "-q"))[0]
        == 0
    )
    rc, _, err = run_main(capsysbinary, "evaluate", *_cli(corpus, "--retriever", "bm25", "--out", str(out)))
    assert rc == 2 and "add --resume" in err
    rc, _, err = run_main(capsysbinary, "evaluate", *_cli(corpus, "--out", str(out), "--resume"))
    assert rc == 2 and "other settings" in err


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("documents", "30", "documents='30', not a whole number >= 0"),
        ("format", None, "format=None, not a whole number >= 0"),
        ("strategies", [["recursive"]], "strategies=[['recursive']], not a list of names"),
        ("retriever", ["bm25"], "retriever=['bm25'], not text"),
        ("documents", True, "documents=True, not a whole number >= 0"),
        ("extra", {"a": [1]}, "extra={'a': [1]}, not text or a number"),
        ("key", None, "key=None, not text"),
    ],
)  # fmt: skip
def test_cli_resume_refuses_a_header_of_the_wrong_types(capsysbinary, corpus, tmp_path, fake_cli, field, value, said):
    """``--resume`` read the results file's first line for its key alone: a header holding a
    string where a number goes, a null or nested lists was taken as this program's."""
    out = tmp_path / "r.jsonl"
    args = _cli(corpus, "--retriever", "bm25", "--out", str(out), "-q")
    assert run_main(capsysbinary, "evaluate", *args)[0] == 0
    lines = out.read_text().splitlines()
    header = json.loads(lines[0])
    assert {"documents", "format", "strategies", "retriever", "key"} <= header.keys()
    lines[0] = json.dumps(header | {field: value})
    out.write_text("\n".join(lines) + "\n")
    rc, stdout, err = run_main(capsysbinary, "evaluate", *args, "--resume")
    assert rc == 2 and stdout == "" and err.count("\n") == 1 and err.startswith("error: "), err
    assert f"--out {str(out)!r}: line 1, the run's header, has {said}; the file is damaged" in err, err


def test_cli_without_ray_says_how_to_install_it(capsysbinary, corpus, monkeypatch, fake_cli):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    rc, _, err = run_main(capsysbinary, "evaluate", *_cli(corpus, "--engine", "ray"))
    assert rc == 2 and err.count("\n") == 1
    assert "pip install -r requirements-scale.txt" in err


@pytest.mark.slow
def test_a_killed_run_resumes_where_it_stopped(tmp_path):
    """SIGKILL in the middle (a half-written line is possible), then --resume: every document
    is done once, and the scores are those of an uninterrupted run."""
    corpus_dir, questions = make_corpus(tmp_path, 400, every=20)
    out = tmp_path / "r.jsonl"
    argv = [sys.executable, "-m", "explorer", "evaluate", "--corpus", str(corpus_dir), "--questions",
            str(questions), "--retriever", "bm25", "--format", "json", "--out", str(out)]  # fmt: skip
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        if out.exists() and out.read_text().count('"kind": "document"') >= 50:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    first = out.read_text().count('"kind": "document"')
    assert 50 <= first < 400
    resumed = subprocess.run([*argv, "--resume"], cwd=ROOT, env=env, capture_output=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr.decode()
    err = resumed.stderr.decode()
    assert f"({400 - first:,} processed, {first:,} resumed)" in err
    names = [json.loads(x)["name"] for x in out.read_text().splitlines() if '"document"' in x]
    assert len(names) == len(set(names)) == 400
    fresh = subprocess.run(argv[:-2], cwd=ROOT, env=env, capture_output=True, timeout=300)
    assert _plain(json.loads(resumed.stdout)) == _plain(json.loads(fresh.stdout))


@pytest.mark.model
def test_streaming_with_the_real_model_scores_as_evaluate(tmp_path):
    """A handful of documents embedded by the real model, each path with its own empty cache."""
    from explorer.embedding.embedder import get_embedder

    emb = get_embedder("all-MiniLM-L6-v2", backend="torch")
    few = make_corpus(tmp_path, 6, every=1)
    config = (StrategyConfig.make("recursive", {"chunk_size": 400, "chunk_overlap": 0}),)
    expected, _ = _in_memory(
        few, "dense", configs=config, embedder=emb.sharing_model(EmbeddingCache.memory())
    )
    got, _, _ = _streamed(few, "dense", configs=config, embedder=emb.sharing_model(EmbeddingCache.memory()))
    assert _plain(got) == _plain(expected)


def test_streaming_stems_each_document_in_its_language_as_evaluate_does(tmp_path):
    """German and Spanish documents streamed: their stemmers travel with their words (also
    through the chunk cache a resumed run reads), and BM25 scores what evaluate scores."""
    from explorer.evaluation.corpus.store import ChunkCache
    from explorer.evaluation.corpus.work import DocWork, Part

    folder = tmp_path / "docs"
    folder.mkdir()
    lines = []
    for lang in ("de", "es"):
        name = f"vim-tutor-{lang}.txt"
        (folder / name).write_bytes((ROOT / "bench/data/european" / name).read_bytes())
        for line in (ROOT / f"bench/data/european/questions-{lang}.jsonl").read_text().splitlines():
            lines.append(json.dumps({**json.loads(line), "document": name}, ensure_ascii=False))
    questions = tmp_path / "questions.jsonl"
    questions.write_text("\n".join(lines) + "\n")
    configs = (StrategyConfig.make("recursive", {"chunk_size": 500, "chunk_overlap": 0}),)
    expected, _ = _in_memory((folder, questions), "bm25", configs=configs)
    got, _, _ = _streamed((folder, questions), "bm25", configs=configs)
    assert _plain(got) == _plain(expected)
    assert expected[0].scores.hit_rate.mean >= 0.7  # 0.65 when both were stemmed as English (measured)

    cache = ChunkCache(tmp_path / "cache", "k")
    part = Part(np.array([0]), np.array([5]), np.array([2]), words=[["zeil"]], language="german")
    cache.save(DocWork(0, "d", "id", "ab" * 20, 5, [part]))
    assert cache.load("ab" * 20, 1, 5)[0].language == "german"


def test_streaming_folds_accents_as_evaluate_does_also_through_a_resumed_run(tmp_path):
    """French documents with accents, questions typed without them: a question word finds the
    accented words through the folded aliases, in memory, streamed, and streamed again from the
    chunk cache a resumed run reads (its ``af``/``as`` arrays)."""
    from explorer.evaluation.corpus.store import ChunkCache
    from explorer.evaluation.corpus.work import DocWork, Part

    folder = tmp_path / "docs"
    folder.mkdir()
    facts = {
        "reseau.txt": ("La société publiera l'électricité consommée chaque trimestre.", "electricite consommee"),
        "usine.txt": ("Les pièces défectueuses sont signalées au contrôleur qualité.", "pieces defectueuses"),
        "ecole.txt": ("Les élèves déjeunent à la cantine près du théâtre municipal.", "eleves dejeunent"),
    }
    filler = "Le comité se réunit le lundi. Les dossiers sont rangés par année. "
    lines = []
    for name, (fact, question) in facts.items():
        (folder / name).write_text(filler * 6 + fact + " " + filler * 6, encoding="utf-8")
        lines.append(json.dumps({"question": question, "answer": fact, "document": name}, ensure_ascii=False))
    questions = tmp_path / "questions.jsonl"
    questions.write_text("\n".join(lines) + "\n", encoding="utf-8")
    configs = (StrategyConfig.make("recursive", {"chunk_size": 120, "chunk_overlap": 0}),)
    expected, _ = _in_memory((folder, questions), "bm25", configs=configs)
    # every question is found, and only through the aliases: its words are written without accents
    assert expected[0].scores.hit_rate.mean == 1.0
    out = tmp_path / "results.jsonl"
    got, _, _ = _streamed((folder, questions), "bm25", configs=configs, out=out)
    again, _, stats = _streamed((folder, questions), "bm25", configs=configs, out=out, resume=True)
    assert (stats.processed, stats.resumed) == (0, 3)
    assert _plain(got) == _plain(expected) == _plain(again)

    cache = ChunkCache(tmp_path / "cache", "k")
    aliases = {"electricite": ("électr",), "eleve": ("élev", "elev")}
    part = Part(np.array([0]), np.array([5]), np.array([2]), words=[["électr"]], language="french", aliases=aliases)
    cache.save(DocWork(0, "d", "id", "cd" * 20, 5, [part]))
    assert cache.load("cd" * 20, 1, 5)[0].aliases == aliases

