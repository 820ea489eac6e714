"""A stop flag one thread sets and another checks, and a progress callback behind it.

Kept apart from :mod:`explorer.jobs` (the runner and its jobs) so that the core's loops can
stop on it without the runner; ``jobs.CancelToken`` and ``jobs.cancellable`` are these.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from explorer.errors import Cancelled

Progress = Callable[[int, int], Any]


class CancelToken:
    """A flag one thread sets (:meth:`cancel`) and another checks (:meth:`check`)."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._now = threading.Event()  # also inside a step (see cancel)

    def cancel(self, at_step: bool = False) -> None:
        """Stop at the next progress step; unless ``at_step``, at the next :func:`checkpoint`
        inside a step too. ``at_step`` lets the step in hand finish, so its vectors reach the
        cache: what a job that replaces this one then finds there instead of embedding it again."""
        if not at_step:
            self._now.set()
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        """Raise :class:`Cancelled` if :meth:`cancel` was called."""
        if self._event.is_set():
            raise Cancelled("stopped")

    def check_within_step(self) -> None:
        """Raise :class:`Cancelled` if :meth:`cancel` was called without ``at_step``."""
        if self._now.is_set():
            raise Cancelled("stopped")

    def sleep(self, seconds: float) -> None:
        """Wait ``seconds``, or raise :class:`Cancelled` as soon as the token is cancelled."""
        if self._event.wait(seconds):
            raise Cancelled("stopped")


def cancellable(progress: Progress | None, token: CancelToken) -> Progress:
    """``progress`` (may be None) behind a check of ``token``: once it is cancelled, the next
    ``progress(done, total)`` call raises :class:`Cancelled` instead of reporting."""

    def wrapped(done: int, total: int) -> Any:
        token.check()
        return progress(done, total) if progress is not None else None

    return wrapped
