"""Where a separator cuts a range of the text: the pieces LangChain's ``_split_text_with_regex``
returns, as ``(start, end)`` offsets (literal separators with ``str.split``, regex ones with the
``regex`` module, one-character ones over a long range with numpy)."""

from __future__ import annotations

from itertools import accumulate
from typing import Any

import numpy as np

#: Ranges longer than this find a one-character separator with numpy rather than str.split.
VECTOR_MIN_CHARS = 2_000


def split_bounds(
    text: str, a: int, b: int, sep: str, keep: str, pattern: Any = None, timeout: float | None = None
) -> tuple[list[int], list[int]]:
    """Starts and ends of the non-empty pieces LangChain's ``_split_text_with_regex`` returns
    for ``text[a:b]`` (``pattern``: the compiled regex separator; None: ``sep`` is literal)."""
    if sep == "":
        return list(range(a, b)), list(range(a + 1, b + 1))
    if pattern is not None:
        sub_text = text[a:b]  # a substring, as LangChain splits: lookbehinds stop at its start
        matches = pattern.finditer(sub_text, timeout=timeout) if timeout else pattern.finditer(sub_text)
        spans = [m.span() for m in matches]
        ms = [a + s for s, _ in spans]
        me = [a + t for _, t in spans]
    else:
        sl = len(sep)
        lens = list(map(len, text[a:b].split(sep)))
        ms = list(accumulate(map(sl.__add__, lens[1:-1]), initial=a + lens[0])) if len(lens) > 1 else []
        me = list(map(sl.__add__, ms)) if keep != "start" else ms
    if keep == "start":
        starts, ends = [a, *ms], [*ms, b]
    elif keep == "end":
        starts, ends = [a, *me], [*me, b]
    else:
        starts, ends = [a, *me], [*ms, b]
    if keep != "false" and pattern is None:
        # Literal separators: only the first or last piece can be empty.
        if ends[-1] == starts[-1]:
            starts.pop()
            ends.pop()
        if starts and ends[0] == starts[0]:
            del starts[0], ends[0]
        return starts, ends
    kept = [i for i, (s, t) in enumerate(zip(starts, ends, strict=True)) if t > s]
    if len(kept) == len(starts):
        return starts, ends
    return [starts[i] for i in kept], [ends[i] for i in kept]


def split_bounds_np(positions: np.ndarray, a: int, b: int, keep: str) -> tuple[np.ndarray, np.ndarray]:
    """:func:`split_bounds` for a one-character literal separator at ``positions`` (all of them
    in the text, sorted), as arrays: the word level of a long text, most of the pieces, found
    with numpy."""
    pos = positions[np.searchsorted(positions, a) : np.searchsorted(positions, b)]
    after = pos + 1
    if keep == "start":
        starts, ends = np.concatenate(([a], pos)), np.concatenate((pos, [b]))
    elif keep == "end":
        starts, ends = np.concatenate(([a], after)), np.concatenate((after, [b]))
    else:
        starts, ends = np.concatenate(([a], after)), np.concatenate((pos, [b]))
    full = ends > starts
    if not full.all():  # empty pieces (a separator at either end, or two in a row)
        starts, ends = starts[full], ends[full]
    return starts, ends
