"""Splitting in characters on a one-character separator kept at the start (the default
separators' lines and words) by scanning the text, for :class:`~explorer.strategies.splitting.RecursiveSplitter`.

Why: a paragraph split into words is thousands of pieces, and listing them (starts, ends,
lengths) is most of the splitter's time. In characters a piece's length is an offset
difference and pieces start at ``a`` and at each separator, so the chunk that starts at a piece
start ends at the last separator within ``chunk_size``: one ``str.rfind``. The result is the
general path's, piece for piece and reason for reason (tested against it and against LangChain).
"""

from __future__ import annotations

from explorer.text.chunk import SEPARATOR, SIZE_LIMIT, UNBREAKABLE

#: (start, end, reason); reason None means "ends where the range ends".
Piece = tuple[int, int, "str | None"]


def separator_reason(sep: str) -> str:
    """Reason of a chunk that ends at a boundary made by ``sep`` ("" = between two characters)."""
    return SIZE_LIMIT if sep == "" else f"{SEPARATOR} {sep!r}"


def add_stripped(text: str, s: int, t: int, why: str | None, prev: int, out: list[Piece]) -> int:
    """Add the merged chunk ``text[s:t]`` as LangChain strips it (on offsets), dropped if only
    whitespace, replacing the previous chunk when it starts at the same place (``prev``, which
    it contains). Returns the start of the last chunk added."""
    while s < t and text[s].isspace():
        s += 1
    while t > s and text[t - 1].isspace():
        t -= 1
    if s < t:
        if s == prev:
            out[-1] = (s, t, why)
        else:
            out.append((s, t, why))
            prev = s
    return prev


class CharScan:
    """The scanning half of the splitter (see the module docstring)."""

    text: str
    size: int
    overlap: int
    unit: str

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
