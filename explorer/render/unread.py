"""The truncation audit drawn on the text: the end of a chunk that its model never reads.

:func:`explorer.render.html.render_chunks` takes ``unread`` (chunk position → the offset where
the model stops reading that chunk, from :mod:`explorer.evaluation.truncation`); the text past
it is faded and struck through (:data:`UNREAD_CSS`), titled with the chunks it is lost to
(:func:`unread_title`), and the legend gets :data:`UNREAD_KEY`.

Why a module of its own: this markup is the audit's alone, and keeps the HTML module small.
"""

from __future__ import annotations

from collections.abc import Sequence

#: The unread tail: faded (text and tint), struck through (no pattern behind the text), in both
#: themes; it replaces a flagged chunk's wavy underline there.
UNREAD_CSS = "span.ce-unread{opacity:.5;text-decoration:line-through 1.5px;text-decoration-skip-ink:none}"

#: The legend's entry for it.
UNREAD_KEY = (
    '<span title="Past the model\'s token limit (special tokens and passage prefix counted): '
    'the chunk\'s vector does not read this text"><span class="ce-unread">text</span> '
    "never embedded (over the token limit)</span>"
)


def unread_title(indexes: Sequence[int]) -> str:
    """The tooltip's first lines for text past the end of what the model reads of the chunks
    numbered ``indexes`` (plain text; escaped by the caller)."""
    names = " and ".join(str(i) for i in indexes)
    plural = "s" if len(indexes) > 1 else ""
    return (
        f"Never embedded as part of chunk{plural} {names}: past the model's token limit, "
        "so the vector does not read this text.\n\n"
    )
