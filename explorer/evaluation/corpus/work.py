"""The work on one document, the same in every engine: load it, match it against the questions,
chunk it with every configuration, and embed its chunks (or pool their preview vectors), in
batches of documents.

Why a module of its own: the local engine calls these functions in this process, the Ray engine
in its tasks and actors (:mod:`.ray_engine`), so every piece here is picklable, and a worker
rebuilds its :class:`~explorer.strategies.context.Context` from a :class:`ContextRecipe`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from explorer.documents.cleanup import Cleanup
from explorer.documents.document import Document
from explorer.errors import ParamError
from explorer.evaluation.corpus.plan import QuestionPlan
from explorer.evaluation.corpus.sources import Source
from explorer.retrieval.lexical import tokenize_with_language
from explorer.retrieval.ranking import DEFAULT_RETRIEVER
from explorer.retrieval.vectors import EmbedOptions, embed_texts, embedded_text, preview_vectors
from explorer.strategies import get_strategy
from explorer.strategies.config import StrategyConfig
from explorer.strategies.context import Context
from explorer.text.chunk import Chunk

#: The local engine embeds documents in batches of about this many chunks (all configurations).
BATCH_TEXTS = 1024
#: ... and at most this many documents (an interruption loses at most one batch).
BATCH_DOCS = 64
#: Modules whose embedders a worker gets again by name from :func:`get_embedder`.
_REGISTERED = ("explorer.embedding.torch_embedder", "explorer.embedding.backends")


@dataclass(frozen=True)
class ContextRecipe:
    """What a worker needs to make the driver's context again: the model by name, or the fake
    embedder's shape (tests)."""

    model: str | None = None
    quantize: bool = False
    backend: str = "auto"
    tokens_model: str | None = None
    preview_window: int | None = None
    #: (dim, max_seq_length) of a FakeEmbedder, None for a model looked up by name
    fake: tuple[int, int] | None = None

    @classmethod
    def of(cls, ctx: Context) -> ContextRecipe:
        fake = None
        emb = ctx.embedder
        if emb is not None and type(emb).__module__ not in _REGISTERED:
            from explorer.embedding.fake import FakeEmbedder

            if not isinstance(emb, FakeEmbedder):
                raise ParamError(f"the embedder {emb.name!r} cannot be rebuilt on other processes")
            fake = (emb.dim, emb.max_seq_length)
        return cls(ctx.model, ctx.quantize, ctx.backend, ctx.tokens_model, ctx.preview_window, fake)

    def make(self) -> Context:
        embedder = None
        if self.fake is not None:
            from explorer.embedding.fake import FakeEmbedder

            embedder = FakeEmbedder(self.fake[0], max_seq_length=self.fake[1])
        return Context(
            model=self.model,
            embedder=embedder,
            quantize=self.quantize,
            backend=self.backend,
            tokens_model=self.tokens_model,
            preview_window=self.preview_window,
        )


_contexts: dict[ContextRecipe, Context] = {}


def worker_context(recipe: ContextRecipe) -> Context:
    """One context per recipe per process (a worker keeps its model between documents)."""
    ctx = _contexts.get(recipe)
    if ctx is None:
        ctx = _contexts[recipe] = recipe.make()
    return ctx


@dataclass(frozen=True)
class WorkSpec:
    """Everything the work on one document depends on (the results file's key is made of it)."""

    configs: tuple[StrategyConfig, ...]
    plan: QuestionPlan
    options: EmbedOptions = field(default_factory=EmbedOptions)
    cleanup: Cleanup = field(default_factory=Cleanup)
    retriever: str = DEFAULT_RETRIEVER
    mode: str = "exact"

    def __post_init__(self) -> None:
        if self.options.piece_chars:
            raise ParamError(
                f"piece_chars={self.options.piece_chars} is not available in a streamed corpus run, which keeps "
                "only the chunks' vectors"
            )

    @property
    def embeds(self) -> bool:
        """Whether chunks get vectors (not for BM25 alone)."""
        return self.retriever != "bm25"

    @property
    def lexical(self) -> bool:
        """Whether chunks get BM25 words (bm25, hybrid and rrf)."""
        return self.retriever != "dense"


@dataclass
class Part:
    """One configuration's chunks of one document: offsets, token counts, then vectors and BM25
    words. ``texts`` (exact) or ``chunks`` (preview) wait for the embedding step only."""

    starts: np.ndarray
    ends: np.ndarray
    tokens: np.ndarray
    #: tokens an LLM would receive for each chunk (:data:`explorer.evaluation.cost.LLM_UNIT`)
    llm: np.ndarray | None = None
    vectors: np.ndarray | None = None
    words: list[list[str]] | None = None
    #: the language whose stemmer ``words`` got (:func:`~explorer.retrieval.lexical.language_of`)
    language: str = ""
    #: folded words that stand for stems of ``words`` (:func:`~explorer.retrieval.lexical.tokenize_with_language`)
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    texts: list[str] | None = None
    chunks: list[Chunk] | None = None

    def __len__(self) -> int:
        return len(self.starts)


