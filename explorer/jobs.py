"""Work that does not block: a stop flag the embedder sees, and a small background runner.

- :class:`CancelToken` (in :mod:`explorer.cancel`) is a thread-safe flag. :func:`cancellable` wraps a ``progress(done,
  total)`` callback so that it raises :class:`~explorer.errors.Cancelled` once the token is set.
  The embedder calls progress before its first model call and after every step of texts
  (``PROGRESS_STEP`` texts or ``PROGRESS_CHARS`` characters, :mod:`explorer.embedding.base`),
  each time after that step's vectors are in the cache: a stopped run keeps them, and running
  it again resumes where it stopped.
- :func:`submit` runs a :class:`Job` on a process-wide worker (``MAX_WORKERS`` daemon thread at
  a lowered CPU priority, so a page another visitor opens is served first), with at most
  ``MAX_WAITING`` jobs queued. Its :meth:`Job.status` can be read from any thread: phase
  (``queued``, ``loading model``, ``embedding``, ``running``, ``stopping``, then ``done``,
  ``stopped`` or ``failed``), texts done and total, the current step's label, time left.
- :func:`inline_progress` lets a caller try work on its own thread first and hand it to a job only
  when it would really embed (:class:`WouldEmbed`): a fully cached page never waits for a worker.
- :func:`checkpoint` raises Cancelled when the job running on the calling thread was stopped: a loop
  inside a long step (model batches within one progress step) can call it to stop sooner.

Nothing here imports streamlit; the app (``pages/ui/background.py``) keeps one job per session.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from explorer.cancel import CancelToken, Progress, cancellable  # noqa: F401 (jobs.cancellable, as before)
from explorer.errors import Cancelled, ExplorerError, LimitError

#: Background jobs that run at once in this process (embedding uses every core anyway).
MAX_WORKERS = 1
#: Jobs that may wait for the worker; past this, :func:`submit` raises LimitError.
MAX_WAITING = 32
#: Added to the worker thread's nice value: page scripts get the CPU first.
WORKER_NICENESS = 5

#: Phases of a job. ``loading model`` is reported only while the embedder's model is not loaded.
QUEUED, LOADING, EMBEDDING, RUNNING, STOPPING = "queued", "loading model", "embedding", "running", "stopping"
DONE, STOPPED, FAILED = "done", "stopped", "failed"
FINISHED = (DONE, STOPPED, FAILED)

log = logging.getLogger(__name__)
_current = threading.local()  # the job running on this thread (see checkpoint)


def model_loaded(embedder: Any) -> bool:
    """Whether ``embedder`` has its model in memory (one without ``loaded``, the fake, counts as loaded)."""
    return embedder is None or bool(getattr(embedder, "loaded", True))


@dataclass(frozen=True, slots=True)
class JobStatus:
    """A snapshot of a job, safe to read from any thread."""

    phase: str
    label: str = ""
    done: int = 0
    total: int = 0
    error: str = ""
    #: Jobs that run before this one starts (the running one included); 0 once it runs.
    ahead: int = 0
    #: Seconds left in the current embedding step, when the rate is known: the rate up to the last
    #: report, less the time since it (measured to now, it rose until the next report came).
    eta: float | None = None
    elapsed: float = 0.0

    @property
    def finished(self) -> bool:
        return self.phase in FINISHED

    @property
    def fraction(self) -> float:
        if self.phase == DONE:
            return 1.0
        return min(self.done / self.total, 1.0) if self.total else 0.0

    @property
    def summary(self) -> str:
        """``failed: <message>`` for a failed job, else the phase."""
        return f"{FAILED}: {self.error}" if self.phase == FAILED else self.phase


class Job:
    """One piece of work for the background worker. ``work(job)`` runs there and may use
    :meth:`progress` as the core's progress callback and :meth:`step` to name what it does;
    both raise :class:`Cancelled` once :meth:`cancel` was called. Its return value becomes
    :attr:`result`; it may leave what it finished so far in :attr:`partial`."""

    def __init__(
        self,
        work: Callable[[Job], Any],
        *,
        label: str = "",
        key: Any = None,
        kind: str = "",
        embedder: Any = None,
    ) -> None:
        self.work = work
        self.title = label  # what the job is; the status's label names the step that runs
        self.key = key
        self.kind = kind
        self.embedder = embedder
        self.token = CancelToken()
        self.result: Any = None
        self.partial: Any = None
        self.link: dict[str, str] = {}  # what the caller names the result by (the app: its address)
        self._lock = threading.Lock()
        self._finished = threading.Event()
        self._phase = QUEUED
        self._label = label
        self._done = 0
        self._total = 0
        self._error = ""
        self._submitted = time.monotonic()
        self._started: float | None = None
        self._ended: float | None = None
        self._rate_base: tuple[float, int] | None = None  # (time, done) the rate is measured from
        self._rate_after_load = False
        self._last_report = 0.0  # when progress last moved: the estimate counts down from there

    # -- called by the work, on the worker -----------------------------------------------
    def progress(self, done: int, total: int) -> None:
        """The core's ``progress(done, total)``: records it, or raises Cancelled."""
        self.token.check()
        now = time.monotonic()
        with self._lock:
            if done == 0 or total != self._total or done < self._done:  # a new embedding step
                self._rate_base = (now, done)
                self._rate_after_load = not model_loaded(self.embedder)
            elif self._rate_after_load and done > 0:  # the model loaded during the first batch
                self._rate_base, self._rate_after_load = (now, done), False
            self._done, self._total, self._last_report = done, total, now
            self._phase = EMBEDDING

    def step(self, label: str) -> None:
        """Name the step that starts now (``on_step`` in :mod:`explorer.evaluation.evaluate`)."""
        self.token.check()
        with self._lock:
            self._label = label
            self._done = self._total = 0
            self._rate_base = None
            self._phase = RUNNING

    # -- called from anywhere -------------------------------------------------------------
    def cancel(self, at_step: bool = False) -> None:
        """Ask the job to stop: at its next progress step if it runs (within the step in hand
        too unless ``at_step``: :meth:`CancelToken.cancel`), before it starts if queued."""
        self.token.cancel(at_step)
        if _RUNNER.withdraw(self):
            self._finish(STOPPED)

    @property
    def finished(self) -> bool:
        return self._finished.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job finished (True) or ``timeout`` seconds passed (False)."""
        return self._finished.wait(timeout)

    def status(self) -> JobStatus:
        now = time.monotonic()
        with self._lock:
            phase, done, total, label, error = self._phase, self._done, self._total, self._label, self._error
            base, last = self._rate_base, self._last_report
            started, ended = self._started, self._ended
        if phase not in FINISHED:
            if self.token.cancelled:
                phase = STOPPING
            elif phase == EMBEDDING and not model_loaded(self.embedder):
                phase = LOADING
        eta = None
        if phase == EMBEDDING and base is not None and done > base[1] and last > base[0]:
            eta = max(1.0, (total - done) * (last - base[0]) / (done - base[1]) - (now - last))
        ahead = _RUNNER.ahead(self) if phase == QUEUED else 0
        elapsed = ((ended or now) - started) if started is not None else 0.0
        return JobStatus(phase, label, done, total, error, ahead, eta, elapsed)

    # -- the worker -----------------------------------------------------------------------
    def _run(self) -> None:
        if self.token.cancelled:
            self._finish(STOPPED)
            return
        with self._lock:
            self._started = time.monotonic()
            self._phase = RUNNING
        adopt(self)
        try:
            self.result = self.work(self)
        except Cancelled:
            self._finish(STOPPED)
        except Exception as err:
            if not isinstance(err, ExplorerError):
                log.exception("background job %r failed", self._label)
            self._finish(
                FAILED, str(err) if isinstance(err, ExplorerError) else f"{type(err).__name__}: {err}"
            )
        else:
            self._finish(DONE)
        finally:
            adopt(None)

    def _finish(self, phase: str, error: str = "") -> None:
        with self._lock:
            if self._finished.is_set():
                return
            self._phase, self._error = phase, error
            self._ended = time.monotonic()
        self._finished.set()

    def __repr__(self) -> str:
        s = self.status()
        return f"<Job {self.kind or self._label!r} {s.summary} {s.done}/{s.total}>"


class _Runner:
    """A queue and ``MAX_WORKERS`` daemon threads (started on the first job; daemon, so a job
    never holds up the process when it exits)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: queue.Queue[Job] = queue.Queue()
        self._waiting: list[Job] = []
        self._running: list[Job] = []
        self._threads: list[threading.Thread] = []

    def submit(self, job: Job) -> None:
        with self._lock:
            if sum(not j.token.cancelled for j in self._waiting) >= MAX_WAITING:
                raise LimitError(
                    f"{MAX_WAITING} background jobs are already waiting on this server: try again in a moment"
                )
            self._waiting.append(job)
            while len(self._threads) < MAX_WORKERS:
                t = threading.Thread(
                    target=self._loop, name=f"explorer-job-{len(self._threads)}", daemon=True
                )
                self._threads.append(t)
                t.start()
        self._queue.put(job)

    def withdraw(self, job: Job) -> bool:
        """Take a job that has not started out of the queue (True), or leave it (False)."""
        with self._lock:
            if job in self._waiting:
                self._waiting.remove(job)
                return True
        return False

    def ahead(self, job: Job) -> int:
        with self._lock:
            if job not in self._waiting:
                return 0
            before = self._waiting[: self._waiting.index(job)]
            return len(self._running) + sum(not j.token.cancelled for j in before)

    def busy(self) -> bool:
        return self.load() > 0

    def load(self) -> int:
        with self._lock:
            return len(self._running) + sum(not j.token.cancelled for j in self._waiting)

    def active(self) -> int:
        with self._lock:
            return sum(not j.token.cancelled for j in (*self._running, *self._waiting))

    def _loop(self) -> None:
        _lower_priority()
        while True:
            job = self._queue.get()
            with self._lock:
                if job not in self._waiting:  # withdrawn (cancelled before it started)
                    continue
                self._waiting.remove(job)
                self._running.append(job)
            try:
                job._run()
            finally:
                with self._lock:
                    self._running.remove(job)


