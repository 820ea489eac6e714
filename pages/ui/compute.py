"""Cached calls into ``explorer``: loading, chunking, analysis, indexes, and the warm-up.

Loading, chunking and metrics go through ``st.cache_data`` keyed by document id (a hash of its
content) and the frozen configuration. Strategies that embed (semantic, cluster) run outside
Streamlit's caches, in the session's background job when they would embed, so their progress
is live; the core's embedding cache and a small LRU here make reruns cheap. Loading documents
starts embedding them for the session's configurations in the background (:func:`warm`;
``CHUNK_EXPLORER_WARM=0`` turns it off).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import streamlit as st

from explorer import jobs, limits
from explorer.documents import samples
from explorer.documents.cleanup import Cleanup
from explorer.documents.document import Document
from explorer.errors import Cancelled, ExplorerError
from explorer.evaluation.cost import preload_llm_counter
from explorer.lru import ByteLRU, trim_heap
from explorer.retrieval.ranking import DEFAULT_RETRIEVER
from explorer.strategies import get_strategy
from explorer.strategies.config import StrategyConfig
from explorer.strategies.context import Context
from explorer.strategies.profile import profile
from explorer.text.chunk import Chunk
from explorer.text.measures import guess_language
from explorer.text.wording import plural
from pages.ui.background import background, session_job, start_job, submit
from pages.ui.configs import config_of, labels_for
from pages.ui.model import context_maker, embedder, model_arg, model_id, passage_room
from pages.ui.safe import clip, err_text, md
from pages.ui.state import session

WARM_ENV = "CHUNK_EXPLORER_WARM"
#: The warm-up waits this long before it starts while the model is not loaded yet, so the page
#: that loaded the documents paints first (loading the model takes a core for a second or two).
#: With the model in memory it starts at once: embedding runs at a lower priority and gives the
#: GIL back, and an upload's chunks waited a second for nothing (bench_first_answer.py).
WARM_DELAY_S = 1.0
#: After analysing a document this big, freed memory is given back at once (see trim_heap).
BIG_DOC_CHARS = 1_000_000


# -- documents ------------------------------------------------------------------------------
# Documents, chunks and their analysis are shared by every session in byte-bounded caches
# (explorer.limits): they are frozen, so sessions may share them; ``st.cache_data`` would keep
# a pickled copy per entry, bounded only in entries, and unpickle a new copy on every rerun.
# Single flight: two sessions opening one file (a class shown the same link) make it once.
_DOCS: ByteLRU[tuple[Document | None, str]] = ByteLRU(
    limits.DOCUMENTS_BYTES, lambda out: 2 * len(out[0].text) + 4096 if out[0] is not None else 256, single_flight=True
)
_CHUNKS: ByteLRU[Outcome] = ByteLRU(limits.CHUNKS_BYTES, lambda out: out.nbytes, single_flight=True)
_ANALYSES: ByteLRU[Analysis] = ByteLRU(
    limits.CHUNKS_BYTES // 4, lambda a: 120 * len(a.tokens) + 1024, single_flight=True
)


def load_upload(digest: str, name: str, clean: tuple, data: bytes) -> tuple[Document | None, str]:
    from explorer.documents.loaders import load_bytes

    def make() -> tuple[Document | None, str]:
        try:
            return load_bytes(data, name, Cleanup(*clean)), ""
        except ExplorerError as err:
            return None, str(err)

    return _DOCS.get_or_make(("upload", digest, name, clean), make)


def load_sample(name: str, clean: tuple) -> tuple[Document | None, str]:
    def make() -> tuple[Document | None, str]:
        try:
            return samples.load_sample(name, Cleanup(*clean)), ""
        except ExplorerError as err:
            return None, str(err)

    return _DOCS.get_or_make(("sample", name, clean), make)


@st.cache_data(max_entries=64, show_spinner=False)
def summary(doc_id: str, model: str, _doc: Document):
    """The document's profile, tokens in the picked model's word pieces (cached by id and model:
    counting tokens of a long text takes a moment)."""
    try:
        return profile(_doc, model or None)
    except ExplorerError:  # a local model without a fast tokenizer: count with the default one
        return profile(_doc)


@st.cache_data(max_entries=256, show_spinner=False)
def language(doc_id: str, _doc: Document) -> str:
    """The document's language code (:func:`explorer.text.measures.guess_language`, cached by id)."""
    return guess_language(_doc.text)


# -- chunking and analysis ------------------------------------------------------------------
@dataclass(frozen=True)
class Outcome:
    """Chunks of one document under one config, or the message saying why there are none."""

    chunks: tuple[Chunk, ...] = ()
    error: str = ""
    #: Set while the chunks wait for embedding in the background: what to tell the user.
    pending: str = ""

    @property
    def ok(self) -> bool:
        return not self.error and not self.pending

    @property
    def nbytes(self) -> int:
        return sum(len(c.text) + 200 for c in self.chunks) + len(self.error) + 256


