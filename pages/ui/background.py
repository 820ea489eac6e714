"""Background work: one job per session (:mod:`explorer.jobs`), its status at the top of the page, Stop.

Work that embeds runs off the script thread: it is tried on the script thread first and handed
to the session's job only when it would really embed. Pages that need vectors show the job at
the top (status line, progress bar, Stop). ``CHUNK_EXPLORER_JOB_WAIT=SECONDS`` is how long a
page waits for a job it started before it shows the status bar (default 0.3).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

import streamlit as st

from explorer import jobs
from explorer.errors import ExplorerError
from explorer.text.wording import plural
from pages.ui.safe import err_text, md, safe_error
from pages.ui.state import W, session

JOB_WAIT_ENV = "CHUNK_EXPLORER_JOB_WAIT"
#: Seconds between two looks at a running job (only the status bar reruns) ...
POLL_S = 0.5
#: ... or, when the page is drawn after the job's first FAST_POLL_FOR_S seconds or while it has
#: more than SLOW_POLL_TEXTS texts left to embed: each look is a script run on the server and a
#: repaint in the browser, and looking twice a second all along slowed the job's own embedding
#: (2 cores, bench_first_answer.py: the first configuration's hits 20–23 s with half-second
#: looks, 16.5 s with 2-second ones). The pace is set when the whole page is drawn (a job's
#: partial results and its end redraw it), never by a rerun of its own that could swallow a click.
SLOW_POLL_S = 1.0
FAST_POLL_FOR_S = 2.0
SLOW_POLL_TEXTS = 64
#: ... and when other visitors' jobs are queued too: eight sessions looking twice a second
#: starved the web server (bench/bench_load.py). A job that was stopped but finishes its step
#: does not count: the warm-up a question replaced set this pace for the question's whole
#: search, its first results shown up to 2 s late.
BUSY_POLL_S = 2.0
#: Texts a page may embed on its own thread (a question) when the model is loaded and idle.
INLINE_TEXTS = 16
#: Jobs started by a button (their stopped or failed state stays on the page until dismissed).
EXPLICIT_KINDS = ("eval", "sweep", "batch", "cohesion")
#: Jobs for one document, keyed ``(kind, doc.id, ...)``: the chunks of an embedding strategy, the curve.
_DOCUMENT_KINDS = ("chunk", "curve")
#: Kinds a page asks for once per run (Retrieve's search, Semantic's curve): a running job of one
#: of them for another key is what the page showed before the user changed a setting back or on.
_ONE_PER_PAGE = ("search", "curve")
_RUN = threading.local()  # this script run's slot at the top of the page, and what was drawn in it


def open_job_slot() -> None:
    """Keep a place at the top of the page (under its title) for the job's status bar."""
    _RUN.top = st.container()
    _RUN.bar = _RUN.polling = False


def _job_wait() -> float:
    """Seconds a page waits for a job it has just started before it shows the status bar (a
    question on a loaded model is answered within it: no flicker). Tests raise it."""
    try:
        return max(0.0, float(os.environ.get(JOB_WAIT_ENV, "") or 0.3))
    except ValueError:
        return 0.3


def session_job() -> jobs.Job | None:
    """This session's background job (running or the last one), if any."""
    return session.job


class _Inline:
    """What a job's work gets when it is first tried on the script thread: a progress callback
    that raises :class:`explorer.jobs.WouldEmbed` before any real model work."""

    def __init__(self, emb: Any) -> None:
        self.progress = jobs.inline_progress(emb, INLINE_TEXTS)
        self.partial: Any = None

    def step(self, label: str) -> None:
        pass


def submit(
    kind: str, key: Any, title: str, work: Callable, emb: Any, *, replace: bool, partial: Any = None
) -> jobs.Job | None:
    """Make ``work`` the session's job, holding ``partial`` until it publishes its own. A running
    job of the session is stopped first if ``replace`` (the user asked for this one) or if it is
    only the warm-up; otherwise this waits (None) and the bar shows the running one."""
    old = session_job()
    if old is not None and not old.finished:
        if old.key == key:
            return old
        if not replace and old.kind != "warm":
            return None
        # the warm-up embeds what the new job needs too: its step in hand finishes into the cache
        # (and it starts again after this job: pages.ui.compute.warm)
        old.handed_over = True
        old.cancel(at_step=old.kind == "warm")
    elif old is not None and old.kind in EXPLICIT_KINDS and not getattr(old, "taken", False):
        session.unclaimed[old.kind] = old  # its page has not shown it yet: keep it
    try:
        job = jobs.submit(_safe_work(work), label=title, key=key, kind=kind, embedder=emb, partial=partial)
    except ExplorerError as err:  # too many jobs queued on this server
        st.toast(str(err), icon=":material/hourglass_disabled:")
        return None
    session.job = job
    return job


