"""How a page ends early: :func:`end_page` instead of ``st.stop()``.

Why: after ``st.stop()`` Streamlit raises its StopException again at the next Streamlit call,
the frame's own included, so the frame's last steps after a stopped page never ran: the
address was not written (``?samples=x`` stayed in it, and a configuration in conflict on
Explore left the link on its previous view, so F5 and a copied link lost what was shown).
The frame (:func:`pages.ui.frame.run`) catches :class:`PageEnd` and goes on.
"""

from __future__ import annotations

from typing import NoReturn


class PageEnd(BaseException):
    """The page has drawn all it can (no documents, a configuration in conflict…). A
    BaseException, as Streamlit's own StopException is, so that no ``except Exception`` on the
    way up takes it for an error and carries on drawing."""


def end_page() -> NoReturn:
    """End the page here, as ``st.stop()`` would, but let the frame finish its run."""
    raise PageEnd
