"""What a configuration costs, to read beside what it scores: vectors, index size, embedding
time, and the tokens an LLM would receive for the top-k chunks.

- **vectors**: one per chunk that was embedded (none for BM25 alone), and one per piece where
  pieces score the chunks (:mod:`explorer.retrieval.pieces`);
- **index size**: bytes of the vector index (n × dim × 4 for FAISS's flat index; HNSW adds
  its graph: see :attr:`explorer.retrieval.faiss_index.VectorIndex.nbytes`), and the pieces' vectors;
- **embedding time**: measured when the index made its vectors; vectors that all came from the
  embedding cache count as 0 s, "from cache" (a second run costs nothing, and says so); an
  index made before the reader's visit began (the app shares indexes between sessions) is
  "cached (built in 32 s)": its time was spent then, not for this visit;
- **LLM tokens at top-k**: per question, the cl100k tokens (GPT-4's tokenizer) of the top-k
  chunks' texts summed (what a RAG prompt would carry), averaged over the questions.

Why a module of its own: Retrieve, Evaluate and the CLI's ``evaluate`` show the same figures
from a :class:`~explorer.retrieval.search.StrategyIndex` and its hits.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from explorer.retrieval.ranking import DEFAULT_RETRIEVER, Hit

if TYPE_CHECKING:
    from explorer.retrieval.search import StrategyIndex
    from explorer.text.length import Length

#: Tokenizer the LLM figure counts in (OpenAI's cl100k_base).
LLM_UNIT = "cl100k"
_PRELOAD = threading.Lock()  # held while the one preload thread is made
_preload: list[threading.Thread] = []  # that thread, once made


def preload_llm_counter() -> threading.Thread | None:
    """Load the LLM-token counter on a daemon thread of its own, once per process; the thread,
    or None when it is loaded or loading already.

    Why: importing ``bpe_openai`` reads its tables, about a second of CPU that gives the GIL
    back. Done on the page that first shows a cost, it held Retrieve's first real results 2 s
    (bench_first_answer.py); started when Retrieve opens or beside the warm-up, it is ready by
    then."""
    with _PRELOAD:
        if _preload:
            return None
        _preload.append(threading.Thread(target=_load_quietly, name="llm-counter", daemon=True))
    _preload[0].start()
    return _preload[0]


def _load_quietly() -> None:
    from explorer.text.length import get_length

    with contextlib.suppress(Exception):  # only a head start: the caller's own load reports it
        get_length(LLM_UNIT)


def llm_counter() -> Length:
    """The LLM-token counter; one being loaded by :func:`preload_llm_counter` is waited for,
    not loaded a second time beside it."""
    from explorer.text.length import get_length

    if _preload and _preload[0].ident is not None:
        _preload[0].join()
    return get_length(LLM_UNIT)


@dataclass(frozen=True, slots=True)
class Cost:
    """One configuration's cost (see the module docstring). ``embed_seconds`` is None where
    nothing was timed (BM25 alone embeds nothing); ``embedded_new`` counts the distinct texts
    the model embedded then (0: every vector came from the cache; None: not known)."""

    vectors: int
    dim: int
    index_bytes: int
    embed_seconds: float | None
    embedded_new: int | None
    llm_tokens: float
    k: int
    questions: int
    #: The time includes loading the model (the first texts of a session load it).
    cold: bool = False
    #: The vectors were made before the reader's visit began (``cost_of``'s ``since``).
    earlier: bool = False

    @property
    def from_cache(self) -> bool:
        return self.embedded_new == 0

    @property
    def seconds(self) -> float | None:
        """Embedding time as counted: 0 when every vector came from the cache."""
        return 0.0 if self.from_cache else self.embed_seconds

    @property
    def built_before(self) -> bool:
        """Timed vectors made before this visit: their time is not this visit's."""
        return self.earlier and bool(self.vectors) and not self.from_cache and self.embed_seconds is not None

    @property
    def note(self) -> str:
        if not self.vectors:
            return "BM25: nothing embedded"
        if self.from_cache:
            return "from cache"
        if self.embed_seconds is None:
            return "not timed"
        return "with loading the model" if self.cold else ""

    def embedding_label(self) -> str:
        """"3.2 s", "0 s (from cache)", "cached (built in 32 s)", or "—" with why."""
        if self.built_before:
            return f"cached (built in {format_seconds(self.embed_seconds or 0.0)})"
        s = self.seconds
        if s is None:
            return f"— ({self.note})"
        return f"{format_seconds(s)} ({self.note})" if self.note else format_seconds(s)

    def cells(self) -> dict[str, str]:
        """The four figures as the tables show them, by column name."""
        return {
            "vectors": f"{self.vectors:,}",
            "index size": format_bytes(self.index_bytes) if self.vectors else "—",
            "embedding": self.embedding_label(),
            f"LLM tokens @{self.k}": f"{self.llm_tokens:,.0f}",
        }

    def to_dict(self) -> dict[str, Any]:
        s = self.seconds
        return {
            "vectors": self.vectors,
            "dim": self.dim,
            "index_bytes": self.index_bytes,
            "embed_seconds": None if s is None else round(s, 3),
            "from_cache": self.from_cache,
            "with_model_load": self.cold,
            "llm_tokens": round(self.llm_tokens, 1),
            "llm_unit": LLM_UNIT,
            "k": self.k,
        }


