"""LangChain's recursive character splitting, replayed on offsets (shared by ``recursive``,
``markdown``, ``semantic`` and ``cluster``).

The algorithm is LangChain's ``RecursiveCharacterTextSplitter`` step by step: pick the first
separator present in the piece, split, merge the pieces shorter than ``chunk_size`` greedily with
``chunk_overlap``, recurse into the longer ones with the remaining separators. What is carried
around differs: every piece is a ``(start, end)`` slice of the document, so each chunk's offsets
are known by construction. The merge works on cumulative lengths (one ``bisect`` per chunk end
and overlap start), with ``chars`` no piece string is built, and with token units the pieces of
one level are measured in one batch call. See :mod:`explorer.strategies.recursive` for the
deviations from LangChain and the regex separator rules.
"""

from __future__ import annotations

import re
import time
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Mapping, Sequence
from operator import sub
from typing import Any

import numpy as np

from explorer.errors import LimitError
from explorer.limits import MAX_CHUNKS, REGEX_TIME_BUDGET_S
from explorer.strategies.scanning import FastPieces, Piece, add_stripped, separator_reason
from explorer.strategies.separators import VECTOR_MIN_CHARS, split_bounds
from explorer.text.chunk import END_OF_TEXT, UNBREAKABLE, Span
from explorer.text.length import CharLength, Length

#: Whitespace as ``str.split`` (and so the words unit) sees it.
_SPACE = re.compile(r"\s")

DEFAULT_SEPARATORS = ("\n\n", "\n", " ", "")
#: Shorter texts are simply tokenized piece by piece (building the token index costs a pass).
TOKEN_INDEX_MIN_CHARS = 2_000

#: Exact lengths of many slices ``text[starts[k]:ends[k]]`` at once.
SliceCounter = Callable[[Sequence[int], Sequence[int]], list[int]]
#: Added to the reason of a token-unit chunk that measures over size as a whole (see below).
OVER_SIZE = "over size as LangChain counts pieces one by one"

CHARS = CharLength()


