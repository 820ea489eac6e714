"""A thin FAISS wrapper: exact inner-product search, HNSW for very large indexes.

Vectors are unit-norm, so inner product = cosine similarity. Exact search (``IndexFlatIP``)
is the default: for up to ``HNSW_THRESHOLD`` chunks it answers a query in a few milliseconds
on a laptop CPU (50,000 × 384 floats is 77 MB scanned per query, ~5–10 ms), needs no build
time and gives the exact ranking the metrics assume. Above it, an ``IndexHNSWFlat`` graph
(M = 32, efSearch = 128) keeps queries fast at the cost of a build of several seconds and
approximate (very rarely different) results. faiss is imported only when an index is built.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: Chunks above which an HNSW graph replaces exact search (see module docstring).
HNSW_THRESHOLD = 50_000
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 80
HNSW_EF_SEARCH = 128


class VectorIndex:
    """Inner-product index over float32 unit vectors. ``exact=None`` picks by size."""

    def __init__(self, vectors: np.ndarray, *, exact: bool | None = None) -> None:
        import faiss

        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2:
            raise ValueError(f"vectors must be (n, dim), got shape {vectors.shape}")
        self.dim = vectors.shape[1]
        self.size = vectors.shape[0]
        self.exact = self.size <= HNSW_THRESHOLD if exact is None else exact
        index: Any
        if self.exact:
            index = faiss.IndexFlatIP(self.dim)
        else:
            index = faiss.IndexHNSWFlat(self.dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
            index.hnsw.efSearch = HNSW_EF_SEARCH
        if self.size:
            index.add(vectors)
        self._index = index

    @property
    def kind(self) -> str:
        return "flat" if self.exact else "hnsw"

    @property
    def nbytes(self) -> int:
        """Bytes the index stores: its vectors (size × dim × 4; a flat index holds nothing
        else) and, for HNSW, its graph: neighbour ids (4 bytes each), per-vector offsets
        (8 bytes) and levels (4 bytes), read from FAISS's own arrays."""
        vectors = self.size * self.dim * 4
        if self.exact:
            return vectors
        g = self._index.hnsw
        return vectors + 4 * g.neighbors.size() + 8 * g.offsets.size() + 4 * g.levels.size()

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores, ids), each (m, k'), best first; k' = min(k, size). Ids are row numbers."""
        queries = np.ascontiguousarray(np.atleast_2d(queries), dtype=np.float32)
        if queries.shape[1] != self.dim:
            raise ValueError(f"query dimension {queries.shape[1]} != index dimension {self.dim}")
        k = min(int(k), self.size)
        if k <= 0 or queries.shape[0] == 0:
            return np.zeros((queries.shape[0], 0), np.float32), np.zeros((queries.shape[0], 0), np.int64)
        if not self.exact:
            self._index.hnsw.efSearch = max(HNSW_EF_SEARCH, k)
        scores, ids = self._index.search(queries, k)
        return scores, ids
