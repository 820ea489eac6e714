"""LangChain's recursive character splitting, on offsets.

Same chunks as ``langchain_text_splitters.RecursiveCharacterTextSplitter`` with the same
settings (``strip_whitespace=True``, ``keep_separator``, ``length_function``), because the
algorithm is replayed step by step: pick the first separator present in the piece, split,
merge the pieces shorter than ``chunk_size`` greedily with ``chunk_overlap``, recurse into
the longer ones with the remaining separators. The difference is what is carried around:
every piece is a ``(start, end)`` slice of the document, so each chunk's offsets are known by
construction (LangChain's ``add_start_index`` finds them again with ``str.find``, which lands
on the wrong copy of repeated text).

Why it is faster than LangChain: the merge step works on cumulative lengths, so a chunk's end
and the start of its overlap are each found with one ``bisect`` instead of a Python loop over
every piece; with ``chars`` the lengths are offset differences and no piece string is built;
with token units the pieces of one level are measured in one batch call.

Defaults: ``chunk_size=1000``, ``chunk_overlap=200`` (LangChain's 4000 is too big to look at
in the app), LangChain's separators ``["\\n\\n", "\\n", " ", ""]`` and ``keep_separator``
``"start"`` (LangChain's ``True``).

Deviations from LangChain, all where its output is not a slice of the text or would break an
invariant (offsets are the truth):

- ``keep_separator="false"`` re-joins pieces with ONE separator. Where the text had several in
  a row (``"a\\n\\n\\n\\nb"`` split on ``"\\n\\n"``) LangChain returns ``"a\\n\\nb"``, which is not
  in the text; our chunk is the true slice ``"a\\n\\n\\n\\nb"``, and the size bookkeeping counts
  the gap as it really is (so the size limit holds), which can move later boundaries of that
  merge. Wherever every gap is a single separator, both agree exactly.
- ``keep_separator="false"`` drops the separators at chunk boundaries, so it is refused for a
  separator that is not only whitespace (``". "`` would lose its full stops: every non-space
  character must be in a chunk) and for regex separators (LangChain then re-joins pieces with
  the *pattern* text itself, e.g. a literal ``\\.\\s``).
- A piece that cannot be split further is returned unstripped, as LangChain does; if it is
  only whitespace LangChain returns it as a chunk and we drop it (no whitespace-only chunks).
- With overlap, whitespace-only pieces can make two consecutive LangChain chunks start at the
  same character (the first a prefix of the second); we keep only the longer one, since chunk
  starts must strictly increase.

Regex separators (the text is untrusted, the pattern is the user's): they must compile with
Python's ``re`` (what LangChain uses) and are matched with the ``regex`` module, which follows
``re``'s syntax and matching rules (its VERSION0) but takes a timeout. Two guards against
catastrophic backtracking: patterns that repeat a group holding another quantifier or an
alternation (``(a+)+``, ``(?:a|ab)*``) are refused up front, and all matching for one document
shares a budget of ``explorer.limits.REGEX_TIME_BUDGET_S`` seconds, past which a LimitError
names the pattern (even ``\\s+x`` takes quadratic time in ``re`` on a long run of spaces).
Capturing groups are refused too: they change what ``re.split`` returns.
"""

from __future__ import annotations

import re
import time
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from itertools import accumulate
from operator import sub
from typing import Any

from explorer.errors import LimitError, ParamError
from explorer.limits import MAX_CHUNKS, MAX_SEPARATOR_CHARS, REGEX_TIME_BUDGET_S
from explorer.strategies.base import LENGTH_PARAM, Param, Strategy, check_size_overlap
from explorer.strategies.registry import register
from explorer.text.chunk import END_OF_TEXT, SEPARATOR, SIZE_LIMIT, UNBREAKABLE, Span

DEFAULT_SEPARATORS = ("\n\n", "\n", " ", "")
KEEP_CHOICES = ("start", "end", "false")
#: Shorter texts are simply tokenized piece by piece (building the token index costs a pass).
TOKEN_INDEX_MIN_CHARS = 2_000
#: Added to the reason of a token-unit chunk that measures over size as a whole (see below).
OVER_SIZE = "over size as LangChain counts pieces one by one"

