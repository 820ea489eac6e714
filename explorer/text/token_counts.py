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

import threading
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

#: Documents whose token index is kept (each holds two int arrays the size of its token count).
_LRU_SIZE = 8
_lru: OrderedDict[tuple[str, str], TokenIndex] = OrderedDict()
_lock = threading.Lock()


class TokenIndex:
    """The document's word pieces (offsets and continuation marks), for counting spans."""

    def __init__(self, text: str, tokenizer: Any) -> None:
        self._tok = tokenizer
        self.special = (
            tokenizer.post_processor.num_special_tokens_to_add(False) if tokenizer.post_processor else 0
        )
        self.word_piece = (
            type(tokenizer.model).__name__ == "WordPiece"
            and type(tokenizer.pre_tokenizer).__name__ == "BertPreTokenizer"
        )
        if self.word_piece:
            prefix = tokenizer.model.continuing_subword_prefix or "##"
            enc = tokenizer.encode(text, add_special_tokens=False)
            self.starts = [s for s, _ in enc.offsets]
            self.ends = [e for _, e in enc.offsets]
            self.cont = [t.startswith(prefix) for t in enc.tokens]
        else:
            self.starts = self.ends = []
            self.cont = []

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
            encs = self._tok.encode_batch(list(texts), add_special_tokens=False)
            return [len(e.ids) + self.special for e in encs]
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
            for k, enc in zip(
                frag_owner, self._tok.encode_batch(frag_text, add_special_tokens=False), strict=True
            ):
                out[k] += len(enc.ids)
        return out


def token_index(doc_id: str, text: str, model: str | None = None) -> TokenIndex:
    """The (cached) token index of a document for ``model``'s tokenizer."""
    from tokenizers import Tokenizer

    from explorer.models.paths import tokenizer_file

    key = (doc_id, model or "")
    with _lock:
        hit = _lru.get(key)
        if hit is not None:
            _lru.move_to_end(key)
            return hit
    tok = Tokenizer.from_file(str(tokenizer_file(model)))
    tok.no_truncation()
    tok.no_padding()
    index = TokenIndex(text, tok)
    with _lock:
        _lru[key] = index
        while len(_lru) > _LRU_SIZE:
            _lru.popitem(last=False)
    return index


def count_chunk_tokens(doc: Any, chunks: Sequence[Any], model: str | None = None) -> list[int]:
    """Model tokens (incl. [CLS]/[SEP]) of each chunk of ``doc``: equal to tokenising each
    chunk's text (``explorer.evaluation.flags.count_tokens``), computed from one pass over the document."""
    index = token_index(doc.id, doc.text, model)
    return index.count([c.text for c in chunks], [(c.start, c.end) for c in chunks])
