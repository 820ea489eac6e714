"""A fake embedder: deterministic hashed bag-of-words vectors, no model, no torch.

Why: the strategies, retrieval, evaluation and the app's fast tests need an embedder whose
vectors are cheap and repeatable; texts sharing words come out similar, which is all those
tests rely on. It gives contextual sums and token vectors of the real ones' shapes too.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from explorer.embedding.base import Embedder, Progress, normalise
from explorer.embedding.cache import EmbeddingCache
from explorer.embedding.packed import CONTEXT_PACK_TOKENS, pack_consecutive

_WORD = re.compile(r"\w+", re.UNICODE)


class FakeEmbedder(Embedder):
    """Deterministic hashed bag-of-words vectors: texts sharing words are similar.

    For fast tests only. Each instance has its own in-memory cache unless one is given, so
    ``stats`` counts exactly what this instance embedded.
    """

    def __init__(self, dim: int = 64, *, cache: EmbeddingCache | None = None, max_seq_length: int = 256):
        super().__init__(cache if cache is not None else EmbeddingCache.memory())
        self._dim_value = dim
        self.name = f"fake-{dim}"
        self.model_id = f"fake-bow-{dim}"
        self.max_seq_length = max_seq_length
        self.texts_embedded: list[str] = []

    @property
    def dim(self) -> int:
        return self._dim_value

    def _embed(self, texts: list[str]) -> np.ndarray:
        self.texts_embedded.extend(texts)
        out = np.zeros((len(texts), self._dim_value), dtype=np.float32)
        for i, t in enumerate(texts):
            words = _WORD.findall(t.lower())
            if not words:
                out[i, 0] = 1.0
            for w in words:
                d = hashlib.blake2b(w.encode("utf-8", "surrogatepass"), digest_size=8).digest()
                idx = int.from_bytes(d[:4], "little") % self._dim_value
                out[i, idx] += 1.0 if d[4] & 1 else -1.0
            if not out[i].any():
                out[i, 0] = 1.0
        return out

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [len(_WORD.findall(t)) + 2 for t in texts]

    def contextual_sums(
        self, sentences: Sequence[str], band: int, progress: Progress | None = None
    ) -> np.ndarray | None:
        """A stand-in with the real one's shape and caching: each sentence's unit vector plus half
        of its pack neighbours' within ``band``, times its word count."""
        sentences = list(sentences)
        sizes = [n - 2 for n in self.count_tokens(sentences)]
        packs = pack_consecutive(sizes, CONTEXT_PACK_TOKENS - 2)

        def compute(group: list[list[int]]) -> np.ndarray:
            rows = []
            for pack in group:
                own = normalise(self._embed([sentences[i] for i in pack]))
                for a in range(len(pack)):
                    near = [b for b in range(len(pack)) if 0 < abs(a - b) <= band]
                    mixed = own[a] + 0.5 * own[near].sum(axis=0) if near else own[a]
                    rows.append(mixed * max(sizes[pack[a]], 1))
            return np.array(rows, dtype=np.float32).reshape(-1, self._dim_value)

        return self._cached_contextual(sentences, band, packs, compute, progress)

    def late_tokenizer(self) -> Any:
        return _FakeTokenizer()

    def _token_states(self, ids: list[list[int]]) -> list[np.ndarray]:
        """Each token's hashed one-hot (by id), plus a tenth of the sequence's mean: a token's
        vector depends on its context, as a real model's does."""
        out = []
        for seq in ids:
            rows = np.zeros((len(seq), self._dim_value), np.float32)
            for r, t in enumerate(seq):
                rows[r, t % self._dim_value] = 1.0 if (t // self._dim_value) % 2 else -1.0
            out.append(rows + 0.1 * rows.mean(axis=0, keepdims=True))
        return out


class _FakeEncoding:
    def __init__(self, ids: list[int], offsets: list[tuple[int, int]], special: list[int]) -> None:
        self.ids, self.offsets, self.special_tokens_mask = ids, offsets, special


class _FakeTokenizer:
    """Words (``\\w+``) and single symbols with their offsets, ids hashed from the lowercased
    token; specials [CLS] = 1 and [SEP] = 2 around them, as a BERT tokenizer gives."""

    _TOKEN = re.compile(r"\w+|[^\w\s]", re.UNICODE)

    def encode(self, text: str, add_special_tokens: bool = True) -> _FakeEncoding:
        ids, offsets = [], []
        for m in self._TOKEN.finditer(text):
            d = hashlib.blake2b(m.group().lower().encode("utf-8", "surrogatepass"), digest_size=4).digest()
            ids.append(3 + int.from_bytes(d, "little") % 100_000)
            offsets.append(m.span())
        special = [0] * len(ids)
        if add_special_tokens:
            ids, offsets, special = [1, *ids, 2], [(0, 0), *offsets, (0, 0)], [1, *special, 1]
        return _FakeEncoding(ids, offsets, special)
