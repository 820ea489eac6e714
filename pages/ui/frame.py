"""The frame around every page: page config, session set-up, navigation, URL state, the page header.

``app.py`` calls :func:`run`. A page that Streamlit runs on its own (its legacy ``pages/``
mode, before any session has called ``st.navigation``, and AppTest on every rerun) calls it
too, through :func:`page_header`, so every page always runs inside the frame.
"""

from __future__ import annotations

import logging
import time

import streamlit as st

from explorer.lru import start_heap_trimmer
from explorer.models.local import offline
from pages.ui import url
from pages.ui.background import open_job_slot
from pages.ui.configs import DEFAULT_STRATEGIES, add_config
from pages.ui.flow import PageEnd
from pages.ui.nav import DEFAULT_PAGE, NAVIGATION
from pages.ui.safe import md
from pages.ui.sources import CLEANUP_FLAGS
from pages.ui.state import W, session

log = logging.getLogger(__name__)

#: Small layout adjustments: less empty space above the title, tighter metric labels; a question
#: or answer typed in Hebrew or Arabic reads right to left (each line in its first letter's
#: direction, as the text views); while Streamlit's "Press Enter to apply" shows in an input's
#: bottom-right corner, the text stops before it (it covered a right-to-left question's first
#: words, and a text area's last line).
FRAME_CSS = """<style>
[data-testid="stMain"] textarea,[data-testid="stMain"] input[type="text"]{unicode-bidi:plaintext;text-align:start}
[data-testid="stMain"] [data-testid="stTextInput"]:has([data-testid="InputInstructions"]) input{padding-right:7.5rem}
[data-testid="stMain"] [data-testid="stTextArea"]:has([data-testid="InputInstructions"]) textarea{padding-bottom:1.5rem;scroll-padding-bottom:1.5rem}
[data-testid="stMainBlockContainer"]{padding-top:2.2rem;padding-bottom:3rem}
[data-testid="stSidebarUserContent"]{padding-top:0.5rem}
[data-testid="stMetricValue"]{font-size:1.7rem}
.st-key-ce-wrap [data-testid="stHorizontalBlock"]{flex-wrap:wrap}
.st-key-ce-wrap [data-testid="stColumn"]{min-width:min(100%, 240px)}
</style>"""
#: The key of a container whose columns wrap, each at least 240 pixels wide (charts side by side
#: were cut at the window's edge in an 800-pixel window).
WRAP_KEY = "ce-wrap"


def run() -> None:
    offline()
    start_heap_trimmer()
    st.set_page_config(
        page_title="Chunk Explorer",
        page_icon="🧩",  # an emoji favicon is a local data: URL; a :material/ one loads from fonts.gstatic.com
        layout="wide",
        initial_sidebar_state="expanded",
    )
    init_session()
    page = st.navigation(navigation_pages())
    goto = session.take("goto")  # set by "Show in Explore" (callbacks cannot switch)
    if goto:
        st.switch_page(goto)
    st.html(FRAME_CSS)
    session.in_frame = True
    try:
        page.run()
    except PageEnd:
        pass  # the page ended early: the address is still written below
    finally:
        session.in_frame = False
        session.seeded_now.clear()
        url.sync()


def navigation_pages() -> list[st.Page]:
    """The navigation's pages, and a hidden ``/explore`` that switches to Explore.

    Explore is the default page, served at the app's root, so the address a visitor would
    type after ``/compare`` or ``/retrieve`` met Streamlit's "Page not found" dialog."""
    pages = {
        key: st.Page(file, title=title, icon=icon, default=key == DEFAULT_PAGE,
                     url_path=f"{key}-root" if key == DEFAULT_PAGE else None)
        for key, (file, title, icon) in NAVIGATION.items()
    }  # fmt: skip
    home = pages[DEFAULT_PAGE]
    alias = st.Page(
        lambda: st.switch_page(home), title=home.title, url_path=DEFAULT_PAGE, visibility="hidden"
    )
    return [*pages.values(), alias]


def init_session() -> None:
    """Once per session: the state the link holds, else every sample and two configurations."""
    if session.ready:
        return
    session.began = time.time()  # the visit's start: what was built before it is "cached" to it
    session.sources = []
    session.cleanup = {v[0]: False for v in CLEANUP_FLAGS.values()}
    session.configs = []
    session.next_cfg_id = 1
    session.questions = []
    session.model = ""
    session.backend = "auto"
    session.notices = []
    session.uploader_gen = 0
    session.sem_cfg = {"id": "sem", "strategy": "semantic", "params": {}}
    try:
        url.restore()
    except Exception:  # a link no check foresaw: open without the rest of it, not fail on every reload
        log.exception("could not restore the view from the link")
        session.notices.append("Part of the link could not be read: the view opens with what was read before it.")
    if not session.configs:
        for name in DEFAULT_STRATEGIES:
            add_config(name, {})
    if not session.active_cfg or not any(c["id"] == session.active_cfg for c in session.configs):
        session.active_cfg = session.configs[0]["id"]
    session.ready = True


def _require_frame() -> None:
    """Make sure this page runs inside the frame.

    Until some session has called ``st.navigation``, Streamlit serves ``pages/*.py`` as a
    legacy multipage app, so the first visitor of a deep link like ``/compare`` after a server
    start would run this page alone; AppTest does the same on every rerun. Then run the frame
    here (it resolves the same page and runs it inside), and stop this bare copy.
    """
    if session.in_frame:
        return
    run()
    st.stop()


def page_header(title: str, caption: str) -> None:
    """Every page starts here: inside the frame, its title and caption, the place of the
    background job's status bar, and what the link could not restore."""
    _require_frame()
    st.title(title, anchor=False)
    st.caption(caption)
    open_job_slot()
    notices()


def notices() -> None:
    """What the link could not restore, and a disk cache that stopped being written: shown on
    every page until dismissed. Shown once, they flashed by unseen where a page reruns at once
    (Retrieve, as the embedding of the loaded documents starts)."""
    from explorer.embedding.cache import get_cache
    from explorer.embedding.private import private_cache_enabled

    status = "" if private_cache_enabled() else get_cache().status  # none with a private cache
    if status and not session.cache_notice_said:
        session.cache_notice_said = True
        session.cache_notice = status[:1].upper() + status[1:] + "."
    if not session.notices and not session.cache_notice:
        return
    for msg in session.notices:  # they quote the link: inert for Markdown, whatever it holds
        st.warning(md(msg), icon=":material/link_off:")
    if session.cache_notice:
        st.info(md(session.cache_notice), icon=":material/database:")
    st.button("Dismiss", key=W.NOTICES_OK, icon=":material/close:", type="tertiary", on_click=_dismiss)


def _dismiss() -> None:
    session.notices = []
    session.cache_notice = ""
