"""Sidebar settings shared by several pages: the embedding model, and retrieval (Retrieve, Evaluate)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from explorer.models import choice as model_choices
from pages.ui.compute import embed_options, language
from pages.ui.configs import config_labels
from pages.ui.model import (
    BACKEND_LABELS,
    backend_choice,
    choice_label,
    language_note,
    model_caption,
    model_choice,
    model_label,
    pick_model,
)
from pages.ui.sources import loaded_as_is
from pages.ui.state import MAX_K, MIN_K, ConfigDict, W, session
from pages.ui.widgets import choose, synced

RETRIEVER_LABELS = {"dense": "Dense", "bm25": "BM25", "hybrid": "Hybrid", "rrf": "Hybrid (RRF)"}
#: The retrievers that fuse dense and BM25, by what they fuse (shown under Hybrid).
FUSIONS = {"hybrid": "Scores", "rrf": "Ranks (RRF)"}


def retriever_choice() -> str:
    """How chunks are ranked on Retrieve and Evaluate (``explorer.retrieval.ranking.RETRIEVERS``)."""
    from explorer.retrieval.ranking import DEFAULT_RETRIEVER, RETRIEVERS

    r = session.retriever
    return r if r in RETRIEVERS else DEFAULT_RETRIEVER


def retrieval_settings() -> tuple[list[ConfigDict], int, Any]:
    """Sidebar: which configurations, top-k, what is embedded, and the model.
    Returns (chosen config dicts, k, EmbedOptions)."""
    sb = st.sidebar
    sb.subheader("Retrieval")
    ids = [cfg["id"] for cfg in session.configs]
    choose(
        sb.multiselect,
        "Configurations",
        config_labels(),
        key=W.RET_CFGS,
        value=[i for i in (session.ret_sel or ids) if i in ids] or ids,
        on_change=lambda chosen: setattr(session, "ret_sel", list(chosen)),
        help="Each gets its own FAISS index over the chunks of every loaded document. Edit them on Explore or Compare.",
    )
    synced(
        sb.slider, "Top k", MIN_K, MAX_K, key=W.K, value=int(session.k), on_change=lambda k: setattr(session, "k", k)
    )
    retriever_widget(sb)
    with sb.expander("What is embedded", icon=":material/memory:"):
        _embed_widgets(session.embed_opts)
    model_settings()
    chosen_cfgs = [cfg for cfg in session.configs if cfg["id"] in (session.ret_sel or ids)]
    return chosen_cfgs, int(session.k), embed_options()


def _embed_widgets(opts: dict[str, Any]) -> None:
    from explorer.retrieval.pieces import PIECE_CHOICES
    from explorer.retrieval.vectors import MAX_CONTEXT_CHARS

    synced(
        st.toggle,
        "Prepend the heading path",
        key=W.PREPEND,
        value=bool(opts["prepend_headings"]),
        on_change=lambda on: opts.__setitem__("prepend_headings", bool(on)),
        help="Embed 'Section › Subsection' before the chunk text (offsets do not change).",
    )
    synced(
        st.number_input,
        "Neighbouring characters",
        0,
        MAX_CONTEXT_CHARS,
        step=100,
        key=W.CONTEXT,
        value=int(opts["context_chars"]),
        on_change=lambda n: opts.__setitem__("context_chars", int(n)),
        help="Add this many characters of the document on each side of the chunk before embedding.",
    )
    current = int(opts.get("piece_chars", 0))  # a link may name a size the list has not
    sizes = {0: "off", **{n: f"{n:,} characters" for n in sorted({*PIECE_CHOICES, current} - {0})}}
    choose(
        st.selectbox,
        "Score with pieces of",
        sizes,
        key=W.PIECES,
        value=current,
        on_change=lambda n: opts.__setitem__("piece_chars", int(n or 0)),
        help="Also embed each document in pieces of about this size and score each chunk half by its own "
        "vector, half by its best piece (one at least half inside it, cut once per document, so it may run "
        "past the chunk's ends: each card says by how much): a chunk that holds the answer in one line of many "
        "ranks higher (small-to-big retrieval). Costs one more embedding pass per document.",
    )


def _setting(
    draw: Any, label: str, options: Any, labels: dict, *, name: str, default: str, **kwargs: Any
) -> None:
    """A choice among ``options`` kept as the session's ``name`` (``default`` when cleared)."""
    shown = {o: labels.get(o, o) for o in options}
    choose(draw, label, shown, on_change=lambda v: setattr(session, name, v or default), **kwargs)