class RecursiveSplitter(FastPieces):
    """LangChain's ``RecursiveCharacterTextSplitter`` replayed on ``(start, end)`` slices.

    ``split(start, end)`` returns pieces of ``text[start:end]`` as ``(start, end, reason)``;
    the last reason is None when the chunk ends where the range ends.
    """

    #: Characters with a one-character separator kept at the start (the defaults' lines and
    #: words): scan the text instead of listing pieces (:meth:`_split_scan`; off in tests
    #: that compare it with the general path).
    scan = True

    def __init__(
        self,
        text: str,
        *,
        chunk_size: int,
        chunk_overlap: int,
        separators: Sequence[str] = DEFAULT_SEPARATORS,
        keep_separator: str = "start",
        patterns: Mapping[str, Any] | None = None,
        length: Length = CHARS,
        span_length: SliceCounter | None = None,
    ) -> None:
        """``separators`` and ``keep_separator`` are checked by the caller; ``patterns`` holds the
        compiled regex separators (None: the separators are literal)."""
        self.text = text
        self.size = chunk_size
        self.overlap = chunk_overlap
        self.separators = tuple(separators)
        self.keep = keep_separator
        self.regex = patterns is not None
        self.length = length
        self.unit = length.name
        #: chars: lengths are offset differences (exact and fast); else call ``length``.
        self.chars = self.unit == "chars"
        #: chars and words: a merged chunk never measures more than LangChain's running total.
        self.additive = self.chars or self.unit == "words"
        self._patterns = dict(patterns or {})
        #: exact ``length(text[s:t])`` of many slices from one tokenisation (token_counter)
        self._span_length = None if self.chars else span_length
        #: the token index behind span_length, when its gap counts serve this split: a line or
        #: word piece is looked up (TokenIndex.gap_counts) rather than counted each run
        owner = getattr(span_length, "__self__", None)
        usable = hasattr(owner, "gap_counts") and self.keep == "start" and patterns is None
        self._gap_index = owner if usable and owner.text == text else None
        self._len_cache: dict[str, int] = {}
        self._codes: np.ndarray | None = None  # the text's code points, for _positions
        self._found: dict[str, np.ndarray] = {}
        #: token units: each piece of the last split measured whole (None: not measured)
        self.lengths: list[int] | None = None

    # -- public ----------------------------------------------------------------------------
    def split(self, start: int = 0, end: int | None = None) -> list[Piece]:
        end = len(self.text) if end is None else end
        out: list[Piece] = []
        self.lengths = None
        self._deadline = time.monotonic() + REGEX_TIME_BUDGET_S
        if end > start:
            try:
                self._split(start, end, self.separators, out)
            except TimeoutError:
                raise LimitError(
                    f"the regex separators {list(self._patterns)!r} took over {REGEX_TIME_BUDGET_S:g} s "
                    "on this document (catastrophic backtracking?): simplify them or use plain separators"
                ) from None
        if not self.additive:
            self._flag_oversize(out)
        return out

    def _flag_oversize(self, out: list[Piece]) -> None:
        """Token units: say so where a chunk measured whole is over size.

        LangChain adds up the lengths of the pieces it merges; a token count is not additive
        (stripping " renewable" to "renewable" can turn one token into two), so a chunk can
        come out a token or two over. We keep LangChain's chunk and say it in the reason.
        """
        size = self.size
        counts = self.lengths = self._span_lengths([s for s, _, _ in out], [t for _, t, _ in out])
        for i, n in enumerate(counts):
            s, t, why = out[i]
            if n > size and not (why or "").startswith(UNBREAKABLE):
                out[i] = (s, t, f"{why or END_OF_TEXT}; {OVER_SIZE}: {n} {self.unit} measured whole")

    # -- LangChain's _split_text -----------------------------------------------------------
    def _has(self, sep: str, a: int, b: int) -> bool:
        if self.regex:
            return self._patterns[sep].search(self.text[a:b], timeout=self._time_left()) is not None
        return self.text.find(sep, a, b) >= 0

    def _time_left(self) -> float:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        return left

    def _split(self, a: int, b: int, seps: tuple[str, ...], out: list[Piece]) -> None:
        sep, rest = seps[-1], ()
        for i, s in enumerate(seps):
            if not s:
                sep = s
                break
            if self._has(s, a, b):
                sep, rest = s, seps[i + 1 :]
                break
        if not sep and self.size > 1 and (self.chars or self._a_word_each(a, b)):
            self._split_chars(a, b, out)
            return
        if self.scan and self.chars and self.keep == "start" and len(sep) == 1 and not self.regex:
            self._split_scan(a, b, sep, rest, out)
            return
        size = self.size
        if not sep and not self.chars and b - a > VECTOR_MIN_CHARS:
            starts, ends, q, e, lens, big = self._char_pieces(a, b)
        elif self._vector_ok(a, b, sep):
            starts, ends, q, e, lens, big = self._pieces_np(a, b, sep)
        else:
            starts, ends = self._pieces(a, b, sep)
            if not starts:
                return
            q, e, lens = self._coords(starts, ends, sep)
            big = [k for k, n in enumerate(lens) if n >= size] if max(lens) >= size else []
        m = len(starts)
        reason = separator_reason(sep)
        run = 0
        for k in big:
            if run < k:
                self._merge(run, k, starts, ends, q, e, reason, reason, out)
            if not rest:
                n = ends[k] - starts[k] if lens is None else lens[k]
                if n > size:
                    why = f"{UNBREAKABLE}: {n} {self.unit} and no separator left to split it"
                else:
                    why = reason if k < m - 1 else None
                self._emit_raw(starts[k], ends[k], why, out)
            else:
                n0 = len(out)
                self._split(starts[k], ends[k], rest, out)
                if k < m - 1 and len(out) > n0 and out[-1][2] is None:
                    out[-1] = (out[-1][0], out[-1][1], reason)
            run = k + 1
        if run < m:
            self._merge(run, m, starts, ends, q, e, reason, None, out)

    def _a_word_each(self, a: int, b: int) -> bool:
        """In words, each character of a range without whitespace is one word: cut as characters."""
        return self.unit == "words" and not _SPACE.search(self.text, a, b)

    def _split_chars(self, a: int, b: int, out: list[Piece]) -> None:
        """:meth:`_merge` of ``text[a:b]`` cut between every character (the "" separator),
        by arithmetic: windows of ``size`` characters, each starting ``overlap`` before the last
        one's end. Why: a list of every character's offsets cost ~90 bytes a character (1.8 GB
        for a 20 MB line with no space; 3.9 GB in words, where each character of a range without
        whitespace is one word, so the same windows)."""
        size, overlap, text, reason = self.size, self.overlap, self.text, separator_reason("")
        prev = out[-1][0] if out else -1
        i = a
        while True:
            k = min(i + size, b)
            last = k >= b
            prev = add_stripped(text, i, k, None if last else reason, prev, out)
            if last:
                return
            i = k - overlap

    def _pieces(self, a: int, b: int, sep: str) -> tuple[list[int], list[int]]:
        if self.regex and sep:
            return split_bounds(self.text, a, b, sep, self.keep, self._patterns[sep], self._time_left())
        return split_bounds(self.text, a, b, sep, self.keep)

    def _coords(self, starts: list[int], ends: list[int], sep: str) -> tuple[list[int], list[int], list[int]]:
        """Cumulative "length coordinates" q (piece start), e (piece end) and piece lengths.

        LangChain's running total of pieces i..j (lengths plus the separator length between
        them) is ``e[j] - q[i]``. With chars that is exactly ``ends[j] - starts[i]``.
        """
        if self.chars:
            return starts, ends, list(map(sub, ends, starts))
        lens = self._span_lengths(starts, ends)
        text = self.text
        if self.keep != "false":
            gap = self._len("")  # LangChain joins kept-separator pieces with "" (not free for tokens)
            gaps = [gap] * len(starts)
        else:
            gaps = [self._len(text[t:s]) for t, s in zip(ends, starts[1:], strict=False)]
            gaps.insert(0, 0)
        if len(lens) < 16:  # numpy's call overhead is more than a short loop
            q, e, pos = [], [], 0
            for n, g in zip(lens, gaps, strict=True):
                pos += g if q else 0
                q.append(pos)
                pos += n
                e.append(pos)
            return q, e, lens
        # q[k] = lens[0] + gaps[1] + ... + gaps[k] + lens[k - 1]; e[k] = q[k] + lens[k]
        steps = np.asarray(lens, dtype=np.int64)
        steps[1:] += np.asarray(gaps[1:], dtype=np.int64)
        e_arr = np.cumsum(steps)
        q_arr = e_arr - np.asarray(lens, dtype=np.int64)
        return q_arr.tolist(), e_arr.tolist(), lens

    def _span_lengths(self, starts: list[int], ends: list[int]) -> list[int]:
        """``length(text[s:t])`` for each piece: from the token index when there is one (no
        tokenizing), else through ``_lengths``."""
        if self._span_length is not None:
            return self._span_length(starts, ends)
        text = self.text
        return self._lengths([text[s:t] for s, t in zip(starts, ends, strict=True)])

    def _lengths(self, strings: list[str]) -> list[int]:
        """``length`` of each string: repeated pieces (words) are measured once, the rest in
        one batch call where the length function has one."""
        cache = self._len_cache
        todo = [s for s in dict.fromkeys(strings) if s not in cache]
        if todo:
            counts = self.length.count_batch(todo)
            cache.update(zip(todo, counts, strict=True))
        return list(map(cache.__getitem__, strings))

    def _len(self, s: str) -> int:
        n = self._len_cache.get(s)
        if n is None:
            n = self._len_cache[s] = self.length(s)
        return n

    # -- LangChain's _merge_splits ---------------------------------------------------------
    def _merge(
        self,
        lo: int,
        hi: int,
        starts: list[int],
        ends: list[int],
        q: list[int],
        e: list[int],
        reason: str,
        last_reason: str | None,
        out: list[Piece],
    ) -> None:
        """Greedy merge of pieces lo..hi-1 (each shorter than size) with overlap.

        Replays LangChain's loop: a chunk takes pieces while the total stays <= size; then
        pieces are dropped from its front while the total is over the overlap or the next
        piece would not fit. Both ends are found by bisection on the cumulative coordinates.
        """
        size, overlap, chars, text = self.size, self.overlap, self.chars, self.text
        prev = out[-1][0] if out else -1
        i, nxt = lo, lo + 1
        while True:
            k = bisect_right(e, q[i] + size, nxt, hi)
            last = k >= hi
            prev = add_stripped(
                text, starts[i], ends[hi - 1 if last else k - 1], last_reason if last else reason, prev, out
            )
            if last:
                return
            j = bisect_left(q, max(e[k - 1] - overlap, e[k] - size), i, k)
            if not chars:  # LangChain also stops when the total is 0 (zero-length pieces)
                j = min(j, bisect_left(q, e[k - 1], i, k))
            i, nxt = j, k + 1

    def _emit_raw(self, s: int, t: int, reason: str | None, out: list[Piece]) -> None:
        """A piece LangChain returns as is (unstripped); dropped if only whitespace."""
        if self.text[s:t].isspace():
            return
        if out and out[-1][0] == s:
            out[-1] = (s, t, reason)
        else:
            out.append((s, t, reason))


