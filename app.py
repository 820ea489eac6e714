"""Chunk Explorer: the frame and router. Every page is a thin file under pages/.

Run with ``make run`` (or ``streamlit run app.py``). The first page paints without loading the
embedding model: only Semantic, Retrieve, Evaluate (and strategies that embed) load it.
The frame itself (page config, session set-up, ``st.navigation``, URL state) is in
``pages/ui/frame.py`` so that a page Streamlit runs on its own can run it too.
"""

from pages.ui.frame import run

run()