def drop_other_documents_jobs(doc_id: str) -> None:
    """The user picked document ``doc_id``: a running chunking or curve job for another document
    is wanted by no page now, so it stops (what it embedded stays cached) and the new document's
    work does not wait behind it. Dismissed, so no bar offers to resume it."""
    job = session_job()
    if job is not None and not job.finished and job.kind in _DOCUMENT_KINDS and job.key[1] != doc_id:
        job.dismissed = job.dropped = True  # no bar offers it; asked for again, it starts afresh
        job.cancel()


def _safe_work(work: Callable) -> Callable:
    """``work`` whose errors never show a server path (see :func:`pages.ui.safe.err_text`)."""
    if getattr(work, "_safe", False):
        return work

    def safe(job: Any) -> Any:
        try:
            return work(job)
        except ExplorerError as err:
            raise safe_error(err) from None

    safe._safe = True  # type: ignore[attr-defined]
    return safe


def _after_submit(job: jobs.Job | None) -> None:
    """Wait a moment for a job just started; if the status bar is already drawn without
    polling, rerun so that it follows the new job."""
    if job is None:
        return
    job.wait(_job_wait())
    if getattr(_RUN, "bar", False) and not getattr(_RUN, "polling", False) and not job.finished:
        st.rerun()


def background(
    kind: str, key: Any, title: str, work: Callable, *, emb: Any, replace: bool = False
) -> tuple[str, Any]:
    """The result of ``work(job)`` for ``key``, without blocking the page on embedding.

    ``work`` is first tried here (its ``job.progress`` raises before any real model work);
    if it would embed, it becomes the session's background job, starting from what the try
    published in ``job.partial`` (shown at once, even while the job waits its turn), and the
    status bar shows at the top of the page. Returns ``(jobs.DONE, result)``, or ``(phase, job.partial)`` while the job
    waits or runs, or after it stopped or failed (the bar says which; a stopped job is not
    restarted until the user resumes it). A running job of a kind a page asks for once per run
    (:data:`_ONE_PER_PAGE`) for another key is stopped when this key's result is made here, and
    replaced when this key needs a job of its own. ``work`` runs on another thread: it must not touch
    ``st`` or session state (capture what it needs, e.g. with :func:`pages.ui.model.context_maker`).
    """
    job = session_job()
    if job is None or job.key != key or (job.finished and getattr(job, "dropped", False)):
        inline = _Inline(emb)
        superseded = job is not None and not job.finished and job.kind == kind and kind in _ONE_PER_PAGE
        try:
            out = work(inline)
        except jobs.WouldEmbed:
            pass
        except ExplorerError as err:
            raise safe_error(err) from None
        else:
            if superseded:  # the page shows this key now: the other one is wanted by no page
                job.dismissed = job.dropped = True
                job.cancel()
            return jobs.DONE, out
        job = submit(kind, key, title, work, emb, replace=replace or superseded, partial=inline.partial)
        _after_submit(job)
    if job is not None and job.key == key and job.status().phase == jobs.DONE:
        return jobs.DONE, job.result
    job_bar(show_finished=True)
    if job is not None and job.key == key:
        return _reading(job)  # it may have ended while the bar was drawn
    return jobs.QUEUED, None


def _reading(job: jobs.Job) -> tuple[str, Any]:
    """The job's phase and the value that goes with it, from one look at its phase: a finished
    job's result, else what it published so far (it may finish between two looks)."""
    phase = job.status().phase
    return phase, job.result if phase == jobs.DONE else job.partial