def _lower_priority() -> None:
    """Raise this thread's nice value (Linux: per thread), so scripts that render pages win
    the CPU over background embedding; torch's worker threads inherit it."""
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, os.getpriority(os.PRIO_PROCESS, tid) + WORKER_NICENESS)
    except (AttributeError, OSError):  # not Linux, or not allowed: run at normal priority
        pass


_RUNNER = _Runner()


def submit(
    work: Callable[[Job], Any],
    *,
    label: str = "",
    key: Any = None,
    kind: str = "",
    embedder: Any = None,
    partial: Any = None,
) -> Job:
    """Queue ``work(job)`` for the background worker and return its :class:`Job` at once.

    ``embedder`` lets the status say ``loading model`` while its model loads; ``partial``: what the
    job holds before it starts (a try on the caller's thread made it). LimitError: queue full."""
    job = Job(work, label=label, key=key, kind=kind, embedder=embedder)
    job.partial = partial
    _RUNNER.submit(job)
    return job


def checkpoint() -> None:
    """Raise :class:`Cancelled` if the job running on this thread was stopped (a no-op outside
    jobs). For loops inside one progress step, e.g. between model batches."""
    job = current_job()
    if job is not None:
        job.token.check_within_step()


def current_job() -> Job | None:
    """The job running on this thread (None outside jobs)."""
    return getattr(_current, "job", None)


