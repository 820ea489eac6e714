"""Sidebar widgets: the document picker, the configuration editor, and one widget per strategy parameter.

Widgets are re-seeded from the session every time they are drawn (after a page switch the old
widget value is stale, not live), and write back to it when the user changes them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from explorer.documents.document import Document
from explorer.errors import ParamError
from explorer.strategies import get_strategy, strategy_names
from explorer.strategies.config import StrategyConfig
from explorer.strategies.params import (
    FLOAT,
    STR_LIST,
    BoolKind,
    ChoiceKind,
    FloatKind,
    IntKind,
    Param,
    StrKind,
    StrListKind,
)
from pages.ui.configs import (
    MAX_CONFIGS,
    active_config_dict,
    config_labels,
    config_of,
    duplicate_active,
    remove_active,
    switch_strategy,
)
from pages.ui.nav import PAGES
from pages.ui.safe import clip
from pages.ui.sources import doc_label, loaded
from pages.ui.state import ConfigDict, W, session


def synced(
    draw: Callable, label: str, *args: Any, key: str, value: Any, on_change: Callable, **kwargs: Any
) -> Any:
    """``draw(label, *args, key=key, ...)`` showing ``value``; ``on_change(new value)`` when the user
    changes it."""
    session.seed(key, value)
    return draw(label, *args, key=key, on_change=lambda: on_change(session.widget(key)), **kwargs)


def choose(draw: Callable, label: str, labels: dict, **kwargs: Any) -> Any:
    """:func:`synced` over the keys of ``labels``, each shown as its label."""
    return synced(draw, label, list(labels), format_func=labels.get, **kwargs)


def _pick_doc(key: str) -> None:
    session.doc_key = key
    del session.chunk_sel


def doc_picker(where: Any = None) -> Document | None:
    """Sidebar select of the document a page works on; None (with a hint) when none loads."""
    where = where or st.sidebar
    docs = loaded()
    if not docs:
        st.info("No document loaded yet: add a sample or upload a file on the **Documents** page.")
        st.page_link(PAGES["documents"], label="Go to Documents", icon=":material/upload_file:")
        return None
    keys = [s["key"] for s, _ in docs]
    if session.doc_key not in keys:
        session.doc_key = keys[0]
    labels = {s["key"]: doc_label(s, d) for s, d in docs}
    choose(where.selectbox, "Document", labels, key=W.DOC, value=session.doc_key, on_change=_pick_doc)
    return dict(zip(keys, [d for _, d in docs], strict=True))[session.doc_key]


def documents_or_stop() -> list[Document]:
    """Every loaded document; when there is none, the picker's hint, and the page stops."""
    docs = [d for _, d in loaded()]
    if not docs:
        doc_picker()
        st.stop()
    return docs


def config_editor(*, multi: bool, title: str = "Strategy") -> None:
    """Sidebar: pick the configuration to edit (add/remove when ``multi``), its strategy and
    parameters. Errors appear beside the parameters."""
    sb = st.sidebar
    sb.subheader(title)
    ids = [c["id"] for c in session.configs]
    picker = sb.container()  # filled last: its labels show the parameters as the widgets below set them
    if multi:
        c1, c2 = sb.columns(2)
        c1.button(
            "Add",
            icon=":material/add:",
            key=W.CFG_ADD,
            on_click=duplicate_active,
            disabled=len(ids) >= MAX_CONFIGS,
            width="stretch",
            help=f"Add a copy of this configuration (at most {MAX_CONFIGS}).",
        )
        c2.button(
            "Remove",
            icon=":material/remove:",
            key=W.CFG_REMOVE,
            on_click=remove_active,
            disabled=len(ids) <= 1,
            width="stretch",
        )
    strategy_widgets(active_config_dict(), sb)
    if len(ids) > 1 or multi:
        choose(
            picker.selectbox,
            "Configuration",
            config_labels(),
            key=W.CFG,
            value=session.active_cfg,
            on_change=lambda cid: setattr(session, "active_cfg", cid),
            help="Each configuration is a strategy with its own parameters. Compare, Retrieve "
            "and Evaluate use all of them; Explore shows the one selected here.",
        )


