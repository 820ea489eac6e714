"""Retrieval per strategy: every document chunked with each configuration, the chunks
indexed densely with FAISS (:mod:`.faiss_index`) or lexically with BM25 (:mod:`.lexical`) or
both fused, and the hits for a question (:mod:`.search`).

It may import the layers below it (``explorer.text``, ``explorer.documents``,
``explorer.embedding``, ``explorer.strategies``); evaluation and the UI stand on it.
"""
