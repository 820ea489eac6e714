"""Tokenizer helpers shared by the length functions and the token index: counting many texts
in batches, cutting long texts where tokenizers cut anyway, and how a tokenizer treats the
characters at the edge of a slice (whitespace it may turn into a token, combining marks its
normaliser joins to the character before)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

import numpy as np

_SAFE_CUT = re.compile(r"[^\W_]\s")

#: Texts per tokenizer call when only their lengths are wanted: the tokenizer's results (ids,
#: token strings, offsets) for 30,000 chunks of a 19 MB document held ~0.8 GB at once.
COUNT_BATCH = 512
#: Fewer and shorter texts than this are tokenised one by one: ``encode_batch`` hands even two
#: words to the tokenizer's thread pool, which costs more than encoding them (measured: 4 short
#: fragments 38 us batched, 19 us one by one; even at 32 fragments).
SERIAL_TEXTS, SERIAL_CHARS = 48, 2_048


def code_points(text: str) -> np.ndarray:
    """The text's code points as uint32 (one per character, surrogates kept), for numpy scans."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


#: A text longer than this is counted in pieces of :data:`LONG_PIECE_CHARS` (see :func:`pieces`):
#: the tokenizer's result for a 20 MB line (offsets, alignments of every character) took 2 GB.
LONG_TEXT_CHARS, LONG_PIECE_CHARS = 131_072, 32_768


def encoded_lengths(tokenizer: Any, texts: Sequence[str], special: int = 0) -> list[int]:
    """Word pieces of each text plus ``special``, from a ``tokenizers`` tokenizer, in batches
    (parallel in the tokenizer's threads) of :data:`COUNT_BATCH`; a few short texts (edge
    fragments) in this thread. A text over :data:`LONG_TEXT_CHARS` is the sum of its pieces:
    exact where they are cut between a letter and a space, within a token or two a cut where a
    piece has no such place (32 KB without a space)."""
    long = {i for i, t in enumerate(texts) if len(t) > LONG_TEXT_CHARS}
    if long:
        short = iter(encoded_lengths(tokenizer, [t for i, t in enumerate(texts) if i not in long], special))
        return [_pieced_length(tokenizer, t) + special if i in long else next(short) for i, t in enumerate(texts)]
    encode = getattr(tokenizer, "encode", None)  # a view without it batches everything
    if encode is not None and len(texts) < SERIAL_TEXTS and sum(map(len, texts)) < SERIAL_CHARS:
        return [len(encode(t, add_special_tokens=False)) + special for t in texts]
    out: list[int] = []
    for k in range(0, len(texts), COUNT_BATCH):
        encs = tokenizer.encode_batch(list(texts[k : k + COUNT_BATCH]), add_special_tokens=False)
        out.extend(len(e.ids) + special for e in encs)
    return out


def _pieced_length(tokenizer: Any, text: str) -> int:
    """Word pieces of a long ``text``, tokenized piece by piece (a few pieces at a time)."""
    spans = pieces(text, LONG_PIECE_CHARS)
    step = 64  # pieces per call: 2 MB of text
    return sum(sum(encoded_lengths(tokenizer, [text[a:b] for a, b in spans[k : k + step]])) for k in range(0, len(spans), step))


def pieces(text: str, size: int) -> list[tuple[int, int]]:
    """Cut ``text`` into consecutive ranges of at most ``size`` characters, each cut between a
    letter or digit and a whitespace character (where tokenizers cut anyway: cl100k/o200k's
    pre-tokenizer, which has no look-behind, and the word splitting of model tokenizers), else
    anywhere. Long texts are tokenized piece by piece."""
    out: list[tuple[int, int]] = []
    a, n = 0, len(text)
    while n - a > size:
        hi = a + size
        cut = hi
        for lo in (max(hi - 512, a + size // 2), a + size // 2):  # near the end first: cheap
            for m in _SAFE_CUT.finditer(text, lo, hi):
                cut = m.start() + 1
            if cut < hi:
                break
        out.append((a, cut))
        a = cut
    out.append((a, n))
    return out


def is_mark(c: str) -> bool:
    """A combining character: normalisers (NFKC) join it to the character before."""
    return unicodedata.category(c) in ("Mn", "Mc", "Me")


def prepends_space(pre: Any) -> bool:
    """The pre-tokenizer adds ``▁`` before every input (SentencePiece's Metaspace)."""
    if pre is None:
        return False
    name = type(pre).__name__
    if name == "Metaspace":
        return getattr(pre, "prepend_scheme", "always") in ("always", "first")
    if name == "Sequence":
        return any(prepends_space(p) for p in getattr(pre, "pretokenizers", []) or [])
    return False


PLAIN, BLANK, MARK = 0, 1, 2


def char_kind(normalizer: Any, c: str) -> int:
    """Blank: whitespace as the tokenizer sees it (it normalises to spaces or to nothing:
    ``\u200b`` is a space to e5, not to Python). Mark: a combining character."""
    if is_mark(c):
        return MARK
    if c.isspace() or (normalizer is not None and normalizer.normalize_str(c).strip() == ""):
        return BLANK
    return PLAIN


def member(sorted_positions: np.ndarray, xs: np.ndarray) -> np.ndarray:
    """Which of ``xs`` are in ``sorted_positions``."""
    if not len(sorted_positions):
        return np.zeros(len(xs), dtype=bool)
    k = np.searchsorted(sorted_positions, xs)
    return sorted_positions[np.minimum(k, len(sorted_positions) - 1)] == xs
