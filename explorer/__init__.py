"""Chunk Explorer core: load documents, chunk them with exact offsets, embed, retrieve, evaluate.

Importing this package is light (no torch, sentence-transformers or faiss): heavy libraries
are imported by the functions that need them. It does set the process's offline and thread-wait
environment (:func:`explorer.models.local.offline`) on import: those are read once, when transformers
and torch are imported, so any later depth would depend on import order.
"""

from __future__ import annotations

from explorer.documents.document import Block, Document, Page
from explorer.errors import ExplorerError, LimitError, LoadError, ModelError, ParamError
from explorer.models.local import offline
from explorer.strategies import all_strategies, get_strategy, strategy_names
from explorer.strategies.context import Context
from explorer.text.chunk import Chunk, Span

offline()  # none of the imports above imports torch or transformers (a test holds it)

__version__ = "0.1.0"


def chunk_document(
    doc: Document, strategy: str, params: dict | None = None, ctx: Context | None = None
) -> list[Chunk]:
    """Chunk ``doc`` with the named strategy; ``params`` are validated (ParamError on bad values)."""
    return get_strategy(strategy).chunk(doc, params, ctx)


__all__ = [
    "Block",
    "Chunk",
    "Context",
    "Document",
    "ExplorerError",
    "LimitError",
    "LoadError",
    "ModelError",
    "Page",
    "ParamError",
    "Span",
    "all_strategies",
    "chunk_document",
    "get_strategy",
    "strategy_names",
]
