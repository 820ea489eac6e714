"""Work that does not block, in the app (``streamlit.testing.v1.AppTest``): embedding runs in a
background job whose status shows at the top of the page with a Stop button that stops it;
loading documents starts the warm-up; a sweep on Evaluate can be stopped and keeps the values
it scored. The fake embedder is slowed down (``CHUNK_EXPLORER_FAKE_DELAY``) so a job is still
running when the test looks at the page."""

from __future__ import annotations

import time

import pytest
import test_app_pages
from streamlit.testing.v1 import AppTest
from test_app_pages import ok

from explorer import jobs

DELAY = 0.4  # seconds per model call of the slow fake (its first call "loads" for twice that)


@pytest.fixture(autouse=True)
def slow_fake(monkeypatch):
    monkeypatch.setenv("CHUNK_EXPLORER_FAKE_EMBEDDER", "1")
    monkeypatch.setenv("CHUNK_EXPLORER_FAKE_DELAY", str(DELAY))
    monkeypatch.setenv("CHUNK_EXPLORER_JOB_WAIT", "0")  # a page never waits for its job here
    monkeypatch.setenv("CHUNK_EXPLORER_WARM", "0")


def _slow_embedder():
    from pages.ui.model import make_embedder

    return make_embedder("", True, "auto", DELAY)


def start(page: str | None = None, **params) -> AppTest:
    return test_app_pages.start(page, query=params)


def session_job(at: AppTest) -> jobs.Job | None:
    try:
        return at.session_state["_job"]
    except KeyError:
        return None


def in_order(at: AppTest) -> list:
    """Every element of the main area, top to bottom."""
    return [n for n in at.main if getattr(n, "type", "") not in ("", "main")]


def progress_texts(at: AppTest) -> list[str]:
    return [p.proto.text for p in at.get("progress")]


def bar_is_at_the_top(at: AppTest, first_below: str) -> bool:
    """The status bar's progress comes right under the title and caption, above ``first_below``
    (the key of the page's first widget)."""
    order = in_order(at)
    kinds = [getattr(n, "type", "") for n in order]
    i_progress = kinds.index("progress")
    i_widget = next(i for i, n in enumerate(order) if getattr(n, "key", None) == first_below)
    assert kinds[:2] == ["title", "caption"], kinds[:4]
    return i_progress < i_widget


def ask(at: AppTest, question: str) -> None:
    at.text_input(key="w.question").set_value(question)
    next(b for b in at.button if b.label == "Search").click().run()


def new_params() -> dict:
    """A configuration no other test embedded (the fake's vectors are cached per process)."""
    size = 300 + int(time.time() * 1000) % 400
    return {
        "cfg": [
            f'{{"s":"fixed","p":{{"chunk_size":{size}}}}}',
            f'{{"s":"sentence","p":{{"sentences_per_chunk":{2 + size % 5}}}}}',
        ]
    }


def test_status_at_the_top_with_stop_while_a_job_runs_and_stop_stops_it():
    at = start("retrieve", **new_params())
    ok(at)
    assert not at.get("progress")  # nothing runs yet: no bar
    ask(at, "How often are the filters backwashed?")
    ok(at)
    job = session_job(at)
    assert job is not None and not job.finished
    # one status line + progress bar + Stop, at the top of the page; the results wait below
    assert bar_is_at_the_top(at, "w.question")
    (text,) = progress_texts(at)
    assert text.startswith("**Searching 2 configurations**")
    assert at.button(key="w.job_stop").label == "Stop"
    assert any("when the embedding at the top of the page is done" in i.value for i in at.info)
    assert all("· BM25 **" in m.value for m in at.markdown if m.value.startswith("**#"))  # stand-ins only
    # Stop: the job ends at its next progress step, short of its work
    at.button(key="w.job_stop").click().run()
    ok(at)
    assert job.wait(30)
    s = job.status()
    assert s.phase == jobs.STOPPED and job.result is None
    at.run()
    ok(at)
    assert not at.get("progress")
    assert any("Stopped" in m.value for m in at.markdown)
    hits = [m.value for m in at.markdown if m.value.startswith("**#")]
    assert all("· BM25 **" in h for h in hits)  # keyword stand-ins at most: not restarted by itself
    # Resume picks up (from the cache) and the results appear
    at.button(key="w.job_resume").click().run()
    resumed = session_job(at)
    assert resumed is not job and resumed.key == job.key
    assert resumed.wait(60)
    at.run()
    ok(at)
    assert resumed.status().phase == jobs.DONE
    assert len([m for m in at.markdown if m.value.startswith("**#")]) == 2 * 5


