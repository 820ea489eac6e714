"""Typed strategy parameters: each kind of value owns its coercion, shared parameters are declared once.

A strategy's parameters are a frozen dataclass whose fields are declared with :func:`declare`,
each holding its :class:`Param`. The app's widgets, the CLI's and URL's coercion, the README
tables and the typed object a strategy's ``split`` receives all come from these declarations.
``chunk_size``, ``chunk_overlap`` and ``length`` are declared here once; a strategy that needs
another default or bound derives it (``CHUNK_SIZE.with_default(250)``) and keeps the help text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, ClassVar

from explorer import untrusted
from explorer.errors import ParamError
from explorer.text.wording import brief_number, quoted


class Invalid(Exception):
    """A value that is not of its kind; ``value`` is what it had become when that showed."""

    def __init__(self, value: Any) -> None:
        super().__init__(value)
        self.value = value


def _call(convert: Any, value: Any) -> Any:
    try:
        return convert(value)
    except (TypeError, ValueError, OverflowError):
        raise Invalid(value) from None


class Kind:
    """A type of parameter value: its name (what the app, CLI and README show) and coercion."""

    name: ClassVar[str]

    def coerce(self, param: Param, value: Any) -> Any:
        """``value`` (possibly a CLI or URL string) as this kind; Invalid or ParamError if not."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class _Number(Kind):
    def convert(self, value: Any) -> Any:
        raise NotImplementedError

    def coerce(self, param: Param, value: Any) -> Any:
        value = self.convert(value)
        if param.min is not None and value < param.min:
            raise ParamError(f"{param.name}={brief_number(value)} is below the minimum {param.min:g}")
        if param.max is not None and value > param.max:
            raise ParamError(f"{param.name}={brief_number(value)} is above the maximum {param.max:g}")
        return value


#: A whole number as typed: a sign and digits only.
_WHOLE = re.compile(r"[+-]?[0-9]+")


class IntKind(_Number):
    """Whole numbers; ``"300"``, ``" 300 "`` and ``300.0`` are 300, ``300.5`` and booleans are not."""

    name = "int"

    def convert(self, value: Any) -> int:
        given = value  # errors name what was typed ("1e999"), not what it became (inf)
        if isinstance(value, bool):
            raise Invalid(given)
        if isinstance(value, str):
            text = value.strip()
            try:  # digits alone are read exactly: through a float, 300 of them became 1e+300
                value = int(text) if _WHOLE.fullmatch(text) else float(text)
            except ValueError:
                raise Invalid(given) from None
        if isinstance(value, float) and (not math.isfinite(value) or value != int(value)):
            raise Invalid(given)
        return _call(int, value)


class FloatKind(_Number):
    """Finite numbers (booleans are refused: ``True`` is a slip, not 1.0)."""

    name = "float"

    def convert(self, value: Any) -> float:
        if isinstance(value, bool):
            raise Invalid(value)
        number = _call(float, value)
        if not math.isfinite(number):
            raise Invalid(value)
        return number


class BoolKind(Kind):
    """Booleans; as text ``1/true/yes/on`` and ``0/false/no/off`` (any case)."""

    name = "bool"
    TRUE = ("1", "true", "yes", "on")
    FALSE = ("0", "false", "no", "off")

    def coerce(self, param: Param, value: Any) -> bool:
        if isinstance(value, str):
            low = value.strip().lower()
            if low in self.TRUE or low in self.FALSE:
                return low in self.TRUE
            raise Invalid(value)
        return _call(bool, value)


class ChoiceKind(Kind):
    """One of the parameter's ``choices``."""

    name = "choice"

    def coerce(self, param: Param, value: Any) -> str:
        value = _call(str, value)
        if value not in param.choices:
            raise ParamError(f"{param.name}={value!r} is not one of {', '.join(map(repr, param.choices))}")
        return value


class StrListKind(Kind):
    """A list of strings, or its JSON text (from the CLI or a URL); kept as a tuple (hashable)."""

    name = "str_list"

    def coerce(self, param: Param, value: Any) -> tuple[str, ...]:
        if isinstance(value, str):
            value = untrusted.loads(value, f"{param.name}={value[:40]!r}", ParamError)
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise Invalid(value)
        return tuple(value)


class StrKind(Kind):
    name = "str"

    def coerce(self, param: Param, value: Any) -> str:
        return _call(str, value)


INT = IntKind()
FLOAT = FloatKind()
BOOL = BoolKind()
CHOICE = ChoiceKind()
STR_LIST = StrListKind()
STR = StrKind()


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of a strategy: the app builds its widget from it, the CLI coerces with it."""

    name: str
    kind: Kind
    default: Any
    help: str
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()
    step: float | None = None
    #: True if the value is counted in the strategy's ``length`` unit (sizes, overlaps): it means
    #: something else in another unit, so a strategy switch that changes the unit does not carry it.
    measured: bool = False

    def with_default(self, default: Any, *, min: float | None = None, note: str = "") -> Param:
        """This parameter with another default (and a lower ``min`` or a ``note`` after the help,
        where a strategy gives the value a meaning of its own)."""
        return replace(
            self,
            default=default,
            min=self.min if min is None else min,
            help=f"{self.help} {note}" if note else self.help,
        )

    def to_dict(self) -> dict[str, Any]:
        default = list(self.default) if isinstance(self.default, tuple) else self.default
        return {
            "name": self.name,
            "type": self.kind.name,
            "default": default,
            "min": self.min,
            "max": self.max,
            "choices": list(self.choices) or None,
            "help": self.help,
        }

    def coerce(self, value: Any) -> Any:
        """``value`` (possibly a CLI/URL string) as this parameter's kind, within its bounds."""
        try:
            return self.kind.coerce(self, value)
        except Invalid as bad:
            raise ParamError(f"{self.name}={quoted(bad.value)} is not a valid {self.kind.name}") from None


