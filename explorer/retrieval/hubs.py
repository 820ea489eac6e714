"""How much of a hub each chunk is: the mean cosine to its nearest other chunks, which hybrid
takes half of off a chunk's cosine before fusing (:func:`explorer.retrieval.ranking.hybrid_hits`).

Why: in a model's space some chunks lie close to everything (a list of links, a "where to find
help" paragraph, a table of contents) and come near the top for questions they do not answer.
Cross-domain similarity local scaling (CSLS: Conneau, Lample, Ranzato, Denoyer & Jégou, *Word
Translation Without Parallel Data*, ICLR 2018) scores a pair by ``2 cos(q, c) - r(q) - r(c)``,
``r`` the mean cosine to the 10 nearest neighbours; ``r(q)`` is the same for every chunk of one
question, so the ranking is that of ``cos(q, c) - r(c) / 2``, with CSLS's own 10 and ½, not fitted
here. Measured with the app's hybrid (``bench/bench_fusion.py``, 14 settings: two French sets,
Chroma's, Vim's tutorial in four languages, 1000/200 and 500/0): see :data:`HUB_WEIGHT`.

The means are computed only for the chunks a question's fusion looks at (its candidates), one
FAISS search each, and kept: a chunk's neighbours do not depend on the question.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

#: Neighbours whose mean cosine says how much of a hub a chunk is (CSLS's K).
HUB_NEIGHBOURS = 10
#: The share of that mean taken off a chunk's cosine in hybrid fusion (CSLS's ½). Measured on
#: 2026-12-06, questions hit in the top 5 over 1,224 asked in 14 settings (bench/bench_fusion.py),
#: net against the same fusion without it: e5 int8 +18, lost in no setting (French 1000/200 53 → 54
#: of 60, the second French set 22 → 25 of 40 at 1000/200 and 500/0, Chroma's 500/0 422 → 429 of
#: 472); before that day's gold fixes, e5 float32 +14 (one setting a question down), MiniLM int8
#: +12 (none), MiniLM float32 +2 (three settings a question down); with e5 int8 every K of 5, 10,
#: 20 with ¼, ½ or ¾ gained 10-18 and lost in no setting.
HUB_WEIGHT = 0.5
#: How hit cards write :data:`HUB_WEIGHT` ("cosine 0.874 − ½ × 0.512").
HUB_WEIGHT_SHOWN = {0.25: "¼", 0.5: "½", 0.75: "¾"}.get(HUB_WEIGHT, f"{HUB_WEIGHT:g}")


class NeighbourMeans:
    """Per chunk, the mean cosine to its :data:`HUB_NEIGHBOURS` nearest other chunks of the same
    index, computed on first need and kept (float32, 4 bytes a chunk). ``vectors_of(rows)`` gives
    chunks' unit vectors, ``search(queries, k)`` the (scores, ids) of an inner-product search
    over all of them (FAISS's, or a :class:`~explorer.retrieval.faiss_index.VectorIndex`'s)."""

    def __init__(
        self,
        size: int,
        vectors_of: Callable[[np.ndarray], np.ndarray],
        search: Callable[[np.ndarray, int], tuple[np.ndarray, np.ndarray]],
    ) -> None:
        self._vectors_of, self._search = vectors_of, search
        self._means = np.full(size, np.nan, np.float32)
        self._lock = threading.Lock()

    def __call__(self, rows: np.ndarray) -> np.ndarray:
        """The means of the chunks at ``rows`` (0 for a chunk with no other chunk beside it)."""
        rows = np.asarray(rows, np.int64)
        with self._lock:
            missing = np.unique(rows[np.isnan(self._means[rows])])
            if len(missing):
                self._means[missing] = self._compute(missing)
            return self._means[rows].astype(np.float64)

    def _compute(self, rows: np.ndarray) -> np.ndarray:
        k = min(HUB_NEIGHBOURS, len(self._means) - 1)
        if k <= 0:
            return np.zeros(len(rows), np.float32)
        queries = np.ascontiguousarray(self._vectors_of(rows), np.float32)
        scores, ids = self._search(queries, k + 1)
        out = np.empty(len(rows), np.float32)
        for i, (row, s, found) in enumerate(zip(rows.tolist(), scores, ids, strict=True)):
            others = s[(found != row) & (found >= 0)][:k]  # the chunk itself is not its neighbour
            out[i] = others.mean() if len(others) else 0.0
        return out
