"""HTML rendering of chunks over a document's text: where chunks lie in a window of text,
from their offsets alone (:mod:`.layout`), and the markup with colours, overlaps, boundaries
and flags, every piece of text escaped (:mod:`.html`). Pure functions from chunks and text to
strings.

It may import ``explorer.text`` and ``explorer.documents`` only; never Streamlit.
"""
