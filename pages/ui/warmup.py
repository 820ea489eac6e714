"""The server's start-up warm-up (``serve.py``) and the first script run, one after the other.

Why: the warm-up imports what Explore's first run imports (pandas, the PDF renderer, the core)
and loads the tokenizer. A script run importing the same packages beside it on another thread
could meet it in a package that imports itself in part (pandas does), which Python reports as
an import deadlock. So a script run waits for a warm-up under way (it is what the run would do
anyway), at most :data:`WAIT_S`; with no warm-up (``streamlit run app.py``, AppTest) at once.
"""

from __future__ import annotations

import importlib
import logging
import threading
from collections.abc import Callable, Sequence

log = logging.getLogger(__name__)

#: Longest a script run waits for the warm-up (then it imports what is left itself).
WAIT_S = 60.0
_done = threading.Event()
_done.set()  # nothing to wait for until a warm-up starts


def start(modules: Sequence[str], then: Callable[[], object] | None = None) -> threading.Thread:
    """Import ``modules`` and run ``then`` on a daemon thread; script runs wait for it."""
    _done.clear()

    def work() -> None:
        try:
            for name in modules:
                importlib.import_module(name)
            if then is not None:
                then()
        except Exception as err:  # only a head start: the page loads what is missing, and says why
            log.warning("warm-up stopped: %s", err)
        finally:
            _done.set()

    thread = threading.Thread(target=work, name="warm-up", daemon=True)
    thread.start()
    return thread


def wait() -> bool:
    """Wait for a warm-up under way (at most :data:`WAIT_S`); whether none is left running."""
    return _done.wait(WAIT_S)
