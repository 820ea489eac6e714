"""Model-token counts of any slice of a document from one tokenisation of the whole document.

Why: chunkers measure thousands of candidate slices (paragraphs, lines, merged chunks, windows)
and the app re-measures every chunk after each parameter change. Tokenising every slice costs
about a second a megabyte each time; tokenising the document once (in parallel pieces, in the
tokenizer's own threads) and counting the tokens between two offsets costs two bisections.

Exact, not an estimate. A tokenizer's model (WordPiece, Unigram, BPE) reads each *pre-token*
(roughly a word, as the tokenizer's pre-tokenizer cuts) on its own, so a slice whose edges fall
between two pre-tokens of the document holds exactly the document's tokens there. An edge that
cuts a pre-token (a cut inside a word, or an edge where the tokenizer treats whitespace
differently at the end of an input) is handled by tokenising just the partial word at that
edge (a *fragment*) and adding its tokens to the interior's. Two tokenizer behaviours are taken
into account:

- Metaspace tokenizers (SentencePiece, e5) prepend ``▁`` to every input and turn whitespace into
  ``▁``: a word-start token whose offsets begin on the whitespace before a slice's first word
  is the same token the slice gets on its own; and a slice ending in whitespace gets one more
  ``▁`` token, so such an end is a fragment.
- WordPiece (BERT, MiniLM) drops whitespace altogether.

Every index checks itself when built: random slices (clean and cutting words) are counted both
ways, and an index that disagrees once is marked inexact and counts by tokenising each slice
(so an unusual user tokenizer is slow, never wrong). The tests compare counts against direct
tokenisation on random slices of English, French and hostile texts for every bundled tokenizer.
"""

from __future__ import annotations

import random
import sys
from array import array
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import Any

import numpy as np

from explorer.text.tokenizing import (
    BLANK,
    MARK,
    char_kind,
    encoded_lengths,
    is_mark,
    member,
    pieces,
    prepends_space,
)

#: Characters per tokenizer input when a document is indexed: small enough that a batch keeps
#: both cores busy and the tokenizer's own result objects stay small, cut where pre-tokenizers
#: cut anyway (between a letter or digit and whitespace).
INDEX_PIECE_CHARS = 32_768
#: Pieces per tokenizer call (tokenised in parallel in the tokenizer's threads).
INDEX_BATCH = 32
#: Random slices each index is checked on when built (see the module docstring).
SELF_CHECKS = 48
#: Slices this short (a word, a separator) are tokenised whole rather than analysed.
SHORT_CHARS = 16
#: Fewer spans than this are counted one by one in Python rather than in numpy.
FEW_SPANS = 8
#: Distinct fragments whose counts an index keeps.
FRAGMENT_CACHE = 8192

#: Offsets are held as 32-bit integers (documents are refused long before 2**31 characters).
_POS, _NP = "i", np.int32
_EMPTY = np.zeros(0, dtype=_NP)


