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
