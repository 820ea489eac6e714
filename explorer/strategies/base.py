"""The strategy contract: a typed parameter spec, validation, and offsets by construction.

A strategy is one module that subclasses :class:`Strategy` and decorates it with
:func:`explorer.strategies.registry.register`. It only returns :class:`Span` objects
(``start``/``end`` into ``doc.text`` plus a reason); :meth:`Strategy.chunk` turns them
into :class:`Chunk` objects and checks the invariants, so no strategy can report a
wrong offset without failing loudly.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from explorer import untrusted
from explorer.errors import LimitError, ParamError
from explorer.limits import MAX_CHUNKS
from explorer.text.chunk import Chunk, Span

if TYPE_CHECKING:
    from explorer.documents.document import Document
    from explorer.strategies.context import Context


@dataclass(frozen=True, slots=True)
class Param:
    """One parameter of a strategy. The app builds its widgets from these.

    ``type`` is one of ``int``, ``float``, ``bool``, ``choice``, ``str_list``, ``str``.
    """

    name: str
    type: str
    default: Any
    help: str
    min: float | None = None
    max: float | None = None
    choices: tuple[str, ...] = ()
    step: float | None = None

    def to_dict(self) -> dict[str, Any]:
        default = list(self.default) if isinstance(self.default, tuple) else self.default
        return {
            "name": self.name,
            "type": self.type,
            "default": default,
            "min": self.min,
            "max": self.max,
            "choices": list(self.choices) or None,
            "help": self.help,
        }

    def coerce(self, value: Any) -> Any:
        """Convert ``value`` (possibly a CLI/URL string) to this parameter's type and check bounds."""
        name = self.name
        try:
            if self.type == "int":
                if isinstance(value, bool):
                    raise TypeError
                if isinstance(value, str):
                    value = float(value.strip())
                if isinstance(value, float):
                    if not math.isfinite(value) or value != int(value):
                        raise ValueError
                    value = int(value)
                value = int(value)
            elif self.type == "float":
                if isinstance(value, bool):
                    raise TypeError
                value = float(value)
                if not math.isfinite(value):
                    raise ValueError
            elif self.type == "bool":
                if isinstance(value, str):
                    low = value.strip().lower()
                    if low in ("1", "true", "yes", "on"):
                        value = True
                    elif low in ("0", "false", "no", "off"):
                        value = False
                    else:
                        raise ValueError
                value = bool(value)
            elif self.type == "choice":
                value = str(value)
                if value not in self.choices:
                    raise ParamError(f"{name}={value!r} is not one of {', '.join(map(repr, self.choices))}")
            elif self.type == "str_list":
                if isinstance(value, str):
                    value = untrusted.loads(value, f"{name}={value[:40]!r}", ParamError)
                if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
                    raise TypeError
                value = tuple(value)
            elif self.type == "str":
                value = str(value)
        except ParamError:
            raise
        except (TypeError, ValueError, OverflowError):
            raise ParamError(f"{name}={value!r} is not a valid {self.type}") from None
        if self.type in ("int", "float"):
            if self.min is not None and value < self.min:
                raise ParamError(f"{name}={value} is below the minimum {self.min:g}")
            if self.max is not None and value > self.max:
                raise ParamError(f"{name}={value} is above the maximum {self.max:g}")
        return value


LENGTH_PARAM = Param(
    "length",
    "choice",
    "chars",
    "Unit in which sizes are counted: characters, words, tokens of the embedding model "
    "(with its special tokens, such as [CLS]/[SEP]), or OpenAI's cl100k / o200k tokens.",
    choices=("chars", "words", "tokens", "cl100k", "o200k"),
)