def test_loading_the_model_shows_only_while_it_loads():
    from pages.ui.model import make_embedder

    make_embedder.clear()  # a fresh slow fake: its "model" is not loaded yet
    at = start("semantic")
    ok(at)
    emb = _slow_embedder()
    seen = []
    deadline = time.monotonic() + 60
    job = session_job(at)
    assert job is not None and job.kind == "curve"
    while not job.finished and time.monotonic() < deadline:
        loaded_before = emb.loaded
        at.run()
        seen.append((loaded_before, emb.loaded, progress_texts(at)))
        time.sleep(0.05)
    ok(at)
    assert job.status().phase == jobs.DONE
    for before, after, texts in seen:
        for t in texts:
            if "loading the model" in t:  # said only while the model is not loaded
                assert not before, t
            if "texts embedded" in t:  # counting only once it is
                assert after, t
    at.run()
    assert at.metric[0].label == "Sentences" and not at.get("progress")  # done: the bar is gone


def test_documents_start_the_warm_up_off_the_script_thread(monkeypatch):
    from pages.ui import compute, search

    monkeypatch.setenv("CHUNK_EXPLORER_WARM", "1")
    preloads: list[str] = []  # the LLM-token counter Retrieve's cost table needs
    monkeypatch.setattr(compute, "preload_llm_counter", lambda: preloads.append("warm"))
    monkeypatch.setattr(search, "preload_llm_counter", lambda: preloads.append("search"))
    emb = _slow_embedder()
    t0 = time.monotonic()
    at = start(**new_params())  # Explore: the first paint does not wait for the embedding
    ok(at)
    assert time.monotonic() - t0 < 30
    job = session_job(at)
    assert job is not None and job.kind == "warm" and not job.finished
    assert job.wait(120) and job.status().phase == jobs.DONE
    assert all(not isinstance(v, str) for v in job.result.values()) and len(job.result) == 2
    # its steps name the configurations as the sidebar does ("2. recursive 1000/200")
    assert job.status().label.startswith("configuration 2 of 2, 2. "), job.status().label
    # Retrieve then finds the chunks embedded: only the question goes to the model
    at.switch_page("pages/retrieve.py").run()
    before = emb.stats.encoded
    monkeypatch.setenv("CHUNK_EXPLORER_JOB_WAIT", "60")
    ask(at, "Which chemicals are dosed?")
    ok(at)
    assert emb.stats.encoded - before == 1
    assert len([m for m in at.markdown if m.value.startswith("**#")]) == 2 * 5
    assert preloads[0] == "warm" and "search" in preloads


def test_the_warm_up_waits_for_the_page_only_while_the_model_is_not_loaded(monkeypatch):
    from pages.ui import compute

    monkeypatch.setenv("CHUNK_EXPLORER_WARM", "1")
    monkeypatch.setattr(compute, "WARM_DELAY_S", 60.0)
    emb = _slow_embedder()
    emb.encode(["loads the model"])
    assert emb.loaded
    at = start("documents", **new_params())
    ok(at)
    job = session_job(at)
    assert job is not None and job.kind == "warm"
    assert job.wait(30) and job.status().phase == jobs.DONE  # it did not wait the 60 s


def _warming(monkeypatch, page: str, delay: float = DELAY) -> tuple[AppTest, jobs.Job]:
    """``page`` opened with the warm-up on (the fake taking ``delay`` s a call): the page and its
    running warm-up."""
    from pages.ui.model import make_embedder

    monkeypatch.setenv("CHUNK_EXPLORER_WARM", "1")
    monkeypatch.setenv("CHUNK_EXPLORER_FAKE_DELAY", str(delay))
    make_embedder("", True, "auto", delay)
    at = start(page, **new_params())
    ok(at)
    job = session_job(at)
    assert job is not None and job.kind == "warm" and not job.finished
    return at, job


def test_an_upload_during_the_warm_up_replaces_it_at_the_end_of_its_step(monkeypatch):
    at, old = _warming(monkeypatch, "documents")
    text = "The pumps run at night. The valves open at dawn. " * 40
    at.file_uploader[0].set_value(("night.txt", text.encode(), "text/plain")).run()
    ok(at)
    new = session_job(at)
    # the new set's warm-up is the session's job now, not one started when the old one ends
    assert new is not old and new.kind == "warm"
    assert old.wait(60) and old.status().phase == jobs.STOPPED
    assert new.wait(120) and new.status().phase == jobs.DONE
    assert "night.txt" in [name for _, name in new.key[1]] and "night.txt" not in [n for _, n in old.key[1]]
    assert all(not isinstance(v, str) for v in new.result.values()) and len(new.result) == 2


