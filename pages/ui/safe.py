"""What a visitor may read: text made inert for Markdown, and errors without server paths.

The model picked may be a folder on the server (:func:`pages.ui.model.model_arg`): its path goes
to ``explorer``, never to the page, and every error shown goes through :func:`err_text`.
"""

from __future__ import annotations

import logging
import os
import re
from typing import Any

from explorer.errors import Cancelled, ExplorerError, ModelError
from explorer.models import choice as model_choices
from explorer.render.inert import named_controls

log = logging.getLogger(__name__)

#: What a visitor reads when the embedding model fails (the core's message, which may name
#: server paths, goes to the server's log).
MODEL_PROBLEM = (
    "The embedding model could not be used on this server. Pick another model in the sidebar, "
    "or ask whoever runs this app to check it."
)
_PATH = re.compile(r"(?<![\w.:/~])(?:~/|/)[^\s'\"`:;,()\[\]]+")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:^=&])")
#: Where Streamlit would still make something of the text after Markdown escaping: a GFM
#: autolink (before ``//`` after a colon, after ``www`` before a dot, after ``@`` before a word);
#: an icon, the logo or an emoji (a word or a sign after a colon: ``:material/delete:``,
#: ``:streamlit:``, ``:+1:``);
#: an arrow or a dash (between the escaped characters of ``->``, ``<=``, ``--``, ``~=``).
_BREAKS = re.compile(
    r"(?<=:)(?=//)|(?i:(?<=www))(?=\\?\.)|(?<=@)(?=\w)|(?<=\\:)(?=[\w\\])|(?<=\\[-<>~])(?=\\[-<>=])"
)
WORD_JOINER = "\u2060"
#: Bidirectional embeddings, overrides and isolates: in a file name they reorder what is shown
#: ("report\u202etxt.exe" reads "reportexe.txt"), so md() names them instead.


def clip(s: str, n: int = 60) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def md(s: str) -> str:
    """Text from a document, a file name or a parameter, made inert for ``st.markdown``: no
    links, images, emphasis, HTML, math or Streamlit directives (``:red[...]``) can come from it.

    Escaping is not enough: GitHub-flavoured Markdown links ``http://...``, ``www....`` and
    ``name@host`` in the text after escapes are resolved, and Streamlit turns ``:material/x:``,
    ``:streamlit:`` and emoji codes into pictures and ``->``, ``--`` into arrows and dashes in the
    text it was given; so an invisible WORD JOINER (U+2060) goes where they would match
    (:data:`_BREAKS`). ``&`` is escaped too, so that ``&lt;`` stays as typed. Bidirectional
    controls are shown by name (``<U+202E>``), not obeyed.
    """
    text = named_controls(" ".join(str(s).split()))
    return _BREAKS.sub(WORD_JOINER, _MD_SPECIAL.sub(r"\\\1", text))


def err_text(err: BaseException | str) -> str:
    """An error as a visitor may read it (safe on any thread): a model failure becomes
    :data:`MODEL_PROBLEM`; in any other message, a folder under the models directory is named by
    its folder name and any other absolute path becomes "…"."""
    if isinstance(err, ModelError):
        if str(err) != MODEL_PROBLEM:
            log.warning("embedding model failed: %s", err)
        return MODEL_PROBLEM
    msg = str(err)
    root = model_choices.models_dir()
    if root is not None:
        msg = msg.replace(str(root) + os.sep, "").replace(str(root), "…")
    return _PATH.sub("…", msg)


def safe_error(err: ExplorerError) -> ExplorerError:
    """``err`` again, with :func:`err_text`'s message (Cancelled goes through as it is)."""
    if isinstance(err, Cancelled):
        return err
    try:
        return type(err)(err_text(err))
    except Exception:
        return ExplorerError(err_text(err))


def sheet_safe(frame: Any) -> Any:
    """``frame`` (a pandas DataFrame) with every text cell a spreadsheet would read as a formula
    made inert (:func:`explorer.export.data.safe_cell`): a table's "Download as CSV" is
    Streamlit's, which writes cells as they are, and headings, questions and labels come from
    uploads and links."""
    from pandas.api.types import is_object_dtype, is_string_dtype

    from explorer.export.data import safe_cell

    return frame.apply(lambda col: col.map(safe_cell) if is_object_dtype(col) or is_string_dtype(col) else col)
