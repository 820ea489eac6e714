"""One block bigger than a chunk, split inside: a code block at its line ends, a table between
its rows, prose at paragraphs, lines, sentences and words.

Shared by ``markdown`` (a block over ``chunk_size``) and ``sentence`` (a code block or table
row over its cap), so that both cut a long code block or table the same way. A heading or
lead-in just before the block opens its first piece when it leaves that piece a quarter of a
chunk (a heading or a lead-in alone is a poor chunk).
"""

from __future__ import annotations

from collections.abc import Callable

from explorer.documents.document import block_label
from explorer.strategies.base import trim
from explorer.strategies.splitting import Piece, RecursiveSplitter, SliceCounter
from explorer.text.chunk import SIZE_LIMIT, UNBREAKABLE
from explorer.text.length import Length

#: Blocks never cut inside unless bigger than chunk_size.
PROTECTED = ("code", "table")
#: Separators (and where the separator goes) for a block too big to be one chunk.
BLOCK_SEPARATORS: dict[str, tuple[tuple[str, ...], str]] = {
    "code": (("\n\n", "\n", " ", ""), "end"),
    "table": (("\n", " ", ""), "end"),
}
PROSE_SEPARATORS = (("\n\n", "\n", ". ", " ", ""), "end")


class BlockSplitter:
    """Splits blocks of ``text`` into pieces of at most ``size`` (``measure``: a slice's length),
    consecutive pieces repeating up to ``overlap``."""

    def __init__(
        self,
        text: str,
        size: int,
        overlap: int,
        length: Length,
        fast: SliceCounter | None,
        measure: Callable[[int, int], int],
    ) -> None:
        self.text, self.size, self.overlap, self.length = text, size, overlap, length
        self._fast, self._measure = fast, measure
        self._firsts: dict[tuple[int, int], Piece | None] = {}

    def pieces(self, kind: str, e: int) -> Callable[[int, int], list[Piece]]:
        """The recursive splitter for a block of ``kind`` ending at ``e``: pieces from ``a`` on,
        each within ``room``."""
        seps, keep = BLOCK_SEPARATORS.get(kind, PROSE_SEPARATORS)

        def split(a: int, room: int) -> list[Piece]:
            return RecursiveSplitter(
                self.text,
                chunk_size=room,
                chunk_overlap=min(self.overlap, room - 1),
                separators=seps,
                keep_separator=keep,
                length=self.length,
                span_length=self._fast,
            ).split(a, e)

        return split

    def split(self, s: int, e: int, kind: str, lead: int | None = None) -> list[Piece]:
        """The pieces of the block ``[s, e)``; ``lead``, where the heading(s) or lead-in just
        before it start, opens the first (or goes alone when the room it leaves is too small).
        The last piece's reason is None: it ends where the block ends."""
        where = f"inside {block_label(kind)} larger than chunk_size" if kind in PROTECTED else ""
        out: list[Piece] = []
        start = s
        if lead is not None:
            first = self.first_after(lead, s, kind, e)
            if first is None:
                out.append((*trim(self.text, lead, s), f"{SIZE_LIMIT}: next block is {block_label(kind)}"))
            else:
                out.append((lead, first[1], _where(first[2], where)))
                start = first[1]
        out.extend((ps, pe, _where(why, where)) for ps, pe, why in self.pieces(kind, e)(start, self.size))
        return out

    def first_after(self, lead: int, s: int, kind: str, e: int) -> Piece | None:
        """First piece of the block ``[s, e)`` split with the room the heading (or lead-in) at
        ``lead`` leaves, if it fits with it (kept: a lead-in asks before its block is split)."""
        if (lead, s) not in self._firsts:
            self._firsts[(lead, s)] = self._find_first(lead, s, self.pieces(kind, e))
        return self._firsts[(lead, s)]

    def _find_first(self, lead: int, s: int, pieces: Callable[[int, int], list[Piece]]) -> Piece | None:
        room = self.size - self._measure(lead, s)
        for _ in range(3):  # token counts are not additive: shrink and retry
            if room < max(1, self.size // 4):  # too little left: the heading goes alone
                return None
            first = pieces(s, room)[0]
            if first[2] is None or (first[2] or "").startswith(UNBREAKABLE):
                return None
            over = self._measure(lead, first[1]) - self.size
            if over <= 0:
                return first
            room -= over
        return None


def _where(why: str | None, where: str) -> str | None:
    if not where or why is None:
        return why
    return f"{why}; {where}" if why.startswith(UNBREAKABLE) else f"{why}: {where}"