class Strategy(ABC):
    """Base class of every chunking strategy."""

    name: ClassVar[str]
    description: ClassVar[str]
    params: ClassVar[tuple[Param, ...]] = ()
    #: True if the strategy embeds text (semantic, cluster...): the app shows progress for it.
    needs_embedder: ClassVar[bool] = False

    # -- parameters ------------------------------------------------------------------------
    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise ParamError(f"{self.name} has no parameter {name!r}; it has {', '.join(self.param_names())}")

    def param_names(self) -> list[str]:
        return [p.name for p in self.params]

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}

    def validate(self, values: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Return a complete, coerced parameter dict or raise :class:`ParamError`."""
        out = self.defaults()
        for key, value in (values or {}).items():
            out[key] = self.param(key).coerce(value)
        self.check(out)
        return out

    def check(self, p: dict[str, Any]) -> None:
        """Cross-parameter checks (e.g. overlap < size). Override; raise ParamError."""
        return None

    # -- splitting -------------------------------------------------------------------------
    @abstractmethod
    def split(self, doc: Document, p: dict[str, Any], ctx: Context) -> list[Span]:
        """Return spans of ``doc.text`` in increasing ``start`` order. ``p`` is validated."""

    def min_chunks(self, doc: Document, p: Mapping[str, Any], ctx: Context | None = None) -> int:
        """A lower bound on the chunk count (0 = unknown), checked before splitting, so that
        ``chunk_size=1`` on a 5 MB text is refused at once rather than after building millions
        of spans. Default: a ``chunk_size`` caps every chunk unless a ``separators`` list lacks
        ``""`` (then a unit can be unbreakable), and every non-space character is in a chunk.
        In characters the bound is the non-space count over the size. In words or tokens each
        chunk holds at most ``chunk_size`` minus the special tokens, and every word is at least
        one unit: the word count gives a floor for free, and only when that floor comes near
        the limit are the units counted (about a second a megabyte). Override where
        ``chunk_size`` means something else."""
        size = p.get("chunk_size")
        if not size or "" not in p.get("separators", ("",)):
            return 0
        unit = self.unit(p)
        if unit == "chars":
            if len(doc.text) <= MAX_CHUNKS * size:  # cheap: cannot be over, skip the count
                return 0
            return -(-sum(map(len, doc.text.split())) // size)
        if ctx is None or len(doc.text) <= MAX_CHUNKS // 4:  # too short to come near the limit
            return 0
        length = ctx.length(unit)
        room = size - getattr(length, "special", 0)
        if room <= 0:
            return 0
        if (len(doc.text) // 2 + 1) / room <= MAX_CHUNKS // 4:  # words <= chars / 2: skip the split
            return 0
        floor = -(-len(doc.text.split()) // room)
        if floor > MAX_CHUNKS or floor <= MAX_CHUNKS // 4:
            return floor
        units = length(doc.text) - getattr(length, "special", 0)
        return int(units / room / 1.01)  # 1 % margin: units of the parts need not add up exactly

    def unit(self, p: Mapping[str, Any]) -> str:
        return str(p.get("length", "chars"))

    def chunk(
        self, doc: Document, values: Mapping[str, Any] | None = None, ctx: Context | None = None
    ) -> list[Chunk]:
        """Split ``doc`` and build chunks with pages, heading paths and lengths from offsets."""
        from explorer.strategies.context import Context

        ctx = ctx or Context.default()
        p = self.validate(values)
        floor = self.min_chunks(doc, p, ctx)
        if floor > MAX_CHUNKS:
            unit = {"chars": "characters"}.get(self.unit(p), self.unit(p))
            raise LimitError(
                f"{self.name} would make at least {floor:,} chunks of {doc.name!r} "
                f"(chunk_size={p['chunk_size']} {unit}), over the limit of {MAX_CHUNKS:,}: "
                "use a larger chunk size"
            )
        spans = self.split(doc, p, ctx)
        if len(spans) > MAX_CHUNKS:
            raise LimitError(
                f"{self.name} would make {len(spans):,} chunks of {doc.name!r}, over the limit of "
                f"{MAX_CHUNKS:,}: use a larger chunk size"
            )
        unit = self.unit(p)
        length = ctx.length(unit)
        text = doc.text
        chunks = []
        prev_start = -1
        for i, s in enumerate(spans):
            if not (0 <= s.start < s.end <= len(text)) or s.start <= prev_start:
                raise AssertionError(
                    f"{self.name} produced an invalid span {s.start}:{s.end} after start {prev_start} "
                    f"(text length {len(text)})"
                )
            prev_start = s.start
            piece = text[s.start : s.end]
            chunks.append(
                Chunk(
                    doc_id=doc.id,
                    doc_name=doc.name,
                    index=i,
                    start=s.start,
                    end=s.end,
                    text=piece,
                    length=length(piece),
                    unit=unit,
                    reason=s.reason,
                    pages=doc.pages_for(s.start, s.end),
                    headings=doc.heading_path(_first_non_space(text, s.start, s.end)),
                    meta=s.meta,
                )
            )
        return chunks


def _first_non_space(text: str, start: int, end: int) -> int:
    for i in range(start, end):
        if not text[i].isspace():
            return i
    return start


def trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink ``[start, end)`` to exclude surrounding whitespace (may return start == end)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def check_size_overlap(p: dict[str, Any]) -> None:
    """The checks every sized strategy shares: overlap below size, room beside [CLS]/[SEP]."""
    if p["chunk_overlap"] >= p["chunk_size"]:
        raise ParamError(
            f"chunk_overlap={p['chunk_overlap']} must be smaller than chunk_size={p['chunk_size']}"
        )
    if p["length"] == "tokens" and p["chunk_size"] <= 2:
        raise ParamError(
            f"chunk_size={p['chunk_size']} tokens leaves no room beside [CLS] and [SEP]; use 3 or more"
        )
