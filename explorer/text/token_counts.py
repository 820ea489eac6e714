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
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import Any

import numpy as np

from explorer.text.token_edges import EdgeRules
from explorer.text.tokenizing import (
    BLANK,
    MARK,
    code_points,
    encoded_lengths,
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
#: Longest of those slices: what is checked is their edges (a longer middle only costs time).
SELF_CHECK_CHARS = 240
#: Slices this short (a word, a separator) are tokenised whole rather than analysed.
SHORT_CHARS = 16
#: Fewer spans than this are counted one by one in Python rather than in numpy.
FEW_SPANS = 8
#: Distinct fragments whose counts an index keeps.
FRAGMENT_CACHE = 8192

#: Separators whose gap counts an index keeps (:meth:`TokenIndex.gap_counts`), and the room
#: they are given in its size: 12 bytes an occurrence, spaces being about 1 character in 6.
GAP_SEPARATORS, GAP_BYTES_PER_CHAR = 3, 3

#: Offsets are held as 32-bit integers (documents are refused long before 2**31 characters).
_POS, _NP = "i", np.int32
_EMPTY = np.zeros(0, dtype=_NP)


class TokenIndex(EdgeRules):
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
        self._np_views: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._gaps: dict[str, tuple[np.ndarray, np.ndarray]] = {}
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
            arrays
            + len(self.word)
            + 4 * len(self.starts)
            + sys.getsizeof(self.text)
            + 100 * FRAGMENT_CACHE
            + GAP_BYTES_PER_CHAR * len(self.text)  # room for the gap counts (see gap_counts)
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
        if self._free_space and piece.isascii():  # only marks are wanted, and none is ASCII
            return
        cps = code_points(piece)
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
            spans.append((a, min(b, a + SELF_CHECK_CHARS)))
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
        if len(cache) > FRAGMENT_CACHE:  # before the look-up: cleared after it, the fragments
            cache.clear()  # found there were gone (a KeyError on Explore: fixed 1/0, then 500/0)
        todo = [t for t in dict.fromkeys(texts) if t not in cache]
        if todo:
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
        blanks = self._blanks
        if not self._free_space and len(blanks):
            k = blanks.searchsorted(b - 1)
            np.minimum(k, len(blanks) - 1, out=k)
            tail = blanks[k] == b - 1
            b = np.where(tail, np.maximum(self._runs[k], a), b)  # where the trailing blanks start
        starts, ends, word = self._views()
        i = starts.searchsorted(a)
        j = starts.searchsorted(b)
        prev = i - 1
        np.maximum(prev, 0, out=prev)
        straddle = ends[prev] > a
        straddle &= i > 0
        ok = word[np.minimum(i, m - 1)] == 1
        ok &= ~straddle
        if self._prepends and len(blanks):  # "▁word" starting on the blank before a
            k = np.minimum(blanks.searchsorted(a - 1), len(blanks) - 1)
            own = straddle & (word[prev] == 1) & (blanks[k] == a - 1) & (self._runs[k] <= starts[prev])
            i = np.where(own, prev, i)
            ok |= own
        ok &= i < j
        ok &= b > a
        last = j - 1
        np.maximum(last, 0, out=last)
        ok &= ends[last] <= b
        ok &= (j >= m) | (word[np.minimum(j, m - 1)] == 1)
        if len(self._marks):
            ok &= ~member(self._marks, a) & ~member(self._marks, b)
        j -= i
        j += self.special
        j[~ok] = 0
        counts = j.tolist()
        if tail is not None:
            text = self.text
            with_tail = np.flatnonzero(ok & tail).tolist()
            extra = self._fragment_counts([text[b[k] : b_list[k]] for k in with_tail])
            for k, n in zip(with_tail, extra, strict=True):
                counts[k] += n
        return counts, np.flatnonzero(~ok).tolist()

    def gap_counts(self, sep: str) -> tuple[np.ndarray, np.ndarray]:
        """(positions of the one-character ``sep`` in the text, tokens of the text from each to
        the next): the count of every piece a split on ``sep`` makes, but the two at a range's
        edges. Kept for a few separators, within the room the index's size counts for them, so
        a splitter run again (a slider moved) looks every line and word up instead of counting
        it (a text of little but separators is counted afresh each time instead)."""
        got = self._gaps.get(sep)
        if got is None:
            pos = np.flatnonzero(code_points(self.text) == ord(sep))  # int64: searched with Python ints
            counts = (
                np.asarray(self.count_bounds(pos[:-1].tolist(), pos[1:].tolist()), dtype=_NP)
                if len(pos) > 1
                else _EMPTY
            )
            got = (pos, counts)
            kept = sum(p.nbytes + c.nbytes for p, c in self._gaps.values())
            room = GAP_BYTES_PER_CHAR * len(self.text)  # what nbytes counts for them
            if len(self._gaps) < GAP_SEPARATORS and kept + pos.nbytes + counts.nbytes <= room:
                self._gaps[sep] = got
        return got

    def _views(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The index's arrays as numpy views (made once: the index is complete when used)."""
        if self._np_views is None:
            self._np_views = (
                np.frombuffer(self.starts, dtype=_NP),
                np.frombuffer(self.ends, dtype=_NP),
                np.frombuffer(self.word, dtype=np.uint8),
            )
        return self._np_views

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
