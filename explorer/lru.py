"""A thread-safe least-recently-used cache bounded by bytes, not entries.

Why: the app's in-process caches (token indexes, sentence vectors, FAISS indexes, chunk lists)
hold objects whose size follows the user's documents. A bound in entries lets one 19 MB upload
fill the server (issue 12); a bound in bytes keeps a shared server's memory predictable. Each
cache says how big a value is (``size``); a value larger than the whole budget is returned but
not kept. The budgets are in :mod:`explorer.limits`.
"""

from __future__ import annotations

import functools
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Generic, TypeVar

V = TypeVar("V")


class ByteLRU(Generic[V]):
    """``get``/``put``/``get_or_make`` with at most ``max_bytes`` of values kept (by ``size``).

    With ``single_flight``, a thread asking :meth:`get_or_make` for a key that another thread is
    making waits for that value instead of making it too: two sessions opening the same 36-page
    PDF extracted it twice, holding two copies while they ran. Left off where the making is a
    job the user can stop (a waiting job would not see its own Stop)."""

    def __init__(self, max_bytes: int, size: Callable[[V], int] = sys.getsizeof, *, single_flight: bool = False) -> None:
        self.max_bytes = max_bytes
        self._size = size
        self._items: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._single_flight = single_flight
        self._making: dict[Hashable, _Flight] = {}

    @property
    def nbytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: Hashable) -> V | None:
        with self._lock:
            hit = self._items.get(key)
            if hit is None:
                return None
            self._items.move_to_end(key)
            return hit[0]

    def put(self, key: Hashable, value: V) -> V:
        """Keep ``value`` (evicting the least recently used) unless it alone exceeds the budget."""
        n = max(int(self._size(value)), 1)
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            if n > self.max_bytes:
                return value
            self._items[key] = (value, n)
            self._bytes += n
            while self._bytes > self.max_bytes:
                _, (_, dropped) = self._items.popitem(last=False)
                self._bytes -= dropped
        return value

    def get_or_make(self, key: Hashable, make: Callable[[], V | None]) -> V | None:
        """The kept value, or ``make()`` kept and returned (None is returned, never kept). Without
        ``single_flight``, two threads asking for the same missing key may both make it (the
        values are equal). With it, the others wait and get the maker's value, kept or not (over
        the budget, or None); if the maker raised, one of them makes it next, the rest wait again."""
        if not self._single_flight:
            hit = self.get(key)
            return hit if hit is not None else self._make(key, make)
        while True:
            with self._lock:
                hit = self._items.get(key)
                if hit is not None:
                    self._items.move_to_end(key)
                    return hit[0]
                flight = self._making.get(key)
                mine = flight is None
                if mine:
                    flight = self._making[key] = _Flight()
            if mine:
                break
            flight.done.wait()
            if flight.made:
                return flight.value
        try:
            flight.value, flight.made = make(), True
            return flight.value if flight.value is None else self.put(key, flight.value)
        finally:
            with self._lock:
                self._making.pop(key, None)
            flight.done.set()

    def _make(self, key: Hashable, make: Callable[[], V | None]) -> V | None:
        value = make()
        return value if value is None else self.put(key, value)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0


#: What a :func:`per_text` key costs (a tuple, two ints, two strings of 16 characters at most).
_KEY_BYTES = 320


def per_text(max_bytes: int, size: Callable[[V], int]) -> Callable[[Callable[[str], V]], Callable[[str], V]]:
    """Memoise a function of one whole text in a :class:`ByteLRU` keyed by the text's length,
    hash and ends, never by the text itself. Why: ``functools.lru_cache`` keeps its arguments, so
    a memo of 8 entries kept 8 whole documents alive after their sessions had dropped them (10
    texts of 5.6 M characters through the sentence, joining and answer-view memos: 529 MB still
    held), outside every byte budget. ``str`` caches its hash, so a repeated look-up costs no scan."""

    def wrap(fn: Callable[[str], V]) -> Callable[[str], V]:
        cache: ByteLRU[V] = ByteLRU(max_bytes, lambda v: size(v) + _KEY_BYTES)

        @functools.wraps(fn)
        def memo(text: str) -> V:
            key = (len(text), hash(text), text[:16], text[-16:])
            hit = cache.get(key)
            return hit if hit is not None else cache.put(key, fn(text))

        memo.cache = cache  # type: ignore[attr-defined]
        return memo

    return wrap


def spans_size(spans: Sequence[object], each: int = 120) -> int:
    """Bytes of a tuple or list of small tuples (offsets, blocks): the container and ``each`` an
    item (a pair and its ints is ~120; small ints are shared, so this is an upper bound)."""
    return sys.getsizeof(spans) + each * len(spans)


class _Flight:
    """One making of a key under single flight: waiters wait on ``done``, then take ``value``
    if ``made`` (the maker did not raise)."""

    __slots__ = ("done", "made", "value")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.made = False
        self.value: object = None


def trim_heap() -> None:
    """Give freed memory back to the operating system (glibc's ``malloc_trim``; a no-op
    elsewhere). Why: tokenizers and ONNX Runtime allocate from many threads, and glibc keeps what
    they free in per-thread arenas, so a server's RSS stayed at its peak after the documents
    that caused it were gone. Called after the few steps that allocate in bulk."""
    global _trim
    if _trim is None:
        try:
            import ctypes

            _trim = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _trim = False
    if _trim:
        _trim(0)


_trim = None


_trimmer_lock = threading.Lock()
_trimmer: threading.Thread | None = None


def start_heap_trimmer(every_s: float = 30.0) -> None:
    """Once per process: collect cycles and :func:`trim_heap` every ``every_s`` seconds, so the
    memory of closed sessions goes back to the system (a server's RSS falls after its peak)."""
    global _trimmer
    import gc
    import time

    def loop() -> None:
        while True:
            time.sleep(every_s)
            gc.collect()
            trim_heap()

    with _trimmer_lock:
        if _trimmer is None:
            _trimmer = threading.Thread(target=loop, name="heap-trimmer", daemon=True)
            _trimmer.start()