#: (start, end, reason); reason None means "ends where the range ends" (the caller knows why).
Piece = tuple[int, int, "str | None"]


def separator_reason(sep: str) -> str:
    """Reason of a chunk that ends at a boundary made by ``sep`` ("" = between two characters)."""
    return SIZE_LIMIT if sep == "" else f"{SEPARATOR} {sep!r}"


def check_separators(
    separators: Sequence[str], is_regex: bool, keep: str = "start", name: str = "separators"
) -> None:
    """Refuse empty lists, over-long separators, (regex) unsafe or invalid patterns, and
    dropping separators that hold text (see the module docstring)."""
    if not separators:
        raise ParamError(f'{name}=[] is empty: give at least one separator, e.g. ["\\n\\n", " ", ""]')
    if keep == "false" and is_regex:
        raise ParamError(
            "keep_separator='false' with is_separator_regex=true is refused: LangChain re-joins the "
            "pieces with the pattern text itself; use keep_separator 'start' or 'end'"
        )
    for sep in separators:
        if keep == "false" and sep.strip():
            raise ParamError(
                f"keep_separator='false' would drop the separator {sep!r} and its non-space characters "
                "from the chunks; use keep_separator 'start' or 'end'"
            )
        if len(sep) > MAX_SEPARATOR_CHARS:
            raise ParamError(
                f"separator {sep[:20]!r}... is {len(sep)} characters long; the limit is {MAX_SEPARATOR_CHARS}"
            )
        if is_regex and sep:
            compile_separator(sep)


def compile_separator(pattern: str) -> Any:
    """Compile a regex separator (a ``regex`` pattern, see the module docstring) or raise
    ParamError saying what is wrong with it."""
    try:
        compiled = re.compile(pattern)
    except re.error as err:
        raise ParamError(f"separator {pattern!r} is not a valid regular expression: {err}") from None
    if compiled.groups:
        raise ParamError(
            f"separator {pattern!r} has a capturing group; use a non-capturing group (?:...) instead"
        )
    problem = _backtracking_risk(pattern)
    if problem:
        raise ParamError(f"separator {pattern!r} is refused: {problem} (risk of catastrophic backtracking)")
    import regex

    try:
        return regex.compile(pattern, regex.VERSION0)
    except regex.error as err:
        raise ParamError(f"separator {pattern!r} is not supported: {err}") from None


def _backtracking_risk(pattern: str) -> str:
    """Structural check on the parsed pattern; returns a description of the risk or ''."""
    from re import _parser as sre_parse  # the parser behind re.compile (stable since 3.11)

    repeats = {sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT}
    repeats |= {getattr(sre_parse, "POSSESSIVE_REPEAT", sre_parse.MAX_REPEAT)}

    def children(op: Any, av: Any) -> list[Any]:
        if op in repeats:
            return [av[2]]
        if op is sre_parse.SUBPATTERN:
            return [av[3]]
        if op is sre_parse.BRANCH:
            return list(av[1])
        if op in (sre_parse.ASSERT, sre_parse.ASSERT_NOT):
            return [av[1]]
        if op is sre_parse.GROUPREF_EXISTS:
            return [x for x in av[1:] if x is not None]
        if op is getattr(sre_parse, "ATOMIC_GROUP", None):
            return [av]
        return []

    def risky(seq: Any, inside_repeat: bool) -> str:
        for op, av in seq:
            if op in (sre_parse.GROUPREF, sre_parse.GROUPREF_EXISTS):
                return "back-references are not allowed"
            is_repeat = op in repeats and av[1] > 1
            if inside_repeat and is_repeat:
                return "a quantifier inside a repeated group"
            if inside_repeat and op is sre_parse.BRANCH:
                return "an alternation inside a repeated group"
            for child in children(op, av):
                found = risky(child, inside_repeat or is_repeat)
                if found:
                    return found
        return ""

    return risky(sre_parse.parse(pattern), False)


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


