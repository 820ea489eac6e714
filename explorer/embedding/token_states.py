"""A document's token vectors, read once in overlapping windows, and chunk vectors pooled from
them: the engine of the one-pass preview (:mod:`explorer.embedding.late` keeps them and decides
when preview may run).

Why a module of its own: reading and pooling are exact bookkeeping of characters, tokens and
windows, tested on their own; storing and gating are policy.

How a document is read (:func:`compute_token_states`):

- The whole text is tokenized once with offsets (the model's ``tokenizer.json`` via
  ``tokenizers``), only to place the windows: each window holds at most ``window - frame``
  word pieces of the document (``window`` = the model's limit unless the registry's
  ``preview_window`` says otherwise), where the *frame* is what the model reads around them:
  [CLS]/[SEP] or <s>/</s>, and the passage prefix (``passage: `` for e5). Windows start and
  end on a word start (a token at the text's start or next to whitespace), so a window's text
  tokenizes alone as it did inside the document; consecutive windows share :data:`OVERLAP` of
  a window, and the last one is pulled back to full length.
- Each window's input is exactly what exact embedding would read for the chunk
  ``text[start:end]`` of that window: ``prefix + text[start:end]`` (leading whitespace left
  out), tokenized with the special tokens. Its body tokens are those whose middle falls after
  the prefix; its frame tokens (specials and prefix) are kept as one sum and a count.
- Each window *owns* the characters nearest its centre (the cut between consecutive windows is
  halfway between their centres, clamped to their overlap), and each token is kept once, from
  the window that owns it, i.e. where it is most central: float16 ``(n_tokens, dim)``, with
  the character span of each token and the window it came from.

How a chunk ``[start, end)`` is pooled (:meth:`TokenStates.pool`):

- A token belongs to the chunk when the middle of its character span lies in ``[start, end)``
  (so a token cut by a chunk boundary goes to exactly one of the two chunks; e5's tokens span
  the space before their word, BERT's do not: the middle rule treats both alike).
- The chunk vector is the mean of its tokens *and of the frame tokens of the window that gave
  most of them*, then L2-normalised. Exact mean pooling (sentence-transformers' Pooling and the
  ONNX graph alike) averages every token the model read, [CLS], the prefix and [SEP] included,
  so the frame is counted the same way: a chunk that is a whole window, of a document that fits
  in one, has the same tokens at the same positions in the same sequence as its exact
  embedding, hence the same mean (cosine > 0.9999; float16 storage is the only difference).
  Inside a longer document a window's first and last eighth belong to its neighbours (more
  central there), so a whole-window chunk there is close to exact, not equal.
- A chunk with no token of its own (whitespace, or inside one token) gets the token nearest
  its middle. ``context_chars`` of :class:`~explorer.retrieval.vectors.EmbedOptions` widens the pooled
  span (the characters exact embedding would add); ``prepend_headings`` cannot be pooled.

Differences from exact embedding that remain: a chunk shorter than a window sees its window's
context; its frame tokens are the window's; a chunk over the model's limit is pooled whole
(exact embedding cuts it at the limit). Measured (``bench/bench_late.py``, README): within a
few points of hit@5 for all-MiniLM-L6-v2, far more for multilingual-e5-small, whose token
vectors pooled over part of a long input are not what it was trained to produce.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from explorer.errors import ModelError

#: Share of a window repeated in the next one (a quarter: each token is read ~4/3 times).
OVERLAP = 0.25
#: Windows per model call (one progress step).
WINDOWS_PER_CALL = 16
#: Word pieces kept free in a window for a window text that tokenizes longer alone.
SLACK = 2

Progress = Callable[[int, int], Any]


# ---------------------------------------------------------------------------------------------
# Stored token states of one document
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class TokenStates:
    """A document's token vectors, read once in overlapping windows (see the module docstring):
    one row per token, from the window that owns it, in document order. ``mids2`` holds start +
    end (twice the middle) of each token's character span, so the middle rule compares whole
    numbers; ``owner`` the window each row comes from."""

    spans: np.ndarray  # (W, 2) int64: characters of the document each window read
    owned: np.ndarray  # (W, 2) int64: characters each window owns (a partition, end inclusive)
    mids2: np.ndarray  # (n,) int64, non-decreasing
    owner: np.ndarray  # (n,) int32
    states: np.ndarray  # (n, dim) float16
    frame_sum: np.ndarray  # (W, dim) float32: sum of the window's special and prefix tokens
    frame_count: np.ndarray  # (W,) int64

    @property
    def nbytes(self) -> int:
        arrays = (
            self.spans,
            self.owned,
            self.mids2,
            self.owner,
            self.states,
            self.frame_sum,
            self.frame_count,
        )
        return int(sum(a.nbytes for a in arrays))

    @property
    def windows(self) -> int:
        return len(self.spans)

    @property
    def n_tokens(self) -> int:
        return len(self.mids2)

    @property
    def dim(self) -> int:
        return int(self.frame_sum.shape[1])

    def rows(self, start: int, end: int) -> tuple[int, int]:
        """Rows of the tokens whose middle lies in ``[start, end)``: ``(first, last + 1)``."""
        m = self.mids2
        return int(np.searchsorted(m, 2 * start, "left")), int(np.searchsorted(m, 2 * end, "left"))

    def selection(self, start: int, end: int) -> tuple[int, int, int]:
        """``(first row, end row, frame window)`` pooled for ``text[start:end]``: the rows of
        :meth:`rows`, or, when none, the one token nearest the span's middle; the frame of the
        window that gave most of them."""
        a, b = self.rows(start, end)
        if b == a:
            if self.n_tokens == 0:
                return a, b, 0
            k = int(np.searchsorted(self.mids2, start + end))
            near = [r for r in (k - 1, k) if 0 <= r < self.n_tokens]
            a = min(near, key=lambda r: abs(int(self.mids2[r]) - (start + end)))
            b = a + 1
        owners = self.owner[a:b]  # non-decreasing: the longest run wins, ties to the first
        ws, counts = np.unique(owners, return_counts=True)
        return a, b, int(ws[int(np.argmax(counts))])

    def pool(self, spans: Sequence[tuple[int, int]]) -> np.ndarray:
        """Unit vectors (float32 ``(n, dim)``) of the chunks ``text[start:end]`` for ``spans``:
        the mean of their tokens and their window's frame tokens, L2-normalised."""
        out = np.zeros((len(spans), self.dim), np.float32)
        for i, (start, end) in enumerate(spans):
            a, b, w = self.selection(int(start), int(end))
            total = self.frame_sum[w] + self.states[a:b].sum(axis=0, dtype=np.float32)
            vec = total / max(int(self.frame_count[w]) + b - a, 1)
            norm = float(np.linalg.norm(vec))
            out[i] = vec / norm if norm > 0 else vec
        return out


