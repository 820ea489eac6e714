"""Which chunk Explore and Semantic show, in the link: ``chunk=`` and ``schunk=`` (their numbers),
so a copied link or a reload opens on the same chunk. A value that is no chunk number becomes a
notice (the link is untrusted); one past the last shows the last."""

from __future__ import annotations

import re
from typing import Any

from pages.ui.safe import clip
from pages.ui.state import session

#: The link's chunk numbers: the chunk Explore inspects (``chunk=``) and Semantic's (``schunk=``),
#: by the session slot that holds each.
CHUNK_PARAMS = {"chunk": "chunk_sel", "schunk": "sem_sel"}
#: Which page each one is for, as a notice names it.
_PAGES = {"chunk": "Explore", "schunk": "Semantic"}


def restore_chunks(qp: Any) -> None:
    """The chunks Explore and Semantic show (their numbers; past the last, the last one)."""
    for param, slot in CHUNK_PARAMS.items():
        chunk = qp.get(param) or ""
        if re.fullmatch(r"[0-9]{1,7}", chunk):
            setattr(session, slot, int(chunk))
        elif chunk:
            session.notices.append(
                f"Ignored the chunk the link opens on {_PAGES[param]} ({param}={clip(chunk, 40)}): "
                "it must be a chunk number."
            )


def chunks_url() -> dict[str, str]:
    """The link's values for the chunks shown (nothing for the first)."""
    return {param: str(int(getattr(session, slot))) for param, slot in CHUNK_PARAMS.items() if getattr(session, slot)}
