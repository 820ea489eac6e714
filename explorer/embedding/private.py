"""Per-visitor embedding caches on a shared server (``CHUNK_EXPLORER_PRIVATE_CACHE=1``).

Why: the embedding cache (:mod:`explorer.embedding.cache`) is one file shared by every visitor
of a server, and so are the app's in-process caches of sentence vectors, token states, chunks
and indexes. A visitor who times a request can therefore tell whether somebody already embedded
an exact text (a cache hit answers in milliseconds, a miss takes the model's time): a timing
side channel on what others uploaded. A deployment that must close it sets the switch; then
each visitor gets a :func:`private_view` of the shared model: the same loaded weights (nothing
is loaded twice), its own memory-only cache bounded by bytes
(:data:`explorer.limits.PRIVATE_CACHE_BYTES`, nothing written to disk) and a model id of its
own, so every in-process cache keyed by model id (sentence vectors, token states, chunks,
retrieval indexes) is private too. The price: nothing embedded by one visitor, or in an earlier
session, is reused.
"""

from __future__ import annotations

import copy
import os
from typing import Any

from explorer.embedding.base import Embedder, EmbedStats
from explorer.embedding.cache import EmbeddingCache

PRIVATE_ENV = "CHUNK_EXPLORER_PRIVATE_CACHE"
#: Attributes a view keeps as its own (everything else follows the shared embedder).
_OWN = frozenset({"_cache", "stats", "model_id", "_load", "texts_embedded"})


def private_cache_enabled() -> bool:
    """Whether the deployment asked for per-visitor caches (``CHUNK_EXPLORER_PRIVATE_CACHE=1``)."""
    return os.environ.get(PRIVATE_ENV, "").strip().lower() not in ("", "0", "false", "no", "off")


def private_model_id(model_id: str, salt: str) -> str:
    """The model id of a visitor's view (what every in-process cache is keyed by)."""
    return f"{model_id}#private-{salt}"


def private_view(shared: Embedder, salt: str, cache: EmbeddingCache | None = None) -> Embedder:
    """``shared`` with its own cache (default :meth:`EmbeddingCache.private`), statistics and
    model id (:func:`private_model_id` with ``salt``, unique per visitor).

    The view is a shallow copy: the model, tokenizers and the lock that serialises model calls
    are the shared embedder's. A model that loads lazily loads once, in the shared embedder,
    and the view takes what loading set up.
    """
    view = copy.copy(shared)
    view._cache = cache if cache is not None else EmbeddingCache.private()
    view.stats = EmbedStats()
    view.model_id = private_model_id(shared.model_id, salt)
    if isinstance(getattr(shared, "texts_embedded", None), list):  # the fake embedder's record
        view.texts_embedded = []
    load = getattr(shared, "_load", None)
    if callable(load):

        def load_shared() -> Any:
            out = load()
            _follow(view, shared, salt)
            return out

        view._load = load_shared  # type: ignore[method-assign]
    return view


def _follow(view: Embedder, shared: Embedder, salt: str) -> None:
    """Take what the shared embedder set up since the view was made (its loaded model)."""
    for name, value in vars(shared).items():
        if name not in _OWN:
            view.__dict__[name] = value
    view.model_id = private_model_id(shared.model_id, salt)
