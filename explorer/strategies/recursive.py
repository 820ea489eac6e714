"""LangChain's recursive character splitting, on offsets.

Same chunks as ``langchain_text_splitters.RecursiveCharacterTextSplitter`` with the same
settings (``strip_whitespace=True``, ``keep_separator``, ``length_function``), because
:class:`~explorer.strategies.splitting.RecursiveSplitter` replays its algorithm step by step
on ``(start, end)`` slices, so each chunk's offsets are known by construction (LangChain's
``add_start_index`` finds them again with ``str.find``, which lands on the wrong copy of
repeated text), and faster (cumulative lengths and ``bisect`` instead of loops over pieces).

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
  starts must strictly increase. Likewise a chunk of overlap and then only whitespace, stripped,
  lies inside the one before (``"installer:"`` then ``"ller:"``): it is dropped, since chunk ends
  must strictly increase too.

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
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from explorer.errors import LimitError, ParamError
from explorer.limits import MAX_CHUNKS, MAX_SEPARATOR_CHARS, MAX_SEPARATORS
from explorer.strategies.base import OVERLAP_BELOW_SIZE, PeerKit, Strategy, check_size_overlap
from explorer.strategies.params import (
    BOOL,
    CHOICE,
    CHUNK_OVERLAP,
    CHUNK_SIZE,
    LENGTH,
    STR_LIST,
    Param,
    declare,
)
from explorer.strategies.registry import register
from explorer.strategies.splitting import (
    DEFAULT_SEPARATORS,
    RecursiveSplitter,
    chars_over_limit,
    pieces_to_spans,
    token_counter,
)
from explorer.text.chunk import Span

KEEP_CHOICES = ("start", "end", "false")


def check_separators(
    separators: Sequence[str], is_regex: bool, keep: str = "start", name: str = "separators"
) -> None:
    """Refuse empty lists, over-long separators, (regex) unsafe or invalid patterns, and
    dropping separators that hold text (see the module docstring)."""
    if not separators:
        raise ParamError(f'{name}=[] is empty: give at least one separator, e.g. ["\\n\\n", " ", ""]')
    if len(separators) > MAX_SEPARATORS:
        raise ParamError(f"{name} has {len(separators):,} entries; the limit is {MAX_SEPARATORS}")
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
    _refuse_ambiguous(pattern)
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


def _refuse_ambiguous(pattern: str) -> None:
    """Refuse a set that Python's ``re`` warns about ("[[:alpha:]]", "[a--b]"): ``re`` (LangChain's
    reading) and the ``regex`` module that matches read it differently (for "[[:alpha:]]" one of
    "[:alph" then "]", the other any letter), and the warning reached the user as Python's own
    lines on stderr."""
    from re import _parser as sre_parse

    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        try:
            sre_parse.parse(pattern)
        except FutureWarning as warning:
            raise ParamError(
                f"separator {pattern!r} is ambiguous ({warning}: Python's re and the regex module that "
                "matches separators may read it differently); inside [...] escape '[' and doubled "
                "'-', '&', '~', '|' with a backslash, and write [:alpha:] as [^\\W\\d_]"
            ) from None
        except re.error:
            return  # re.compile says what is wrong


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


@dataclass(frozen=True)
class RecursiveParams:
    chunk_size: int = declare(CHUNK_SIZE)
    chunk_overlap: int = declare(CHUNK_OVERLAP.with_default(200))
    separators: tuple[str, ...] = declare(
        Param(
            "separators",
            STR_LIST,
            DEFAULT_SEPARATORS,
            'Separators tried in order; "" splits between characters (LangChain\'s default list).',
        )
    )
    keep_separator: str = declare(
        Param(
            "keep_separator",
            CHOICE,
            "start",
            "Where the separator goes: at the start of the next piece (LangChain's True), at the "
            "end of the previous one, or dropped between pieces.",
            choices=KEEP_CHOICES,
        )
    )
    is_separator_regex: bool = declare(
        Param(
            "is_separator_regex",
            BOOL,
            False,
            "Treat separators as Python regular expressions (no capturing groups, no nested quantifiers).",
        )
    )
    length: str = declare(LENGTH)


@register
class RecursiveStrategy(Strategy[RecursiveParams]):
    name = "recursive"
    description = (
        "LangChain's RecursiveCharacterTextSplitter, same chunks, with exact offsets: split on the "
        "first separator found (paragraphs, then lines, then words, then characters), merge pieces "
        "up to chunk_size with chunk_overlap, and split further only what is still too long."
    )
    Params = RecursiveParams
    rules = (OVERLAP_BELOW_SIZE,)

    def check(self, p: RecursiveParams) -> None:
        check_size_overlap(p.chunk_size, p.chunk_overlap, p.length)
        check_separators(p.separators, p.is_separator_regex, p.keep_separator)

    def size_cap(self, p: RecursiveParams) -> int:
        return p.chunk_size if "" in p.separators else 0

    def split(self, doc, p: RecursiveParams, ctx) -> list[Span]:
        _refuse_too_many_chunks(doc, p)
        length = ctx.length(p.length)
        patterns = {s: compile_separator(s) for s in p.separators if s} if p.is_separator_regex else None
        splitter = RecursiveSplitter(
            doc.text,
            chunk_size=p.chunk_size,
            chunk_overlap=p.chunk_overlap,
            separators=p.separators,
            keep_separator=p.keep_separator,
            patterns=patterns,
            length=length,
            span_length=token_counter(doc.text, length),
        )
        return pieces_to_spans(splitter.split(), lengths=splitter.lengths)

    def peer_code(self, p: RecursiveParams, kit: PeerKit) -> dict[str, str]:
        keep = {"start": "'start'", "end": "'end'", "false": "False"}[p.keep_separator]
        args = (
            f"chunk_size={p.chunk_size}, chunk_overlap={p.chunk_overlap}, "
            f"separators={kit.py(p.separators)}, keep_separator={keep}"
        )
        if p.is_separator_regex:
            args += ", is_separator_regex=True"
        note = "# same chunks as explorer's `recursive` (explorer also reports exact offsets)"
        li_note = (
            "# closest: LlamaIndex has no recursive character splitter; SentenceSplitter splits by\n"
            "# paragraphs, then sentences, then words, and merges up to chunk_size"
        )
        return {
            "langchain": kit.langchain(note, "RecursiveCharacterTextSplitter", args, p.length),
            "llamaindex": kit.li_sentences(li_note, p.chunk_size, p.chunk_overlap, p.length),
            "chonkie": _chonkie(p, kit),
        }


def _chonkie(p: RecursiveParams, kit: PeerKit) -> str:
    levels = []
    for sep in p.separators:
        if sep == "":
            levels.append("RecursiveLevel()")
        elif sep == " ":
            levels.append("RecursiveLevel(whitespace=True)")
        else:
            levels.append(f"RecursiveLevel(delimiters=[{sep!r}])")
    top = [
        "# closest: Chonkie's RecursiveChunker with the same separator levels (no overlap;",
        "# it also merges chunks under min_characters_per_chunk)",
        "from chonkie import RecursiveChunker, RecursiveLevel, RecursiveRules",
    ]
    if p.chunk_overlap:
        top.insert(2, f"# note: RecursiveChunker has no chunk_overlap (explorer uses {p.chunk_overlap})")
    tok = kit.chonkie_tokenizer(p.length)
    return kit.chonkie(
        top,
        [
            f"rules = RecursiveRules(levels=[{', '.join(levels)}])",
            f"chunker = RecursiveChunker(tokenizer={tok}, chunk_size={p.chunk_size}, rules=rules)",
        ],
    )


def _refuse_too_many_chunks(doc, p: RecursiveParams) -> None:
    """Fail before splitting (not after building millions of spans) when characters with a
    "" separator cannot fit in MAX_CHUNKS chunks of at most chunk_size characters."""
    if p.length != "chars" or "" not in p.separators:
        return
    nonspace = chars_over_limit(doc.text, p.chunk_size, MAX_CHUNKS)
    if nonspace:
        raise LimitError(
            f"recursive would make over {MAX_CHUNKS:,} chunks of {doc.name!r} ({nonspace:,} characters, "
            f"at most chunk_size={p.chunk_size} per chunk): use a larger chunk size"
        )
