"""Token indexes kept for reuse: one per text and tokenizer, found by content, bounded by bytes
(:data:`explorer.limits.TOKEN_INDEX_BYTES`), so a slider move never tokenises the document again."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from explorer import limits
from explorer.lru import ByteLRU
from explorer.text.token_counts import TokenIndex

#: Documents' token indexes, bounded by bytes (about 9 bytes a token; see explorer.limits).
_indexes: ByteLRU[TokenIndex] = ByteLRU(limits.TOKEN_INDEX_BYTES, lambda index: index.nbytes, single_flight=True)


def text_key(text: str) -> str:
    """A short content key for a text (a megabyte hashes in about a millisecond; the last
    text's key is kept, since one document is measured many times in a row)."""
    global _last_key
    last = _last_key  # one tuple, read once: safe across threads
    if last is not None and last[0] is text:
        return last[1]
    key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    _last_key = (text, key)
    return key


_last_key: tuple[str, str] | None = None


def cached_index(text: str, tokenizer: Any, key: str) -> TokenIndex:
    """The token index of ``text`` for ``tokenizer``, cached by content and tokenizer
    (``key`` names the tokenizer), bounded by bytes."""
    return _indexes.get_or_make((text_key(text), key), lambda: TokenIndex(text, tokenizer))


def token_index(text: str, model: str | None = None) -> TokenIndex:
    """The (cached) token index of a text for ``model``'s tokenizer: the same entry the
    strategies use (``ModelTokenLength.index``), found by content."""
    from explorer.models.paths import shared_tokenizer, tokenizer_file

    path = tokenizer_file(model)
    return cached_index(text, shared_tokenizer(path), str(path))


def count_chunk_tokens(doc: Any, chunks: Sequence[Any], model: str | None = None) -> list[int]:
    """Model tokens (incl. [CLS]/[SEP]) of each chunk of ``doc``: equal to tokenising each
    chunk's text (``explorer.evaluation.flags.count_tokens``), computed from one pass over the document."""
    index = token_index(doc.text, model)
    return index.count_many([(c.start, c.end) for c in chunks])
