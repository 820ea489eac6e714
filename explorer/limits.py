"""Work limits, in one place so the README, the CLI and the app agree.

Every limit here is enforced by the core (not only the UI) and produces a clear
:class:`explorer.errors.LimitError` or :class:`explorer.errors.LoadError` when exceeded.
"""

from __future__ import annotations

#: Largest file accepted by the loaders (bytes): 50 MB as Streamlit's uploader counts them in
#: the browser (10**6 bytes a megabyte; on Windows 2**20), so a file it takes is never refused here.
MAX_FILE_BYTES = 50 * 10**6
#: A megabyte as the messages count it (:data:`MAX_FILE_BYTES`).
MB = 10**6
#: Largest extracted document text (characters).
MAX_TEXT_CHARS = 20_000_000
#: PDF pages extracted at most; later pages are dropped with a warning.
MAX_PDF_PAGES = 2_000
#: Wall-clock budget for extracting one PDF (seconds); past it, extraction stops with a warning.
PDF_TIME_BUDGET_S = 60.0
#: Largest content stream of one PDF page whose text is extracted (bytes, decoded); a bigger page
#: is left empty, with a warning. pypdf's extraction grows faster than the stream within a page,
#: and the time budget above is only checked between pages: one page of 20 MB took 11 s, 40 MB
#: 54 s and 70 MB 3 min 9 s (a 147 KB file), on the uploading session's thread.
MAX_PDF_PAGE_CONTENT_BYTES = 16 * 2**20
#: Most text-showing operators (``Tj``, ``TJ``) in one PDF page whose text is extracted; a page
#: with more is left empty, with a warning. pypdf spends ~33 µs on each: a 7.6 MB page of 1.9 M
#: of them took 63 s. A page of dense text has a few thousand.
MAX_PDF_PAGE_TEXT_OPS = 200_000
#: A parameter set that yields more chunks than this for one document is refused.
MAX_CHUNKS = 200_000
#: Most chunks retrieved per question (top k): more is no longer a ranking to read or score.
MAX_TOP_K = 1_000
#: Longest heading title a chunk's heading path carries (characters; a longer one is cut, with
#: "…"): every chunk under a heading carries its path, so a 1 MB heading line made each of 1,252
#: chunks carry 1 MB (1.25 GB of output, an 8.3 GB server peak).
MAX_HEADING_CHARS = 200
#: Longest user-supplied separator (characters).
MAX_SEPARATOR_CHARS = 64
#: Most separators a recursive splitter takes: it recurses once per separator it falls back to,
#: so 500 of them hit Python's recursion limit (a crafted link crashed every page). LangChain's
#: longest language list has about 30.
MAX_SEPARATORS = 64
#: Largest Markdown text whose block structure is parsed (markdown-it-py reads ~0.3-1 MB/s);
#: a bigger Markdown file loads as plain text, with a warning.
MAX_MARKDOWN_CHARS = 2_000_000
#: Time one document may spend matching user-supplied regex separators (seconds), in total.
REGEX_TIME_BUDGET_S = 5.0
#: Texts embedded (not already cached) in one request. At ~100-160 texts/s on 2 CPU cores this
#: is still about half an hour; past it the request is refused instead of running for hours.
MAX_EMBED_TEXTS = 200_000
#: The embedding strategies (semantic, cluster) on one document, checked before anything is
#: embedded. Measured on 2 shared CPU cores with multilingual-e5-small (int8 ONNX, the default):
#: 2,000,000 characters of prose took 150 s with semantic and 133 s with cluster, and 47,713
#: headings (short sentences) 197 s with semantic; so each limit is about three minutes of
#: embedding a document at most (cached vectors are free).
#: Characters embedded (with ``window_embedding='joined'``, the text of every window: LangChain's
#: way on Chroma's largest corpus, finance, is 2.2 M).
MAX_EMBED_CHARS = 2_500_000
#: Sentences ``semantic`` embeds (a Markdown file of 100,000 headings has 100,000).
MAX_SEMANTIC_SENTENCES = 50_000
#: Pieces ``cluster`` embeds and groups (a small piece_size makes many).
MAX_CLUSTER_PIECES = 50_000
#: Pairs of pieces ``cluster``'s grouping compares: each piece with those that may share its
#: chunk (0.1-0.6 us a pair: at most a few seconds).
MAX_CLUSTER_PAIRS = 10_000_000


def _mb_env(name: str, default_mb: int) -> int:
    """A budget in MB from the environment (a deployment's choice), in bytes."""
    import os

    raw = os.environ.get(name, "").strip()
    try:
        mb = float(raw) if raw else default_mb
    except ValueError:
        mb = default_mb
    return int(max(mb, 1) * 1024 * 1024)


#: In-process caches, bounded by bytes (``CHUNK_EXPLORER_<NAME>_MB`` overrides each): the
#: documents' word-piece indexes (9 bytes a token), per-document sentence vectors, and the
#: indexes Retrieve and Evaluate build (vectors + chunk texts).
TOKEN_INDEX_BYTES = _mb_env("CHUNK_EXPLORER_TOKEN_INDEX_MB", 256)
SENTENCE_VECTORS_BYTES = _mb_env("CHUNK_EXPLORER_SENTENCE_VECTORS_MB", 256)
RETRIEVAL_INDEX_BYTES = _mb_env("CHUNK_EXPLORER_RETRIEVAL_INDEX_MB", 512)
#: The documents' piece vectors (explorer.retrieval.pieces), shared by every configuration's index.
PIECE_VECTORS_BYTES = _mb_env("CHUNK_EXPLORER_PIECE_VECTORS_MB", 256)
#: The app's shared caches of loaded documents and of chunk lists (text + offsets), by bytes.
DOCUMENTS_BYTES = _mb_env("CHUNK_EXPLORER_DOCUMENTS_MB", 512)
CHUNKS_BYTES = _mb_env("CHUNK_EXPLORER_CHUNKS_MB", 512)
#: What is worked out once per whole text and asked again (its sentences, fences, Markdown
#: structure, joining marks: each memo has this budget) and the answer-matching view of each
#: document (the text folded plus 4 bytes a character, ~100 MB for 20 M characters).
TEXT_MEMO_BYTES = _mb_env("CHUNK_EXPLORER_TEXT_MEMO_MB", 32)
MATCH_VIEW_BYTES = _mb_env("CHUNK_EXPLORER_MATCH_VIEW_MB", 128)
#: The app embeds loaded documents in the background (the warm-up) only up to this many
#: characters in all (~10 minutes of a 2-core CPU with e5); bigger sets embed when asked.
WARM_MAX_CHARS = 2_000_000
#: Each app session's own embedding cache when ``CHUNK_EXPLORER_PRIVATE_CACHE=1`` (memory only,
#: least recently used vectors dropped first; ``CHUNK_EXPLORER_PRIVATE_CACHE_MB`` overrides it).
PRIVATE_CACHE_BYTES = _mb_env("CHUNK_EXPLORER_PRIVATE_CACHE_MB", 64)
