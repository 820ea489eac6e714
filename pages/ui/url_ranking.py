"""How chunks are ranked, in the link: ``retriever=``, ``k=`` and ``emb=`` (what is embedded for a
chunk: heading path, neighbouring characters, pieces; ``EmbedOptions.link_value``), so a copied
link or a reload shows the same hits. What a link names that the app does not offer becomes a
notice (the link is untrusted)."""

from __future__ import annotations

import re
from dataclasses import asdict
from typing import Any

from explorer.errors import ExplorerError
from explorer.retrieval.ranking import DEFAULT_RETRIEVER, RETRIEVERS
from explorer.retrieval.vectors import EmbedOptions
from pages.ui.safe import clip
from pages.ui.state import DEFAULT_K, MAX_K, MIN_K, session


def restore_ranking(qp: Any) -> None:
    """The retriever, top k and embedding options of the link, when they are ones the app offers."""
    retriever = (qp.get("retriever") or "").strip()
    if retriever in RETRIEVERS:
        session.retriever = retriever
    elif retriever:
        session.notices.append(
            f"Ignored the retriever named in the link ({clip(retriever, 40)}): it is not one of "
            f"{', '.join(RETRIEVERS)}."
        )
    k = qp.get("k") or ""
    if re.fullmatch(r"[0-9]{1,2}", k) and MIN_K <= int(k) <= MAX_K:  # not isdigit(): "²" passes it
        session.k = int(k)
    elif k:
        session.notices.append(f"Ignored top k from the link ({clip(k, 40)}): it must be {MIN_K} to {MAX_K}.")
    emb = qp.get("emb") or ""
    if emb:
        options, bad = EmbedOptions.read_link(emb[:200])
        if options != EmbedOptions() or not bad:
            session.embed_opts = asdict(options)
        if bad:
            kept = f" (kept {options.link_value()})" if options.link_value() else ""
            session.notices.append(f"Ignored part of what to embed from the link{kept}: {'; '.join(bad)}.")


def ranking_url() -> dict[str, str]:
    """The link's values for the session's ranking (nothing for a default)."""
    want = {}
    if session.retriever != DEFAULT_RETRIEVER:
        want["retriever"] = session.retriever
    if int(session.k) != DEFAULT_K:
        want["k"] = str(int(session.k))
    try:
        emb = EmbedOptions(**session.embed_opts).link_value()
    except (ExplorerError, TypeError):
        emb = ""
    if emb:
        want["emb"] = emb
    return want