def adopt(job: Job | None) -> None:
    """Make ``job`` the job of this thread (the worker running it, or a helper thread it
    started), so that :func:`checkpoint` stops it too; None lets it go."""
    _current.job = job


def busy() -> bool:
    """Whether a background job is running or waiting in this process."""
    return _RUNNER.busy()


def load() -> int:
    """Background jobs running or waiting in this process (all sessions)."""
    return _RUNNER.load()


def active() -> int:
    """Background jobs running or waiting that nobody stopped: a job replaced at the end of
    its step runs on for seconds, but no page waits for it."""
    return _RUNNER.active()


class WouldEmbed(Exception):
    """Raised by an :func:`inline_progress` callback: the call is about to embed more than the
    caller allows on its own thread. Not an ExplorerError, so no error handler swallows it."""

    def __init__(self, total: int) -> None:
        super().__init__(f"would embed {total:,} texts")
        self.total = total


def inline_progress(embedder: Any = None, max_texts: int = 0) -> Progress:
    """A progress callback for trying work on the calling thread first: it raises
    :class:`WouldEmbed` at the start of an embedding step (``progress(0, total)``, called before
    any model work) unless the step is at most ``max_texts`` texts, the model is loaded and no
    background job is using it. Work that finds everything in the cache never calls progress."""

    def progress(done: int, total: int) -> None:
        if done == 0 and (total > max_texts or not model_loaded(embedder) or busy()):
            raise WouldEmbed(total)

    return progress
