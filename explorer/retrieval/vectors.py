"""How chunk vectors are made: what is embedded for a chunk (:class:`EmbedOptions`: heading path
prepended, neighbouring characters added, never its offsets), and the two modes (:data:`MODES`):
``exact`` embeds each chunk's text through the embedder's cache, ``preview`` pools each chunk's
vector from its document's token vectors, read once (:mod:`explorer.embedding.late`).

Why a module of its own: the index (:mod:`explorer.retrieval.search`) and the evaluation runs
both make vectors this way, and the app's settings offer the same options.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from explorer import limits
from explorer.documents.document import Document
from explorer.errors import ParamError
from explorer.lru import ByteLRU
from explorer.retrieval.pieces import ChunkPieces, PieceLayout, check_piece_chars
from explorer.strategies.context import Context
from explorer.text.chunk import Chunk
from explorer.text.wording import quoted

#: Most neighbouring characters ``context_chars`` may add on each side.
MAX_CONTEXT_CHARS = 10_000

#: How chunk vectors are made: "exact" = each chunk's text embedded on its own (the reference);
#: "preview" = pooled from the document's token vectors, read once (approximate, see
#: :mod:`explorer.embedding.late`).
MODES = ("exact", "preview")


def check_mode(mode: str) -> str:
    """``mode`` if it is one of :data:`MODES`, else ParamError naming it."""
    if not isinstance(mode, str) or mode not in MODES:
        raise ParamError(f"mode {mode!r} is not one of {', '.join(MODES)}")
    return mode


def check_preview_mode(ctx: Context, options: EmbedOptions, force: bool = False) -> float | None:
    """ParamError (or ModelError) unless preview may run with this context's model and these
    options (see :func:`explorer.embedding.late.check_preview`); the model's measured gap."""
    from explorer.embedding.late import check_preview

    if options.prepend_headings:
        raise ParamError(
            "preview pools the document's own tokens: it cannot prepend headings (use exact mode)"
        )
    return check_preview(ctx.get_embedder(), force)


def check_context_chars(c: int) -> None:
    """ParamError unless ``c`` is a whole number from 0 to :data:`MAX_CONTEXT_CHARS`."""
    if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c <= MAX_CONTEXT_CHARS:
        raise ParamError(f"context_chars={quoted(c)} must be a whole number from 0 to {MAX_CONTEXT_CHARS:,}")


@dataclass(frozen=True, slots=True)
class EmbedOptions:
    """What is embedded for a chunk (never where it is): ``prepend_headings`` puts the heading
    path first ("A > B\\n\\n..."); ``context_chars`` adds that many characters of the document on
    each side of the chunk ("context enrichment"); ``piece_chars`` (0: off) also embeds each
    document in pieces of about that many characters and mixes a chunk's cosine with its best
    piece's (:mod:`explorer.retrieval.pieces`)."""

    prepend_headings: bool = False
    context_chars: int = 0
    piece_chars: int = 0

    def __post_init__(self) -> None:
        check_context_chars(self.context_chars)
        check_piece_chars(self.piece_chars)

    @property
    def label(self) -> str:
        """What these options change, as a results note says it ("" for none): runs with other
        options are told apart."""
        parts = ["heading path prepended"] if self.prepend_headings else []
        if self.context_chars:
            parts.append(f"{self.context_chars:,} neighbouring characters embedded")
        if self.piece_chars:
            parts.append(f"scored with pieces of {self.piece_chars:,} characters")
        return ", ".join(parts)

    def link_value(self) -> str:
        """These options as a link carries them: "h,c500,p300" (heading path, neighbouring
        characters, piece size; "" for none)."""
        parts = ["h"] if self.prepend_headings else []
        parts += [f"c{self.context_chars}"] if self.context_chars else []
        return ",".join(parts + ([f"p{self.piece_chars}"] if self.piece_chars else []))

    @classmethod
    def from_link(cls, value: str) -> EmbedOptions:
        """:meth:`link_value` read back; ParamError naming the first part it cannot read (the
        value comes from a link: untrusted)."""
        options, bad = cls.read_link(value)
        if bad:
            raise ParamError(bad[0])
        return options

    @classmethod
    def read_link(cls, value: str) -> tuple[EmbedOptions, tuple[str, ...]]:
        """:meth:`link_value` read back part by part: the options from the parts that read, and
        why each other part was left out, so one bad part does not drop the good ones."""
        fields: dict[str, Any] = {}
        bad: list[str] = []
        for part in value.split(",")[:8] if value else []:
            m = _LINK_PART.fullmatch(part)
            if m is None:
                bad.append(f"{part[:40]!r} is not h, cN or pN")
                continue
            name = "prepend_headings" if part == "h" else "context_chars" if m["kind"] == "c" else "piece_chars"
            try:
                cls(**{name: True if part == "h" else int(m["n"])})
            except ParamError as err:
                bad.append(str(err))
                continue
            fields[name] = True if part == "h" else int(m["n"])
        return cls(**fields), tuple(dict.fromkeys(bad))  # "emb=,,," said once, not three times


