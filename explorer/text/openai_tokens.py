"""OpenAI's cl100k / o200k (``bpe-openai``) seen through the ``tokenizers`` interface that
:class:`~explorer.text.token_counts.TokenIndex` reads: token offsets and pre-token ("word") ids.

Why: so the same one-tokenisation index counts slices in OpenAI tokens too. bpe-openai gives
token ids and each token's character offset (``decode_with_offsets``); the pre-tokens are the
encoding's own regular expression (``_pat_str``: words with their leading space, numbers in
threes, punctuation runs, whitespace runs), which is what bpe-openai splits on before BPE.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any

import numpy as np
import regex

#: Threads of a bpe-openai batch call.
THREADS = 2
#: Mean characters per text under which a batch is encoded in this thread, text by text.
SERIAL_CHARS = 256


class _Encoding:
    """One text's token ids; their offsets and pre-token ids are worked out when first read. Why:
    a count reads only the ids, and working the rest out for each of the 300,000 one-character
    pieces of a 300 KB run without a space took 10 of the run's 32 s."""

    def __init__(self, view: OpenAITokenizerView, text: str, ids: list[int]) -> None:
        self._view, self._text, self.ids = view, text, ids

    def __len__(self) -> int:
        return len(self.ids)

    @cached_property
    def _aligned(self) -> tuple[list[tuple[int, int]], list[int]]:
        return self._view.align(self._text, self.ids)

    @property
    def offsets(self) -> list[tuple[int, int]]:
        return self._aligned[0]

    @property
    def word_ids(self) -> list[int]:
        return self._aligned[1]


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
        texts = list(texts)
        if sum(map(len, texts)) < SERIAL_CHARS * len(texts):  # short texts: a thread hop costs more
            ids = [self._enc.encode_ordinary(t) for t in texts]
        else:
            ids = self._enc.encode_ordinary_batch(texts, num_threads=THREADS)
        return [_Encoding(self, t, i) for t, i in zip(texts, ids, strict=True)]

    def align(self, text: str, ids: list[int]) -> tuple[list[tuple[int, int]], list[int]]:
        """Each token's character span in ``text``, and the pre-token ("word") it belongs to."""
        if not ids:
            return [], []
        _, starts = self._enc.decode_with_offsets(ids)
        ends = [*starts[1:], len(text)]
        words = [m.start() for m in self._pattern.finditer(text)]
        word_ids = (np.searchsorted(np.asarray(words), np.asarray(starts), side="right") - 1).tolist()
        return list(zip(starts, ends, strict=True)), word_ids
