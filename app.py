"""Chunk Explorer: the frame and router. Every page is a thin file under pages/.

Run with ``make run`` (``streamlit run serve.py``: this app behind st.App, see serve.py) or
``streamlit run app.py``. The first page paints without loading the
embedding model: only Semantic, Retrieve, Evaluate (and strategies that embed) load it.
The frame itself (page config, session set-up, ``st.navigation``, URL state) is in
``pages/ui/frame.py`` so that a page Streamlit runs on its own can run it too.
"""

from pages.ui.warmup import wait

wait()  # for serve.py's start-up warm-up, when one is under way (its imports are this run's)

from pages.ui.frame import run  # noqa: E402

run()
