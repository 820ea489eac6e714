"""Fixed-size windows of N units advancing by N - overlap (characters, words or tokens)."""

from __future__ import annotations

from dataclasses import dataclass

from explorer.strategies.base import OVERLAP_BELOW_SIZE, PeerKit, Strategy, check_size_overlap, trim
from explorer.strategies.packing import character_windows
from explorer.strategies.params import CHUNK_OVERLAP, CHUNK_SIZE, LENGTH, declare
from explorer.strategies.registry import register
from explorer.text.chunk import END_OF_TEXT, SIZE_LIMIT, UNBREAKABLE, Span
from explorer.text.length import INDEX_MIN_CHARS, Length
from explorer.text.words import has_joining, joined_at


@dataclass(frozen=True)
class FixedParams:
    chunk_size: int = declare(CHUNK_SIZE.with_default(500))
    chunk_overlap: int = declare(CHUNK_OVERLAP)
    length: str = declare(LENGTH)


@register
class FixedStrategy(Strategy[FixedParams]):
    name = "fixed"
    description = (
        "Windows of chunk_size units (characters, words or tokens), each starting "
        "chunk_size - chunk_overlap units after the previous one, the whitespace at their edges trimmed; "
        "a cut never separates a letter from its marks (a Thai vowel sign, an accent of decomposed text). "
        "Ignores structure: the baseline."
    )
    Params = FixedParams
    rules = (OVERLAP_BELOW_SIZE,)

    def check(self, p: FixedParams) -> None:
        check_size_overlap(p.chunk_size, p.chunk_overlap, p.length)

    def size_cap(self, p: FixedParams) -> int:
        return p.chunk_size

    def split(self, doc, p: FixedParams, ctx) -> list[Span]:
        text = doc.text
        size, overlap = p.chunk_size, p.chunk_overlap
        length = ctx.length(p.length)
        if p.length == "chars" and has_joining(text):
            bounds = character_windows(text, size, size - overlap)
        elif p.length == "chars":
            bounds = [(i, min(i + size, len(text))) for i in _window_starts(len(text), size, size - overlap)]
        else:
            bounds = _unit_windows(text, length, size, overlap)
        kept: list[tuple[int, int]] = []
        for a, b in bounds:
            s, e = trim(text, a, b)
            if e <= s or (kept and e <= kept[-1][1]):
                continue  # whitespace-only window, or nothing new beyond the previous chunk
            if kept and s == kept[-1][0]:  # trimmed to the previous chunk's start, reaching further:
                kept[-1] = (s, e)  # it replaces that chunk (skipping it lost the text past its end)
            else:
                kept.append((s, e))
        lengths = length.slices(text, kept)
        unbreakable = f"{UNBREAKABLE}: one {p.length} unit is longer than chunk_size"
        spans = [
            Span(s, e, unbreakable if n > size else SIZE_LIMIT, (), n)
            for (s, e), n in zip(kept, lengths, strict=True)
        ]
        if spans and spans[-1].reason == SIZE_LIMIT:
            spans[-1] = Span(spans[-1].start, spans[-1].end, END_OF_TEXT, (), spans[-1].length)
        return spans

    def peer_code(self, p: FixedParams, kit: PeerKit) -> dict[str, str]:
        unit, sizes = p.length, f"chunk_size={p.chunk_size}, chunk_overlap={p.chunk_overlap}"
        setup, tok = kit.li_tokenizer(unit)
        size = p.chunk_size - 2 if unit == "tokens" else p.chunk_size
        chonkie_tok = kit.chonkie_tokenizer(unit)
        return {
            "langchain": _langchain(p, kit),
            "llamaindex": kit.llamaindex(
                ["# closest: windows of tokens, but TokenTextSplitter prefers to cut at spaces (explorer cuts at the size)"],
                ["from llama_index.core.node_parser import TokenTextSplitter", *setup],
                [
                    f"parser = TokenTextSplitter(chunk_size={size}, chunk_overlap={p.chunk_overlap}, separator=' '{tok})"
                ],
            ),
            "chonkie": kit.chonkie(
                [
                    "# closest: windows of the same size and overlap, the whitespace at their edges kept "
                    "(explorer trims it)",
                    "from chonkie import TokenChunker",
                ],
                [f"chunker = TokenChunker(tokenizer={chonkie_tok}, {sizes})"],
            ),
        }


