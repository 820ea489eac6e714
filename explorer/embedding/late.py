"""One-pass embedding ("late chunking"): each document goes through the model once; every chunk
of every configuration is pooled from the stored token vectors. An approximate preview mode.

Why: exact embedding runs the model on every distinct chunk text, so a new chunk size, overlap
or sweep step re-embeds the corpus. Here a document is read once, in overlapping windows at the
model's input limit, and a chunk's vector is the mean of the token vectors inside its offsets:
a new configuration costs no model call. The vectors differ from exact ones (a token saw up to
a window of context, not only its chunk), so retrieval scores shift; ``bench/bench_late.py``
measures the shift per registered model and the registry records it
(:attr:`~explorer.models.registry.ModelSpec.preview_gap`). Preview is offered only for models
within :data:`~explorer.models.registry.PREVIEW_MAX_GAP` points of hit@5 (see
:func:`check_preview`; forcing it is possible), and questions are always embedded exactly.

How a document is read and a chunk pooled: :mod:`explorer.embedding.token_states`. This module
keeps what was read and decides when preview may run.

Memory: :class:`TokenStore` keeps documents' token states per (model, prefix, window, SHA-256
of the text), least recently used evicted beyond ``CHUNK_EXPLORER_PREVIEW_MB`` (default
:data:`DEFAULT_MAX_MB` = 256 MB: at 768 bytes per token for 384-dimensional models, about
350,000 tokens, i.e. about 1 MB of text). The entry just computed is never evicted, so a single
document over the bound still works (and is dropped at the next one). Evaluations and sweeps
pool every configuration document by document, so a corpus over the bound is still read once.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from explorer.embedding.cache import text_hash
from explorer.embedding.token_states import OVERLAP, Progress, TokenStates, compute_token_states
from explorer.errors import ModelError, ParamError
from explorer.models.registry import PREVIEW_MAX_GAP, find_spec

#: Default byte bound of the token store (``CHUNK_EXPLORER_PREVIEW_MB`` overrides it).
DEFAULT_MAX_MB = 256


# ---------------------------------------------------------------------------------------------
# The process-wide store
# ---------------------------------------------------------------------------------------------
class TokenStore:
    """Token states per (model, prefix, window, text hash), least recently used evicted beyond
    ``max_bytes`` (the entry just added stays). ``computed`` counts documents read by the
    model; ``hits`` the look-ups served from memory."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = int(max_bytes)
        self._items: OrderedDict[tuple, TokenStates] = OrderedDict()
        self._lock = threading.Lock()
        self.nbytes = 0
        self.hits = self.computed = self.evicted = 0

    def __len__(self) -> int:
        return len(self._items)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.nbytes = 0

    @staticmethod
    def key(embedder: Any, text: str, window: int | None = None) -> tuple:
        return (embedder.model_id, embedder.passage_prefix, window or 0, OVERLAP, text_hash(text))

    def lookup(self, key: tuple) -> TokenStates | None:
        with self._lock:
            item = self._items.get(key)
            if item is not None:
                self._items.move_to_end(key)
                self.hits += 1
            return item

    def put(self, key: tuple, item: TokenStates) -> None:
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.nbytes -= old.nbytes
            self._items[key] = item
            self.nbytes += item.nbytes
            while self.nbytes > self.max_bytes and len(self._items) > 1:
                _, gone = self._items.popitem(last=False)
                self.nbytes -= gone.nbytes
                self.evicted += 1

    def get(
        self, embedder: Any, text: str, window: int | None = None, progress: Progress | None = None
    ) -> TokenStates:
        """The token states of ``text`` under ``embedder``, read now if not stored."""
        window = default_window(embedder, window)
        key = self.key(embedder, text, window)
        item = self.lookup(key)
        if item is None:
            item = compute_token_states(embedder, text, window=window, progress=progress)
            with self._lock:
                self.computed += 1
            self.put(key, item)
        return item


def default_window(embedder: Any, window: int | None = None) -> int:
    """Word pieces per model input: ``window`` if given, else the registry's ``preview_window``
    for the model, else the model's limit (never above the limit)."""
    limit = int(embedder.max_seq_length)
    if window is None:
        spec = find_spec(getattr(embedder, "name", None))
        window = spec.preview_window if spec is not None and spec.preview_window else limit
    if isinstance(window, bool) or not isinstance(window, int) or window < 16:
        raise ParamError(f"preview window {window!r} must be a whole number of at least 16 word pieces")
    return min(window, limit)


def _default_max_bytes() -> int:
    raw = os.environ.get("CHUNK_EXPLORER_PREVIEW_MB", "")
    try:
        mb = float(raw) if raw.strip() else DEFAULT_MAX_MB
    except ValueError:
        mb = DEFAULT_MAX_MB
    return int(max(mb, 0) * 2**20)


_store: TokenStore | None = None
_store_lock = threading.Lock()


def get_store() -> TokenStore:
    """The process-wide :class:`TokenStore` (bound read from the environment on first use)."""
    global _store
    with _store_lock:
        if _store is None:
            _store = TokenStore(_default_max_bytes())
        return _store


def pool_chunks(
    embedder: Any,
    items: Sequence[tuple[str, Sequence[tuple[int, int]]]],
    progress: Progress | None = None,
    store: TokenStore | None = None,
) -> list[np.ndarray]:
    """Preview vectors: for each ``(document text, [(start, end), ...])``, the unit vectors of
    those spans pooled from the document's stored token states (read once if not stored)."""
    store = store or get_store()
    out = []
    for text, spans in items:
        states = store.get(embedder, text, progress=progress)
        out.append(states.pool(spans) if len(spans) else np.zeros((0, states.dim), np.float32))
    return out


# ---------------------------------------------------------------------------------------------
# The gate
# ---------------------------------------------------------------------------------------------
def preview_gap(embedder_or_name: Any) -> float | None:
    """The registered model's measured hit@5 gap of preview versus exact, in points (None if
    not measured: a local folder, or a model not in the registry)."""
    name = embedder_or_name if isinstance(embedder_or_name, str) else getattr(embedder_or_name, "name", None)
    spec = find_spec(name) if name else None
    return spec.preview_gap if spec is not None else None


def check_preview(embedder: Any, force: bool = False) -> float | None:
    """Raise unless preview may run for ``embedder``: it must give token vectors (ModelError
    otherwise, forced or not), and its model's measured gap must be within
    :data:`PREVIEW_MAX_GAP` points (ParamError naming the gap otherwise, unless ``force``).
    Returns the measured gap (None when not measured)."""
    if embedder.late_tokenizer() is None:
        raise ModelError(
            f"preview needs token vectors, which the {embedder.backend} backend of {embedder.name} "
            "does not give: use the onnx or torch backend"
        )
    gap = preview_gap(embedder)
    if force:
        return gap
    if gap is None:
        raise ParamError(
            f"preview (one-pass vectors) has no measured gap for {embedder.name}: it is offered only "
            f"for registered models within {PREVIEW_MAX_GAP:g} points of exact hit@5; force it "
            "(--preview force, force_preview=True) to run it anyway"
        )
    if gap > PREVIEW_MAX_GAP:
        raise ParamError(
            f"preview (one-pass vectors) is not offered for {embedder.name}: its hit@5 differs from exact "
            f"embedding's by up to {gap:.1f} points (measured, bench/bench_late.py), over the "
            f"{PREVIEW_MAX_GAP:g}-point limit; use exact embedding, or force it (--preview force, "
            "force_preview=True) to run it anyway"
        )
    return gap
