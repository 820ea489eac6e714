"""Model batches run side by side, one single-threaded lane each, instead of one batch at a time
over every core.

Why: a model session that spreads each batch over all cores waits for its slowest thread after
every operator. On a shared 2-core server something else always wants a core (the page scripts,
another visitor, the benchmark's browser), so whenever one thread is put aside both wait. Lanes
that each run whole batches on one thread lose only the core that is taken. Measured with e5 int8
ONNX on 2 cores (176 French 1,000-character chunks): alone 5.1–5.3 s in two lanes against
5.3–7.5 s in one two-thread session; beside a process taking a third of a core, 6.5–6.9 s
against 8.1–8.8 s.

The lanes are threads started by the calling thread (so they inherit its CPU priority: a
background job's lanes stay behind page scripts) and joined before :func:`run_lanes` returns. The
calling thread is lane 0. Every lane stops at the next batch when the calling thread's job is
stopped (:func:`explorer.jobs.checkpoint`), and the first error of any lane is raised.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import TypeVar

from explorer import jobs

_Item = TypeVar("_Item")
_Out = TypeVar("_Out")


def run_lanes(
    items: Iterable[_Item], work: Callable[[int, _Item], _Out], lanes: int
) -> list[tuple[_Item, _Out]]:
    """``(item, work(lane, item))`` for every item, in the order they finished; ``lane`` (0 to
    ``lanes - 1``) says which of the caller's per-lane resources (a model session) to use.
    ``items`` is read by one lane at a time (a generator may be given)."""
    source = iter(items)
    pull = threading.Lock()
    done: list[tuple[_Item, _Out]] = []
    failed: list[BaseException] = []
    job = jobs.current_job()

    def lane(n: int) -> None:
        if n:
            jobs.adopt(job)  # Stop reaches this helper thread too
        try:
            while not failed:
                jobs.checkpoint()
                with pull:
                    item = next(source, _END)
                if item is _END:
                    return
                done.append((item, work(n, item)))  # type: ignore[arg-type]
        except BaseException as err:  # handed to the calling thread
            failed.append(err)
        finally:
            if n:
                jobs.adopt(None)

    helpers = [threading.Thread(target=lane, args=(n,), daemon=True) for n in range(1, max(1, lanes))]
    for t in helpers:
        t.start()
    lane(0)
    for t in helpers:
        t.join()
    if failed:
        raise failed[0]
    return done


_END = object()