def token_counter(text: str, length: Length) -> SliceCounter | None:
    """Exact model-token counts of slices of ``text`` from one (cached) tokenisation of it, or
    None for other units and short texts (:class:`~explorer.text.token_counts.TokenIndex`):
    one pass over the document replaces tokenizing every paragraph, line and chunk again."""
    if not hasattr(length, "index") or len(text) < TOKEN_INDEX_MIN_CHARS:
        return None
    return length.index(text).count_bounds


def pieces_to_spans(
    pieces: list[Piece], last: str = END_OF_TEXT, lengths: Sequence[int] | None = None
) -> list[Span]:
    """Spans from splitter pieces; the final chunk's open reason becomes ``last``. ``lengths``:
    the pieces' lengths when the splitter measured them (:attr:`RecursiveSplitter.lengths`)."""
    ns = lengths if lengths is not None else [-1] * len(pieces)  # -1: not measured
    spans = [Span(s, t, r if r is not None else last, (), n) for (s, t, r), n in zip(pieces, ns, strict=True)]
    if spans and not spans[-1].reason.startswith(UNBREAKABLE):
        s = spans[-1]
        note = s.reason.partition("; ")[2]  # keep an over-size note
        spans[-1] = Span(s.start, s.end, f"{last}; {note}" if note else last, s.meta, s.length)
    return spans