def retriever_widget(where: Any) -> None:
    """Dense, BM25 or Hybrid; under Hybrid, how the two rankings are fused: by their scores (the
    default) or by their ranks (RRF, what many RAG stacks do). One session value holds the
    choice (one of ``explorer.retrieval.ranking.RETRIEVERS``)."""
    from explorer.retrieval.ranking import DEFAULT_RETRIEVER

    current = retriever_choice()
    _setting(
        where.segmented_control,
        "Retriever",
        ("dense", "bm25", "hybrid"),
        RETRIEVER_LABELS,
        key=W.RETRIEVER,
        value="hybrid" if current in FUSIONS else current,
        name="retriever",
        default=DEFAULT_RETRIEVER,
        required=True,
        help="Hybrid (the default): the dense and BM25 rankings fused. "
        "Dense: cosine similarity of the model's vectors (FAISS). BM25: the question's words in "
        "the chunk (no model, nothing embedded).",
    )
    if current in FUSIONS:
        _setting(
            where.radio,
            "Fusion",
            tuple(FUSIONS),
            FUSIONS,
            key=W.FUSION,
            value=current,
            name="retriever",
            default=DEFAULT_RETRIEVER,
            horizontal=True,
            help="Scores (the default): each chunk's cosine, less half its mean cosine to its 10 "
            "nearest chunks (so a chunk close to everything, a list of links or a table of contents, "
            "does not crowd the answers out), and its BM25 score, each placed between the lowest and "
            "the highest among the candidates (0 to 1) and the two averaged, with BM25's first hit "
            "kept in the first five; best on the English and French sets measured. Ranks (RRF): reciprocal-rank fusion, each rank r adding "
            "1/(60 + r), what many RAG stacks use (LangChain's EnsembleRetriever, Elasticsearch): "
            "pick it to see what yours retrieves.",
        )


def model_settings() -> None:
    """Sidebar: the embedding model, picked from the models on offer (the registered ones and the
    folders under ``CHUNK_EXPLORER_MODELS``, by name), what it reads, and how it runs."""
    sb = st.sidebar
    sb.subheader("Embedding model")
    offered = model_choices.choices()
    labels = {ch.name: choice_label(ch) for ch in offered}
    choose(
        sb.selectbox,
        "Model",
        labels,
        key=W.MODEL,
        value=model_label() if model_label() in labels else offered[0].name,
        on_change=pick_model,
        help="The registered models (`python -m explorer models`) and the local models this "
        "server offers. Vectors are cached per model: switching back costs nothing.",
    )
    sb.caption(model_caption())
    note = language_note([(d.name, language(d.id, d)) for _, d in loaded_as_is()])
    if note:
        sb.warning(note, icon=":material/translate:")
    backends = model_choice().backends
    if len(backends) > 1:
        with sb.expander("Advanced", icon=":material/tune:"):
            _setting(
                st.radio,
                "Backend",
                backends,
                BACKEND_LABELS,
                help="auto: the int8 ONNX graph when its build passes its check against float32 "
                "(about 2x faster on CPU), else sentence-transformers in float32. Each backend's "
                "vectors are cached apart.",
                key=W.BACKEND,
                value=backend_choice(),
                name="backend",
                default="auto",
            )
