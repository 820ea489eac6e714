"""One visitor's state: the only module that touches ``st.session_state``.

Per-user data (uploaded bytes, strategy configurations, kept questions) lives in
``st.session_state``, so two users never see each other's documents and nothing is lost when a
user changes page. :data:`session` reads and writes it through typed attributes (the key names
are kept here, and are the ones tests and links have always seen); :class:`W` names every widget
key, and widgets are re-seeded from the session each time they are drawn (:meth:`Session.seed`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypedDict, TypeVar

import streamlit as st

from explorer.retrieval.ranking import DEFAULT_RETRIEVER

T = TypeVar("T")

#: Top k on Retrieve and Evaluate: the slider's range and first value (a link may set it).
MIN_K, MAX_K, DEFAULT_K = 1, 20, 5


#: The name Evaluate shows the bundled sample questions under, and how a link names them (``qf=``).
SAMPLE_FILE, SAMPLE_REF = "sample-questions.jsonl", "sample"


class Source(TypedDict):
    """A document the visitor added: a bundled sample (by name) or an upload (its bytes)."""

    key: str
    name: str
    kind: str  # "sample" or "upload"
    sample: str
    data: bytes | None
    digest: str
    kept: bool  # an upload kept on the server (explorer.documents.uploads): the link names it


class ConfigDict(TypedDict, total=False):
    """A strategy configuration as the sidebar edits it (adapted into ``StrategyConfig`` by
    :mod:`pages.ui.configs`)."""

    id: Any  # a number; "sem" for the Semantic page's own
    strategy: str
    params: dict[str, Any]  # what the widgets show: the user's values, the others as adapted
    user_set: list[str]  # the parameters the user set (a widget changed, a link); absent: inferred
    valid: dict[str, Any]  # the last valid (adapted) values: shown while the user's conflict
    notes: list[str]  # what the last change adapted, shown until the next change
    bad: dict[str, str]  # a widget's text that is no value (separators): name -> message
    fresh: bool  # a widget changed since the last adapt
    gen: dict[str, int]  # parameter -> how often the app moved its value (its widget's key)


class _Template(str):
    """A key with parts that vary: ``_Template("w.q.rm.{}")(2) == "w.q.rm.2"``."""

    def __call__(self, *parts: Any) -> str:
        return self.format(*parts)


class W:
    """Widget keys (``key=``). A widget's value is read with :meth:`Session.widget`."""

    # sidebar
    DOC = "w.doc"
    CFG = "w.cfg"
    CFG_ADD = "w.cfg_add"
    CFG_REMOVE = "w.cfg_remove"
    RET_CFGS = "w.ret_cfgs"
    K = "w.k"
    RETRIEVER = "w.retriever"
    FUSION = "w.fusion"
    PREPEND = "w.prepend"
    CONTEXT = "w.context"
    PIECES = "w.pieces"
    NOTICES_OK = "w.notices_ok"
    MODEL = "w.model"
    BACKEND = "w.backend"
    # the background job's bar
    JOB_BAR = "w.job_bar"
    JOB_STOP = "w.job_stop"
    JOB_RESUME = "w.job_resume"
    JOB_DISMISS = "w.job_dismiss"
    # Documents
    SAMPLES = "w.samples"
    # Explore
    CHUNK = "w.chunk"
    PAGE = "w.page"
    SHOW_INDEX = "w.show_index"
    TEXT = "w.text"
    TABLE = "w.table"
    TABLE_SHOW = "w.table_show"
    MARK_USE = "w.mark.use"
    MARK_CLEAR = "w.mark.clear"
    # the inspector's text boxes (pages/ui/textbox.py): no value, a key each so they keep their place
    BOX_CHUNK = "w.box.chunk"
    BOX_UNREAD = "w.box.unread"
    BOX_EMBEDDED = "w.box.embedded"
    BOX_NEIGHBOUR = _Template("w.box.{}")
    # Compare
    CMP_ADD = "w.cmp_add"
    CMP_WIDTH = "w.cmp_width"
    CMP_PAGE = "w.cmp_page"
    CMP_LO = "w.cmp_lo"
    CMP_UNIT = "w.cmp_unit"
    CMP_HIST = "w.cmp_hist"
    CMP_VIOLIN = "w.cmp_violin"
    CMP_TABLE = "w.cmp_table"
    CMP_SEM = "w.cmp_sem"
    CMP_METRIC = "w.cmp_metric"
    CMP_BAR = "w.cmp_bar"
    CMP_VIEW = "w.cmp_view"  # the side-by-side panels (pages.ui.compareview)
    # Semantic
    SEM_CURVE = "w.sem_curve"
    SEM_HIST = "w.sem_hist"
    SEM_ADD = "w.sem_add"
    SEM_CHUNK = "w.sem_chunk"
    SEM_PAGE = "w.sem_page"
    SEM_TEXT = "w.sem_text"
    # Retrieve
    QUESTION = "w.question"
    ANSWER = "w.answer"
    ANSWER_PICK = "w.answer_pick"  # which place of an answer that occurs twice (pages.ui.gold)
    SEARCH = "w.search"
    KEEP = "w.keep"
    MARK_DOC = "w.mark_doc"
    MARK_TEXT = "w.mark_text"
    Q_RUNALL = "w.q.runall"
    Q_DOWNLOAD = "w.q.download"
    Q_TABLE = "w.q.table"
    # Evaluate
    EVAL_SRC = "w.eval_src"
    QSAMPLE = "w.qsample"
    QCLEAR = "w.qclear"
    EVAL_RUN = "w.eval_run"
    EVAL_TABLE = "w.eval_table"
    EVAL_COST = "w.eval_cost"
    EVAL_METRIC = "w.eval_metric"
    EVAL_QUESTIONS = "w.eval_questions"
    EVAL_PICKED = "w.eval_picked"  # the per-question row picked, read whole
    EVAL_ASK = "w.eval_ask"  # the picked question, asked on Retrieve
    EVAL_CHART = "w.eval_chart"
    SWEEP_PARAM = "w.sweep_param"
    SWEEP_VALUES = "w.sweep_values"
    SWEEP_RUN = "w.sweep_run"
    # Export
    EXP_CFG = "w.exp_cfg"
    EXP_DOCS = "w.exp_docs"
    EXP_CFGJSON = "w.exp_cfgjson"

    # keys with parts that vary, e.g. W.PARAM(cid, strategy, name)
    STRATEGY = _Template("p.{}.strategy")  # configuration id
    PARAM = _Template("p.{}.{}.{}")  # configuration id, strategy, parameter
    UPLOAD = _Template("w.upload{}")  # generation (a fresh uploader after each upload)
    CLEAN = _Template("w.clean.{}")  # clean-up flag
    OPEN_SOURCE = _Template("w.open.{}")  # source key
    REMOVE_SOURCE = _Template("w.rm.{}")  # source key
    MARK_LO = _Template("w.mark_lo.{}")  # document id
    SHOW_HIT = _Template("w.goto.{}.{}")  # configuration id, rank
    ASK_KEPT = _Template("w.q.ask.{}")  # place in the kept questions
    REMOVE_KEPT = _Template("w.q.rm.{}")  # place in the kept questions
    QFILE = _Template("w.qfile{}")  # generation
    SWEEP_CHART = _Template("w.sweep_{}")  # metric
    DOWNLOAD = _Template("w.exp_{}")  # format