class RecursiveSplitter:
    """LangChain's ``RecursiveCharacterTextSplitter`` replayed on ``(start, end)`` slices.

    ``split(start, end)`` returns pieces of ``text[start:end]`` as ``(start, end, reason)``;
    the last reason is None when the chunk ends where the range ends.
    """

    def __init__(
        self,
        text: str,
        *,
        chunk_size: int,
        chunk_overlap: int,
        separators: Sequence[str] = DEFAULT_SEPARATORS,
        keep_separator: str = "start",
        is_separator_regex: bool = False,
        length: Callable[[str], int] = len,
        unit: str = "chars",
        span_length: Callable[[int, int], int | None] | None = None,
    ) -> None:
        if keep_separator not in KEEP_CHOICES:
            raise ParamError(f"keep_separator={keep_separator!r} is not one of {', '.join(KEEP_CHOICES)}")
        check_separators(separators, is_separator_regex, keep_separator)
        self.text = text
        self.size = chunk_size
        self.overlap = chunk_overlap
        self.separators = tuple(separators)
        self.keep = keep_separator
        self.regex = is_separator_regex
        self.length = length
        self.unit = unit
        #: chars: lengths are offset differences (exact and fast); else call ``length``.
        self.chars = unit == "chars" or length is len
        #: chars and words: a merged chunk never measures more than LangChain's running total.
        self.additive = self.chars or unit == "words"
        self._patterns = {s: compile_separator(s) for s in separators if s} if is_separator_regex else {}
        self._batch = getattr(length, "count_batch", None)
        #: exact ``length(text[s:t])`` from offsets, or None where it cannot tell (token_counter)
        self._span_length = None if self.chars else span_length
        self._len_cache: dict[str, int] = {}

    # -- public ----------------------------------------------------------------------------
    def split(self, start: int = 0, end: int | None = None) -> list[Piece]:
        end = len(self.text) if end is None else end
        out: list[Piece] = []
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
        counts = self._span_lengths([s for s, _, _ in out], [t for _, t, _ in out])
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
        starts, ends = self._pieces(a, b, sep)
        if not starts:
            return
        q, e, lens = self._coords(starts, ends, sep)
        m = len(starts)
        size = self.size
        reason = separator_reason(sep)
        run = 0
        big = [k for k, n in enumerate(lens) if n >= size] if max(lens) >= size else []
        for k in big:
            if run < k:
                self._merge(run, k, starts, ends, q, e, reason, reason, out)
            if not rest:
                if lens[k] > size:
                    why = f"{UNBREAKABLE}: {lens[k]} {self.unit} and no separator left to split it"
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
        q: list[int] = []
        e: list[int] = []
        pos = 0
        for n, g in zip(lens, gaps, strict=True):
            pos += g if q else 0
            q.append(pos)
            pos += n
            e.append(pos)
        return q, e, lens

    def _span_lengths(self, starts: list[int], ends: list[int]) -> list[int]:
        """``length(text[s:t])`` for each piece: long pieces from the token index when there is
        one (no tokenizing), the others (and index misses) through ``_lengths``."""
        text, fast = self.text, self._span_length
        if fast is None:
            return self._lengths([text[s:t] for s, t in zip(starts, ends, strict=True)])
        lens: list[int | None] = [
            fast(s, t) if t - s > 64 else None for s, t in zip(starts, ends, strict=True)
        ]
        todo = [i for i, n in enumerate(lens) if n is None]
        if todo:
            for i, n in zip(todo, self._lengths([text[starts[i] : ends[i]] for i in todo]), strict=True):
                lens[i] = n
        return lens  # type: ignore[return-value]

    def _lengths(self, strings: list[str]) -> list[int]:
        """``length`` of each string: repeated pieces (words) are measured once, the rest in
        one batch call where the length function has one."""
        cache = self._len_cache
        todo = [s for s in dict.fromkeys(strings) if s not in cache]
        if todo:
            counts = self._batch(todo) if self._batch else map(self.length, todo)
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
        append = out.append
        prev = out[-1][0] if out else -1
        i, nxt = lo, lo + 1
        while True:
            k = bisect_right(e, q[i] + size, nxt, hi)
            last = k >= hi
            s, t = starts[i], ends[hi - 1 if last else k - 1]
            while s < t and text[s].isspace():  # LangChain's strip(), on offsets
                s += 1
            while t > s and text[t - 1].isspace():
                t -= 1
            if s < t:
                if s == prev:  # same start as the previous chunk, which it contains
                    out[-1] = (s, t, last_reason if last else reason)
                else:
                    append((s, t, last_reason if last else reason))
                    prev = s
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