# ---------------------------------------------------------------------------------------------
# Reading a document once
# ---------------------------------------------------------------------------------------------
def word_starts(text: str, offsets: Sequence[tuple[int, int]]) -> np.ndarray:
    """Per token: does it start a word (first token, or whitespace at or just before its start)?
    A window cut there tokenizes alone as inside the document (WordPiece and SentencePiece)."""
    out = np.zeros(len(offsets), bool)
    for i, (s, _) in enumerate(offsets):
        out[i] = i == 0 or (s < len(text) and text[s].isspace()) or (s > 0 and text[s - 1].isspace())
    return out


def plan_windows(
    starts: np.ndarray, body: int, overlap: int, fits: Callable[[int, int], bool] | None = None
) -> list[tuple[int, int]]:
    """Token ranges ``[a, b)`` of at most ``body`` tokens covering ``len(starts)`` tokens, each
    starting and (but for the last) ending on a word start where one lies in the back half,
    consecutive ones sharing about ``overlap`` tokens; the last one is pulled back to a full
    window. ``starts`` is :func:`word_starts`'s mask; ``fits(a, b)``, if given, may refuse a
    range (its text reads too long alone), which is then shortened."""
    n = len(starts)
    body = max(body, 4)
    overlap = min(max(overlap, 1), body // 4)
    where = np.flatnonzero(starts)

    def snap_back(i: int, lo: int) -> int:
        """The last word start in ``(lo, i]``, else ``i``."""
        k = int(np.searchsorted(where, i, "right")) - 1
        return int(where[k]) if k >= 0 and where[k] > lo else i

    out: list[tuple[int, int]] = []
    a = 0
    while True:
        if a + body >= n:
            lo = max(n - body, out[-1][0] + 1 if out else 0)
            k = int(np.searchsorted(where, lo, "left"))  # first word start at or after lo
            if k < len(where) and where[k] < a:
                a = int(where[k])
            b = n
        else:
            b = snap_back(a + body, a + body // 2)
        while fits is not None and b - a > 1 and not fits(a, b):
            b = snap_back(a + (b - a) * 7 // 8, a)
        out.append((a, b))
        if b >= n:
            return out
        ov = min(overlap, max((b - a) // 4, 1))
        nxt = snap_back(b - ov, a)
        a = nxt if nxt > a else max(b - ov, a + 1)


def compute_token_states(
    embedder: Any,
    text: str,
    *,
    window: int | None = None,
    progress: Progress | None = None,
) -> TokenStates:
    """Read ``text`` once with ``embedder`` (see the module docstring); ``window`` = word pieces
    per model input, frame included (default and maximum: the model's limit)."""
    tok = embedder.late_tokenizer()
    if tok is None:
        raise ModelError(f"the {embedder.backend} backend of {embedder.name} gives no token vectors")
    limit = int(embedder.max_seq_length)
    window = min(int(window or limit), limit)
    inputs = _window_inputs(tok, text, embedder.passage_prefix, limit, window)
    if any(len(enc.ids) > limit for _, _, enc in inputs):
        raise ModelError(f"a one-token window of {embedder.name} reads over its limit of {limit}")
    spans = np.array([(cs, ce) for cs, ce, _ in inputs], np.int64).reshape(-1, 2)
    return _read_windows(embedder, inputs, spans, _owned(spans, len(text)), progress)


def _window_inputs(tok: Any, text: str, prefix: str, limit: int, window: int) -> list[tuple[int, int, Any]]:
    """Per planned window: the characters it reads and the encoding of ``prefix`` + them."""
    frame = len(tok.encode(prefix).ids)  # specials + prefix pieces (an upper bound)
    body = max(window - frame - SLACK, 8)
    doc = tok.encode(text, add_special_tokens=False)
    offsets = [tuple(o) for o in doc.offsets]
    encoded: dict[tuple[int, int], tuple[int, int, Any]] = {}

    def fits(a: int, b: int) -> bool:
        cs, ce = _char_span(text, offsets, a, b)
        encoded[(a, b)] = (cs, ce, tok.encode(prefix + text[cs:ce]))
        return len(encoded[(a, b)][2].ids) <= limit

    plan = plan_windows(word_starts(text, offsets), body, int(body * OVERLAP), fits)
    inputs = [encoded[ab] if ab in encoded else (*_char_span(text, offsets, *ab), None) for ab in plan]
    return [(cs, ce, enc if enc is not None else tok.encode(prefix + text[cs:ce])) for cs, ce, enc in inputs]


def _read_windows(
    embedder: Any,
    inputs: list[tuple[int, int, Any]],
    spans: np.ndarray,
    owned: np.ndarray,
    progress: Progress | None,
) -> TokenStates:
    """Run the model on every window, :data:`WINDOWS_PER_CALL` at a time, and keep each token
    from the window that owns it."""
    prefix = embedder.passage_prefix
    dim = 0
    mids: list[np.ndarray] = []
    kept: list[np.ndarray] = []
    owner: list[np.ndarray] = []
    frame_sum: list[np.ndarray] = []
    frame_count: list[int] = []
    total = len(inputs)
    if progress is not None:
        progress(0, total)
    for g in range(0, total, WINDOWS_PER_CALL):
        group = inputs[g : g + WINDOWS_PER_CALL]
        hidden = embedder.token_states([enc.ids for _, _, enc in group])
        for w, ((cs, _, enc), h) in enumerate(zip(group, hidden, strict=True), g):
            h = np.asarray(h, np.float32)
            dim = h.shape[1]
            off = np.asarray(enc.offsets, np.int64).reshape(-1, 2)
            special = np.asarray(enc.special_tokens_mask, bool)
            # body = not special and its middle after the prefix (e5's "▁The" spans the space)
            is_body = ~special & (off[:, 0] + off[:, 1] >= 2 * len(prefix))
            frame_sum.append(h[~is_body].sum(axis=0))
            frame_count.append(int((~is_body).sum()))
            m = off[is_body].sum(axis=1) + 2 * (cs - len(prefix))
            mine = (m >= 2 * owned[w, 0]) & (m < 2 * owned[w, 1])  # the tokens this window owns
            mids.append(m[mine])
            kept.append(h[is_body][mine].astype(np.float16))
            owner.append(np.full(int(mine.sum()), w, np.int32))
        if progress is not None:
            progress(min(g + len(group), total), total)
    return TokenStates(
        spans=spans,
        owned=owned,
        mids2=np.concatenate(mids),
        owner=np.concatenate(owner),
        states=np.concatenate(kept).reshape(-1, dim),
        frame_sum=np.stack(frame_sum).astype(np.float32),
        frame_count=np.asarray(frame_count, np.int64),
    )


def _char_span(text: str, offsets: Sequence[tuple[int, int]], a: int, b: int) -> tuple[int, int]:
    """Characters of tokens ``[a, b)``, leading whitespace left out (exact embedding of a chunk
    that starts at the word reads no space either)."""
    if a >= b:
        return (0, 0) if not offsets else (offsets[min(a, len(offsets) - 1)][0],) * 2
    cs, ce = offsets[a][0], max(offsets[k][1] for k in range(max(a, b - 4), b))
    while cs < ce and text[cs].isspace():
        cs += 1
    return cs, ce


def _owned(spans: np.ndarray, length: int) -> np.ndarray:
    """Each window's characters: cut halfway between consecutive centres, within their overlap."""
    w = len(spans)
    owned = np.zeros((w, 2), np.int64)
    cuts = [0]
    for k in range(w - 1):
        centre = (int(spans[k].sum()) + int(spans[k + 1].sum())) // 4
        lo, hi = int(spans[k + 1, 0]), int(spans[k, 1])
        cut = min(max(centre, min(lo, hi)), max(lo, hi))
        cuts.append(max(cut, cuts[-1]))
    cuts.append(length + 1)
    for k in range(w):
        owned[k] = (cuts[k], cuts[k + 1])
    return owned
