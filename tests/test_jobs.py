"""Background jobs (explorer/jobs.py): Stop cancels an embedding mid-way, what was embedded
before the stop stays cached, and a job reports done / stopped / failed with its message."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from explorer import jobs
from explorer.embedding.base import PROGRESS_STEP
from explorer.embedding.fake import FakeEmbedder
from explorer.errors import Cancelled, ExplorerError, LoadError


class SlowEmbedder(FakeEmbedder):
    """A fake embedder that takes ``delay`` seconds per model call (one progress step)."""

    def __init__(self, delay: float = 0.05, **kw) -> None:
        super().__init__(**kw)
        self.delay = delay
        self.calls = 0

    def _embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        time.sleep(self.delay)
        return super()._embed(texts)


class LazyEmbedder(SlowEmbedder):
    """Says it is not loaded until its first model call has finished (like the real one)."""

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._loaded = False

    @property
    def loaded(self) -> bool:
        return self._loaded

    def _embed(self, texts: list[str]) -> np.ndarray:
        out = super()._embed(texts)
        self._loaded = True
        return out


def texts(n: int, tag: str = "") -> list[str]:
    return [f"text {tag} number {i} about item{i}" for i in range(n)]


def wait_for(cond, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.005)


def test_cancel_token_and_cancellable_progress():
    token = jobs.CancelToken()
    seen = []
    progress = jobs.cancellable(lambda d, t: seen.append((d, t)), token)
    progress(0, 10)
    token.check()
    assert not token.cancelled
    token.cancel()
    assert token.cancelled
    with pytest.raises(Cancelled):
        progress(5, 10)
    with pytest.raises(Cancelled):
        token.check()
    assert seen == [(0, 10)]
    assert issubclass(Cancelled, ExplorerError)  # the CLI and the app show it like any error
    jobs.cancellable(None, jobs.CancelToken())(1, 2)  # no callback to wrap: only the check


def test_stop_cancels_an_encode_midway_and_keeps_what_was_embedded():
    emb = SlowEmbedder(delay=0.05)
    batch = texts(6 * PROGRESS_STEP, "stop")
    token = jobs.CancelToken()
    calls = []

    def progress(done, total):
        calls.append(done)
        if done >= PROGRESS_STEP:
            token.cancel()  # the user presses Stop while the second step runs

    with pytest.raises(Cancelled):
        emb.encode(batch, progress=jobs.cancellable(progress, token))
    assert emb.stats.encoded == 2 * PROGRESS_STEP  # stopped mid-way: after 2 of 6 steps
    assert calls == [0, PROGRESS_STEP]
    # what was embedded before the stop is cached: the run resumes where it stopped
    emb.stats.reset()
    out = emb.encode(batch)
    assert out.shape == (len(batch), emb.dim)
    assert emb.stats.cached == 2 * PROGRESS_STEP
    assert emb.stats.encoded == 4 * PROGRESS_STEP
    assert np.array_equal(out, FakeEmbedder(emb.dim).encode(batch))  # same vectors as uninterrupted


def test_a_stopped_job_reports_stopped_and_its_vectors_stay_cached():
    emb = SlowEmbedder(delay=0.1)
    batch = texts(8 * PROGRESS_STEP, "job")
    job = jobs.submit(lambda j: emb.encode(batch, progress=j.progress), label="Indexing", embedder=emb)
    wait_for(lambda: job.status().done >= PROGRESS_STEP)
    s = job.status()
    assert s.phase == jobs.EMBEDDING and s.total == len(batch) and s.label == "Indexing"
    job.cancel()
    assert job.status().phase in (jobs.STOPPING, jobs.STOPPED)
    assert job.wait(10)
    s = job.status()
    assert s.phase == jobs.STOPPED and s.finished and job.result is None
    assert PROGRESS_STEP <= s.done < len(batch)
    assert emb.stats.encoded < len(batch)
    kept = emb.stats.encoded
    emb.stats.reset()
    emb.encode(batch)
    assert emb.stats.cached == kept and emb.stats.encoded == len(batch) - kept


def test_a_finished_job_reports_done_with_its_result():
    emb = FakeEmbedder()
    job = jobs.submit(lambda j: emb.encode(texts(300, "done"), progress=j.progress).shape, embedder=emb)
    assert job.wait(10)
    s = job.status()
    assert s.phase == jobs.DONE and s.fraction == 1.0 and s.summary == "done"
    assert job.result == (300, emb.dim)
    assert (s.done, s.total) == (300, 300)


def test_an_exception_becomes_failed_with_its_message():
    def boom(job):
        raise LoadError("handbook.pdf is encrypted")

    job = jobs.submit(boom, label="Loading")
    assert job.wait(10)
    s = job.status()
    assert s.phase == jobs.FAILED and s.error == "handbook.pdf is encrypted"
    assert s.summary == "failed: handbook.pdf is encrypted"

    def bug(job):
        raise KeyError("x")

    job = jobs.submit(bug)
    assert job.wait(10)
    assert job.status().phase == jobs.FAILED and job.status().error.startswith("KeyError")
    # the worker survives a failed job
    ok = jobs.submit(lambda j: 42)
    assert ok.wait(10) and ok.result == 42


def test_loading_model_is_reported_only_while_the_model_loads():
    emb = LazyEmbedder(delay=0.3)
    gate = threading.Event()
    phases = []

    def work(job):
        out = emb.encode(texts(3 * PROGRESS_STEP, "lazy"), progress=job.progress)
        gate.wait(10)
        return out

    job = jobs.submit(work, embedder=emb)
    wait_for(lambda: job.status().phase != jobs.RUNNING and job.status().phase != jobs.QUEUED)
    phases.append(job.status().phase)  # first batch: the model is loading
    wait_for(lambda: emb.loaded)
    wait_for(lambda: job.status().done >= PROGRESS_STEP)
    phases.append(job.status().phase)  # later batches: embedding, not "loading"
    gate.set()
    assert job.wait(10)
    assert phases == [jobs.LOADING, jobs.EMBEDDING]


def test_steps_name_what_runs_and_a_queued_job_can_be_stopped_before_it_starts():
    release = threading.Event()

    def long(job):
        job.step("sweep chunk_size=200")
        release.wait(10)
        job.step("sweep chunk_size=400")
        return "ok"

    first = jobs.submit(long, label="Sweep")
    wait_for(lambda: first.status().label == "sweep chunk_size=200")
    assert first.status().phase == jobs.RUNNING
    second = jobs.submit(lambda j: "never", label="Queued")
    assert second.status().phase == jobs.QUEUED and second.status().ahead == 1
    assert jobs.busy()
    second.cancel()
    assert second.finished and second.status().phase == jobs.STOPPED  # at once: it never started
    release.set()
    assert first.wait(10) and first.result == "ok"
    assert second.result is None


def test_inline_progress_refuses_real_work_but_allows_a_cached_or_tiny_call():
    emb = FakeEmbedder()
    batch = texts(50, "inline")
    with pytest.raises(jobs.WouldEmbed) as err:
        emb.encode(batch, progress=jobs.inline_progress(emb))
    assert err.value.total == 50 and emb.stats.encoded == 0  # refused before any model work
    emb.encode(batch)
    emb.encode(batch, progress=jobs.inline_progress(emb))  # all cached: no progress call at all
    emb.encode(["one new question"], progress=jobs.inline_progress(emb, max_texts=4))
    lazy = LazyEmbedder(delay=0)
    with pytest.raises(jobs.WouldEmbed):  # a model that still has to load: never inline
        lazy.encode(["one new question"], progress=jobs.inline_progress(lazy, max_texts=4))


def test_checkpoint_stops_a_job_inside_a_long_step():
    started = threading.Event()
    jobs.checkpoint()  # outside a job: nothing to check

    def work(job):
        started.set()
        for _ in range(1000):  # e.g. model batches inside one progress step
            jobs.checkpoint()
            time.sleep(0.01)
        return "finished"

    job = jobs.submit(work)
    assert started.wait(10)
    job.cancel()
    assert job.wait(2) and job.status().phase == jobs.STOPPED and job.result is None


class PerTextEmbedder(FakeEmbedder):
    """A fake whose model call looks at :func:`explorer.jobs.checkpoint` before each text, as
    the ONNX lanes do, and counts the texts it embedded."""

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.texts = 0
        self.started = threading.Event()

    def _embed(self, texts: list[str]) -> np.ndarray:
        for _ in texts:
            jobs.checkpoint()
            self.started.set()
            time.sleep(0.01)
            self.texts += 1
        return super()._embed(texts)


@pytest.mark.parametrize("at_step", [True, False])
def test_a_job_stopped_at_its_step_finishes_the_step_in_hand_into_the_cache(at_step):
    """The warm-up replaced by a question (``at_step``): the step in hand finishes and its
    vectors are cached (the question needs them); a Stop drops the rest of the step at once."""
    emb = PerTextEmbedder()
    batch = texts(3 * PROGRESS_STEP, f"step {at_step}")
    job = jobs.submit(lambda j: emb.encode(batch, progress=j.progress))
    assert emb.started.wait(10)
    job.cancel(at_step=at_step)
    assert job.wait(30) and job.status().phase == jobs.STOPPED
    embedded = emb.texts
    emb.stats.reset()
    emb.encode(batch)
    if at_step:
        assert embedded == emb.stats.cached == PROGRESS_STEP  # the first step finished and was kept
    else:
        assert emb.stats.cached == 0 and embedded < PROGRESS_STEP  # stopped inside it


def test_the_time_left_counts_down_between_progress_reports(monkeypatch):
    """The estimate is the rate up to the last report, less the time since it: it falls while
    a step runs (measured to now, it rose every second until the next step landed: 22 s, 24 s,
    ... 41 s, then 10 s, as a user saw on Retrieve)."""
    clock = [100.0]
    monkeypatch.setattr(jobs.time, "monotonic", lambda: clock[0])
    job = jobs.Job(lambda j: None, label="embed")
    job.progress(0, 100)
    clock[0] = 101.0
    job.progress(10, 100)  # 10 texts a second
    etas = []
    for t in (101.0, 102.0, 103.0, 106.0, 120.0):
        clock[0] = t
        etas.append(job.status().eta)
    assert etas == [9.0, 8.0, 7.0, 4.0, 1.0]  # never below "about 1 s" while texts are left