def start_job(
    kind: str, key: Any, title: str, work: Callable, *, emb: Any, link: dict[str, str] | None = None,
    inputs: dict[str, Any] | None = None,
) -> None:  # fmt: skip
    """Start ``work(job)`` in the background at the user's request (a button): it replaces the
    session's running job. Its result comes from :func:`job_result`. ``link``: the query
    parameters that name its result, kept in the address while it runs (a reload then runs it
    again, rather than forget it). ``inputs``: what it computes on, by name, so that a stopped
    job is not resumed on settings the page no longer has (:func:`job_bar`'s ``now``)."""
    job = session_job()
    if job is not None and job.key == key and not job.finished:
        return
    job = submit(kind, key, title, work, emb, replace=True)
    if job is not None:
        job.link = dict(link or {})
        job.inputs = inputs
    _after_submit(job)


def changed_inputs(then: dict[str, Any] | None, now: dict[str, Any] | None) -> str:
    """The names of what differs between two ``inputs`` ("top k", "top k and retriever"); ""
    when nothing does or either is unknown."""
    if then is None or now is None:
        return ""
    changed = [name for name, value in now.items() if then.get(name) != value]
    return " and ".join([", ".join(changed[:-1]), changed[-1]]) if len(changed) > 1 else "".join(changed)


def job_result(kind: str) -> tuple[str, Any]:
    """Once, when the session's job of ``kind`` has finished: ``("done", result)``, or
    ``("stopped", what it finished)`` / ``("failed", None)``. Else ``("", None)``."""
    job = session_job()
    if job is None or job.kind != kind or not job.finished or getattr(job, "taken", False):
        job = session.unclaimed.pop(kind, None)  # finished before another job replaced it
        if job is None or getattr(job, "taken", False):
            return "", None
    job.taken = True
    return _reading(job)


def running(kind: str) -> str:
    """The phase of the session's job of ``kind`` while it runs, else "" (a page says so beside
    the button that started it: the bar at the top may be scrolled out of sight)."""
    job = session_job()
    if job is None or job.kind != kind or job.finished:
        return ""
    return job.status().phase


def waiting(phase: str, what: str) -> None:
    """Where a page's results will be, while its background job runs or after it stopped."""
    if phase == jobs.FAILED:
        return  # the bar at the top shows the message
    if phase == jobs.STOPPED:
        st.info(
            f"Stopped: {what} will show here when you resume (at the top of the page).",
            icon=":material/pause_circle:",
        )
    else:
        st.info(
            f"{what} will show here when the embedding at the top of the page is done.",
            icon=":material/hourglass_top:",
        )


# -- the status bar -------------------------------------------------------------------------
def job_bar(show_finished: bool = False, now: dict[str, dict[str, Any]] | None = None) -> None:
    """Draw the session's job at the top of the page (once per run): a status line, a progress
    bar and Stop while it runs, polled every ``POLL_S`` s without rerunning the page; a full
    rerun when it ends, so the page shows what it made. A stopped or failed job shows with
    Resume when ``show_finished`` (the page needs its result) or it was started by a button;
    ``now``, by job kind, the page's inputs: a stopped job whose inputs differ is not offered
    to resume (its results would be out of date as they came)."""
    _RUN.now = now or {}
    if getattr(_RUN, "bar", True):
        return  # drawn already in this run, or no page header (no slot)
    _RUN.bar = True
    job = session_job()
    _RUN.polling = job is not None and not job.finished
    with _RUN.top:
        every = _poll_every(job) if _RUN.polling else None
        st.fragment(run_every=every)(_job_bar_body)(show_finished)


def published(partial: Any) -> tuple:
    """What a job has published so far, to tell when the page must show more: the keys of its
    ``partial`` (the configurations answered, beside the keyword stand-ins). Their count alone
    missed a change: a search starting from the page's stand-ins held two keys, and still two
    once its first configuration answered (so its hits waited for the last one)."""
    return tuple(partial) if isinstance(partial, dict) else ()


def _poll_every(job: jobs.Job) -> float:
    """Seconds between two looks at the running ``job``: often while it is young and has little
    left to embed, then less."""
    if jobs.active() > 1:
        return BUSY_POLL_S
    s = job.status()
    if s.phase == jobs.QUEUED:  # behind a job that finishes its step first: seconds at least
        return SLOW_POLL_S
    if s.elapsed >= FAST_POLL_FOR_S or (s.phase == jobs.EMBEDDING and s.total - s.done > SLOW_POLL_TEXTS):
        return SLOW_POLL_S
    return POLL_S


