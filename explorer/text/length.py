"""Length functions: how a strategy measures size (characters, words, model or OpenAI tokens).

Token units also give *token spans* (character offsets of each token) so token windows are
cut at offsets taken from the tokenizer's own offset mapping, never by decoding text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Protocol

from explorer.errors import ParamError
from explorer.text.tokenizing import encoded_lengths, pieces

UNITS = ("chars", "words", "tokens", "cl100k", "o200k")
#: Han ideographs and kana: Chinese and Japanese put no spaces between words, so each character
#: counts as a word, as word processors count them (a whole paragraph was one "word").
_IDEOGRAPHS = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003ffff"
_HAS_IDEOGRAPH = re.compile(f"[{_IDEOGRAPHS}]")
#: A word: an ideograph with the punctuation around it ("「中", "文」。"), or a run of other
#: non-space characters (exactly ``\S+`` in text without ideographs, as ``str.split`` counts).
WORD = re.compile(rf"[^\s\w{_IDEOGRAPHS}]*[{_IDEOGRAPHS}][^\s\w{_IDEOGRAPHS}]*|[^\s{_IDEOGRAPHS}]+")


def _words(text: str) -> int:
    """:data:`WORD` matches in ``text``; ``str.split`` (the same count, faster) without ideographs."""
    return len(WORD.findall(text)) if _HAS_IDEOGRAPH.search(text) else len(text.split())


class Length(Protocol):
    name: str
    #: Units every input counts besides its text ([CLS] and [SEP] of model tokens; 0 elsewhere).
    special: int

    def __call__(self, text: str) -> int: ...

    def count_batch(self, texts: list[str]) -> list[int]:
        """``[self(t) for t in texts]``, in one tokenizer call where there is one."""
        ...

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Character spans of the units of ``text`` (tokens or words), in order."""
        ...

    def slices(self, text: str, spans: Sequence[tuple[int, int]]) -> list[int]:
        """``[self(text[s:e]) for s, e in spans]``: many slices of one text, counted from one
        tokenisation of ``text`` where the unit has an index (model tokens)."""
        ...


class CharLength:
    name = "chars"
    special = 0

    def __call__(self, text: str) -> int:
        return len(text)

    def count_batch(self, texts: list[str]) -> list[int]:
        return list(map(len, texts))

    def spans(self, text: str) -> list[tuple[int, int]]:
        return [(i, i + 1) for i in range(len(text))]

    def slices(self, text: str, spans: Sequence[tuple[int, int]]) -> list[int]:
        return [e - s for s, e in spans]


class WordLength:
    name = "words"
    special = 0

    def __call__(self, text: str) -> int:
        return _words(text)

    def count_batch(self, texts: list[str]) -> list[int]:
        return list(map(_words, texts))

    def spans(self, text: str) -> list[tuple[int, int]]:
        return [m.span() for m in WORD.finditer(text)]

    def slices(self, text: str, spans: Sequence[tuple[int, int]]) -> list[int]:
        return [_words(text[s:e]) for s, e in spans]


class ModelTokenLength:
    """Word pieces of the embedding model's own tokenizer, counting [CLS] and [SEP] like the
    model sees its input (so ``length <= max_seq_length`` means "not truncated")."""

    def __init__(self, model: str | None = None) -> None:
        from explorer.models.paths import shared_tokenizer, tokenizer_file

        path = tokenizer_file(model)
        tok = shared_tokenizer(path)
        self.tokenizer = tok
        self.key = str(path)
        self.name = "tokens"
        self.special = tok.post_processor.num_special_tokens_to_add(False) if tok.post_processor else 0

    def __call__(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids) + self.special

    def count_batch(self, texts: list[str]) -> list[int]:
        return encoded_lengths(self.tokenizer, texts, self.special)

    def spans(self, text: str) -> list[tuple[int, int]]:
        offs = self.tokenizer.encode(text, add_special_tokens=False).offsets
        return _monotone([o for o in offs if o[1] > o[0]])

    def index(self, text: str) -> Any:
        """The (cached) :class:`~explorer.text.token_counts.TokenIndex` of ``text``."""
        from explorer.text.token_cache import cached_index

        return cached_index(text, self.tokenizer, self.key)

    def slices(self, text: str, spans: Sequence[tuple[int, int]]) -> list[int]:
        if len(text) < INDEX_MIN_CHARS:
            return self.count_batch([text[s:e] for s, e in spans])
        return self.index(text).count_many(spans)


