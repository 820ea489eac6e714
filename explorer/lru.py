"""A thread-safe least-recently-used cache bounded by bytes, not entries.

Why: the app's in-process caches (token indexes, sentence vectors, FAISS indexes, chunk lists)
hold objects whose size follows the user's documents. A bound in entries lets one 19 MB upload
fill the server (issue 12); a bound in bytes keeps a shared server's memory predictable. Each
cache says how big a value is (``size``); a value larger than the whole budget is returned but
not kept. The budgets are in :mod:`explorer.limits`.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class ByteLRU(Generic[V]):
    """``get``/``put``/``get_or_make`` with at most ``max_bytes`` of values kept (by ``size``)."""

    def __init__(self, max_bytes: int, size: Callable[[V], int] = sys.getsizeof) -> None:
        self.max_bytes = max_bytes
        self._size = size
        self._items: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

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
        """The kept value, or ``make()`` kept and returned (None is returned, never kept). Two
        threads asking for the same missing key may both make it: the values are equal."""
        hit = self.get(key)
        if hit is not None:
            return hit
        value = make()
        return value if value is None else self.put(key, value)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0
