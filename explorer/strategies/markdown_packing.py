"""How the markdown strategy packs a section bigger than ``chunk_size`` (see its module docstring).

Pieces are cut at block starts and ends, never inside a code block or a table; they are packed
greedily and measured as whole texts, so sizes are exact in any length unit.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from itertools import accumulate, pairwise

from explorer.documents.document import Block, Document, block_label, heading_reason
from explorer.strategies.base import trim
from explorer.strategies.block_split import PROTECTED, BlockSplitter
from explorer.strategies.lead_ins import lead_in_start
from explorer.strategies.splitting import Piece, token_counter
from explorer.text.chunk import SIZE_LIMIT, inside_any
from explorer.text.length import Length


class SectionPacker:
    """Greedy packing of trimmed pieces into chunks, measured as whole texts (exact sizes)."""

    def __init__(self, doc: Document, size: int, overlap: int, length: Length):
        self.doc = doc
        self.text = doc.text
        self.size = size
        self.overlap = overlap
        self.length = length
        self.chars = length.name == "chars"
        self._cache: dict[tuple[int, int], int] = {}
        self._fast = None if self.chars else token_counter(self.text, length)
        self._blocks = sorted(doc.blocks, key=lambda b: (b.start, -b.end))
        self._block_starts = [b.start for b in self._blocks]
        self._block_ends = list(accumulate((b.end for b in self._blocks), max))  # non-decreasing
        self.out: list[Piece] = []
        self.blocks = BlockSplitter(self.text, size, overlap, length, self._fast, self.measure)

    def measure(self, s: int, e: int) -> int:
        if self.chars:
            return e - s
        n = self._cache.get((s, e))
        if n is None:
            n = self._fast([s], [e])[0] if self._fast is not None else self.length(self.text[s:e])
            self._cache[(s, e)] = n
        return n

    def trim(self, s: int, e: int) -> tuple[int, int]:
        return trim(self.text, s, e)

    # -- sections --------------------------------------------------------------------------
    def run(self, max_level: int, merge_small: bool) -> list[Piece]:
        text = self.text
        heads = [h for h in self.doc.headings if h.level <= max_level and 0 < h.start < len(text)]
        cuts = [0, *(h.start for h in heads), len(text)]
        heading_at = {h.start: h for h in heads}
        if cuts[0] < len(text) and self.doc.headings and self.doc.headings[0].start == 0:
            heading_at[0] = self.doc.headings[0]
        sections: list[tuple[int, int]] = []
        after: list[str | None] = []
        open_at: int | None = None  # start of heading-only sections joined to the next one
        for i in range(len(cuts) - 1):
            s, e = self.trim(cuts[i], cuts[i + 1])
            if s >= e:
                continue
            nxt = heads[i] if i < len(heads) else None
            h = heading_at.get(s)
            if h is not None and h.end >= e and nxt is not None and nxt.level > h.level:
                # only a heading, and a sub-heading follows: a heading alone is a poor chunk
                open_at = s if open_at is None else open_at
                continue
            sections.append((s if open_at is None else open_at, e))
            after.append(heading_reason(nxt, self.doc.kind) if nxt is not None else None)
            open_at = None
        if merge_small:
            self.pack(sections, after, 0, lambda _k, a, b, _lead: self.split_section(a, b))
        else:
            for sec, why in zip(sections, after, strict=True):
                self.pack([sec], [why], 0, lambda _k, a, b, _lead: self.split_section(a, b))
        return self.out

    def split_section(self, s: int, e: int) -> None:
        """A section bigger than size: pieces start at block starts (and after protected blocks)."""
        lo = bisect_left(self._block_ends, s)  # blocks ending before s come before lo
        hi = bisect_left(self._block_starts, e)
        blocks = [b for b in self._blocks[lo:hi] if b.end > s and b.start < e]
        inside = inside_any([(b.start, b.end) for b in blocks if b.kind in PROTECTED])
        cuts = {s, e}
        kind_at: dict[int, str] = {}
        outer: Block | None = None  # the last block that may hold a nested code block or table
        for b in blocks:
            for c in (b.start, b.end):
                if s < c < e and not inside(c):
                    cuts.add(c)
            if b.kind in PROTECTED or b.start not in kind_at:  # a fence opening a list is code
                kind_at[b.start] = b.kind
            if b.kind not in PROTECTED:
                outer = b
            elif outer is not None and outer.start <= b.start and b.end < outer.end:
                kind_at.setdefault(b.end, outer.kind)  # the rest of the list or quote
        pieces: list[tuple[int, int]] = []
        kinds: list[str] = []
        bounds = sorted(cuts)
        for a, b in pairwise(bounds):
            ps, pe = self.trim(a, b)
            if ps < pe:
                pieces.append((ps, pe))
                kinds.append(kind_at.get(ps) or kind_at.get(a, "text"))
        pieces, kinds, leads = self._lead_ins(pieces, kinds)
        between: list[str | None] = [
            f"{SIZE_LIMIT}: next block is {block_label(kinds[k + 2])}, with its lead-in"
            if leads[k + 1]
            else f"{SIZE_LIMIT}: next block is {block_label(kinds[k + 1])}"
            for k in range(len(pieces) - 1)
        ]
        between.append(None)
        self.pack(
            pieces,
            between,
            self.overlap,
            lambda k, a, b, lead: self.split_block(a, b, kinds[k], lead),
            [lead or kind == "heading" for lead, kind in zip(leads, kinds, strict=True)],
            [k not in PROTECTED and k != "heading" for k in kinds],
        )

    def _lead_ins(
        self, pieces: list[tuple[int, int]], kinds: list[str]
    ) -> tuple[list[tuple[int, int]], list[str], list[bool]]:
        """The pieces with each lead-in cut off the piece it ends (a list's last item), their kinds,
        and which are lead-ins that stick to the code block or table right after them (see
        :meth:`_leads_into`; one that does not stays where it is)."""
        out: list[tuple[int, int]] = []
        out_kinds: list[str] = []
        leads: list[bool] = []
        for k, (ps, pe) in enumerate(pieces):
            ls = None
            if k + 1 < len(pieces) and kinds[k + 1] in PROTECTED:
                ls = lead_in_start(self.text, ps, pe, kinds[k])
                if ls is not None and not self._leads_into(ls, *pieces[k + 1], kinds[k + 1]):
                    ls = None
            if ls is not None and ls > ps:
                out.append(self.trim(ps, ls))
                out_kinds.append(kinds[k])
                leads.append(False)
                ps = ls
            out.append((ps, pe))
            out_kinds.append(kinds[k])
            leads.append(ls is not None)
        return out, out_kinds, leads

    def _leads_into(self, lead: int, s: int, e: int, kind: str) -> bool:
        """Whether the lead-in starting at ``lead`` opens the chunk of the block ``[s, e)``: when
        the two fit in one chunk, or, the block being bigger than a chunk (so split anyway), when
        the lead-in fits with the block's first piece as a heading would. Otherwise it stays at the
        end of the chunk before (a lead-in alone is a poor chunk)."""
        if self.measure(lead, e) <= self.size:
            return True
        return self.measure(s, e) > self.size and self.blocks.first_after(lead, s, kind, e) is not None

    def split_block(self, s: int, e: int, kind: str, lead: int | None = None) -> None:
        """One block bigger than size, split inside (:class:`BlockSplitter`); ``lead`` is the start
        of the heading(s) or lead-in just before it, which open its first chunk."""
        self.out.extend(self.blocks.split(s, e, kind, lead))

    # -- greedy packing --------------------------------------------------------------------
    def pack(
        self,
        pieces: list[tuple[int, int]],
        between: list[str | None],
        overlap: int,
        on_big: Callable[[int, int, int, int | None], None],
        sticky: list[bool] | None = None,
        splittable: list[bool] | None = None,
    ) -> None:
        """Chunks of consecutive pieces while the whole fits.

        ``between[i]`` is the reason of a chunk ending after piece i (None: the caller's
        boundary). A piece over size goes to ``on_big(k, start, end, lead)``. ``sticky`` pieces
        (headings, lead-ins) open the next chunk rather than end one: they go with the next piece,
        and if that piece does not fit with them but is ``splittable`` (prose, not a code block or
        a table), it is split to take them (``lead`` = where the headings start). With overlap,
        a new chunk starts with the previous chunk's last pieces that fit in ``overlap`` and
        leave room for the next piece (and for the piece a sticky one goes with).
        """
        size, measure, out = self.size, self.measure, self.out
        n = len(pieces)
        sticky = sticky or [False] * n
        splittable = splittable or [False] * n
        i: int | None = None  # first piece of the open chunk
        for k, (s, e) in enumerate(pieces):
            big = measure(s, e) > size
            if i is not None and not big and measure(pieces[i][0], e) <= size:
                continue  # piece k joins the open chunk
            lead = None
            if i is not None:  # close the open chunk before piece k
                t = k
                while t - 1 >= i and sticky[t - 1]:
                    t -= 1
                if t < k and not big and measure(pieces[t][0], e) > size:
                    if splittable[k]:
                        big = True  # headings + piece k: split piece k to take the headings
                    else:
                        t = k  # a code block or table is not cut for them: they stay where they are
                if t > i:
                    self._emit(pieces[i][0], pieces[t - 1][1], between[t - 1])
                if big:
                    lead = pieces[t][0] if t < k else None
                    i = None
                else:
                    j = self._overlap_start(pieces, i, t, self._reach(pieces, sticky, t, k), overlap)
                    i = j if j < k else None
            if big:
                n0 = len(out)
                on_big(k, s, e, lead)
                if len(out) > n0 and out[-1][2] is None:
                    out[-1] = (out[-1][0], out[-1][1], between[k])
            elif i is None:
                i = k
        if i is not None:
            self._emit(pieces[i][0], pieces[n - 1][1], between[n - 1])

    def _reach(self, pieces: list[tuple[int, int]], sticky: list[bool], t: int, k: int) -> int | None:
        """End of what the next chunk (pieces t..k) must hold besides its overlap: up to piece k and, when
        k is sticky, the piece it sticks to; None when they do not fit together (then no overlap: it
        would be closed before that piece, a chunk of repeated text alone)."""
        m = k
        while m + 1 < len(pieces) and sticky[m]:
            m += 1
        end = pieces[m][1]
        return end if m == k or self.measure(pieces[t][0], end) <= self.size else None

    def _overlap_start(
        self, pieces: list[tuple[int, int]], i: int, t: int, e: int | None, overlap: int
    ) -> int:
        """First piece of the next chunk: the closed chunk's (pieces i..t-1) last pieces that fit
        in ``overlap`` and leave room for what ends at ``e`` (None: no overlap)."""
        j = t
        while (
            overlap
            and e is not None
            and j - 1 > i
            and self.measure(pieces[j - 1][0], pieces[t - 1][1]) <= overlap
            and self.measure(pieces[j - 1][0], e) <= self.size
        ):
            j -= 1
        return j

    def _emit(self, s: int, e: int, why: str | None) -> None:
        self.out.append((s, e, why))
