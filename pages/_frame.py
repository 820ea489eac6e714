"""The frame around every page: page config, session set-up, navigation, URL state.

``app.py`` calls :func:`run`. A page that Streamlit runs on its own (its legacy ``pages/``
mode, before any session has called ``st.navigation``, and AppTest on every rerun) calls it
too, through :func:`pages._common.require_frame`, so every page always runs inside the frame.
"""

from __future__ import annotations

import streamlit as st

from explorer.models.paths import offline
from pages import _common as common

TITLES = {
    "documents": ("Documents", ":material/description:"),
    "explore": ("Explore", ":material/view_agenda:"),
    "compare": ("Compare", ":material/compare_arrows:"),
    "semantic": ("Semantic", ":material/timeline:"),
    "retrieve": ("Retrieve", ":material/search:"),
    "evaluate": ("Evaluate", ":material/analytics:"),
    "export": ("Export", ":material/download:"),
}
#: Small layout adjustments: less empty space above the title, tighter metric labels.
FRAME_CSS = """<style>
[data-testid="stMainBlockContainer"]{padding-top:2.2rem;padding-bottom:3rem}
[data-testid="stSidebarUserContent"]{padding-top:0.5rem}
[data-testid="stMetricValue"]{font-size:1.7rem}
</style>"""


def run() -> None:
    offline()
    st.set_page_config(
        page_title="Chunk Explorer",
        page_icon="🧩",  # an emoji favicon is a local data: URL; a :material/ one loads from fonts.gstatic.com
        layout="wide",
        initial_sidebar_state="expanded",
    )
    common.init_session()
    pages = [
        st.Page(common.PAGES[key], title=title, icon=icon, default=key == "explore")
        for key, (title, icon) in TITLES.items()
    ]
    page = st.navigation(pages)
    goto = st.session_state.pop("goto", None)  # set by "Show in Explore" (callbacks cannot switch)
    if goto:
        st.switch_page(goto)
    st.html(FRAME_CSS)
    st.session_state._in_frame = True
    try:
        page.run()
    finally:
        st.session_state._in_frame = False
        common.sync_url()