def test_a_warm_up_a_question_took_over_starts_again_after_it(monkeypatch):
    at, warm = _warming(monkeypatch, "retrieve")
    ask(at, "Which chemicals are dosed?")
    ok(at)
    search = session_job(at)
    assert search is not None and search.kind == "search"
    assert warm.wait(60) and warm.status().phase == jobs.STOPPED
    assert search.wait(120) and search.status().phase == jobs.DONE
    at.run()  # the next page run: the warm-up takes up again for the same documents
    ok(at)
    again = session_job(at)
    assert again is not None and again.kind == "warm" and again is not warm
    assert again.key == warm.key
    assert again.wait(60) and again.status().phase == jobs.DONE
    for _ in range(3):  # the question's hits come from the cache: no search and no warm-up again
        at.run()
        ok(at)
        assert session_job(at) is again
        assert len([m for m in at.markdown if m.value.startswith("**#")]) == 2 * 5


def test_a_warm_up_the_user_stopped_stays_stopped(monkeypatch):
    at, warm = _warming(monkeypatch, "retrieve", delay=3.0)  # still running when Stop is pressed
    at.run()  # the status bar follows it from this run on
    at.button(key="w.job_stop").click().run()
    ok(at)
    assert warm.wait(60) and warm.status().phase == jobs.STOPPED
    for _ in range(2):
        at.run()
        ok(at)
        assert session_job(at) is warm


def test_a_sweep_on_evaluate_can_be_stopped_and_keeps_the_values_scored():
    at = start("evaluate", **new_params())
    at.button(key="w.qsample").click().run()
    ok(at)
    at.selectbox(key="w.sweep_param").set_value("chunk_size")
    at.text_input(key="w.sweep_values").set_value("200:1000:100").run()
    at.button(key="w.sweep_run").click().run()
    ok(at)
    job = session_job(at)
    assert job is not None and job.kind == "sweep" and not job.finished
    assert bar_is_at_the_top(at, "w.eval_src")
    assert at.button(key="w.job_stop")
    # let it score a value or two, then Stop
    deadline = time.monotonic() + 60
    while not (job.partial and sum(len(r) for r in job.partial["lines"].values()) >= 1):
        assert time.monotonic() < deadline and not job.finished
        time.sleep(0.05)
    at.button(key="w.job_stop").click().run()
    assert job.wait(30) and job.status().phase == jobs.STOPPED
    at.run()
    ok(at)
    sw = at.session_state["sweep_results"]
    scored = sum(len(rows) for rows in sw["lines"].values())
    assert sw["stopped"] and 1 <= scored < 9
    assert any("The sweep was stopped" in c.value for c in at.caption)
    assert any("Stopped" in m.value for m in at.markdown)
    assert at.button(key="w.job_resume")
    # with top k moved, Resume would score the earlier settings (and its curves be marked out of
    # date as they came): the bar says what changed instead of offering it
    at.sidebar.slider(key="w.k").set_value(3).run()
    ok(at)
    (bar,) = [m.value for m in at.markdown if "Stopped" in m.value]
    assert "The top k changed since: run it again for the current ones" in bar, bar
    assert not [b for b in at.button if b.key == "w.job_resume"]
    at.sidebar.slider(key="w.k").set_value(5).run()
    assert at.button(key="w.job_resume")  # back as it was: Resume again
    at.button(key="w.job_dismiss").click().run()
    ok(at)
    assert not any("Stopped" in m.value for m in at.markdown)