def llm_tokens(hits: Sequence[Sequence[Hit]], length: Length | None = None) -> float:
    """Mean over questions of the cl100k tokens of each question's hits' chunk texts summed
    (0 with no question); each distinct chunk is counted once."""
    if not hits:
        return 0.0
    if length is None:
        length = llm_counter()
    texts = list(dict.fromkeys(h.chunk.text for q in hits for h in q))
    counts = dict(zip(texts, length.count_batch(texts), strict=True))
    return sum(sum(counts[h.chunk.text] for h in q) for q in hits) / len(hits)


def cost_of(
    index: StrategyIndex,
    hits: Sequence[Sequence[Hit]],
    k: int,
    length: Length | None = None,
    retriever: str = DEFAULT_RETRIEVER,
    since: float | None = None,
) -> Cost:
    """The :class:`Cost` of ``index`` for these questions' ``hits`` (top ``k`` each) found with
    ``retriever``. BM25 costs no vector even when the (shared) index has some: another search or
    the background warm-up made them, and BM25 read none. ``since`` (a ``time.time()``): when
    the reader's visit began; vectors made before it are labelled cached, with their build time."""
    embedded = index.has_vectors and retriever != "bm25"
    made = index.embedded_at
    return Cost(
        vectors=index.vector_count if embedded else 0,
        dim=index.dim if embedded else 0,
        index_bytes=index.index_bytes if embedded else 0,
        embed_seconds=index.embed_seconds if embedded else None,
        embedded_new=index.embedded_new if embedded else None,
        llm_tokens=llm_tokens(hits, length),
        k=k,
        questions=len(hits),
        cold=embedded and index.embed_cold,
        earlier=embedded and since is not None and made is not None and made < since,
    )


def format_bytes(n: int) -> str:
    """``1536`` → "1.5 KB" (powers of 1,024; whole bytes below 1 KB)."""
    if n < 1024:
        return f"{n:,} B"
    size = float(n)
    for unit in ("KB", "MB", "GB", "TB"):
        size /= 1024
        if size < 1024 or unit == "TB":
            break
    return f"{size:,.1f} {unit}"


def format_seconds(s: float) -> str:
    """``0`` → "0 s", ``0.042`` → "0.04 s", ``3.21`` → "3.2 s", ``75`` → "75 s"."""
    if s == 0:
        return "0 s"
    if s < 1:
        return f"{s:.2f} s"
    return f"{s:.1f} s" if s < 10 else f"{s:,.0f} s"
