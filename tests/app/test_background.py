""":func:`pages.ui.background.background` when the job ends while the status bar is drawn.

Found in a CI run under load: the Semantic page got ``(DONE, None)`` for its curve and failed
on ``curve.mode``. The function read the job's phase once before drawing the bar and again
after, and returned the second reading with what the job had published so far (nothing, for a
curve) instead of its result. Here the bar's drawing waits for the job to finish, so the
interleaving happens every time."""

from __future__ import annotations

import threading
import types

import pages.ui.background as bg
from explorer import jobs


def test_a_job_that_ends_while_the_bar_is_drawn_gives_its_result(monkeypatch):
    monkeypatch.setenv("CHUNK_EXPLORER_JOB_WAIT", "0")  # the page does not wait for the job
    monkeypatch.setattr(bg, "session", types.SimpleNamespace(job=None, unclaimed={}))
    go = threading.Event()
    curve = types.SimpleNamespace(mode="percentile")

    def work(job):
        job.progress(0, 1_000)  # tried inline first: this would embed, so it becomes a job
        go.wait(10)
        return curve

    def bar_drawn_while_the_job_ends(show_finished=False):
        go.set()
        assert bg.session.job.wait(10)

    monkeypatch.setattr(bg, "job_bar", bar_drawn_while_the_job_ends)
    key = ("curve", "doc", "config", "model")
    assert bg.background("curve", key, "Embedding", work, emb=None) == (jobs.DONE, curve)
    assert bg.session.job.result is curve


def test_a_job_still_running_after_the_bar_gives_what_it_published(monkeypatch):
    monkeypatch.setenv("CHUNK_EXPLORER_JOB_WAIT", "0")
    monkeypatch.setattr(bg, "session", types.SimpleNamespace(job=None, unclaimed={}))
    go = threading.Event()

    def work(job):
        job.partial = "half"  # what it finished so far, kept when the inline try hands over
        job.progress(0, 1_000)
        go.wait(10)
        return "all"

    monkeypatch.setattr(bg, "job_bar", lambda show_finished=False: None)
    phase, value = bg.background("curve", ("curve", "doc"), "Embedding", work, emb=None)
    go.set()
    assert phase not in jobs.FINISHED and value == "half"
    assert bg.session.job.wait(10) and bg.session.job.result == "all"


def _slow_work(go: threading.Event, result: str):
    def work(job):
        job.progress(0, 1_000)  # would embed: a job
        go.wait(10)
        job.progress(1, 1_000)  # raises Cancelled once the job was stopped
        return result

    return work


def test_a_setting_changed_back_stops_the_job_for_the_one_left(monkeypatch):
    """Retrieve with neighbouring characters at 100 starts a job; set back to 0, the page's
    results come from the cache at once, and the job for 100 stops instead of running on for
    45 s with its bar and Stop (a helper's demo pass). Chunking jobs, of which a page asks
    several per run, are left alone."""
    monkeypatch.setenv("CHUNK_EXPLORER_JOB_WAIT", "0")
    monkeypatch.setattr(bg, "session", types.SimpleNamespace(job=None, unclaimed={}))
    monkeypatch.setattr(bg, "job_bar", lambda show_finished=False: None)
    go = threading.Event()
    try:
        bg.background("search", ("search", 100), "Searching", _slow_work(go, "100"), emb=None)
        old = bg.session.job
        assert bg.background("search", ("search", 0), "Searching", lambda job: "0", emb=None) == (jobs.DONE, "0")
        assert old.token.cancelled and old.dismissed

        # a new setting that needs a job of its own replaces the running one (it did not wait)
        bg.background("search", ("search", 200), "Searching", _slow_work(go, "200"), emb=None)
        first = bg.session.job
        bg.background("search", ("search", 300), "Searching", _slow_work(go, "300"), emb=None)
        assert first.token.cancelled and bg.session.job is not first and bg.session.job.key == ("search", 300)

        bg.background("chunk", ("chunk", "a"), "Chunking", _slow_work(go, "a"), emb=None)
        chunking = bg.session.job
        assert bg.background("chunk", ("chunk", "b"), "Chunking", lambda job: "b", emb=None) == (jobs.DONE, "b")
        assert not chunking.token.cancelled  # the page still wants a's chunks
    finally:
        go.set()
        if bg.session.job is not None:
            bg.session.job.cancel()
            bg.session.job.wait(10)


def test_the_time_left_says_when_it_is_the_step_in_hand_only():
    embedding = dict(phase=jobs.EMBEDDING, done=40, total=120, eta=15.0)
    one = bg.status_line("Searching", jobs.JobStatus(label="Searching", **embedding))
    assert one.endswith("40 / 120 texts embedded · about 15 s left"), one
    several = bg.status_line("Sweep", jobs.JobStatus(label="step 1 of 12, chunk_size=200", **embedding))
    assert "step 1 of 12" in several and several.endswith("about 15 s left in this step")
