"""The server's entry (``make run``: ``streamlit run serve.py``): ``app.py`` behind Streamlit's
``st.App`` (its documented ASGI entry), for two things a page script cannot do.

- **Deep links below a page** (``/explore/extra``) are redirected to the page
  (:mod:`pages.ui.deeplinks`): they showed an empty white page (streamlit/streamlit#8013).
- **Warm-up when the server starts** (:mod:`pages.ui.warmup`): Explore's imports (pandas, the
  PDF renderer, the core) and the default model's tokenizer load while nobody waits, not in
  the first visitor's script run.

``streamlit run app.py`` still runs the app, without these two.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import streamlit as st
from starlette.middleware import Middleware

from pages.ui import warmup
from pages.ui.deeplinks import DeepLinks

#: The frame, Explore's panels (pandas) and the PDF renderer: most of a first script run's imports.
WARM_MODULES = ("pages.ui.frame", "pages.ui.compute", "pages.ui.inspector", "pages.ui.pdfview", "pypdfium2")


def _tokenizer() -> None:
    from explorer.text.length import get_length

    get_length("tokens")  # the default model's tokenizer (token counts, the model's limit)


@contextlib.asynccontextmanager
async def lifespan(_app: Any) -> AsyncIterator[None]:
    warmup.start(WARM_MODULES, then=_tokenizer)
    yield


app = st.App(
    "app.py",
    lifespan=lifespan,
    middleware=[Middleware(DeepLinks, base=st.get_option("server.baseUrlPath") or "")],
)