def strategy_widgets(cfg: ConfigDict, where: Any, *, fixed_strategy: bool = False) -> StrategyConfig | None:
    """Strategy select + one widget per Param. Returns the valid config, or None after showing
    the ParamError beside the parameters."""
    if not fixed_strategy:
        names = strategy_names()
        skey = W.STRATEGY(cfg["id"])
        session.seed(skey, cfg["strategy"] if cfg["strategy"] in names else names[0])
        where.selectbox("Strategy", names, key=skey, on_change=switch_strategy, args=(cfg,))
        cfg["strategy"] = session.widget(skey)
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


def param_widget(p: Param, cfg: ConfigDict, where: Any) -> Any:
    """One widget for ``p``, seeded every run from ``cfg['params']`` (the truth, updated from
    the widget's value as soon as the user changes it); returns the value for validation."""
    key = W.PARAM(cfg["id"], cfg["strategy"], p.name)
    current = cfg["params"].get(p.name, p.default)
    seen = session.widget(key)  # the user's latest change (or the same value, re-seeded last run)
    if session.has_widget(key) and p.kind is not STR_LIST and (seen is not None or p.kind is FLOAT):
        current = seen
    label = p.name.replace("_", " ").capitalize()
    return _WIDGETS.get(type(p.kind), _str_widget)(p, Field(key, label, current, seen), where)


@dataclass(frozen=True)
class Field:
    """What every parameter widget needs: its key, label, the value to show and the widget's own."""

    key: str
    label: str
    current: Any
    seen: Any


def _int_widget(p: Param, f: Field, where: Any) -> Any:
    try:
        current = int(f.current)
    except (TypeError, ValueError):
        current = int(p.default)
    rng = _soft_int_range(p, current)
    if rng is None:
        session.seed(f.key, current)
        return where.number_input(f.label, step=int(p.step or 1), key=f.key, help=p.help)
    lo, hi, step = rng
    session.seed(f.key, min(max(current, lo), hi))
    return where.slider(f.label, lo, hi, step=step, key=f.key, help=p.help)


def _float_widget(p: Param, f: Field, where: Any) -> Any:
    try:
        value = None if f.current is None else float(f.current)
    except (TypeError, ValueError):
        value = p.default
    if value is not None:  # a widget value must lie inside its bounds
        value = min(max(value, p.min if p.min is not None else value), p.max if p.max is not None else value)
    session.seed(f.key, value)
    kwargs: dict[str, Any] = {"step": float(p.step or 0.05), "format": "%g"}
    if p.min is not None:
        kwargs["min_value"] = float(p.min)
    if p.max is not None:
        kwargs["max_value"] = float(p.max)
    placeholder = "default" if p.default is None else None
    return where.number_input(f.label, key=f.key, help=p.help, placeholder=placeholder, **kwargs)


def _bool_widget(p: Param, f: Field, where: Any) -> Any:
    session.seed(f.key, bool(f.current))
    return where.toggle(f.label, key=f.key, help=p.help)


def _choice_widget(p: Param, f: Field, where: Any) -> Any:
    session.seed(f.key, f.current if f.current in p.choices else p.default)
    return where.selectbox(f.label, list(p.choices), key=f.key, help=p.help)


def _str_list_widget(p: Param, f: Field, where: Any) -> Any:
    session.seed(f.key, f.seen if isinstance(f.seen, str) else separators_to_text(f.current or ()))
    text = where.text_area(
        f.label,
        key=f.key,
        height=120,
        help=(
            p.help + ' One separator per line, as a JSON string ("\\n\\n", ". ", ""); '
            "an unquoted line is taken literally."
        ),
    )
    return text_to_separators(text or "", p.name)


def _str_widget(p: Param, f: Field, where: Any) -> Any:
    session.seed(f.key, "" if f.current is None else str(f.current))
    return where.text_input(f.label, key=f.key, help=p.help)


#: The widget for each kind of parameter (a kind not listed gets a text box).
_WIDGETS: dict[type, Callable[[Param, Field, Any], Any]] = {
    IntKind: _int_widget,
    FloatKind: _float_widget,
    BoolKind: _bool_widget,
    ChoiceKind: _choice_widget,
    StrListKind: _str_list_widget,
    StrKind: _str_widget,
}


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
                    f"{name} line {n} {clip(stripped)!r} is not a valid JSON string (close the quotes, "
                    'escape \\ and ", e.g. "\\n\\n")'
                ) from None
            if not isinstance(value, str):
                raise ParamError(f"{name} line {n} {clip(stripped)!r} is not a string")
            out.append(value)
        else:
            out.append(line)
    return out
