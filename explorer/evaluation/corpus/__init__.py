"""The corpus runner: ``evaluate``/``sweep`` over thousands of documents without holding the
corpus in memory.

Documents are streamed: each one is loaded, matched against the questions, chunked with every
configuration and embedded (:mod:`.work`), then only what retrieval and scoring need is kept:
its chunks' offsets, token counts and vectors (in one exact FAISS index per configuration,
appended document by document) and, for BM25, its chunks' word ids (:mod:`.index`). Each
finished document is one line of a JSONL file and one file of a per-document cache
(:mod:`.store`), so an interrupted run resumes where it stopped (:mod:`.runner`). The question
file is read before the documents and resolved as they stream by (:mod:`.plan`), with the
rules of :mod:`explorer.evaluation.questions`. The corpus itself is files, folders and glob
patterns (:mod:`.sources`).

Two engines run the same per-document code: ``local`` (this process) and ``ray``
(:mod:`.ray_engine`: loading and chunking as Ray tasks, embedding as Ray Data ``map_batches``
over model-holding actors). Ray is imported only by that module, only when asked for.

The final scores are those of :func:`explorer.evaluation.evaluate.evaluate` on the same inputs:
the same rankings (:mod:`explorer.retrieval.ranking`) over the same vectors and the same scoring.
This package may import everything below the evaluation layer, and the rest of
:mod:`explorer.evaluation`; only the CLI imports it.
"""
