"""HTML rendering of chunks over a document's text: colours, overlaps, boundaries and
flags, escaped for HTML. Pure functions from chunks and text to strings.

It may import ``explorer.text`` and ``explorer.documents`` only; never Streamlit.
"""