def test_results_stream_in_as_each_configuration_is_ready(monkeypatch):
    """Keyword (BM25) hits stand in for every configuration before anything is embedded, said
    to be; then the first configuration's own hits replace its stand-ins while the second is
    still being indexed (each held back here by a gate, so the test does not depend on timing)."""
    import random
    import threading

    from explorer.retrieval import search as retrieval
    from pages.ui.background import published
    from pages.ui.search import STAND_IN_NOTE, split_found

    rnd = random.Random(time.time_ns())  # a first configuration no other test embedded
    params = new_params()
    size, overlap = rnd.randrange(200, 1000), rnd.randrange(0, 50)
    params["cfg"][0] = f'{{"s":"fixed","p":{{"chunk_size":{size},"chunk_overlap":{overlap}}}}}'
    second = params["cfg"][1]
    gates = {"fixed": threading.Event(), "sentence": threading.Event()}
    real = retrieval.get_index

    def gated(docs, config, ctx=None, options=None, progress=None, retriever="hybrid", **kwargs):
        in_job = threading.current_thread().name.startswith("explorer-job-")  # not the page's try
        if in_job and retriever != "bm25":  # keyword stand-ins pass, embedding waits
            gates[config.strategy].wait(60)
        return real(docs, config, ctx, options, progress, retriever, **kwargs)

    def wait_for(check) -> None:
        deadline = time.monotonic() + 60
        while not check(job.partial) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert check(job.partial), job.partial

    def shown() -> tuple[list[str], int]:
        at.run()
        ok(at)
        hits = [m.value for m in at.markdown if m.value.startswith("**#")]
        return hits, sum(STAND_IN_NOTE.split(":")[0] in i.value for i in at.info)

    from pages.ui import search

    passes = []
    keyword_hits = search._keyword_hits
    monkeypatch.setattr(search, "_keyword_hits", lambda *a: passes.append(1) or keyword_hits(*a))
    monkeypatch.setattr(retrieval, "get_index", gated)
    at = start("retrieve", **params)
    ask(at, "Which pumps need weekly checks?")
    ok(at)
    job = session_job(at)
    assert job is not None and '"sentence"' in second
    # the page's try made the keyword hits; the job starts from them: one keyword pass in all
    assert len(job.partial["keyword"]) == 2 and len(passes) == 1
    seeded = published(job.partial)  # what the status bar has seen
    hits, notes = shown()
    assert len(hits) == 2 * 5 and notes == 2 and all("· BM25 **" in h for h in hits)
    gates["fixed"].set()
    wait_for(lambda p: len(split_found(p)[0]) == 1)  # the first configuration's own hits
    assert published(job.partial) != seeded  # so the bar reruns the page to show them
    assert not job.finished
    hits, notes = shown()
    assert len(hits) == 2 * 5 and notes == 1
    assert sum("fused score" in h for h in hits) == 5
    assert any("other configurations' results" in i.value for i in at.info)
    gates["sentence"].set()
    assert job.wait(60)
    hits, notes = shown()
    assert len(hits) == 2 * 5 and notes == 0 and all("fused score" in h for h in hits)
    assert len(passes) == 1


def test_keyword_stand_ins_skip_configurations_whose_chunking_embeds():
    """A semantic configuration's chunks need the model: the keyword pass leaves it to the real
    one instead of embedding first (its inline try would stop at the first text to embed)."""
    from explorer import Context
    from explorer.documents.samples import SAMPLES, load_sample
    from explorer.embedding.fake import FakeEmbedder
    from explorer.retrieval.vectors import DEFAULT_EMBED_OPTIONS
    from explorer.strategies.config import StrategyConfig
    from pages.ui.background import _Inline
    from pages.ui.search import _keyword_hits

    emb = FakeEmbedder(16)
    docs = [load_sample(name) for name in list(SAMPLES)[:2]]
    fixed = StrategyConfig.make("fixed", {"chunk_size": 377})
    semantic = StrategyConfig.make("semantic", {})
    job = _Inline(emb)
    make = lambda p: Context(embedder=emb, progress=p)  # noqa: E731
    found = _keyword_hits(job, docs, [semantic, fixed], ["pumps"], DEFAULT_EMBED_OPTIONS, make, 3)
    assert list(found) == [fixed] and job.partial == {"keyword": found, "keyword whole": True}
    (hits,) = found[fixed][1]
    assert len(hits) == 3 and all(h.chunk.text == docs_text(docs, h.chunk) for h in hits)
    assert emb.stats.encoded == 0


def docs_text(docs, chunk) -> str:
    doc = next(d for d in docs if d.id == chunk.doc_id)
    return doc.text[chunk.start : chunk.end]


def test_the_status_bar_looks_often_at_a_young_job_then_less(monkeypatch):
    from pages.ui import background

    class Aged:
        def __init__(self, elapsed: float, left: int = 9) -> None:
            self.elapsed, self.left = elapsed, left

        def status(self) -> jobs.JobStatus:
            return jobs.JobStatus(jobs.EMBEDDING, "", 1, 1 + self.left, "", 0, None, self.elapsed)

    monkeypatch.setattr(jobs, "active", lambda: 1)
    assert background._poll_every(Aged(0.2)) == background.POLL_S
    assert background._poll_every(Aged(background.FAST_POLL_FOR_S + 0.1)) == background.SLOW_POLL_S
    # young, but with many texts left: seconds of work, looked at less often from the start
    assert background._poll_every(Aged(0.2, background.SLOW_POLL_TEXTS + 1)) == background.SLOW_POLL_S
    assert background.POLL_S < background.SLOW_POLL_S <= background.BUSY_POLL_S
    monkeypatch.setattr(jobs, "active", lambda: 3)  # other visitors' jobs queued: every look costs
    assert background._poll_every(Aged(0.2)) == background.BUSY_POLL_S