class TokenIndex:
    """The tokens of one text (start and end offsets, whether each starts a pre-token), held
    compactly (two int32 arrays and a byte per token: 9 bytes a token) because the app keeps one
    per document."""

    def __init__(self, text: str, tokenizer: Any, *, check: bool = True) -> None:
        self.text = text
        self._tok = tokenizer
        post = tokenizer.post_processor
        self.special = post.num_special_tokens_to_add(False) if post else 0
        #: WordPiece drops whitespace; other models may turn a trailing space into a token.
        self._free_space = type(tokenizer.model).__name__ == "WordPiece"
        self._prepends = prepends_space(tokenizer.pre_tokenizer)
        #: regex pre-tokenizers (OpenAI's) read a cut word together with what follows
        self._resync = self._resync_regex if hasattr(tokenizer, "pretokens") else None
        self.starts, self.ends, self.word = array(_POS), array(_POS), bytearray()
        added = tokenizer.get_added_tokens_decoder()
        self._added = np.fromiter(added, dtype=np.int64)
        self._added_text = [t.content for t in added.values() if t.content]
        self._frags: dict[str, int] = {}
        self._kinds: dict[str, int] = {}
        self._ascii: np.ndarray | None = None
        self._starts_cache: np.ndarray | None = None
        self._blanks_at: list[np.ndarray] = []
        self._marks_at: list[np.ndarray] = []
        self._blanks = self._runs = self._marks = _EMPTY  # filled by _index
        self.exact = self._index()
        if self.exact and check:
            self.exact = self._self_check(random.Random(len(text)))

    @property
    def nbytes(self) -> int:
        # the text counts too: an index may outlive the document that shares it
        arrays = 4 * (len(self.starts) + len(self.ends) + 2 * len(self._blanks) + len(self._marks))
        return (
            arrays + len(self.word) + 4 * len(self.starts) + sys.getsizeof(self.text) + 100 * FRAGMENT_CACHE
        )

    def __len__(self) -> int:
        return len(self.starts)

    # -- building ----------------------------------------------------------------------------
    def _index(self) -> bool:
        """Fill the arrays piece by piece; False (inexact) when a piece had to be cut inside a
        word (32 KB without a letter followed by a space), where pieces would not add up."""
        text = self.text
        if len(text) >= 2**31 - 1:  # beyond 32-bit offsets: count slice by slice
            return False
        spans = pieces(text, INDEX_PIECE_CHARS)
        if any(not (text[b - 1].isalnum() and text[b].isspace()) for _, b in spans[:-1]):
            return False
        for k in range(0, len(spans), INDEX_BATCH):
            batch = spans[k : k + INDEX_BATCH]
            texts = [text[a:b] for a, b in batch]
            encs = self._tok.encode_batch(texts, add_special_tokens=False)
            for (a, _), piece, enc in zip(batch, texts, encs, strict=True):
                flat = chain.from_iterable(enc.offsets)
                offsets = (np.fromiter(flat, dtype=np.int64, count=2 * len(enc)).reshape(-1, 2) + a).astype(
                    _NP
                )
                words = np.asarray(enc.word_ids, dtype=np.float64)  # None (no word) -> nan
                first = np.ones(len(words), dtype=np.uint8)
                first[1:] = words[1:] != words[:-1]
                added = None
                if any(t in piece for t in self._added_text):
                    added = np.isin(np.asarray(enc.ids, dtype=np.int64), self._added)
                if added is not None and added.any():  # "<unk>" in the text: split out before
                    near = added.copy()  # pre-tokenizing, so the tokens around it need not add up
                    near[1:] |= added[:-1]
                    near[:-1] |= added[1:]
                    first[near] = 0
                self.starts.frombytes(offsets[:, 0].tobytes())
                self.ends.frombytes(offsets[:, 1].tobytes())
                self.word += first.tobytes()
                self._note_chars(piece, a)
        self._blanks = np.concatenate([_EMPTY, *self._blanks_at])
        # start of the run of blanks each blank belongs to
        new_run = np.ones(len(self._blanks), dtype=bool)
        new_run[1:] = self._blanks[1:] != self._blanks[:-1] + 1
        self._runs = self._blanks[new_run][np.cumsum(new_run) - 1] if len(self._blanks) else self._blanks
        self._marks = np.concatenate([_EMPTY, *self._marks_at])
        del self._blanks_at, self._marks_at
        return _monotone(self.starts)

    def _note_chars(self, piece: str, offset: int) -> None:
        """Positions of the characters the edge rules look at: tokenizer whitespace (only
        where a trailing space can cost a token) and combining marks."""
        cps = np.frombuffer(piece.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        if self._ascii is None:  # the kind of every ASCII character, looked up in one step
            self._ascii = np.array([self._kind(chr(c)) for c in range(128)], dtype=np.uint8)
        low = cps < 128
        kind = np.zeros(len(cps), dtype=np.uint8)
        kind[low] = self._ascii[cps[low]]
        high = np.flatnonzero(~low)
        if len(high):  # the few other characters, each looked at once
            codes = cps[high]
            table = {int(c): self._kind(chr(c)) for c in np.unique(codes)}
            kind[high] = [table[int(c)] for c in codes]
        if not self._free_space:
            self._blanks_at.append((np.flatnonzero(kind == BLANK) + offset).astype(_NP))
        marks = np.flatnonzero(kind == MARK)
        if len(marks):
            self._marks_at.append((marks + offset).astype(_NP))

    def _self_check(self, rng: random.Random) -> bool:
        n = len(self.text)
        if n == 0:
            return True
        cuts = [rng.randrange(n + 1) for _ in range(2 * SELF_CHECKS)]
        if len(self.starts):  # and edges on token boundaries, which the fast path serves
            cuts += [self.starts[rng.randrange(len(self.starts))] for _ in range(2 * SELF_CHECKS)]
        rng.shuffle(cuts)
        spans = []
        for a, b in zip(cuts[::2], cuts[1::2], strict=False):
            a, b = min(a, b), max(a, b)
            spans.append((a, min(b, a + 600)))
        direct = encoded_lengths(self._tok, [self.text[a:b] for a, b in spans], self.special)
        return self.count_many(spans) == direct

    # -- counting ----------------------------------------------------------------------------
    def count(self, start: int, end: int) -> int:
        """Tokens the tokenizer gives ``text[start:end]`` on its own (special tokens included)."""
        return self.count_many([(start, end)])[0]

    def count_many(self, spans: Iterable[tuple[int, int]]) -> list[int]:
        """:meth:`count` of each span; the fragments of all spans are tokenised in one batch."""
        spans = list(spans)
        return self.count_bounds([a for a, _ in spans], [b for _, b in spans])

    def count_bounds(self, starts: Sequence[int], ends: Sequence[int]) -> list[int]:
        """:meth:`count` of each ``text[starts[k]:ends[k]]``."""
        text = self.text
        if not self.exact:
            return encoded_lengths(
                self._tok, [text[a:b] for a, b in zip(starts, ends, strict=True)], self.special
            )
        if len(starts) < FEW_SPANS:  # numpy's call overhead is more than bisecting a few spans
            out, todo = [0] * len(starts), range(len(starts))
        else:
            out, todo = self._count_clean(starts, ends)
        frags: list[str] = []
        owners: list[int] = []
        for k in todo:
            a, b = starts[k], ends[k]
            if b - a <= SHORT_CHARS:  # a word or a separator: tokenised whole (cached)
                n, edge = 0, [(a, b)]
            else:
                n, edge = self._interior(a, b)
            out[k] = n + self.special
            for fa, fb in edge:
                frags.append(text[fa:fb])
                owners.append(k)
        if frags:
            for k, n in zip(owners, self._fragment_counts(frags), strict=True):
                out[k] += n
        return out

    def _fragment_counts(self, texts: list[str]) -> list[int]:
        """Tokens of each fragment (no special tokens); fragments repeat (whitespace, word
        parts), so their counts are kept (a few thousand, then started afresh)."""
        cache = self._frags
        todo = [t for t in dict.fromkeys(texts) if t not in cache]
        if todo:
            if len(cache) > FRAGMENT_CACHE:
                cache.clear()
            cache.update(zip(todo, encoded_lengths(self._tok, todo), strict=True))
        return [cache[t] for t in texts]

    def _count_clean(self, a_list: Sequence[int], b_list: Sequence[int]) -> tuple[list[int], list[int]]:
        """(counts, indexes of the spans left to :meth:`_interior`): a span is clean when no
        token straddles either edge, both edge tokens start a word and neither edge touches a
        combining mark. A span ending in whitespace (where that can cost a token: not WordPiece)
        is counted as its clean part plus its trailing whitespace tokenised alone (one ``▁``)."""
        m = len(self.starts)
        if m == 0 or not len(a_list):
            return [0] * len(a_list), list(range(len(a_list)))
        a = np.asarray(a_list, dtype=_NP)  # the index's own type: searchsorted never casts it
        b = np.asarray(b_list, dtype=_NP)
        tail = None
        if not self._free_space and len(self._blanks):
            k = np.searchsorted(self._blanks, b - 1)
            k = np.minimum(k, len(self._blanks) - 1)
            tail = self._blanks[k] == b - 1
            b = np.where(tail, np.maximum(self._runs[k], a), b)  # where the trailing blanks start
        starts = np.frombuffer(self.starts, dtype=_NP)
        ends = np.frombuffer(self.ends, dtype=_NP)
        word = np.frombuffer(self.word, dtype=np.uint8)
        i = np.searchsorted(starts, a)
        j = np.searchsorted(starts, b)
        prev = np.maximum(i - 1, 0)
        straddle = (i > 0) & (ends[prev] > a)
        ok = ~straddle & (word[np.minimum(i, m - 1)] == 1)
        if self._prepends and len(self._blanks):  # "▁word" starting on the blank before a
            k = np.minimum(np.searchsorted(self._blanks, a - 1), len(self._blanks) - 1)
            own = straddle & (word[prev] == 1) & (self._blanks[k] == a - 1) & (self._runs[k] <= starts[prev])
            i = np.where(own, prev, i)
            ok |= own
        ok &= (i < j) & (b > a)
        ok &= ends[np.maximum(j - 1, 0)] <= b
        ok &= (j >= m) | (word[np.minimum(j, m - 1)] == 1)
        if len(self._marks):
            ok &= ~member(self._marks, a) & ~member(self._marks, b)
        counts = np.where(ok, j - i + self.special, 0).tolist()
        if tail is not None:
            text = self.text
            with_tail = np.flatnonzero(ok & tail).tolist()
            extra = self._fragment_counts([text[b[k] : b_list[k]] for k in with_tail])
            for k, n in zip(with_tail, extra, strict=True):
                counts[k] += n
        return counts, np.flatnonzero(~ok).tolist()

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

    # -- windows -----------------------------------------------------------------------------
    def token_starts(self) -> list[int]:
        """Start offsets of the tokens, as :meth:`ModelTokenLength.spans` gives them: empty
        tokens dropped, a token that starts inside the previous one merged into it."""
        if self._starts_cache is None:
            starts = np.frombuffer(self.starts, dtype=_NP)
            ends = np.frombuffer(self.ends, dtype=_NP)
            keep = ends > starts
            starts, ends = starts[keep], ends[keep]
            reach = np.maximum.accumulate(ends)  # the furthest end so far
            first = np.ones(len(starts), dtype=bool)
            first[1:] = starts[1:] >= reach[:-1]
            self._starts_cache = starts[first]
        return self._starts_cache.tolist()


def _monotone(starts: array) -> bool:
    """Token starts never go back (some tokenizers emit several tokens at one offset; fine)."""
    arr = np.frombuffer(starts, dtype=_NP) if len(starts) else _EMPTY
    return bool(np.all(arr[1:] >= arr[:-1])) if len(arr) > 1 else True
