"""Model batches on lanes (explorer/embedding/lanes.py): every batch runs once, lanes run side
by side, an error or a Stop in any lane reaches the caller; embedding steps bounded in size."""

from __future__ import annotations

import threading
import time

import pytest

from explorer import jobs
from explorer.embedding import base
from explorer.embedding.lanes import run_lanes
from explorer.errors import Cancelled


def test_every_item_runs_once_on_lanes_side_by_side():
    running, most, lock = set(), [0], threading.Lock()

    def work(lane: int, item: int) -> tuple[int, int]:
        with lock:
            running.add(lane)
            most[0] = max(most[0], len(running))
        time.sleep(0.02)
        with lock:
            running.discard(lane)
        return lane, item * item

    out = run_lanes(iter(range(20)), work, 3)
    assert sorted(item for item, _ in out) == list(range(20))
    assert all(sq == item * item for item, (_, sq) in out)
    assert {lane for _, (lane, _) in out} == {0, 1, 2}
    assert most[0] == 3  # side by side, never more lanes than asked
    assert run_lanes([], work, 3) == []
    assert [lane for _, (lane, _) in run_lanes([1, 2, 3], work, 1)] == [0, 0, 0]  # the caller alone


def test_an_error_in_a_helper_lane_reaches_the_caller_and_stops_the_others():
    seen = []

    def work(lane: int, item: int) -> int:
        seen.append(item)
        if item == 3:
            raise ValueError("bad batch 3")
        time.sleep(0.01)
        return item

    with pytest.raises(ValueError, match="bad batch 3"):
        run_lanes(range(100), work, 2)
    assert len(seen) < 100


def test_stop_reaches_every_lane_of_the_job():
    started = threading.Event()
    lanes_seen = set()

    def work(lane: int, item: int) -> int:
        lanes_seen.add(lane)
        started.set()
        time.sleep(0.02)
        return item

    job = jobs.submit(lambda j: run_lanes(range(10_000), work, 2), label="lanes")
    assert started.wait(10)
    time.sleep(0.1)
    job.cancel()
    assert job.wait(10)
    assert job.status().phase == jobs.STOPPED and job.result is None
    assert lanes_seen == {0, 1}
    assert jobs.current_job() is None  # nothing leaks onto this thread
    with pytest.raises(Cancelled):  # a helper thread that adopted a stopped job sees it stop
        token_job = jobs.Job(lambda j: None)
        token_job.token.cancel()
        jobs.adopt(token_job)
        try:
            jobs.checkpoint()
        finally:
            jobs.adopt(None)


def test_embedding_steps_are_bounded_by_texts_and_characters(monkeypatch):
    monkeypatch.setattr(base, "PROGRESS_CHARS", 100)
    monkeypatch.setattr(base, "FIRST_STEP_CHARS", 100)
    todo = [(b"%d" % i, "x" * n) for i, n in enumerate([30, 30, 30, 30, 150, 10])]
    steps = [[len(t) for _, t in part] for part in base._steps(todo)]
    assert steps == [[30, 30, 30], [30], [150], [10]]  # a longer text is a step alone
    # the first step is shorter, so that the progress bar moves early
    monkeypatch.setattr(base, "FIRST_STEP_CHARS", 40)
    assert [[len(t) for _, t in part] for part in base._steps(todo)] == [[30], [30, 30, 30], [150], [10]]
    monkeypatch.setattr(base, "FIRST_STEP_CHARS", 100)
    monkeypatch.setattr(base, "PROGRESS_STEP", 2)
    assert [len(p) for p in base._steps(todo)] == [2, 2, 1, 1]
    assert list(base._steps([])) == []