def _busy(what: str) -> Any:
    """A spinner under what the page has drawn, shown after half a second, while work that is
    not cached runs on the page's own thread (a 20 MB text takes seconds to chunk and count, and
    the page stood blank); nothing on a job's thread."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    return st.spinner(md(what), show_time=True) if get_script_run_ctx() is not None else nullcontext()


def _chunk_cached(doc: Document, config: StrategyConfig, model: str) -> Outcome:
    def make() -> Outcome:
        try:
            with _busy(f"Chunking {clip(doc.name, 40)} ({len(doc.text):,} characters) with {config.display}…"):
                chunks = get_strategy(config.strategy).chunk(doc, config.param_dict, Context(model=model or None))
        except ExplorerError as err:
            return Outcome(error=err_text(err))
        return Outcome(tuple(chunks))

    return _CHUNKS.get_or_make((doc.id, config, model), make)


#: Chunks of embedding strategies, shared by sessions, bounded by bytes (their text and offsets).
_EMB_LRU: ByteLRU[Outcome] = ByteLRU(limits.CHUNKS_BYTES // 2, lambda out: out.nbytes)


def chunk(doc: Document, config: StrategyConfig) -> Outcome:
    """Chunk ``doc``. Strategies that embed run in the background when their vectors are not
    cached: the outcome is then ``pending`` and the status bar at the top shows the progress."""
    if not get_strategy(config.strategy).needs_embedder:
        return _chunk_cached(doc, config, model_arg() or "")
    key = (doc.id, config, model_id())
    hit = _EMB_LRU.get(key)
    if hit is not None:
        return hit
    try:
        emb = embedder()
    except ExplorerError as err:
        return Outcome(error=err_text(err))
    make = context_maker(emb)

    def work(job: Any) -> Outcome:
        return chunk_now(doc, config, make(job.progress), key)

    try:
        phase, out = background(
            "chunk", ("chunk", *key), f"Chunking {clip(doc.name, 40)} with {config.display}", work, emb=emb
        )
    except ExplorerError as err:
        return Outcome(error=err_text(err))
    if phase == jobs.DONE:
        return out
    if phase == jobs.FAILED:
        job = session_job()
        return Outcome(error=err_text(job.status().error) if job is not None else "failed")
    what = f"The chunks of {md(config.display)}"
    if phase == jobs.STOPPED:
        return Outcome(pending=f"Stopped: {what} need embedding; resume at the top of the page.")
    return Outcome(pending=f"{what} need embedding: they show here when the progress at the top is done.")


def peek(doc: Document, config: StrategyConfig) -> Outcome | None:
    """The outcome of :func:`chunk` if it is already made (never starts any work)."""
    if not get_strategy(config.strategy).needs_embedder:
        return _CHUNKS.get((doc.id, config, model_arg() or ""))
    return _EMB_LRU.get((doc.id, config, model_id()))


def chunk_now(doc: Document, config: StrategyConfig, ctx: Context, key: tuple) -> Outcome:
    """Chunk with an embedding strategy on this thread and remember the outcome under ``key``
    (``(doc.id, config, model_id())``, taken on the script thread). Jobs call this; Cancelled
    and WouldEmbed go through, other errors become the outcome's message."""
    try:
        out = Outcome(tuple(get_strategy(config.strategy).chunk(doc, config.param_dict, ctx)))
    except Cancelled:
        raise
    except ExplorerError as err:
        out = Outcome(error=err_text(err))
    return _EMB_LRU.put(key, out)


@dataclass(frozen=True)
class Analysis:
    tokens: tuple[int, ...]
    flags: tuple[tuple[str, ...], ...]
    stats: Any  # explorer.evaluation.chunk_metrics.ChunkStats


def _analyse_now(doc: Document, chunks: Sequence[Chunk], model: str, limit: int) -> Analysis:
    from explorer.evaluation.chunk_metrics import chunk_stats
    from explorer.evaluation.flags import flag_chunks
    from explorer.text.token_cache import count_chunk_tokens

    chunks = list(chunks)
    try:
        tokens = count_chunk_tokens(doc, chunks, model or None)
    except ExplorerError:  # a model without a fast tokenizer: count with the bundled one
        tokens = count_chunk_tokens(doc, chunks, None)
    flags = flag_chunks(chunks, doc, token_counts=tokens, max_tokens=limit)
    stats = chunk_stats(chunks, doc, token_counts=tokens, max_tokens=limit)
    order = ("over_limit", "mid_sentence", "mid_word", "tiny", "duplicate")
    out = Analysis(tuple(tokens), tuple(tuple(f for f in order if f in fl) for fl in flags), stats)
    if len(doc.text) > BIG_DOC_CHARS:
        trim_heap()
    return out


def analyse(doc: Document, config: StrategyConfig, out: Outcome) -> Analysis:
    """Model-token counts, flags and structural stats of the chunks (cached; the model id is
    part of the key because chunks of embedding strategies depend on it)."""
    model, limit = model_arg() or "", passage_room()[0]
    key = (doc.id, config, model, limit, model_id())
    def make() -> Analysis:
        with _busy(f"Counting the tokens and flags of {plural(len(out.chunks), 'chunk')} ({config.display})…"):
            return _analyse_now(doc, out.chunks, model, limit)

    return _ANALYSES.get_or_make(key, make)


