"""The byte-bounded cache behind the app's shared caches."""

from __future__ import annotations

import threading

from hypothesis import given
from hypothesis import strategies as st

from explorer.lru import ByteLRU


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
