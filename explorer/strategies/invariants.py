"""The invariants every strategy must hold, as one reusable check (tests and the CLI's --check)."""

from __future__ import annotations

from collections.abc import Sequence

from explorer.documents.document import Document
from explorer.text.chunk import UNBREAKABLE, Chunk


def invariant_errors(doc: Document, chunks: Sequence[Chunk], size: int | None = None) -> list[str]:
    """Return human-readable violations (empty list = all good).

    - ``text[start:end] == chunk.text`` and the chunk is not empty or whitespace-only;
    - starts and ends strictly increase (no chunk lies inside the one before: it would add
      nothing), indexes are 0..n-1;
    - every non-whitespace character of the document is inside at least one chunk;
    - with ``size``: ``length <= size`` unless the reason says the unit was unbreakable.
    """
    text = doc.text
    errors: list[str] = []
    prev = prev_end = -1
    covered_to = 0
    for i, c in enumerate(chunks):
        where = f"chunk {i} [{c.start}:{c.end}]"
        if c.index != i:
            errors.append(f"{where}: index {c.index} != {i}")
        if not (0 <= c.start < c.end <= len(text)):
            errors.append(f"{where}: offsets out of range (text length {len(text)})")
            continue
        if text[c.start : c.end] != c.text:
            errors.append(f"{where}: text is not the slice text[start:end]")
        if not c.text.strip():
            errors.append(f"{where}: empty or whitespace-only")
        if c.start <= prev:
            errors.append(f"{where}: start does not increase (previous {prev})")
        if c.end <= prev_end:
            errors.append(f"{where}: end does not increase (previous {prev_end}): inside the previous chunk")
        prev, prev_end = c.start, c.end
        gap = text[covered_to : c.start]
        if covered_to < c.start and gap.strip():
            errors.append(f"non-space text [{covered_to}:{c.start}] is in no chunk: {gap[:40]!r}")
        covered_to = max(covered_to, c.end)
        if size is not None and c.length > size and not c.reason.startswith(UNBREAKABLE):
            errors.append(f"{where}: length {c.length} {c.unit} > size {size} but reason is {c.reason!r}")
    tail = text[covered_to:]
    if tail.strip():
        errors.append(f"non-space text [{covered_to}:] is in no chunk: {tail[:40]!r}")
    return errors