def _langchain(p: FixedParams, kit: PeerKit) -> str:
    sizes = f"chunk_size={p.chunk_size}, chunk_overlap={p.chunk_overlap}"
    if p.length == "chars":
        note = (
            "# closest: windows of characters (LangChain strips whitespace at the edges;\n"
            "# explorer also never cuts a flag, an emoji or a letter from its accent)"
        )
        return kit.langchain(note, "CharacterTextSplitter", f"separator='', {sizes}", p.length)
    if p.length in ("cl100k", "o200k"):
        note = (
            "# closest: windows of OpenAI tokens, as explorer's `fixed` in this unit, but decoded from the tokens\n"
            "# (a cut inside a character's bytes reads U+FFFD), the whitespace at their edges kept (explorer trims it)"
        )
        args = f"encoding_name={p.length + '_base'!r}, {sizes}"
        return kit.langchain(note, "TokenTextSplitter", args, p.length, measured=False)
    if p.length == "tokens":
        note = (
            "# closest: windows of model word pieces (explorer's size counts the 2 special tokens, hence - 2),\n"
            "# but each decoded from its pieces, not a slice of the text: line breaks and no-break spaces\n"
            "# come back as spaces, a ligature as its letters"
        )
        args = f"model_name={kit.hub}, tokens_per_chunk={p.chunk_size - 2}, chunk_overlap={p.chunk_overlap}"
        return kit.langchain(note, "SentenceTransformersTokenTextSplitter", args, p.length, measured=False)
    return kit.none("langchain", "fixed")


def _unit_windows(text: str, length: Length, size: int, overlap: int) -> list[tuple[int, int]]:
    """Windows of ``size`` words/tokens, cut at the tokenizer's own offsets.

    A window runs from its first unit's start (0 for the first) to the next unit's start, so
    characters the tokenizer skips (control characters) stay covered. Re-tokenising a window
    can give more tokens than it had in context (BPE merges differ at the edges), so a window
    that measures over ``size`` gives back units from its end until it fits. Model tokens come
    from one tokenisation of the text and every window is counted from it (``Length.slices``).
    """
    index = length.index(text) if hasattr(length, "index") and len(text) >= INDEX_MIN_CHARS else None
    # an inexact index (32 KB with no letter before a space: Chinese lines ending in "。", base64)
    # holds no token starts: the whole text had come out as one window
    exact = index is not None and index.exact
    unit_starts = index.token_starts() if exact else [s for s, _ in length.spans(text)]
    if has_joining(text):  # a token that starts on a mark stays with the one before (see words.py)
        joined = joined_at(text)
        unit_starts = [s for s in unit_starts if s not in joined]
    n = len(unit_starts)
    if n == 0:
        return [(0, len(text))]
    starts = [0, *unit_starts[1:], len(text)]
    room = size - length.special  # [CLS]/[SEP] of model tokens
    overlap = min(overlap, room - 1)
    count = index.count if index is not None else (lambda a, b: length(text[a:b]))
    bounds = []
    i = 0
    while True:
        j = min(i + room, n)
        while j - i > 1 and count(starts[i], starts[j]) > size:
            j -= 1
        bounds.append((starts[i], starts[j]))
        if j >= n:
            return bounds
        i = max(j - overlap, i + 1)


def _window_starts(n: int, size: int, step: int) -> range:
    """Starts of windows over n units; the last window is the first that reaches the end,
    so no final window is a redundant tail of the previous one."""
    if n == 0:
        return range(0)
    last = max(0, -(-(n - size) // step)) * step  # first start whose window reaches n
    return range(0, last + 1, step)