CHUNK_SIZE = Param(
    "chunk_size", INT, 1000, "Largest chunk, in the length unit.", min=1, max=100_000, step=10, measured=True
)
CHUNK_OVERLAP = Param(
    "chunk_overlap",
    INT,
    0,
    "Units the next chunk may repeat from the end of the previous one (< chunk_size).",
    min=0,
    max=100_000,
    step=10,
    measured=True,
)
LENGTH = Param(
    "length",
    CHOICE,
    "chars",
    "Unit in which sizes are counted: characters, words (each Chinese or Japanese character one), "
    "tokens of the embedding model "
    "(with its special tokens, such as [CLS]/[SEP]), or OpenAI's cl100k / o200k tokens.",
    choices=("chars", "words", "tokens", "cl100k", "o200k"),
)


def declare(param: Param) -> Any:
    """A field of a parameter dataclass, declared by its Param (whose default it takes)."""
    return field(default=param.default, metadata={"param": param})


def declared(params_type: type) -> tuple[Param, ...]:
    """The Params of a parameter dataclass, in field order (each field named as its Param)."""
    out = []
    for f in fields(params_type):
        param = f.metadata["param"]
        if param.name != f.name:
            raise TypeError(f"{params_type.__name__}.{f.name} is declared as {param.name!r}")
        out.append(param)
    return tuple(out)


def values_of(p: Any) -> dict[str, Any]:
    """A parameter object as the plain dict the app, URLs, the CLI and StrategyConfig use."""
    return {f.name: getattr(p, f.name) for f in fields(p)}


# -- how a parameter the user did not set follows the others ----------------------------------
class Rule:
    """How the parameter ``param`` depends on others, declared by a strategy beside its Params
    (``rules``) and applied by :mod:`explorer.strategies.adapt`: :meth:`follow` is the value it
    takes when the user did not set it, :meth:`release` says when a value the user set no longer
    applies. When the user set both sides of a conflict, ``param`` is the one flagged."""

    param: str

    def follow(self, p: Any, defaults: Mapping[str, Any]) -> tuple[Any, str] | None:
        """``(value, why)`` for ``param`` in the parameter object ``p``, or None to keep it."""
        return None

    def release(self, now: Mapping[str, Any], before: Mapping[str, Any]) -> str | None:
        """Why a value the user set for ``param`` no longer applies (None: it does), given the
        values now and the values the change was made from (both coerced)."""
        return None


def _half_up(x: float) -> int:
    return math.floor(x + 0.5)


@dataclass(frozen=True)
class BelowSize(Rule):
    """``param`` (an overlap, a piece) stays below ``size`` (at most ``size`` if not ``strict``).
    Its default is kept while it fits; otherwise it takes the default's share of the new size,
    rounded (recursive's 200 of 1000 becomes 26 of 130), at least ``least`` (3 when counted in
    model tokens if ``token_room``: room beside [CLS] and [SEP]), and always fits."""

    param: str
    size: str
    strict: bool = True
    least: int = 0
    token_room: bool = False

    def follow(self, p: Any, defaults: Mapping[str, Any]) -> tuple[Any, str] | None:
        size, value = getattr(p, self.size), getattr(p, self.param)
        limit = size - 1 if self.strict else size
        if value <= limit:
            return None
        base = defaults[self.size]
        share = _half_up(size * defaults[self.param] / base) if base else 0
        least = 3 if self.token_room and getattr(p, "length", "") == "tokens" else self.least
        new = max(0, min(limit, max(share, least)))
        if new == value:
            return None
        return new, f"to stay {'below' if self.strict else 'within'} {self.size} {size}"


@dataclass(frozen=True)
class AtLeast(Rule):
    """``param`` (a maximum; ``off`` = no maximum) is raised to ``floor`` (a minimum) if below it."""

    param: str
    floor: str
    off: Any = 0

    def follow(self, p: Any, defaults: Mapping[str, Any]) -> tuple[Any, str] | None:
        value, floor = getattr(p, self.param), getattr(p, self.floor)
        if value == self.off or value >= floor:
            return None
        return floor, f"to stay at or above {self.floor} {floor}"


@dataclass(frozen=True)
class ScopedBy(Rule):
    """A value of ``param`` means something for one value of ``scope`` (semantic's amount is a
    percentile in one mode, a number of deviations in another): set for one scope, it goes back
    to the default when ``scope`` changes and the user does not set ``param`` again."""

    param: str
    scope: str

    def release(self, now: Mapping[str, Any], before: Mapping[str, Any]) -> str | None:
        if self.scope not in now or self.scope not in before or self.param not in before:
            return None
        if now[self.scope] == before[self.scope] or now.get(self.param) != before[self.param]:
            return None
        return f"(the default for {self.scope} {now[self.scope]!r}; it was set for {before[self.scope]!r})"
