"""Addresses with more than one path segment (``/explore/extra``, ``/a/b``) sent to their
first segment's page: ASGI middleware for ``serve.py``.

Why: Streamlit answers any unknown path with its index.html, whose asset paths are relative; under
``/explore/`` they resolved to ``/explore/static/...``, came back as HTML too, and the visitor saw
an empty white page (streamlit/streamlit#8013). Only a browser's request for a page (one that
accepts HTML) is redirected, the query kept, and never one under Streamlit's own routes
(``/media/`` downloads, ``/static/``, ``/component/``, ``/_stcore/``): the frontend's requests
below a page's address (``/explore/_stcore/health``, how it finds the server's base path) must
get Streamlit's answers. ``/explore/extra`` goes to Explore; ``/a/b`` to ``/a``, where Streamlit
says the page is not found and shows the default page, as it does for ``/a``.

A query longer than Streamlit reads (1,000 values or 512 Ki characters) was dropped whole, and
the link opened on the default view without a word: it is sent on as ``toolong=<values>-<chars>``,
which the app turns into a notice.
"""

from __future__ import annotations

from typing import Any

from streamlit.runtime.state.query_params import sanitize_query_string

#: The parameter a link too long for Streamlit is sent on with, "<values>-<characters>" (the app
#: says so: :func:`pages.ui.url.restore`).
TOO_LONG = "toolong"

#: Streamlit's own routes (``streamlit.web.server.starlette.starlette_routes``): never redirected.
STREAMLIT_ROUTES = frozenset({"_stcore", "media", "component", "static"})


def page_redirect(path: str, base: str = "") -> str | None:
    """The address a ``path`` of several segments goes to, its first (``/explore/extra`` →
    ``/explore``, ``/a/b`` → ``/a``; ``base``: the server's ``baseUrlPath``), or None for a path
    of one segment, outside ``base`` or under Streamlit's routes (``/app/static/`` included)."""
    prefix = [p for p in base.split("/") if p]
    parts = [p for p in path.split("/") if p]
    if parts[: len(prefix)] != prefix:
        return None
    rest = parts[len(prefix) :]
    if len(rest) < 2 or rest[0] in STREAMLIT_ROUTES or rest[:2] == ["app", "static"] or "_stcore" in rest:
        return None
    return "/" + "/".join([*prefix, rest[0]])


class DeepLinks:
    """ASGI middleware: a browser's GET or HEAD of a document at a path of several segments is
    redirected (302) to its first segment's page (:func:`page_redirect`)."""

    def __init__(self, app: Any, base: str = "") -> None:
        self.app, self.base = app, base

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope.get("method") in ("GET", "HEAD") and _wants_html(scope):
            path = scope.get("path", "")
            target = page_redirect(path, self.base)
            query = scope.get("query_string", b"").decode("latin-1")
            if query and not sanitize_query_string(query):  # Streamlit reads none of it
                target = target or _same_path(path)
                query = f"{TOO_LONG}={query.count('&') + 1}-{len(query)}"
            if target is not None:
                from starlette.responses import RedirectResponse

                response = RedirectResponse(target + (f"?{query}" if query else ""), status_code=302)
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _same_path(path: str) -> str:
    """``path`` without empty segments: never ``//host``, which a browser reads as another site."""
    return "/" + "/".join(p for p in path.split("/") if p)


def _wants_html(scope: dict) -> bool:
    """A page load (its Accept names text/html), not the frontend's fetches (``*/*``)."""
    accept = b",".join(v for k, v in scope.get("headers", ()) if k.lower() == b"accept")
    return b"text/html" in accept