class _Slot(Generic[T]):
    """One key of the session: read with its default (a ``factory``'s value is stored on first
    read, so it can be changed in place), written, and deleted (``del``: gone if there)."""

    def __init__(self, key: str, default: Any = None, factory: Callable[[], T] | None = None) -> None:
        self.key, self.default, self.factory = key, default, factory

    def __get__(self, obj: Any, owner: Any = None) -> T:
        if obj is None:
            return self  # type: ignore[return-value]  # on the class: the slot itself
        if self.factory is not None:
            return st.session_state.setdefault(self.key, self.factory())
        return st.session_state.get(self.key, self.default)

    def __set__(self, obj: Any, value: T) -> None:
        st.session_state[self.key] = value

    def __delete__(self, obj: Any) -> None:
        st.session_state.pop(self.key, None)


def _default_embed_opts() -> dict[str, Any]:
    return {"prepend_headings": False, "context_chars": 0, "piece_chars": 0}


class Session:
    """The current visitor's session (``st.session_state`` is per session, so is this)."""

    # set up once per session (pages.ui.frame)
    ready: _Slot[bool] = _Slot("_ready", False)
    in_frame: _Slot[bool] = _Slot("_in_frame", False)
    # when (time.time()) the visit began: shared indexes built before it are "cached" to it
    began: _Slot[float | None] = _Slot("_began")
    # widget keys :meth:`Session.seed` set in this run (the frame empties it when a run ends)
    seeded_now: _Slot[set[str]] = _Slot("_seeded_now", factory=set)
    notices: _Slot[list[str]] = _Slot("notices", factory=list)
    cache_notice_said: _Slot[bool] = _Slot("_cache_notice", False)
    cache_notice: _Slot[str] = _Slot("_cache_notice_text", "")
    goto: _Slot[str | None] = _Slot("goto")
    # documents
    sources: _Slot[list[Source]] = _Slot("sources", factory=list)
    doc_key: _Slot[str | None] = _Slot("doc_key")
    cleanup: _Slot[dict[str, bool]] = _Slot("cleanup", factory=dict)
    uploader_gen: _Slot[int] = _Slot("uploader_gen", 0)
    # strategy configurations
    configs: _Slot[list[ConfigDict]] = _Slot("configs", factory=list)
    next_cfg_id: _Slot[int] = _Slot("next_cfg_id", 1)
    active_cfg: _Slot[Any] = _Slot("active_cfg")
    sem_cfg: _Slot[ConfigDict] = _Slot("sem_cfg")
    # the embedding model
    model: _Slot[str] = _Slot("model", "")
    backend: _Slot[str] = _Slot("backend", "auto")
    # CHUNK_EXPLORER_PRIVATE_CACHE=1 (pages.ui.model): this session's embedders, cache and id
    private_embedders: _Slot[dict[tuple, Any]] = _Slot("_private_embedders", factory=dict)
    private_cache: _Slot[Any] = _Slot("_private_cache")
    private_salt: _Slot[str] = _Slot("_private_salt", "")
    # background jobs (pages.ui.background)
    job: _Slot[Any] = _Slot("_job")
    unclaimed: _Slot[dict[str, Any]] = _Slot("_unclaimed", factory=dict)
    bar_live: _Slot[Any] = _Slot("_bar_live")
    bar_partial: _Slot[tuple] = _Slot("_bar_partial", ())
    warmed: _Slot[Any] = _Slot("_warmed")
    # what each configuration held under each strategy it left (pages.ui.switching.switch_strategy):
    # {configuration id: {strategy: (params, user_set)}}
    left_strategies: _Slot[dict[Any, dict[str, tuple[dict, list]]]] = _Slot("_left_strategies", factory=dict)
    # Explore
    chunk_sel: _Slot[int | None] = _Slot("chunk_sel")
    # a place in the text to select once the active configuration's new chunks are made (a
    # strategy switch keeps the view there): [document id, configuration id, offset]
    chunk_anchor: _Slot[list | None] = _Slot("chunk_anchor")
    table_last: _Slot[list[int] | None] = _Slot("table_last")
    show_table: _Slot[bool] = _Slot("show_table", False)  # Explore's "All chunks" table, off until asked
    explore_mark: _Slot[list | None] = _Slot("explore_mark")
    # Semantic: the chunk selected in its text view
    sem_sel: _Slot[int | None] = _Slot("sem_sel")
    # Compare: cohesion and separation by (document id, config, model id)
    sem_stats: _Slot[dict[tuple, Any]] = _Slot("sem_stats", factory=dict)
    # Compare: the chunk clicked in a panel, [document id, configuration id, chunk position]
    cmp_pick: _Slot[list | None] = _Slot("cmp_pick")
    # retrieval settings (Retrieve, Evaluate)
    ret_sel: _Slot[list | None] = _Slot("ret_sel")
    k: _Slot[int] = _Slot("k", DEFAULT_K)
    retriever: _Slot[str] = _Slot("retriever", DEFAULT_RETRIEVER)
    embed_opts: _Slot[dict[str, Any]] = _Slot("embed_opts", factory=_default_embed_opts)
    # Retrieve
    questions: _Slot[list[dict[str, Any]]] = _Slot("questions", factory=list)
    ret_query: _Slot[dict[str, Any] | None] = _Slot("ret_query")
    ret_mark: _Slot[list | None] = _Slot("ret_mark")
    ret_new: _Slot[bool] = _Slot("ret_new", False)
    ret_pending: _Slot[dict[str, Any] | None] = _Slot("ret_pending")
    ret_batch: _Slot[list[dict[str, Any]] | None] = _Slot("ret_batch")
    # Evaluate
    qfile: _Slot[tuple[str, bytes] | None] = _Slot("qfile")
    #: How the link names the question file: "sample", its upload reference, or "" (not in the link).
    qfile_ref: _Slot[str] = _Slot("qfile_ref", "")
    qfile_gen: _Slot[int] = _Slot("qfile_gen", 0)
    eval_results: _Slot[list | None] = _Slot("eval_results")
    eval_meta: _Slot[dict[str, Any]] = _Slot("eval_meta", factory=dict)
    sweep_results: _Slot[dict[str, Any] | None] = _Slot("sweep_results")
    #: The questions the results were scored on ("file" or "kept"), for the link.
    eval_source: _Slot[str] = _Slot("eval_source", "")
    #: A link's evaluation and sweep (parameter, values), run again when Evaluate opens.
    eval_pending: _Slot[bool] = _Slot("eval_pending", False)
    sweep_pending: _Slot[tuple[str, str] | None] = _Slot("sweep_pending")
    #: The query parameters last written to the browser's address (:func:`pages.ui.url.sync`).
    url_sent: _Slot[dict[str, Any] | None] = _Slot("url_sent")
    #: What the last link written left out to stay readable (:mod:`pages.ui.url_fit`), "" if nothing.
    link_left_out: _Slot[str] = _Slot("link_left_out", "")

    def take(self, name: str) -> Any:
        """The value of attribute ``name`` (its default when unset), then forget it."""
        value = getattr(self, name)
        delattr(self, name)
        return value

    # -- widgets ------------------------------------------------------------------------------
    def widget(self, key: str) -> Any:
        """A widget's current value (None before it is drawn)."""
        return st.session_state.get(key)

    def has_widget(self, key: str) -> bool:
        return key in st.session_state

    def seed(self, key: str, value: Any) -> None:
        """Set the value the widget ``key`` shows when it is drawn next (in this run)."""
        st.session_state[key] = value
        self.seeded_now.add(key)

    def shown(self, key: str) -> Any:
        """The ``value=`` to draw a text box seeded once (the question, the sweep's values) with:
        its value, as the default a browser shows when it holds none for the box; None in the run
        that seeded it (Streamlit sends the value then, and warns of a default beside it).

        Why: Streamlit sends a seeded value in the run that set it only. When a rerun overtook
        that run before the browser drew it, a link opened in a fresh browser showed its search's
        results under an empty question box (7 of 12 links in Chromium, 2026-12-04)."""
        return None if key in self.seeded_now else self.widget(key)

    def forget_params(self, cid: Any) -> None:
        """Drop the parameter widgets of configuration ``cid`` (its strategy changed or it went)."""
        prefix = f"p.{cid}."  # its W.STRATEGY and W.PARAM keys
        for k in [k for k in st.session_state if isinstance(k, str) and k.startswith(prefix)]:
            del st.session_state[k]


#: The session of the script run that reads it.
session = Session()