def token_counter(text: str, length: Any) -> Callable[[int, int], int | None] | None:
    """Exact model-token counts of slices of ``text`` without tokenizing them, or None.

    For the WordPiece tokenizers of BERT-style models (the bundled default), a slice whose
    edges fall between words has exactly the pieces the whole text has there
    (``explorer.text.token_counts.TokenIndex``, which returns None for a slice that cuts a word). One
    pass over the document replaces tokenizing every paragraph, line and chunk again.
    """
    tokenizer = getattr(length, "_tok", None)
    if tokenizer is None or getattr(length, "name", "") != "tokens" or len(text) < TOKEN_INDEX_MIN_CHARS:
        return None
    try:
        from explorer.text.token_counts import TokenIndex
    except ImportError:  # pragma: no cover - optional speed-up
        return None
    index = TokenIndex(text, tokenizer)
    return index.fast_count if getattr(index, "word_piece", False) else None


def pieces_to_spans(pieces: list[Piece], last: str = END_OF_TEXT) -> list[Span]:
    """Spans from splitter pieces; the final chunk's open reason becomes ``last``."""
    spans = [Span(s, t, r if r is not None else last) for s, t, r in pieces]
    if spans and not spans[-1].reason.startswith(UNBREAKABLE):
        note = spans[-1].reason.partition("; ")[2]  # keep an over-size note
        spans[-1] = Span(spans[-1].start, spans[-1].end, f"{last}; {note}" if note else last)
    return spans


@register
class RecursiveStrategy(Strategy):
    name = "recursive"
    description = (
        "LangChain's RecursiveCharacterTextSplitter, same chunks, with exact offsets: split on the "
        "first separator found (paragraphs, then lines, then words, then characters), merge pieces "
        "up to chunk_size with chunk_overlap, and split further only what is still too long."
    )
    params = (
        Param("chunk_size", "int", 1000, "Largest chunk, in the length unit.", min=1, max=100_000, step=10),
        Param(
            "chunk_overlap",
            "int",
            200,
            "Units the next chunk may repeat from the end of the previous one (< chunk_size).",
            min=0,
            max=100_000,
            step=10,
        ),
        Param(
            "separators",
            "str_list",
            DEFAULT_SEPARATORS,
            'Separators tried in order; "" splits between characters (LangChain\'s default list).',
        ),
        Param(
            "keep_separator",
            "choice",
            "start",
            "Where the separator goes: at the start of the next piece (LangChain's True), at the "
            "end of the previous one, or dropped between pieces.",
            choices=KEEP_CHOICES,
        ),
        Param(
            "is_separator_regex",
            "bool",
            False,
            "Treat separators as Python regular expressions (no capturing groups, no nested quantifiers).",
        ),
        LENGTH_PARAM,
    )

    def check(self, p: dict[str, Any]) -> None:
        check_size_overlap(p)
        check_separators(p["separators"], p["is_separator_regex"], p["keep_separator"])

    def split(self, doc, p, ctx) -> list[Span]:
        _refuse_too_many_chunks(doc, p)
        length = ctx.length(p["length"])
        splitter = RecursiveSplitter(
            doc.text,
            chunk_size=p["chunk_size"],
            chunk_overlap=p["chunk_overlap"],
            separators=p["separators"],
            keep_separator=p["keep_separator"],
            is_separator_regex=p["is_separator_regex"],
            length=length,
            unit=p["length"],
            span_length=token_counter(doc.text, length),
        )
        return pieces_to_spans(splitter.split())


def _refuse_too_many_chunks(doc, p: dict[str, Any]) -> None:
    """Fail before splitting (not after building millions of spans) when characters with a
    "" separator cannot fit in MAX_CHUNKS chunks: every chunk then holds at most chunk_size
    characters and every non-space character is in one."""
    size, text = p["chunk_size"], doc.text
    if p["length"] != "chars" or "" not in p["separators"] or len(text) <= MAX_CHUNKS * size:
        return
    nonspace = sum(map(len, text.split()))
    if nonspace > MAX_CHUNKS * size:
        raise LimitError(
            f"recursive would make over {MAX_CHUNKS:,} chunks of {doc.name!r} ({nonspace:,} characters, "
            f"at most chunk_size={size} per chunk): use a larger chunk size"
        )
