"""What the pages share: session state, URL state, sidebar widgets, cached compute, background jobs.

UI glue only; every decision about documents, chunks and scores lives in ``explorer/``. The
modules here may import ``explorer``, ``streamlit`` and each other, lower ones first, never a
page: :mod:`.state` (the only module that touches ``st.session_state``; every widget key comes
from it), :mod:`.safe` (what a visitor may read) and :mod:`.charts` import nothing of ``pages``;
then :mod:`.nav`, :mod:`.model`, :mod:`.configs`, :mod:`.background` (one job per session and
its status bar), :mod:`.compute` (``st.cache_data`` calls, chunking, the warm-up),
:mod:`.sources` (the visitor's documents), :mod:`.widgets` (sidebar widgets, one per strategy
parameter), :mod:`.settings` (model and retrieval settings), :mod:`.gold` (expected answers),
:mod:`.url` (the link), :mod:`.frame` (page config, navigation, the page header); last the
pieces of single pages: :mod:`.inspector` (Explore), :mod:`.search` (Retrieve),
:mod:`.evaluation` (Evaluate) and :mod:`.textview` (the interactive text, with its ``.js`` and
``.css``). ``st.navigation`` lists the page files by name, so none of these is ever a page.
"""
