"""The byte-bounded cache behind the app's shared caches."""

from __future__ import annotations

import sys
import threading

from hypothesis import given
from hypothesis import strategies as st

from explorer import lru
from explorer.documents.markdown_blocks import markdown_blocks
from explorer.evaluation.matching import view
from explorer.lru import ByteLRU, per_text
from explorer.text.markdown_parse import fenced_code
from explorer.text.sentences import sentence_spans
from explorer.text.words import has_joining


def test_keeps_at_most_its_budget_evicting_the_least_recently_used():
    lru: ByteLRU[bytes] = ByteLRU(100, len)
    lru.put("a", b"x" * 40)
    lru.put("b", b"x" * 40)
    assert lru.get("a") is not None  # a is now the most recent
    lru.put("c", b"x" * 40)
    assert lru.get("b") is None and lru.get("a") is not None and lru.get("c") is not None
    assert lru.nbytes == 80


def test_a_value_bigger_than_the_budget_is_returned_not_kept():
    lru: ByteLRU[bytes] = ByteLRU(10, len)
    big = b"x" * 11
    assert lru.put("big", big) is big
    assert lru.get("big") is None and lru.nbytes == 0


def test_a_value_is_measured_again_when_put_again():
    sizes = {"v": 10}
    lru: ByteLRU[str] = ByteLRU(100, lambda v: sizes[v])
    lru.put("k", "v")
    sizes["v"] = 60
    lru.put("k", "v")
    assert lru.nbytes == 60 and len(lru) == 1


def test_none_is_never_kept():
    lru: ByteLRU[int] = ByteLRU(100, lambda v: 8)
    calls = []
    assert lru.get_or_make("k", lambda: calls.append(1)) is None
    assert lru.get_or_make("k", lambda: calls.append(1)) is None
    assert len(calls) == 2


@given(st.lists(st.tuples(st.integers(0, 20), st.integers(1, 60)), max_size=60))
def test_the_budget_holds_after_any_sequence_of_puts(ops):
    lru: ByteLRU[int] = ByteLRU(100, lambda v: v)
    for key, size in ops:
        lru.put(key, size)
        assert lru.nbytes <= 100
        assert lru.nbytes == sum(v for k, v in ((k, lru.get(k)) for k in range(21)) if v is not None)


def test_threads_never_break_the_budget():
    lru: ByteLRU[bytes] = ByteLRU(1000, len)

    def work(n: int) -> None:
        for i in range(500):
            lru.put((n, i % 37), b"x" * (i % 90 + 1))
            lru.get((n, (i * 7) % 37))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert lru.nbytes <= 1000


def _race(lru: ByteLRU, make, n: int = 4) -> list:
    """``n`` threads asking ``lru`` for one key at once; what each got."""
    got: list = [None] * n
    start = threading.Barrier(n)

    def ask(i: int) -> None:
        start.wait()
        try:
            got[i] = lru.get_or_make("doc", make)
        except ValueError as err:
            got[i] = err

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=10)
    return got


def test_single_flight_makes_a_missing_value_once_for_threads_asking_together():
    calls = []
    release = threading.Event()

    def make() -> bytes:
        calls.append(1)
        release.wait(0.3)  # long enough for the others to ask meanwhile
        return b"extracted"

    lru: ByteLRU[bytes] = ByteLRU(100, len, single_flight=True)
    got = _race(lru, make)
    assert got == [b"extracted"] * 4 and len(calls) == 1
    assert len({id(v) for v in got}) == 1  # one object shared, not four copies


def test_without_single_flight_threads_asking_together_each_make_it():
    """The default, kept where the making is a stoppable job: shows the race the flag closes."""
    calls = []

    def make() -> bytes:
        calls.append(1)
        threading.Event().wait(0.2)
        return b"extracted"

    _race(ByteLRU(100, len), make)
    assert len(calls) > 1


def test_single_flight_waiters_take_a_value_it_cannot_keep_and_one_retries_a_failure():
    """A value over the budget (or None) is handed to the waiters, not made again by each; when
    the maker raises, one waiter makes it next while the others wait for that one."""
    calls = []
    lock = threading.Lock()

    def failing_once() -> bytes:
        with lock:
            calls.append(1)
            first = len(calls) == 1
        threading.Event().wait(0.2)
        if first:
            raise ValueError("the first maker was stopped")
        return b"made again"

    got = _race(ByteLRU(100, len, single_flight=True), failing_once)
    assert sorted(map(str, got)) == ["b'made again'"] * 3 + ["the first maker was stopped"]
    assert len(calls) == 2  # the failure, then one retry: not one per waiter
    for limit, make in ((4, lambda: b"over the budget"), (100, lambda: None)):
        made = []
        def slow(m=make, made=made):
            made.append(1)
            threading.Event().wait(0.2)  # the others ask meanwhile
            return m()

        got = _race(ByteLRU(limit, len, single_flight=True), slow)
        assert len(made) == 1 and len(set(got)) == 1, (made, got)


def test_single_flight_does_not_hold_other_keys():
    lru: ByteLRU[bytes] = ByteLRU(100, len, single_flight=True)
    slow_started, release = threading.Event(), threading.Event()

    def slow() -> bytes:
        slow_started.set()
        release.wait(5)
        return b"slow"

    t = threading.Thread(target=lambda: lru.get_or_make("a", slow))
    t.start()
    assert slow_started.wait(5)
    assert lru.get_or_make("b", lambda: b"quick") == b"quick"
    assert not release.is_set() and t.is_alive()  # "b" came while "a" was still being made
    release.set()
    t.join(5)
    assert lru.get("a") == b"slow"


def test_per_text_memo_never_holds_the_text_and_answers_from_memory():
    calls = []

    @per_text(1_000, lambda v: v)
    def length_of(text: str) -> int:
        calls.append(text)
        return len(text)

    text = "".join(["a document ", "of its own"])  # built at run time: not an interned constant
    before = sys.getrefcount(text)
    assert length_of(text) == 21 and length_of(text) == 21
    calls.clear()
    assert sys.getrefcount(text) == before  # lru_cache would keep it as its key
    assert length_of("".join(["a document ", "of its own"])) == 21 and not calls  # an equal text hits
    assert length_of("another") == 7 and calls == ["another"]


def test_every_whole_text_memo_lets_its_text_go():
    """The memos of sentences, fences, Markdown structure, joining marks and answer views: each
    kept a whole document alive after its session dropped it."""
    text = "".join(["# Titre\n\nUne phrase. Une autre ! 🇫🇷🇩🇪 e\u0301t\u00e9\n\n```\ncode\n```\n"] * 3)
    before = sys.getrefcount(text)
    sentence_spans(text), has_joining(text), view(text), markdown_blocks(text), fenced_code(text)
    assert sys.getrefcount(text) == before


def test_per_text_memo_keeps_values_and_keys_within_its_budget():
    key = lru._KEY_BYTES

    @per_text(100 + 2 * key, lambda v: v)
    def size_of(text: str) -> int:
        return len(text)

    for n in (40, 50, 60):
        size_of("x" * n)
    assert size_of.cache.nbytes <= 100 + 2 * key and len(size_of.cache) == 1  # 60 alone: 50 + 60 > 100
    size_of("y" * 101 + "y" * 2 * key)
    assert size_of.cache.nbytes == 60 + key  # over the budget: returned, not kept
    tiny = per_text(10 * key, lambda v: 0)(len)
    for i in range(100):
        tiny("x" * i)
    assert len(tiny.cache) == 10  # values of no size: the keys still count
