"""Model-token counts of many chunks of one document, without re-tokenising every chunk.

Why: the app shows each chunk's word pieces (and flags those over the model's limit) after
every parameter change. Tokenising ~1,000 chunks of a 500 KB document costs ~0.8 s on a
laptop core; tokenising the document once and counting the pieces inside each chunk costs
microseconds per chunk.

This is exact, not an estimate, for the WordPiece tokenizers of BERT-style models (the bundled
all-MiniLM-L6-v2): their normaliser works per character and their pre-tokeniser splits on
whitespace and punctuation before WordPiece runs on each word on its own, so a chunk whose
edges fall between two words gets exactly the pieces the whole document had there. A chunk
cut inside a word (a piece straddles an edge, or a ``##`` continuation starts or follows it)
is counted as its whole words (from the index) plus its partial edge words, tokenised on their
own. Other tokenizers are always counted chunk by chunk.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Sequence
from typing import Any

import numpy as np

from explorer import limits
from explorer.lru import ByteLRU
from explorer.text.length import encoded_lengths, pieces

#: Characters tokenised at once when a document is indexed: the tokenizer's own result for a
#: whole 19 MB text (token strings, offsets, ids) took more than a gigabyte; pieces of 1 MB,
#: cut where the pre-tokeniser cuts anyway, give the same word pieces at a fraction of it.
INDEX_PIECE_CHARS = 1_000_000
#: Pieces sent to the tokenizer per call (it tokenises a batch in its own threads).
INDEX_BATCH = 4

#: Documents' token indexes, bounded by bytes (9 bytes a word piece; see explorer.limits).
_indexes: ByteLRU[TokenIndex] = ByteLRU(limits.TOKEN_INDEX_BYTES, lambda index: index.nbytes)


class TokenIndex:
    """The document's word pieces (offsets and continuation marks), for counting spans.

    Held compactly (two int64 arrays and one byte per piece), because the app keeps one per
    document and user; see :data:`explorer.limits.TOKEN_INDEX_BYTES`."""

    def __init__(self, text: str, tokenizer: Any) -> None:
        self._tok = tokenizer
        self.special = (
            tokenizer.post_processor.num_special_tokens_to_add(False) if tokenizer.post_processor else 0
        )
        self.word_piece = (
            type(tokenizer.model).__name__ == "WordPiece"
            and type(tokenizer.pre_tokenizer).__name__ == "BertPreTokenizer"
        )
        self.starts, self.ends, self.cont = array("q"), array("q"), bytearray()
        if self.word_piece:
            self.word_piece = self._index(text)

    @property
    def nbytes(self) -> int:
        return 8 * (len(self.starts) + len(self.ends)) + len(self.cont) + 256

    def _index(self, text: str) -> bool:
        """Fill the arrays piece by piece; False (count chunk by chunk instead) when a piece had
        to be cut inside a word (a megabyte without a space), where pieces would not add up."""
        spans = pieces(text, INDEX_PIECE_CHARS)
        if any(not (text[b - 1].isalnum() and text[b].isspace()) for _, b in spans[:-1]):
            return False
        prefix = self._tok.model.continuing_subword_prefix or "##"
        is_cont = np.zeros(self._tok.get_vocab_size(), dtype=np.uint8)
        is_cont[[i for t, i in self._tok.get_vocab().items() if t.startswith(prefix)]] = 1
        for k in range(0, len(spans), INDEX_BATCH):
            batch = spans[k : k + INDEX_BATCH]
            encs = self._tok.encode_batch([text[a:b] for a, b in batch], add_special_tokens=False)
            for (a, _), enc in zip(batch, encs, strict=True):
                offsets = np.asarray(enc.offsets, dtype=np.int64).reshape(-1, 2) + a
                self.starts.frombytes(offsets[:, 0].tobytes())
                self.ends.frombytes(offsets[:, 1].tobytes())
                self.cont += is_cont[np.asarray(enc.ids, dtype=np.int64)].tobytes()
        return True

    def fast_count(self, start: int, end: int) -> int | None:
        """Pieces in ``text[start:end]`` plus the special tokens, or None if an edge cuts a word."""
        if not self.word_piece:
            return None
        i, j = self._range(start, end)
        if self._clean_start(start, i, j) and self._clean_end(end, i, j):
            return j - i + self.special
        return None

    def _range(self, start: int, end: int) -> tuple[int, int]:
        """Pieces i..j-1 start inside [start, end)."""
        i = bisect_left(self.starts, start)
        return i, bisect_left(self.starts, end, lo=i)

    def _clean_start(self, start: int, i: int, j: int) -> bool:
        if i > 0 and self.ends[i - 1] > start:
            return False  # a piece straddles the start
        return not (j > i and self.cont[i])  # the chunk starts inside a word

    def _clean_end(self, end: int, i: int, j: int) -> bool:
        if j > i and self.ends[j - 1] > end:
            return False  # a piece straddles the end
        return not (j > i and j < len(self.starts) and self.cont[j])  # the last word goes on

    def split(self, start: int, end: int) -> tuple[int, list[tuple[int, int]]]:
        """(pieces counted from the index, edge fragments to tokenise on their own).

        A chunk cut inside a word is its clean interior (whole words, counted from the index)
        plus the partial words at its edges: the pre-tokeniser splits where a new word starts,
        whatever surrounds it, so tokenising the parts separately gives the same pieces."""
        i, j = self._range(start, end)
        cont = self.cont
        a = start  # interior starts at piece index i1 / char a
        i1 = i
        if not self._clean_start(start, i, j):
            while i1 < j and cont[i1]:
                i1 += 1
            a = self.starts[i1] if i1 < j else end
        j1 = j
        b = end
        if not self._clean_end(end, i, j):
            j1 = j - 1 if j > i else j
            while j1 > i1 and cont[j1]:
                j1 -= 1
            b = self.starts[j1] if j1 < j else end
            if b <= a:  # one word (or less) in the whole chunk
                return 0, [(start, end)]
        frags = [(start, a)] if a > start else []
        if b < end:
            frags.append((b, end))
        return max(j1 - i1, 0), frags

    def count(self, texts: Sequence[str], spans: Sequence[tuple[int, int]]) -> list[int]:
        if not self.word_piece:
            return encoded_lengths(self._tok, texts, self.special)
        out: list[int] = []
        frag_text: list[str] = []
        frag_owner: list[int] = []
        for k, ((s, e), chunk_text) in enumerate(zip(spans, texts, strict=True)):
            n, frags = self.split(s, e)
            out.append(n + self.special)
            for fs, fe in frags:
                frag_text.append(chunk_text[fs - s : fe - s])
                frag_owner.append(k)
        if frag_text:
            for k, n in zip(frag_owner, encoded_lengths(self._tok, frag_text), strict=True):
                out[k] += n
        return out


def token_index(doc_id: str, text: str, model: str | None = None) -> TokenIndex:
    """The (cached) token index of a document for ``model``'s tokenizer."""

    def make() -> TokenIndex:
        from explorer.models.paths import shared_tokenizer, tokenizer_file

        return TokenIndex(text, shared_tokenizer(tokenizer_file(model)))

    return _indexes.get_or_make((doc_id, model or ""), make)


def count_chunk_tokens(doc: Any, chunks: Sequence[Any], model: str | None = None) -> list[int]:
    """Model tokens (incl. [CLS]/[SEP]) of each chunk of ``doc``: equal to tokenising each
    chunk's text (``explorer.evaluation.flags.count_tokens``), computed from one pass over the document."""
    index = token_index(doc.id, doc.text, model)
    return index.count([c.text for c in chunks], [(c.start, c.end) for c in chunks])
