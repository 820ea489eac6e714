"""One sidebar widget per strategy parameter, seeded every run from the configuration.

A widget shows ``cfg["params"]`` (the user's values, the others as adapted by
:func:`pages.ui.configs.refresh`); when the user changes it, its callback records the value and
that the user set it (:func:`pages.ui.configs.set_param`), before the run that adapts the rest.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from explorer import untrusted
from explorer.errors import ParamError
from explorer.strategies.params import (
    STR_LIST,
    BoolKind,
    ChoiceKind,
    FloatKind,
    IntKind,
    Param,
    StrKind,
    StrListKind,
)
from pages.ui.configs import bad_param, param_key, set_param
from pages.ui.safe import clip
from pages.ui.state import ConfigDict, session


def param_widget(p: Param, cfg: ConfigDict, where: Any) -> None:
    """The widget of ``p``, showing ``cfg["params"]``; a change is the user's (see module)."""
    key = param_key(cfg, p.name)
    field = Field(
        key, p.name.replace("_", " ").capitalize(), cfg["params"].get(p.name, p.default), session.widget(key)
    )
    draw = _WIDGETS.get(type(p.kind), _str_widget)
    draw(p, field, where, lambda: _changed(cfg, p, key))


def _changed(cfg: ConfigDict, p: Param, key: str) -> None:
    if key != param_key(cfg, p.name):  # a widget the app has since replaced: not the user's change
        return
    value = session.widget(key)
    if p.kind is STR_LIST:
        try:
            value = text_to_separators(value or "", p.name)
        except ParamError as err:
            bad_param(cfg, p.name, str(err))
            return
    set_param(cfg, p.name, value)


@dataclass(frozen=True)
class Field:
    """What every parameter widget needs: its key, label, the value to show and the widget's own."""

    key: str
    label: str
    current: Any
    seen: Any


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


def _int_widget(p: Param, f: Field, where: Any, on_change: Callable) -> Any:
    try:
        current = int(f.current)
    except (TypeError, ValueError):
        current = int(p.default)
    rng = _soft_int_range(p, current)
    if rng is None:
        session.seed(f.key, current)
        return where.number_input(f.label, step=int(p.step or 1), key=f.key, help=p.help, on_change=on_change)
    lo, hi, step = rng
    session.seed(f.key, min(max(current, lo), hi))
    return where.slider(f.label, lo, hi, step=step, key=f.key, help=p.help, on_change=on_change)


def _float_widget(p: Param, f: Field, where: Any, on_change: Callable) -> Any:
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
    return where.number_input(
        f.label, key=f.key, help=p.help, placeholder=placeholder, on_change=on_change, **kwargs
    )


def _bool_widget(p: Param, f: Field, where: Any, on_change: Callable) -> Any:
    session.seed(f.key, bool(f.current))
    return where.toggle(f.label, key=f.key, help=p.help, on_change=on_change)


def _choice_widget(p: Param, f: Field, where: Any, on_change: Callable) -> Any:
    session.seed(f.key, f.current if f.current in p.choices else p.default)
    return where.selectbox(f.label, list(p.choices), key=f.key, help=p.help, on_change=on_change)


def _str_list_widget(p: Param, f: Field, where: Any, on_change: Callable) -> Any:
    session.seed(f.key, _separators_text(p, f))
    return where.text_area(
        f.label,
        key=f.key,
        height=120,
        on_change=on_change,
        help=(
            p.help + ' One separator per line, as a JSON string ("\\n\\n", ". ", ""); '
            "an unquoted line is taken literally."
        ),
    )


def _separators_text(p: Param, f: Field) -> str:
    """The text the user typed while it still says the value (or is not one yet: it is flagged),
    else the value, one JSON string per line."""
    if isinstance(f.seen, str):
        try:
            if text_to_separators(f.seen, p.name) == list(f.current or ()):
                return f.seen
        except ParamError:
            return f.seen
    return separators_to_text(f.current or ())


def _str_widget(p: Param, f: Field, where: Any, on_change: Callable) -> Any:
    session.seed(f.key, "" if f.current is None else str(f.current))
    return where.text_input(f.label, key=f.key, help=p.help, on_change=on_change)


#: The widget for each kind of parameter (a kind not listed gets a text box).
_WIDGETS: dict[type, Callable[[Param, Field, Any, Callable], Any]] = {
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
                value = untrusted.loads(stripped, f"{name} line {n}", ParamError)  # "\ud800" made whole
            except ParamError:
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
