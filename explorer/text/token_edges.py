"""How :class:`~explorer.text.token_counts.TokenIndex` counts a slice whose edges cut a
pre-token: the whole pre-tokens inside are counted from the index, and the partial word at
each edge (a *fragment*) is left to be tokenised on its own, with the whitespace rules of the
tokenizer (SentencePiece's ``▁`` before a word, OpenAI's regex pre-tokens read on past a cut)."""

from __future__ import annotations

from array import array
from bisect import bisect_left
from typing import Any

from explorer.text.tokenizing import BLANK, char_kind, is_mark


class EdgeRules:
    """The edge half of the token index (it holds the arrays and the tokenizer)."""

    text: str
    starts: array
    ends: array
    word: bytearray
    _tok: Any
    _kinds: dict[str, int]
    _prepends: bool
    _free_space: bool
    _resync: Any

    def _interior(self, a: int, b: int) -> tuple[int, list[tuple[int, int]]]:
        """(tokens of the whole pre-tokens inside ``[a, b)``, the edge fragments to tokenise)."""
        if b <= a:
            return 0, []
        starts, ends, word = self.starts, self.ends, self.word
        i = bisect_left(starts, a)
        j = bisect_left(starts, b, lo=i)
        # start edge: i1 = first token counted from the index, a1 = where it starts
        i1, a1 = i, a
        text = self.text
        if is_mark(text[a]):  # a combining mark the document's normaliser composed with a-1
            i1 = self._next_word(i + 1 if i < j and starts[i] == a else i, j)
            a1 = starts[i1] if i1 < j else b
        elif i > 0 and ends[i - 1] > a:  # a token straddles a
            p = i - 1
            if self._prepends and word[p] and self._spacey(starts[p], a):
                i1 = p  # "▁word" begins on the whitespace before the slice: the slice's own ▁
            else:
                i1 = self._next_word(i, j)
                a1 = starts[i1] if i1 < j else b
        elif i < j and not word[i]:  # the slice starts inside a word
            i1 = self._next_word(i, j)
            a1 = starts[i1] if i1 < j else b
        if a1 > a and self._resync is not None:  # a regex pre-tokenizer reads the fragment on
            i1 = self._resync(a, b, j)  # until its own pre-tokens meet the document's again
            a1 = starts[i1] if i1 < j else b
        if i1 >= j:
            return 0, [(a, b)]
        # trailing whitespace (where it can cost a token) goes with the end fragment
        tail = b
        if not self._free_space:
            while tail > a1 and self._spacey(tail - 1, tail):
                tail -= 1
            if tail <= a1:
                return 0, [(a, b)]
            j = bisect_left(starts, tail, lo=i, hi=j)
        # end edge: tokens i1..j1-1 counted, then the fragment [b1, b)
        j1, b1 = j, tail
        clean = (
            (j >= len(starts) or word[j])
            and ends[j - 1] <= tail
            and not is_mark(text[tail : tail + 1] or "a")
        )
        if not clean:
            j1 = self._prev_word(i1, j)
            if j1 <= i1:
                return 0, [(a, b)]
            b1 = starts[j1]
        if self._prepends:  # whitespace before the next word is that word's ▁, not the fragment's
            while a1 > a and self._spacey(a1 - 1, a1):
                a1 -= 1
        edge = [(a, a1)] if a1 > a else []
        if b1 < b:  # the cut word and the trailing whitespace together (punctuation takes
            edge.append((b1, b))  # the newlines after it in OpenAI's pre-tokens)
        return j1 - i1, edge

    def _resync_regex(self, a: int, b: int, j: int) -> int:
        """The first document word-start token at which the slice's own pre-tokens (the
        tokenizer's regex run from ``a``) end exactly: from there on both agree."""
        starts, word = self.starts, self.word
        for m in self._tok.pretokens(self.text, a, b):
            k = bisect_left(starts, m.end(), hi=j)
            if k < j and starts[k] == m.end() and word[k]:
                return k
        return j

    def _next_word(self, i: int, j: int) -> int:
        word = self.word
        while i < j and not word[i]:
            i += 1
        return i

    def _prev_word(self, lo: int, j: int) -> int:
        """Index of the last word-start token in ``(lo, j)``, else ``lo``."""
        word = self.word
        k = j - 1
        while k > lo and not word[k]:
            k -= 1
        return k

    def _kind(self, c: str) -> int:
        kind = self._kinds.get(c)
        if kind is None:
            kind = self._kinds[c] = char_kind(self._tok.normalizer, c)
        return kind

    def _spacey(self, a: int, b: int) -> bool:
        """``text[a:b]`` is whitespace as the tokenizer sees it (it normalises to spaces or to
        nothing: ``\\u200b`` is a space to e5, not to Python)."""
        if b <= a:
            return False
        return all(self._kind(c) == BLANK for c in self.text[a:b])