#: One part of :meth:`EmbedOptions.link_value`: "h", or "c"/"p" and a number.
_LINK_PART = re.compile(r"h|(?P<kind>[cp])(?P<n>[0-9]{1,5})")

#: The options of a plain run (nothing added to a chunk's text).
DEFAULT_EMBED_OPTIONS = EmbedOptions()


def embedded_text(chunk: Chunk, doc: Document, options: EmbedOptions = EmbedOptions()) -> str:
    """The text the model sees for ``chunk`` under ``options``."""
    text = chunk.text
    c = options.context_chars
    if c:
        text = doc.text[max(0, chunk.start - c) : chunk.start] + text + doc.text[chunk.end : chunk.end + c]
    if options.prepend_headings and chunk.headings:
        text = " > ".join(chunk.headings) + "\n\n" + text
    return text


def preview_spans(chunk: Chunk, doc: Document, options: EmbedOptions) -> tuple[int, int]:
    """The characters pooled for ``chunk`` in preview mode: its own, widened by
    ``context_chars`` on each side (the characters exact mode would add)."""
    c = options.context_chars
    return max(0, chunk.start - c), min(len(doc.text), chunk.end + c)


def preview_vectors(
    ctx: Context,
    docs: Sequence[Document],
    chunk_lists: Sequence[Sequence[Chunk]],
    options: EmbedOptions = EmbedOptions(),
    progress: Callable[[int, int], Any] | None = None,
) -> list[np.ndarray]:
    """Preview vectors of several chunk lists (one per configuration) over ``docs``, document by
    document: each document's token states are read (or found in the store) once and every
    list's chunks of it pooled, so a corpus larger than the store's bound is still read once."""
    from explorer.embedding.late import get_store

    progress = progress if progress is not None else ctx.progress
    embedder = ctx.get_embedder()
    store = get_store()
    out = [np.zeros((len(chunks), embedder.dim), np.float32) for chunks in chunk_lists]
    where: dict[str, list[tuple[int, list[int]]]] = {}
    for li, chunks in enumerate(chunk_lists):
        rows: dict[str, list[int]] = {}
        for i, c in enumerate(chunks):
            rows.setdefault(c.doc_id, []).append(i)
        for doc_id, idx in rows.items():
            where.setdefault(doc_id, []).append((li, idx))
    by_id = {d.id: d for d in docs}
    for doc_id, lists in where.items():
        doc = by_id.get(doc_id)
        if doc is None:
            raise ParamError(f"a chunk's document ({doc_id}) is not among the documents given")
        states = store.get(embedder, doc.text, ctx.preview_window, progress=progress)
        for li, idx in lists:
            spans = [preview_spans(chunk_lists[li][i], doc, options) for i in idx]
            out[li][idx] = states.pool(spans)
    return out


def piece_vectors(
    ctx: Context,
    docs: Sequence[Document],
    chunks: Sequence[Chunk],
    options: EmbedOptions,
    mode: str,
    progress: Callable[[int, int], Any] | None = None,
) -> ChunkPieces:
    """The pieces of ``docs`` held by ``chunks`` (``options.piece_chars`` characters), with their
    vectors: embedded exactly (through the embedder's cache, so once per document and model
    whatever the configuration) or, in preview mode, pooled from the documents' token vectors."""
    layout = PieceLayout.of(docs, chunks, options.piece_chars)
    window = ctx.preview_window if mode == "preview" else None
    key = (tuple(dict.fromkeys(d.id for d in docs)), options.piece_chars, ctx.get_embedder().model_id, mode, window)
    vectors = _piece_vectors.get_or_make(key, lambda: _make_piece_vectors(ctx, docs, layout, mode, progress))
    assert vectors is not None
    return ChunkPieces(layout, vectors)


#: Piece vectors by documents, size, model and mode: one copy for every configuration's index.
_piece_vectors: ByteLRU[np.ndarray] = ByteLRU(limits.PIECE_VECTORS_BYTES, lambda v: v.nbytes)


def _make_piece_vectors(
    ctx: Context, docs: Sequence[Document], layout: PieceLayout, mode: str, progress: Callable[[int, int], Any] | None
) -> np.ndarray:
    if mode != "preview":
        return embed_texts(ctx, layout.texts(docs), progress)
    from explorer.embedding.late import get_store

    embedder = ctx.get_embedder()
    vectors = np.zeros((len(layout), embedder.dim), np.float32)
    doc_ids = np.array(layout.doc_ids)
    for doc in {d.id: d for d in docs}.values():
        rows = np.flatnonzero(doc_ids == doc.id)
        if len(rows):
            states = get_store().get(embedder, doc.text, ctx.preview_window, progress=progress or ctx.progress)
            vectors[rows] = states.pool(list(zip(layout.starts[rows].tolist(), layout.ends[rows].tolist(), strict=True)))
    return vectors


def embed_texts(ctx: Context, texts: list[str], progress: Callable[[int, int], Any] | None) -> np.ndarray:
    progress = progress if progress is not None else ctx.progress
    embedder = ctx.get_embedder()
    return embedder.encode(texts, progress=progress) if texts else np.zeros((0, embedder.dim), np.float32)