def test_a_replaced_job_finishing_its_step_does_not_slow_the_looks_at_the_one_after_it():
    """A question replaces the warm-up, which finishes its step first: the question's job waits
    queued behind it. It is looked at as one job (not as a busy server's), less often while
    queued, and as usual once it runs."""
    import threading

    from pages.ui import background

    release = threading.Event()

    def stepping(job: jobs.Job) -> None:
        job.step("a step")
        release.wait(30)
        job.progress(1, 1)
        job.step("the next step")  # a stop asked at_step takes effect here

    old = jobs.submit(stepping, label="warm-up", kind="warm")
    deadline = time.monotonic() + 30
    while old.status().phase == jobs.QUEUED and time.monotonic() < deadline:
        time.sleep(0.01)
    old.cancel(at_step=True)
    new = jobs.submit(lambda job: job.step("search"), label="search", kind="search")
    try:
        assert jobs.active() == 1 and jobs.load() == 2
        assert new.status().phase == jobs.QUEUED
        assert background._poll_every(new) == background.SLOW_POLL_S
    finally:
        release.set()
    assert old.wait(30) and new.wait(30)
    assert old.status().phase == jobs.STOPPED and new.status().phase == jobs.DONE
    assert jobs.active() == 0


def test_picking_another_document_stops_the_job_for_the_one_left():
    from pages.ui.model import make_embedder

    make_embedder.clear()  # a fresh slow fake: no sentence of the document is embedded yet
    at = start("semantic")
    ok(at)
    job = session_job(at)
    assert job is not None and job.kind == "curve" and not job.finished
    left = job.key[1]
    at.selectbox(key="w.doc").set_value("sample:Rapport annuel (French report, text)").run()
    ok(at)
    assert job.wait(30) and job.status().phase == jobs.STOPPED  # stopped, not left to run on
    now = session_job(at)
    assert now is job or now.key[1] != left  # whatever runs now is for the document picked
    texts = progress_texts(at)
    assert not any(job.title in t for t in texts), texts  # the bar does not name the one left
    at.run()
    ok(at)
    assert not any("Stopped" in m.value for m in at.markdown)  # nor offers to resume it


def test_coming_back_to_a_document_whose_job_was_dropped_starts_it_again():
    """A dropped job is not the user's Stop: back on its document, its work starts afresh (it
    said "resume at the top of the page", where no bar offered Resume)."""
    from pages.ui.model import make_embedder

    make_embedder.clear()
    at = start("semantic")
    ok(at)
    first = session_job(at)
    handbook = at.selectbox(key="w.doc").value
    assert first is not None and first.wait(120) and first.status().phase == jobs.DONE
    at.run()
    report = "sample:Rapport annuel (French report, text)"
    at.selectbox(key="w.doc").set_value(report).run()
    dropped = session_job(at)
    assert dropped is not None and dropped.key[1] != first.key[1] and not dropped.finished
    at.selectbox(key="w.doc").set_value(handbook).run()  # cached: the report's job is dropped
    assert dropped.wait(30) and dropped.status().phase == jobs.STOPPED
    at.selectbox(key="w.doc").set_value(report).run()
    ok(at)
    assert not any("resume" in i.value for i in at.info)
    again = session_job(at)
    if again is not dropped:  # started afresh in the background (else made on the page's thread)
        assert again.key == dropped.key and again.wait(120) and again.status().phase == jobs.DONE
        at.run()
    assert at.metric[0].label == "Sentences"  # the report's curve, not "resume at the top"


def test_a_resumed_evaluation_keeps_naming_itself_in_the_address():
    """Stop, then Resume, on Evaluate: the resumed job lost the link its first run had, so while
    it ran the address dropped ``ev=1`` and a reload then forgot the evaluation."""
    at = start("evaluate", qf="sample", **new_params())
    ok(at)
    at.button(key="w.eval_run").click().run()
    job = session_job(at)
    assert job is not None and job.kind == "eval" and job.link == {"ev": "1"}
    at.button(key="w.job_stop").click().run()
    assert job.wait(30)
    at.run()
    at.button(key="w.job_resume").click().run()
    resumed = session_job(at)
    assert resumed is not job and resumed.link == {"ev": "1"}
    if not resumed.finished:
        assert at.query_params.get("ev") == "1", dict(at.query_params)
    resumed.cancel()
    resumed.wait(30)
