"""URL state: the shareable view (samples, active sample, clean-up, model, strategies) in the link.

:func:`restore` reads a link once per session (what it cannot use becomes a notice: the link is
untrusted, and every notice is made inert for Markdown); :func:`sync` writes the view back after
every run.
"""

from __future__ import annotations

import json
import re
from typing import Any

import streamlit as st

from explorer import untrusted
from explorer.documents import samples
from explorer.errors import ExplorerError, ParamError
from explorer.models import choice as model_choices
from explorer.strategies.config import StrategyConfig
from pages.ui.configs import MAX_CONFIGS, add_config, config_of
from pages.ui.model import backend_choice, model_choice, model_label
from pages.ui.safe import clip, md
from pages.ui.sources import CLEANUP_FLAGS, add_sample, current_source, sample_names
from pages.ui.state import ConfigDict, session

#: More ``samples`` values than this in a link are ignored (there are three samples).
MAX_SAMPLE_PARAMS = 16


def restore() -> None:
    """Set the session from the link (called once, on a fresh session)."""
    qp = st.query_params
    _restore_samples(qp)
    for short in (qp.get("clean") or "").split(","):
        if short in CLEANUP_FLAGS:
            session.cleanup[CLEANUP_FLAGS[short][0]] = True
    _restore_model(qp)
    for raw in qp.get_all("cfg")[:MAX_CONFIGS]:
        try:
            d = untrusted.loads(raw, "strategy", ParamError)
            cfg = StrategyConfig.make(str(d["s"]), d.get("p") or {})
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            msg = str(err) if isinstance(err, ExplorerError) else "not a valid configuration"
            session.notices.append(f"Ignored a strategy from the link ({clip(raw, 80)}): {msg}")
            continue
        add_config(cfg.strategy, cfg.param_dict)
    if "sem" in qp:
        try:
            sem = untrusted.loads(qp["sem"], "semantic settings", ParamError)
            session.sem_cfg["params"] = dict(StrategyConfig.make("semantic", sem).param_dict)
        except (ValueError, TypeError, AttributeError) as err:
            session.notices.append(f"Ignored the semantic settings from the link: {err}")
    if re.fullmatch(r"[0-9]{1,3}", qp.get("cfgsel", "")):  # not isdigit(): "²" is a digit int() refuses
        i = int(qp["cfgsel"]) - 1
        if 0 <= i < len(session.configs):
            session.active_cfg = session.configs[i]["id"]


def _restore_samples(qp: Any) -> None:
    available = list(samples.SAMPLES)
    if "samples" in qp:
        wanted = [n for v in qp.get_all("samples")[:MAX_SAMPLE_PARAMS] for n in samples_in(v, available)]
        bad = [s for s in wanted if s not in available]
        if bad:
            session.notices.append(f"Link names unknown samples {', '.join(map(repr, bad))}: ignored.")
        for name in wanted:
            if name in available:
                add_sample(name)
    else:
        for name in available:
            add_sample(name)
    doc = qp.get("doc")
    keys = [s["key"] for s in session.sources]
    if doc and f"sample:{doc}" in keys:
        session.doc_key = f"sample:{doc}"
    elif session.sources:
        default = f"sample:{samples.DEFAULT_SAMPLE}"
        session.doc_key = default if default in keys else keys[0]


def _restore_model(qp: Any) -> None:
    model = (qp.get("model") or "").strip()
    if (
        model
    ):  # a name on offer only: a path, a folder outside the models directory or an unknown name is dropped
        choice = model_choices.find_choice(model)
        if choice is None:
            session.notices.append(
                "Ignored the model named in the link: it is not one of the models this app offers."
            )
        else:
            session.model = "" if choice.is_default else choice.name
    backend = (qp.get("backend") or "").strip()
    if backend:
        if backend in model_choice().backends:
            session.backend = backend
        else:
            session.notices.append(
                f"Ignored the backend named in the link: {md(model_label())} runs on "
                f"{', '.join(model_choice().backends)}."
            )


def samples_in(value: str, available: list[str]) -> list[str]:
    """The samples one ``samples=`` value names. A link has one value per sample (names hold
    commas); links made before that joined the names with commas, which is read back by matching
    known names from the left; what matches nothing is kept whole, to be reported."""
    if value in available or value == "none" or not value:
        return [value] if value in available else []
    out, rest = [], value
    while rest:
        name = next(
            (n for n in sorted(available, key=len, reverse=True) if rest == n or rest.startswith(n + ",")),
            None,
        )
        if name is None:
            return [*out, rest]
        out.append(name)
        rest = rest[len(name) + 1 :]
    return out


def sync() -> None:
    """Write the shareable view (samples, active sample, clean-up, strategies) into the URL."""
    if not session.ready:
        return
    want: dict[str, Any] = {"samples": sample_names() or ["none"]}  # one value per sample: names hold commas
    active = current_source()
    if active is not None and active["kind"] == "sample":
        want["doc"] = active["sample"]
    clean = [short for short, (field, _, _) in CLEANUP_FLAGS.items() if session.cleanup.get(field)]
    if clean:
        want["clean"] = ",".join(clean)
    if not model_choice().is_default:
        want["model"] = model_label()
    if backend_choice() != "auto":
        want["backend"] = backend_choice()
    want["cfg"] = [_cfg_url(c) for c in session.configs]
    idx = next((i for i, c in enumerate(session.configs) if c["id"] == session.active_cfg), 0)
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


def _cfg_url(cfg: ConfigDict) -> str:
    try:
        changed = config_of(cfg).changed_params()
    except ExplorerError:
        changed = cfg["params"]
    p = {k: list(v) if isinstance(v, tuple) else v for k, v in changed.items()}
    return json.dumps({"s": cfg["strategy"], "p": p}, ensure_ascii=False, separators=(",", ":"))


def _sem_url() -> str:
    if not session.sem_cfg["params"]:
        return ""
    try:
        changed = StrategyConfig.make("semantic", session.sem_cfg["params"]).changed_params()
    except ExplorerError:
        return ""
    return json.dumps(changed, separators=(",", ":")) if changed else ""
