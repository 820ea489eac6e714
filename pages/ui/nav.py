"""The pages ``st.navigation`` shows (by file, title and icon), and going to one from a callback."""

from __future__ import annotations

from pages.ui.state import session

#: Page key -> (file, title, icon), in the order of the navigation.
NAVIGATION = {
    "documents": ("pages/documents.py", "Documents", ":material/description:"),
    "explore": ("pages/explore.py", "Explore", ":material/view_agenda:"),
    "compare": ("pages/compare.py", "Compare", ":material/compare_arrows:"),
    "semantic": ("pages/semantic.py", "Semantic", ":material/timeline:"),
    "retrieve": ("pages/retrieve.py", "Retrieve", ":material/search:"),
    "evaluate": ("pages/evaluate.py", "Evaluate", ":material/analytics:"),
    "export": ("pages/export.py", "Export", ":material/download:"),
}
#: The page served at the app's root address.
DEFAULT_PAGE = "explore"
PAGES = {key: file for key, (file, _, _) in NAVIGATION.items()}


def go_to(page: str) -> None:
    """From a callback (which cannot switch pages): the frame switches to ``page`` next run."""
    session.goto = PAGES[page]
