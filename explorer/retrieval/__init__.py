"""Retrieval per strategy: every document chunked with each configuration, the chunk vectors
made exactly or pooled in preview mode (:mod:`.vectors`), the chunks indexed densely with FAISS
(:mod:`.faiss_index`) or lexically with BM25 (:mod:`.lexical`) or both (:mod:`.search`), and
the hits for a question ranked with one order among ties (:mod:`.ranking`).

It may import the layers below it (``explorer.text``, ``explorer.documents``,
``explorer.embedding``, ``explorer.strategies``); evaluation and the UI stand on it.
"""
