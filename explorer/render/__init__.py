"""What the user sees of chunks, as data for the page: where chunks lie in a window of text,
from their offsets alone (:mod:`.layout`); the markup with colours, overlaps, boundaries and
flags, every piece of text escaped (:mod:`.html`); the cuts two configurations do not share
(:mod:`.boundaries`); the text a model never reads, past its token limit (:mod:`.unread`);
and a PDF page as an image with a chunk's lines outlined (:mod:`.pdf_page`, pypdfium2). Pure
functions from chunks, text and bytes to strings and images.

It may import ``explorer.text`` and ``explorer.documents`` only; never Streamlit.
"""
