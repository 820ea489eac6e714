"""serve.py's start-up warm-up and the first script run run one after the other (pages.ui.warmup):
two threads importing pandas at once can meet in an import deadlock."""

from __future__ import annotations

import logging
import threading
import time

from pages.ui import warmup


def test_a_script_run_waits_for_the_warm_up_under_way():
    gate, order = threading.Event(), []
    warmup.start([], then=lambda: (gate.wait(10), order.append("warm-up")))
    threading.Timer(0.3, gate.set).start()
    assert warmup.wait()
    order.append("script run")
    assert order == ["warm-up", "script run"]


def test_a_failed_warm_up_says_why_and_lets_the_run_go(caplog):
    with caplog.at_level(logging.WARNING, logger="pages.ui.warmup"):
        warmup.start(["explorer.no_such_module"]).join(10)
    assert warmup.wait()
    (record,) = [r for r in caplog.records if "warm-up stopped" in r.getMessage()]
    assert "no_such_module" in record.getMessage() and record.exc_info is None  # one line, no traceback


def test_without_a_warm_up_a_run_does_not_wait():
    t0 = time.monotonic()
    assert warmup.wait()
    assert time.monotonic() - t0 < 0.5
