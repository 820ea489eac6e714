"""The strategy contract: typed parameters, validation, and offsets by construction.

A strategy is one module that subclasses :class:`Strategy`, declares its parameters as a frozen
dataclass (:mod:`explorer.strategies.params`) and registers itself with
:func:`explorer.strategies.registry.register`. ``split`` receives that typed object and only
returns :class:`Span` objects (``start``/``end`` into ``doc.text`` plus a reason);
:meth:`Strategy.chunk` turns them into :class:`Chunk` objects and checks the invariants, so no
strategy can report a wrong offset without failing loudly.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

from explorer.errors import LimitError, ParamError
from explorer.limits import MAX_CHUNKS
from explorer.strategies import adapt as adapting
from explorer.strategies.params import BelowSize, Param, Rule, declared, values_of
from explorer.text.chunk import Chunk, Span

if TYPE_CHECKING:
    from explorer.documents.document import Document
    from explorer.strategies.context import Context
    from explorer.text.length import Length

#: The libraries whose equivalent code a strategy can give (keys of :meth:`Strategy.peer_code`).
PEERS = ("langchain", "llamaindex", "chonkie")


class Measured(Protocol):
    """What every parameter object has: the unit sizes are counted in."""

    @property
    def length(self) -> str: ...


P = TypeVar("P", bound=Measured)


class PeerKit(Protocol):
    """How peer code names the model and the document and measures a length unit in each library
    (written by :mod:`explorer.export.code`); a strategy's :meth:`~Strategy.peer_code` uses it."""

    hub: str  # a Python expression naming the model for another library
    read: str  # the line that reads the document into ``text``

    def py(self, value: Any) -> str: ...
    def code(self, lines: Sequence[str]) -> str: ...
    def none(self, peer: str, strategy: str, why: str = "") -> str: ...
    def langchain(self, note: str, cls: str, args: str, unit: str, measured: bool = True) -> str: ...
    def lc_length(self, unit: str) -> tuple[list[str], str]: ...
    def llamaindex(self, note: list[str], imports: list[str], body: list[str]) -> str: ...
    def li_sentences(self, note: str, size: int, overlap: int, unit: str) -> str: ...
    def li_tokenizer(self, unit: str) -> tuple[list[str], str]: ...
    def chonkie(self, top: list[str], body: list[str]) -> str: ...
    def chonkie_sentences(self, size: int, min_sentences: int, unit: str) -> str: ...
    def chonkie_tokenizer(self, unit: str) -> str: ...