# -- indexes and the warm-up: embedding starts as soon as documents are loaded ---------------
def embed_options() -> Any:
    """The session's ``EmbedOptions`` (what is embedded for a chunk, set on Retrieve)."""
    from explorer.retrieval.vectors import EmbedOptions

    return EmbedOptions(**session.embed_opts)


def index_key(docs: Sequence[Document], configs: Sequence[StrategyConfig], options: Any) -> tuple:
    """What a set of indexes depends on (the same as the core's index cache)."""
    return (tuple((d.id, d.name) for d in docs), tuple(configs), options, model_id())


def index_all(
    job: Any,
    docs: Sequence[Document],
    configs: Sequence[StrategyConfig],
    options: Any,
    make: Callable,
    retriever: str = DEFAULT_RETRIEVER,
    on_index: Callable[[Any, Any], Any] | None = None,
    labels: Mapping[StrategyConfig, str] | None = None,
) -> dict:
    """``{config: StrategyIndex or error message}`` for a job (or its inline try): the core's
    index cache makes a second call free (``retriever="bm25"`` embeds nothing). ``on_index``
    hears about each configuration as soon as its index is ready (results stream in). The
    steps name each configuration by ``labels`` (the sidebar's "1. recursive 1000/200", made
    on the script thread: the job has no session) where given."""
    from explorer.retrieval.search import get_index

    out: dict = {}
    for i, config in enumerate(configs):
        name = (labels or {}).get(config, config.display)
        job.step(f"configuration {i + 1} of {len(configs)}, {name}" if len(configs) > 1 else name)
        try:
            out[config] = get_index(docs, config, make(job.progress), options, job.progress, retriever)
        except Cancelled:
            raise
        except ExplorerError as err:
            out[config] = err_text(err)
        if on_index is not None:
            on_index(config, out[config])
    return out


def warm(docs: Sequence[Document]) -> None:
    """Once per set of loaded documents (and model): embed them for the session's current
    configurations in the background, so Retrieve and Evaluate find their vectors ready. It
    never replaces a job the user started, and any job the user starts replaces it; once that
    job is done, it starts again (what it had embedded is cached). A file
    uploaded while an older set is warming up replaces that warm-up at the end of its step
    (what it embedded is cached), so the new file does not wait for the old set's last
    configurations."""
    if not docs or os.environ.get(WARM_ENV, "1").strip().lower() in ("0", "false", "no"):
        return
    if sum(len(d.text) for d in docs) > limits.WARM_MAX_CHARS:
        return  # minutes of CPU nobody asked for yet: Retrieve embeds when a question comes
    try:
        emb = embedder()
    except ExplorerError:
        return
    wkey = (tuple(d.id for d in docs), model_id())
    job = session_job()
    if job is not None and not job.finished and job.kind != "warm":
        return
    last = session.warmed
    if last is not None and last[0] == wkey:
        if not getattr(last[1], "handed_over", False):
            return  # once per set; a Stop keeps it stopped
        if job is not None and job.status().phase != jobs.DONE:
            return  # the user's job that took over was stopped or failed: its bar stays
    session.warmed = (wkey, None)
    from explorer.retrieval.vectors import EmbedOptions

    configs = []
    for cfg in session.configs:
        try:
            configs.append(config_of(cfg))
        except ExplorerError:
            continue
    try:
        options = embed_options()
    except (ExplorerError, TypeError):
        options = EmbedOptions()
    configs = list(dict.fromkeys(configs))
    if not configs:
        return
    make = context_maker(emb)
    docs = list(docs)
    labels = labels_for(configs)

    delay = 0.0 if jobs.model_loaded(emb) else WARM_DELAY_S

    def work(job: jobs.Job) -> dict:
        job.token.sleep(delay)
        preload_llm_counter()  # Retrieve's cost table counts its hits' LLM tokens
        return index_all(job, docs, configs, options, make, labels=labels)

    title = "Embedding the loaded documents"
    started = submit("warm", ("warm", *index_key(docs, configs, options)), title, work, emb, replace=False)
    session.warmed = (wkey, started)


def start_cohesion(doc: Document, items: Sequence[tuple[str, StrategyConfig, tuple[Chunk, ...]]]) -> None:
    """Compare's cohesion and separation of each ``(label, config, chunks)``, in the background
    (the embedder's errors go through); :func:`pages.ui.background.job_result` of ``"cohesion"``
    gives them by ``(doc.id, config, model_id())``."""
    emb = embedder()
    mid = model_id()
    items = list(items)

    def work(job: Any) -> dict:
        from explorer.evaluation.chunk_metrics import semantic_stats

        found: dict = {}
        job.partial = found
        for label, config, chunks in items:
            job.step(label)
            found[(doc.id, config, mid)] = semantic_stats(list(chunks), doc, emb, progress=job.progress)
        return found

    n = len(items)
    key = ("cohesion", doc.id, tuple(i[1] for i in items), mid)
    start_job(
        "cohesion", key, f"Cohesion and separation of {plural(n, 'configuration')}", work, emb=emb
    )
