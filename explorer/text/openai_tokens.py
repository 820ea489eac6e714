"""OpenAI's cl100k / o200k (``bpe-openai``) seen through the ``tokenizers`` interface that
:class:`~explorer.text.token_counts.TokenIndex` reads: token offsets and pre-token ("word") ids.

Why: so the same one-tokenisation index counts slices in OpenAI tokens too. bpe-openai gives
token ids and each token's character offset (``decode_with_offsets``); the pre-tokens are the
encoding's own regular expression (``_pat_str``: words with their leading space, numbers in
threes, punctuation runs, whitespace runs), which is what bpe-openai splits on before BPE.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import regex

#: Texts per bpe-openai call (it encodes a batch in its own threads).
THREADS = 2


@dataclass(frozen=True)
class _Encoding:
    ids: list[int]
    offsets: list[tuple[int, int]]
    word_ids: list[int]

    def __len__(self) -> int:
        return len(self.ids)


class _BPE:  # stands for ``tokenizers.models.BPE`` in :class:`TokenIndex`'s checks
    pass


class OpenAITokenizerView:
    """The parts of a ``tokenizers.Tokenizer`` that :class:`TokenIndex` uses."""

    normalizer = None
    pre_tokenizer = None
    post_processor = None
    model = _BPE()

    def __init__(self, enc: Any) -> None:
        self._enc = enc
        self._pattern = regex.compile(enc._pat_str)

    def get_added_tokens_decoder(self) -> dict:
        return {}

    def pretokens(self, text: str, a: int, b: int) -> Any:
        """The pre-tokens of ``text[a:b]`` as matches (offsets in ``text``)."""
        return self._pattern.finditer(text, a, b)

    def encode_batch(self, texts: Sequence[str], add_special_tokens: bool = False) -> list[_Encoding]:
        ids = self._enc.encode_ordinary_batch(list(texts), num_threads=THREADS)
        return [self._encoding(t, i) for t, i in zip(texts, ids, strict=True)]

    def _encoding(self, text: str, ids: list[int]) -> _Encoding:
        if not ids:
            return _Encoding([], [], [])
        _, starts = self._enc.decode_with_offsets(ids)
        ends = [*starts[1:], len(text)]
        words = [m.start() for m in self._pattern.finditer(text)]
        word_ids = (np.searchsorted(np.asarray(words), np.asarray(starts), side="right") - 1).tolist()
        return _Encoding(list(ids), list(zip(starts, ends, strict=True)), word_ids)