class Strategy(ABC, Generic[P]):
    """Base class of every chunking strategy; ``Params`` is its frozen parameter dataclass."""

    name: ClassVar[str]
    description: ClassVar[str]
    Params: ClassVar[type]
    #: The declarations of ``Params``' fields, in order (set from ``Params``).
    params: ClassVar[tuple[Param, ...]] = ()
    #: True if the strategy embeds text (semantic, cluster...): the app shows progress for it.
    needs_embedder: ClassVar[bool] = False
    #: How a parameter the user did not set follows the others (see :meth:`adapt`).
    rules: ClassVar[tuple[Rule, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "Params" in vars(cls):
            cls.params = declared(cls.Params)

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

    def parse(self, values: Mapping[str, Any] | None = None) -> P:
        """The typed, checked parameters from plain ``values`` (defaults filled), or ParamError."""
        given = {key: self.param(key).coerce(value) for key, value in (values or {}).items()}
        p = self.complete(self.Params(**given))
        self.check(p)
        return p

    def validate(self, values: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The complete, coerced parameters as a plain dict (for the app, URLs, CLI, configs)."""
        return values_of(self.parse(values))

    def adapt(
        self,
        values: Mapping[str, Any],
        user_set: Collection[str],
        *,
        before: Mapping[str, Any] | None = None,
        lenient: bool = False,
    ) -> adapting.Adapted:
        """Like :meth:`validate`, but only what the user set (``user_set``) is held: every other
        parameter follows it by :attr:`rules`, with a note; conflicts are reported per parameter
        instead of raised (:func:`explorer.strategies.adapt.adapt`)."""
        return adapting.adapt(self, values, user_set, before=before, lenient=lenient)

    def switched_from(
        self,
        old: Strategy[Any],
        values: Mapping[str, Any],
        user_set: Collection[str],
        set_under: Mapping[str, str] | None = None,
    ) -> adapting.Adapted:
        """This strategy's values when the user switches to it from ``old`` with ``values``
        (:func:`explorer.strategies.adapt.switch`)."""
        return adapting.switch(old, values, user_set, self, set_under)

    def complete(self, p: P) -> P:
        """Fill a parameter whose default depends on another one. Override."""
        return p

    def check(self, p: P) -> None:
        """Cross-parameter checks (e.g. overlap < size). Override; raise ParamError."""
        return None

    def size_cap(self, p: P) -> int:
        """The size every chunk is held to (0 = none, or a unit can be unbreakable). Override."""
        return 0

    # -- peers -----------------------------------------------------------------------------
    def peer_code(self, p: P, kit: PeerKit) -> dict[str, str]:
        """Code for the closest equivalent in each of :data:`PEERS` (a comment where none is)."""
        return {peer: kit.none(peer, self.name) for peer in PEERS}

    # -- splitting -------------------------------------------------------------------------
    @abstractmethod
    def split(self, doc: Document, p: P, ctx: Context) -> list[Span]:
        """Return spans of ``doc.text`` in increasing ``start`` order. ``p`` is checked."""

    def min_chunks(self, doc: Document, p: P, ctx: Context | None = None) -> int:
        """A lower bound on the chunk count (0 = unknown), checked before splitting, so that
        ``chunk_size=1`` on a 5 MB text is refused at once rather than after building millions
        of spans (see :func:`size_floor`)."""
        size = self.size_cap(p)
        return size_floor(doc.text, size, p.length, ctx) if size else 0

    def chunk(
        self, doc: Document, values: Mapping[str, Any] | None = None, ctx: Context | None = None
    ) -> list[Chunk]:
        """Split ``doc`` and build chunks with pages, heading paths and lengths from offsets."""
        from explorer.strategies.context import Context

        ctx = ctx or Context.default()
        p = self.parse(values)
        floor = self.min_chunks(doc, p, ctx)
        if floor > MAX_CHUNKS:
            unit = {"chars": "characters"}.get(p.length, p.length)
            raise LimitError(
                f"{self.name} would make at least {floor:,} chunks of {doc.name!r} "
                f"(chunk_size={self.size_cap(p)} {unit}), over the limit of {MAX_CHUNKS:,}: "
                "use a larger chunk size"
            )
        spans = self.split(doc, p, ctx)
        if len(spans) > MAX_CHUNKS:
            raise LimitError(
                f"{self.name} would make {len(spans):,} chunks of {doc.name!r}, over the limit of "
                f"{MAX_CHUNKS:,}: use a larger chunk size"
            )
        return self._chunks(doc, spans, p.length, ctx.length(p.length))

    def _chunks(self, doc: Document, spans: list[Span], unit: str, length: Length) -> list[Chunk]:
        text = doc.text
        prev_start = -1
        for s in spans:
            if not (0 <= s.start < s.end <= len(text)) or s.start <= prev_start:
                raise AssertionError(
                    f"{self.name} produced an invalid span {s.start}:{s.end} after start {prev_start} "
                    f"(text length {len(text)})"
                )
            prev_start = s.start
        if all(s.length >= 0 for s in spans):  # measured whole while splitting
            lengths = [s.length for s in spans]
        else:
            lengths = length.slices(text, [(s.start, s.end) for s in spans])
        doc_id, name = doc.id, doc.name
        paged, titled = bool(doc.pages), bool(doc.headings)
        return [
            Chunk(
                doc_id=doc_id,
                doc_name=name,
                index=i,
                start=s.start,
                end=s.end,
                text=text[s.start : s.end],
                length=n,
                unit=unit,
                reason=s.reason,
                pages=doc.pages_for(s.start, s.end) if paged else (),
                headings=doc.heading_path(_content_start(doc, s.start, s.end)) if titled else (),
                meta=s.meta,
            )
            for i, (s, n) in enumerate(zip(spans, lengths, strict=True))
        ]


def size_floor(text: str, size: int, unit: str, ctx: Context | None) -> int:
    """A lower bound on the number of chunks of at most ``size`` units covering ``text``.

    Every non-space character is in a chunk. In characters the bound is the non-space count
    over the size. In words or tokens each chunk holds at most ``size`` minus the special
    tokens, and every word is at least one unit: the word count gives a floor for free, and
    only when that floor comes near the limit are the units counted (about a second a MB).
    """
    if unit == "chars":
        if len(text) <= MAX_CHUNKS * size:  # cheap: cannot be over, skip the count
            return 0
        return -(-sum(map(len, text.split())) // size)
    if ctx is None or len(text) <= MAX_CHUNKS // 4:  # too short to come near the limit
        return 0
    length = ctx.length(unit)
    room = size - length.special
    if room <= 0:
        return 0
    if (len(text) // 2 + 1) / room <= MAX_CHUNKS // 4:  # words <= chars / 2: skip the split
        return 0
    floor = -(-len(text.split()) // room)
    if floor > MAX_CHUNKS or floor <= MAX_CHUNKS // 4:
        return floor
    units = length(text) - length.special
    return int(units / room / 1.01)  # 1 % margin: units of the parts need not add up exactly


def _first_non_space(text: str, start: int, end: int) -> int:
    m = _NON_SPACE.search(text, start, end)
    return m.start() if m else start


def _content_start(doc: Document, start: int, end: int) -> int:
    """Where a chunk's heading path is read: its first character after the headings it opens
    with, so that the deepest heading over its content names it (an empty "## A" joined to
    "### B" and B's text is under B); a chunk of headings only reads it at its first one."""
    text = doc.text
    first = pos = _first_non_space(text, start, end)
    while (h := doc.heading_at(pos)) is not None:
        m = _NON_SPACE.search(text, h.end, end)
        if m is None:
            return first
        pos = m.start()
    return pos


_NON_SPACE = re.compile(r"\S")


def trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Shrink ``[start, end)`` to exclude surrounding whitespace (may return start == end)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def check_token_room(name: str, size: int, unit: str) -> None:
    """A size in model tokens must leave room for a word piece beside [CLS] and [SEP]."""
    if unit == "tokens" and 0 < size <= 2:
        raise ParamError(f"{name}={size} tokens leaves no room beside [CLS] and [SEP]; use 3 or more")


def check_size_overlap(size: int, overlap: int, unit: str) -> None:
    """The checks every sized strategy with an overlap shares."""
    if overlap >= size:
        raise ParamError(f"chunk_overlap={overlap} must be smaller than chunk_size={size}")
    check_token_room("chunk_size", size, unit)


#: The rule every strategy with a size and an overlap shares, beside :func:`check_size_overlap`:
#: an overlap the user did not set stays below the chunk size.
OVERLAP_BELOW_SIZE = BelowSize("chunk_overlap", "chunk_size")