def chars_over_limit(text: str, size: int, limit: int) -> int:
    """The non-space characters of ``text`` when they cannot fit in ``limit`` chunks of ``size``
    characters (every one is in a chunk), else 0: cheap, so checked before splitting."""
    if len(text) <= limit * size:
        return 0
    nonspace = sum(map(len, text.split()))
    return nonspace if nonspace > limit * size else 0


def split_range(
    text: str,
    start: int,
    end: int,
    length: Length,
    size: int,
    separators: Sequence[str] = DEFAULT_SEPARATORS,
    *,
    doc_name: str,
    param: str,
) -> list[Span]:
    """Spans of at most ``size`` units covering ``text[start:end]``, cut as ``recursive`` cuts
    with these separators and no overlap (``semantic``'s long chunks, ``cluster``'s pieces).
    ``param`` names the caller's size parameter if the pieces would be too many."""
    sub_text = text[start:end]
    if length.name == "chars" and "" in separators and chars_over_limit(sub_text, size, MAX_CHUNKS):
        raise LimitError(
            f"{param}={size} {length.name} would cut {doc_name!r} into over {MAX_CHUNKS:,} pieces: "
            f"use a larger {param}"
        )
    splitter = RecursiveSplitter(
        sub_text,
        chunk_size=size,
        chunk_overlap=0,
        separators=separators,
        length=length,
        span_length=token_counter(sub_text, length),
    )
    spans = pieces_to_spans(splitter.split(), lengths=splitter.lengths)
    return [Span(s.start + start, s.end + start, s.reason, s.meta, s.length) for s in spans]