def _in_fragment_rerun() -> bool:
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return bool(ctx is not None and getattr(ctx, "fragment_ids_this_run", None))


def _job_bar_body(show_finished: bool) -> None:
    job = session_job()
    if job is None:
        return
    s = job.status()
    if s.finished:
        if session.bar_live == id(job):
            session.bar_live = None
            if _in_fragment_rerun():
                st.rerun()  # the whole page: it shows what the job made
        if s.phase == jobs.DONE or getattr(job, "dismissed", False):
            return
        if show_finished or job.kind in EXPLICIT_KINDS:
            _finished_bar(job, s, changed_inputs(getattr(job, "inputs", None), getattr(_RUN, "now", {}).get(job.kind)))
        return
    session.bar_live = id(job)
    done = published(job.partial)
    if done != session.bar_partial:
        session.bar_partial = done
        if done and _in_fragment_rerun():
            st.rerun()  # the whole page: results stream in as each configuration is ready
    with st.container(border=True, key=W.JOB_BAR):
        left, right = st.columns([0.85, 0.15], vertical_alignment="center")
        left.progress(s.fraction, text=status_line(job.title, s))
        right.button(
            "Stop",
            icon=":material/stop_circle:",
            key=W.JOB_STOP,
            on_click=job.cancel,
            disabled=s.phase == jobs.STOPPING,
            width="stretch",
            help="Stops after the batch being embedded; what was embedded up to the last step (a few "
            "seconds of work) stays in the cache, so running it again starts where it stopped.",
        )


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{max(1, round(seconds))} s"
    return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"


def status_line(title: str, s: jobs.JobStatus) -> str:
    """One line for a running job: what, which step, and where it is."""
    step = f" · {md(s.label)}" if s.label and s.label != title else ""
    if s.phase == jobs.QUEUED:
        n = s.ahead
        tail = f"waiting for {plural(n, 'other job')} on this server to finish"
    elif s.phase == jobs.LOADING:
        tail = "loading the model…"
    elif s.phase == jobs.EMBEDDING:
        # a job of several steps knows the pace of the step in hand only, and says so
        this = " in this step" if step else ""
        left = f" · about {_duration(s.eta)} left{this}" if s.eta is not None and s.done < s.total else ""
        tail = f"{s.done:,} / {s.total:,} texts embedded{left}"
    elif s.phase == jobs.STOPPING:
        tail = "stopping after the current batch…"
    else:
        tail = "chunking and checking the cache…"
    return f"**{md(title)}**{step} — {tail}"


def _finished_bar(job: jobs.Job, s: jobs.JobStatus, changed: str = "") -> None:
    """A stopped or failed job with Resume (Retry) and Dismiss; a stopped one whose inputs the
    page has ``changed`` since says so instead of offering Resume."""
    with st.container(border=True, key=W.JOB_BAR):
        left, mid, right = st.columns([0.7, 0.15, 0.15], vertical_alignment="center")
        label = ""
        if s.phase == jobs.STOPPED:
            at = f", at {md(s.label)}" if s.label and s.label != job.title else ""
            texts = f", {s.done:,} of its {s.total:,} texts embedded" if 0 < s.done < s.total else ""
            tail = (
                f"The {md(changed)} changed since: run it again for the current ones (what was embedded "
                "is kept)." if changed else "What was embedded is kept: Resume goes on from there."
            )  # fmt: skip
            left.markdown(f":material/pause_circle: Stopped: **{md(job.title)}**{at}{texts}. {tail}")
            label, icon = ("", "") if changed else ("Resume", ":material/play_arrow:")
        else:
            left.error(f"**{md(job.title)}** failed: {md(err_text(s.error))}", icon=":material/error:")
            label, icon = "Retry", ":material/replay:"
        if label and mid.button(label, icon=icon, key=W.JOB_RESUME, width="stretch"):
            again = submit(job.kind, job.key, job.title, job.work, job.embedder, replace=True)
            if again is not None:
                again.link = dict(job.link)  # the address names it while it runs
            st.rerun()
        if job.kind in EXPLICIT_KINDS and right.button(
            "Dismiss", icon=":material/close:", key=W.JOB_DISMISS, width="stretch"
        ):
            job.dismissed = True
            st.rerun()
