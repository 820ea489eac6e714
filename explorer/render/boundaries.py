"""Where two or more configurations cut the same text differently: the boundary diff of Compare.

A configuration's *cuts* are the offsets where its chunks start or end (a chunk ``(s, e)``
gives ``s`` and ``e``), less where the first one starts and the last one ends: the text's own
edges are no cut (counted, they made "2 cuts shared" of any two configurations). Comparing sets of cuts says which cuts every configuration makes, which
only one of them makes, and whether two configurations make identical chunks; :func:`mark_cuts`
puts a marker at the cuts of a window rendered by :func:`explorer.render.html.render_chunks`
(``interactive=True``, whose text spans carry their offsets in ``data-o``).

Pure functions on ``(start, end)`` pairs and strings; nothing imported beyond the standard library.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise

from explorer.text.wording import plural

Span = tuple[int, int]


def cuts(spans: Iterable[Span]) -> frozenset[int]:
    """Where one chunk gives way to the next, in reading order: the next one's start, and where
    they overlap the end of the one before too (two cuts). A chunk that ends before the space
    that the next one starts after is one cut, not two: fixed 500 with 6 chunks read "6 cuts"."""
    ordered = sorted({(int(s), int(e)) for s, e in spans})
    out: set[int] = set()
    for a, b in pairwise(ordered):
        out.add(b[0])
        if b[0] < a[1]:
            out.add(a[1])
    if ordered:
        out -= {ordered[0][0], max(e for _, e in ordered)}  # the text's edges
    return frozenset(out)


def overlapping(spans: Iterable[Span]) -> bool:
    """Whether some chunk starts before the one before it ends (each boundary then two cuts)."""
    ordered = sorted(spans)
    return any(b[0] < a[1] for a, b in pairwise(ordered))


@dataclass(frozen=True)
class PairDiff:
    """The cuts of ``a`` and ``b``: made by both, only by ``a``, only by ``b``."""

    shared: frozenset[int]
    only_a: frozenset[int]
    only_b: frozenset[int]
    identical: bool  # the same chunks, in the same order

    @property
    def same_cuts(self) -> bool:
        return not self.only_a and not self.only_b


def pair_diff(a: Sequence[Span], b: Sequence[Span]) -> PairDiff:
    ca, cb = cuts(a), cuts(b)
    return PairDiff(ca & cb, ca - cb, cb - ca, [tuple(s) for s in a] == [tuple(s) for s in b])


@dataclass(frozen=True)
class BoundaryDiff:
    """The cuts of several configurations (one entry per configuration, in order).

    ``shared``: cuts every configuration makes. ``unique[i]``: cuts only configuration ``i``
    makes (none when it is alone). ``partial[i]``: cuts ``i`` makes with some others but not all (only with 3 or more).
    ``twins[i]``: the other configurations with exactly the same chunks as ``i``.
    """

    cuts: tuple[frozenset[int], ...]
    shared: frozenset[int]
    unique: tuple[frozenset[int], ...]
    partial: tuple[frozenset[int], ...]
    twins: tuple[tuple[int, ...], ...]
    overlap: bool = False  # some configuration's chunks overlap

    def makers(self, offset: int) -> tuple[int, ...]:
        """The configurations that cut at ``offset``."""
        return tuple(i for i, c in enumerate(self.cuts) if offset in c)

    @property
    def all_identical(self) -> bool:
        return len(self.cuts) > 1 and all(len(t) == len(self.cuts) - 1 for t in self.twins)


def boundary_diff(configs: Sequence[Sequence[Span]]) -> BoundaryDiff:
    """Compare the chunks ``(start, end)`` of each configuration over the same text."""
    sets = tuple(cuts(spans) for spans in configs)
    shared = frozenset.intersection(*sets) if sets else frozenset()
    unique, partial = [], []
    for i, mine in enumerate(sets):
        others = frozenset().union(*(s for j, s in enumerate(sets) if j != i))
        only = mine - others if len(sets) > 1 else frozenset()  # alone, every cut is "shared"
        unique.append(only)
        partial.append(mine - shared - only)
    normal = [[tuple(s) for s in spans] for spans in configs]
    twins = tuple(
        tuple(j for j in range(len(normal)) if j != i and normal[j] == normal[i]) for i in range(len(normal))
    )
    return BoundaryDiff(sets, shared, tuple(unique), tuple(partial), twins, any(overlapping(c) for c in configs))


def summary(diff: BoundaryDiff, names: Sequence[str]) -> str:
    """One plain line: "120 cuts shared, 14 only in 1, 9 only in 2" (``names`` name the
    configurations, e.g. their numbers), and which ones make identical chunks."""
    if len(diff.cuts) < 2:
        return ""
    shared = f"{plural(len(diff.shared), 'cut')} shared"
    if len(diff.cuts) > 2:
        shared += " by all"
    parts = [shared] + [f"{len(u):,} only in {names[i]}" for i, u in enumerate(diff.unique)]
    if len(diff.cuts) > 2:
        some = len(frozenset().union(*diff.partial))
        if some:
            parts.append(f"{some:,} in some but not all")
    line = ", ".join(parts)
    if diff.overlap:
        line += " (where chunks overlap, one ends and the next starts at two cuts)"
    groups = identical_groups(diff)
    if diff.all_identical:
        return line + " · identical chunks: every configuration cuts this text the same way"
    if groups:
        said = "; ".join(" and ".join(names[i] for i in g) for g in groups)
        line += f" · identical chunks: {said}"
    return line


def identical_groups(diff: BoundaryDiff) -> list[tuple[int, ...]]:
    """Groups (2 or more) of configurations with exactly the same chunks, in order."""
    seen: set[int] = set()
    groups = []
    for i, twins in enumerate(diff.twins):
        if twins and i not in seen:
            group = tuple(sorted((i, *twins)))
            seen.update(group)
            groups.append(group)
    return groups


# -- markers in rendered HTML ---------------------------------------------------------------------
#: The index badges of chunks starting at a piece of text, then that piece (with its offset).
_PIECE = re.compile(
    r'((?:<span\b[^>]*\bclass="ce-idx[^"]*"[^>]*>[^<]*</span>)*)(<span\b[^>]*\bdata-o="(\d+)")'
)


def marker(kind: str, title: str) -> str:
    """A cut marker: ``kind`` "only" (a cut only this configuration makes) or "some" (a cut
    some, but not all, configurations make); ``title`` is plain text, escaped here."""
    return f'<span class="ce-cut ce-cut-{kind}" title="{html.escape(title)}" data-cut="1"></span>'


def mark_cuts(body: str, marks: Mapping[int, str]) -> str:
    """``body`` with ``marks[offset]`` (markup, e.g. :func:`marker`) before the text at each
    offset (and before the index badges of the chunks starting there). Offsets with no text
    in the window are left out; so is everything else about ``body``."""
    if not marks:
        return body

    def put(m: re.Match[str]) -> str:
        offset = int(m.group(3))
        return marks[offset] + m.group(0) if offset in marks else m.group(0)

    return _PIECE.sub(put, body)