class OpenAITokenLength:
    """cl100k / o200k via ``bpe-openai``, which bundles its tables (tiktoken downloads them)."""

    special = 0

    def __init__(self, name: str) -> None:
        import bpe_openai

        self.name = name
        self._enc = bpe_openai.get_encoding(f"{name}_base")
        self._view: Any = None

    def __call__(self, text: str) -> int:
        return len(self._encode(text))

    def count_batch(self, texts: list[str]) -> list[int]:
        return [len(self._encode(t)) for t in texts]

    def index(self, text: str) -> Any:
        """The (cached) :class:`~explorer.text.token_counts.TokenIndex` of ``text``."""
        from explorer.text.openai_tokens import OpenAITokenizerView
        from explorer.text.token_cache import cached_index

        if self._view is None:
            self._view = OpenAITokenizerView(self._enc)
        return cached_index(text, self._view, self.name)

    def slices(self, text: str, spans: Sequence[tuple[int, int]]) -> list[int]:
        if len(text) < INDEX_MIN_CHARS:
            return self.count_batch([text[s:e] for s, e in spans])
        return self.index(text).count_many(spans)

    def _encode(self, text: str) -> list[int]:
        """Token ids of ``text``. bpe-openai refuses inputs of 1,000,000+ characters or
        200,000+ tokens, so a long text is encoded in pieces cut between a letter and a space (where
        the cl100k/o200k pre-tokenizer cuts anyway): same tokens except, at worst, one
        token at a cut inside a run of ``OPENAI_PIECE_CHARS`` characters without whitespace."""
        if len(text) <= OPENAI_PIECE_CHARS:
            return self._enc.encode_ordinary(text)
        ids: list[int] = []
        for a, b in pieces(text, OPENAI_PIECE_CHARS):
            ids.extend(self._enc.encode_ordinary(text[a:b]))
        return ids

    def spans(self, text: str) -> list[tuple[int, int]]:
        """Token byte lengths → character offsets; a token ending inside a multi-byte
        character is merged with the next one so every span is a valid slice."""
        ids = self._encode(text)
        spans: list[tuple[int, int]] = []
        # byte offset -> char offset for every char boundary
        boundary: dict[int, int] = {}
        b = 0
        for i, ch in enumerate(text):
            boundary[b] = i
            b += len(ch.encode("utf-8", "surrogatepass"))
        boundary[b] = len(text)
        start_b = pos_b = 0
        for tid in ids:
            pos_b += len(self._enc.decode_single_token_bytes(tid))
            if pos_b in boundary:
                spans.append((boundary[start_b], boundary[pos_b]))
                start_b = pos_b
        return spans


#: Shorter texts are counted slice by slice (indexing the whole text first costs a pass).
INDEX_MIN_CHARS = 2_000

#: Longest text given to bpe-openai at once (it refuses 1,000,000+ chars or 200,000+ tokens).
OPENAI_PIECE_CHARS = 100_000


def _monotone(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Drop overlapping sub-token offsets (some tokenizers emit several tokens for one char)."""
    out: list[tuple[int, int]] = []
    for s, e in spans:
        if out and s < out[-1][1]:
            if e > out[-1][1]:
                out[-1] = (out[-1][0], e)
            continue
        out.append((s, e))
    return out


@lru_cache(maxsize=16)
def get_length(unit: str, model: str | None = None) -> Length:
    """The length function for ``unit`` (``tokens`` uses ``model``'s tokenizer)."""
    if unit == "chars":
        return CharLength()
    if unit == "words":
        return WordLength()
    if unit == "tokens":
        return ModelTokenLength(model)
    if unit in ("cl100k", "o200k"):
        return OpenAITokenLength(unit)
    raise ParamError(f"unknown length unit {unit!r}; choose one of {', '.join(UNITS)}")
