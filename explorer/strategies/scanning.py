"""Finding the pieces of a one-character separator (the default separators' lines and words)
without listing them one by one in Python, for :class:`~explorer.strategies.splitting.RecursiveSplitter`.

Why: a paragraph split into words is thousands of pieces, and listing and measuring them is most
of the splitter's time. Three ways, each giving the general path's pieces and reasons (tested
against it and against LangChain):

- characters, separator kept at the start: pieces start at ``a`` and at each separator and a
  length is an offset difference, so the chunk that starts at a piece start ends at the last
  separator within ``chunk_size``: one ``str.rfind`` a chunk (:meth:`FastPieces._split_scan`);
- model tokens with a token index: the pieces from one separator to the next are looked up in
  the index's gap counts, kept between runs, and only the two at a range's edges are counted;
- otherwise, a long range: the separator's positions found once with numpy, pieces as arrays;
- the "" separator (between every character) in model tokens: a character's length is the same
  wherever it stands, so each distinct character is counted once and the pieces stay arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from explorer.strategies.separators import VECTOR_MIN_CHARS, split_bounds_np
from explorer.text.chunk import SEPARATOR, SIZE_LIMIT, UNBREAKABLE
from explorer.text.tokenizing import code_points

#: (start, end, reason); reason None means "ends where the range ends".
Piece = tuple[int, int, "str | None"]


def separator_reason(sep: str) -> str:
    """Reason of a chunk that ends at a boundary made by ``sep`` ("" = between two characters)."""
    return SIZE_LIMIT if sep == "" else f"{SEPARATOR} {sep!r}"


def add_stripped(text: str, s: int, t: int, why: str | None, prev: int, out: list[Piece]) -> int:
    """Add the merged chunk ``text[s:t]`` as LangChain strips it (on offsets), dropped if only
    whitespace, replacing the previous chunk when it starts at the same place (``prev``, which
    it contains). Dropped too when it lies inside the previous chunk: its overlap and then only
    whitespace, it adds nothing (chunk ends must increase); the previous chunk, which ends where
    it ends, takes its reason. Returns the start of the last chunk added."""
    while s < t and text[s].isspace():
        s += 1
    while t > s and text[t - 1].isspace():
        t -= 1
    if s < t:
        if out and out[-1][0] <= s and t <= out[-1][1]:
            if t == out[-1][1]:
                out[-1] = (out[-1][0], t, why)
        elif s == prev:
            out[-1] = (s, t, why)
        else:
            out.append((s, t, why))
            prev = s
    return prev


class FastPieces:
    """The piece-finding half of the splitter (see the module docstring)."""

    text: str
    size: int
    overlap: int
    unit: str
    chars: bool
    regex: bool
    keep: str
    _span_length: Any
    _gap_index: Any
    _codes: np.ndarray | None
    _found: dict[str, np.ndarray]
    _lengths: Any
    _len: Any

    # and, from the splitter: _split (the general path, for pieces too long) and _emit_raw
    def _split_scan(self, a: int, b: int, sep: str, rest: tuple[str, ...], out: list[Piece]) -> None:
        """:meth:`_split` where pieces start at ``a`` and at every ``sep`` in ``(a, b)`` and a
        length is an offset difference: chunk ends are found with ``str.rfind`` from each
        chunk's start, so the words of a paragraph are never listed one by one."""
        find, size = self.text.find, self.size
        reason = separator_reason(sep)
        pos = a
        while pos < b:
            end = find(sep, pos + 1, b)
            end = b if end < 0 else end
            if end - pos < size:
                pos = self._merge_scan(pos, b, sep, reason, out)
                continue
            if not rest:  # a piece as long as the size: LangChain returns it as is
                why = reason if end < b else None
                if end - pos > size:
                    why = f"{UNBREAKABLE}: {end - pos} {self.unit} and no separator left to split it"
                self._emit_raw(pos, end, why, out)
            else:
                n0 = len(out)
                self._split(pos, end, rest, out)
                if end < b and len(out) > n0 and out[-1][2] is None:
                    out[-1] = (out[-1][0], out[-1][1], reason)
            pos = end

    def _merge_scan(self, x: int, b: int, sep: str, reason: str, out: list[Piece]) -> int:
        """:meth:`_merge` of the run of short pieces that starts at ``x``; returns where the run
        ends (``b``, or the start of a piece at least ``size`` long, which the caller splits).

        As in :meth:`_merge`, a chunk from piece start ``i`` ends at the last piece end within
        ``i + size`` (but takes at least the pieces up to ``least``), and the next starts at the
        first piece start from which the overlap and the next piece fit."""
        text, size, overlap = self.text, self.size, self.overlap
        find, rfind = text.find, text.rfind
        prev = out[-1][0] if out else -1
        least = find(sep, x + 1, b)
        least = b if least < 0 else least
        i = x
        while True:
            limit = i + size
            if b <= limit:
                t, nxt, why = b, b, None  # every piece left fits: the run's last chunk
            else:
                t = rfind(sep, least, min(limit + 1, b))
                t = least if t < 0 else t
                nxt = find(sep, t + 1, b)  # the end of the piece that did not fit
                nxt = b if nxt < 0 or t >= b else nxt
                why = None if t >= b else reason
            prev = add_stripped(text, i, t, why, prev, out)
            if t >= b:
                return b
            if nxt - t >= size:  # the next piece is long: the run ends before it
                return t
            x = max(t - overlap, nxt - size)
            j = i if x <= i else find(sep, x, t)
            i, least = (t if j < 0 else j), nxt

    def _vector_ok(self, a: int, b: int, sep: str) -> bool:
        """A long range cut by a one-character literal separator, measured in characters or
        from a token index (with kept separators: no gap to measure): done in numpy."""
        if self.regex or len(sep) != 1:
            return False
        if self._gap_index is not None:
            return True
        if b - a <= VECTOR_MIN_CHARS:
            return False
        return self.chars or (self._span_length is not None and self.keep != "false")

    def _pieces_np(
        self, a: int, b: int, sep: str
    ) -> tuple[list[int], list[int], list[int], list[int], Any, list[int]]:
        """(starts, ends, q, e, lens or None, big) of :meth:`_split`, computed in numpy."""
        if self._gap_index is not None:
            st, en, lens = self._gap_pieces(a, b, sep)
        else:
            st, en = split_bounds_np(self._positions(sep), a, b, self.keep)
            if self.chars:
                starts, ends = st.tolist(), en.tolist()
                return starts, ends, starts, ends, None, np.flatnonzero(en - st >= self.size).tolist()
            lens = np.asarray(self._span_length(st, en), dtype=np.int64)
        steps = lens.copy()
        steps[1:] += self._len("")  # LangChain joins kept-separator pieces with "" (see _coords)
        e_arr = np.cumsum(steps)
        q_arr = e_arr - lens
        big = np.flatnonzero(lens >= self.size).tolist()
        return st.tolist(), en.tolist(), q_arr.tolist(), e_arr.tolist(), lens.tolist(), big

    def _char_pieces(self, a: int, b: int) -> tuple[range, range, np.ndarray, np.ndarray, np.ndarray, list[int]]:
        """:meth:`_pieces_np` for the "" separator: every character of ``[a, b)`` a piece,
        measured as each distinct character alone (LangChain measures each piece alone). Why: the
        general path listed and counted 20 million one-character pieces for a 20 MB line without
        a space (2 MB: 20 s, 0.7 GB), and a token index cannot count them: it is inexact there."""
        codes = code_points(self.text[a:b])
        present = np.flatnonzero(np.bincount(codes))
        table = np.zeros(int(present[-1]) + 1, dtype=np.int64)
        table[present] = self._lengths([chr(c) for c in present.tolist()])
        lens = table[codes]
        del codes
        steps = lens.copy()
        steps[1:] += self._len("")  # as in _pieces_np
        e_arr = np.cumsum(steps)
        del steps
        q_arr = e_arr - lens
        big = np.flatnonzero(lens >= self.size).tolist()
        return range(a, b), range(a + 1, b + 1), q_arr, e_arr, lens, big

    def _gap_pieces(self, a: int, b: int, sep: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Pieces of ``[a, b)`` cut at ``sep`` (kept at the start) and their lengths: those from
        one separator to the next from the index's gap counts, the two at the edges counted."""
        pos, gaps = self._gap_index.gap_counts(sep)
        st, en = split_bounds_np(pos, a, b, self.keep)
        n = len(st)
        lo = int(pos.searchsorted(a))
        lens = np.empty(n, dtype=np.int64)
        head = 0 if lo < len(pos) and pos[lo] == a else 1  # the first piece starts at a, not at sep
        lens[head : n - 1] = gaps[lo : lo + n - 1 - head]
        edges = [0, n - 1] if head and n > 1 else [n - 1]
        lens[edges] = self._span_length([int(st[k]) for k in edges], [int(en[k]) for k in edges])
        return st, en, lens

    def _positions(self, sep: str) -> np.ndarray:
        """Where the one-character ``sep`` occurs in the whole text (found once per split)."""
        found = self._found.get(sep)
        if found is None:
            if self._codes is None:
                self._codes = code_points(self.text)
            found = self._found[sep] = np.flatnonzero(self._codes == ord(sep))
        return found