@dataclass
class DocWork:
    """One document done: what the index and the results file keep of it."""

    n: int
    name: str
    doc_id: str
    sha: str
    chars: int
    parts: list[Part]
    outcomes: list = field(default_factory=list)
    warnings: tuple[str, ...] = ()
    seconds: float = 0.0
    #: this document's share of the embedding time (of a batch: documents are embedded together)
    embed_seconds: float = 0.0
    #: preview mode only, until its vectors are pooled
    doc: Document | None = None

    @property
    def chunks(self) -> int:
        return sum(len(p) for p in self.parts)


def process_document(source: Source, spec: WorkSpec, ctx: Context) -> DocWork:
    """Load, match and chunk one document; its parts wait for :func:`embed_works`."""
    t0 = time.perf_counter()
    doc, sha = source.load(spec.cleanup)
    outcomes = spec.plan.match(doc, source.n)
    count_tokens = ctx.count_tokens  # the tokenizer only: the model is built to embed
    llm = _llm_length()
    parts = []
    for config in spec.configs:
        chunks = get_strategy(config.strategy).chunk(doc, config.param_dict, ctx)
        texts = [embedded_text(c, doc, spec.options) for c in chunks]
        part = Part(
            starts=np.array([c.start for c in chunks], np.int64),
            ends=np.array([c.end for c in chunks], np.int64),
            tokens=np.array(count_tokens([c.text for c in chunks]) if chunks else [], np.int64),
        )
        if llm is not None:
            part.llm = np.array(llm.count_batch([c.text for c in chunks]) if chunks else [], np.int64)
        if spec.lexical:
            part.words, part.language, part.aliases = tokenize_with_language(texts)  # one stemmer per document
        if spec.embeds:
            if spec.mode == "preview":
                part.chunks = chunks
            else:
                part.texts = texts
        parts.append(part)
    preview = spec.embeds and spec.mode == "preview"
    return DocWork(
        source.n,
        doc.name,
        doc.id,
        sha,
        len(doc.text),
        parts,
        outcomes,
        warnings=doc.warnings,
        seconds=time.perf_counter() - t0,
        doc=doc if preview else None,
    )


def embed_works(works: list[DocWork], spec: WorkSpec, ctx: Context) -> None:
    """Give every part of ``works`` its vectors: exact texts in one call to the embedder (through
    its cache), or preview vectors pooled from each document's token vectors."""
    if not spec.embeds:
        return
    t0 = time.perf_counter()
    if spec.mode == "preview":
        for w in works:
            assert w.doc is not None
            vectors = preview_vectors(ctx, [w.doc], [p.chunks or [] for p in w.parts], spec.options)
            for p, v in zip(w.parts, vectors, strict=True):
                p.vectors, p.chunks = v, None
            w.doc = None
    else:
        texts = [t for w in works for p in w.parts for t in p.texts or []]
        vectors = embed_texts(ctx, texts, None)
        at = 0
        for w in works:
            for p in w.parts:
                p.vectors, p.texts = vectors[at : at + len(p)], None
                at += len(p)
    share = (time.perf_counter() - t0) / max(1, len(works))
    for w in works:
        w.seconds += share
        w.embed_seconds += share


def _llm_length() -> Any:
    """The length the cost columns count LLM tokens in, where this version has them."""
    try:
        from explorer.evaluation.cost import LLM_UNIT
    except ImportError:
        return None
    from explorer.text.length import get_length

    return get_length(LLM_UNIT)


def local_documents(sources: Iterable[Source], spec: WorkSpec, ctx: Context) -> Iterator[DocWork]:
    """The local engine: every document of ``sources`` done, in order, embedded in batches."""
    batch: list[DocWork] = []
    size = 0
    for source in sources:
        batch.append(process_document(source, spec, ctx))
        size += batch[-1].chunks
        if size >= BATCH_TEXTS or len(batch) >= BATCH_DOCS:
            embed_works(batch, spec, ctx)
            yield from batch
            batch, size = [], 0
    if batch:
        embed_works(batch, spec, ctx)
        yield from batch


def query_vectors(ctx: Context, texts: list[str]) -> Any:
    """The questions' vectors, as :func:`explorer.evaluation.evaluate.evaluate` makes them."""
    return ctx.get_embedder().encode_queries(texts)
