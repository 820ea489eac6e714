"""Shared helpers for real-browser tests: a Streamlit server on a free port, Chromium through
Playwright, waiting for the app to settle, navigation, uploads, and a watch on dialogs and
requests that leave the machine.

Import from tests as ``import browser_util as bu``. Every test that uses these should be marked
``@pytest.mark.browser``; :func:`require_browser` skips with the reason when Chromium or
Playwright is missing. Screenshots go to ``test-artifacts/`` (git-ignored) unless a test means
them for the README (``docs/screenshots/``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from explorer.models.local import model_cache_root

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "test-artifacts"
# README screenshots are refreshed only on request (UPDATE_SCREENSHOTS=1), so a test run
# leaves the tracked files alone; otherwise they go to test-artifacts/ with the others.
SCREENSHOTS = ROOT / ("docs/screenshots" if os.environ.get("UPDATE_SCREENSHOTS") else "test-artifacts")
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
#: Markers of a script run in progress (the "Running..." widget, skeletons, progress bars).
BUSY_TEST_IDS = ("stStatusWidget", "stSkeleton", "stProgress", "stSpinner")


def require_browser() -> None:
    """Skip (with the reason) where Chromium or Playwright is missing."""
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (Debian package chromium; `make browser`)")
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed (requirements-dev.txt)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    """A running ``streamlit run serve.py`` (as ``make run`` serves the app): its URL and its log."""

    url: str
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def healthy(self, timeout: float = 5.0) -> bool:
        try:
            with urllib.request.urlopen(self.url + "_stcore/health", timeout=timeout) as r:
                return r.status == 200
        except OSError:
            return False


@contextlib.contextmanager
def streamlit_server(
    cache_dir: str | Path | None = None,
    *,
    fake_embedder: bool = False,
    start_timeout: float = 120.0,
    env: dict[str, str] | None = None,
    entry: str = "serve.py",
) -> Iterator[Server]:
    """Start the app headless on a free port (offline, its own embedding cache, this process's
    derived models), wait for ``/_stcore/health``, yield, then stop it. ``fake_embedder`` sets
    the app's test hook ``CHUNK_EXPLORER_FAKE_EMBEDDER=1`` (no torch); ``entry``: the file
    ``streamlit run`` runs (``serve.py`` by default, as ``make run`` serves the app: the browser
    tests drive the server users get; ``app.py`` runs it without serve.py's redirect and warm-up)."""
    owned = None
    if cache_dir is None:
        owned = tempfile.TemporaryDirectory(prefix="ce-browser-")
        cache_dir = owned.name
    Path(cache_dir).mkdir(parents=True, exist_ok=True)
    port = free_port()
    full_env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "CHUNK_EXPLORER_CACHE": str(cache_dir),
        # the derived models this process uses (built once), not a rebuild under the new cache
        "CHUNK_EXPLORER_MODEL_CACHE": str(model_cache_root()),
        "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
        **(env or {}),
    }
    if fake_embedder:
        full_env["CHUNK_EXPLORER_FAKE_EMBEDDER"] = "1"
    else:
        full_env.pop("CHUNK_EXPLORER_FAKE_EMBEDDER", None)
    log_path = Path(cache_dir) / f"streamlit-{port}.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", entry, "--server.headless", "true",
             "--server.port", str(port), "--server.address", "127.0.0.1"],
            cwd=ROOT, env=full_env, stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
    server = Server(f"http://127.0.0.1:{port}/", port, proc, log_path)
    try:
        deadline = time.monotonic() + start_timeout
        while not server.healthy(timeout=2):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"streamlit did not start (exit {proc.poll()}): {server.log_tail()}")
            time.sleep(0.3)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(15)
        if owned is not None:
            owned.cleanup()


@contextlib.contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium (Debian's) driven by Playwright's sync API."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def is_local(url: str) -> bool:
    """Requests that stay on this machine (the app's own server, inline data)."""
    parsed = urlparse(url)
    if parsed.scheme in ("data", "blob", "about", "chrome", "chrome-extension"):
        return True
    return parsed.hostname in ("127.0.0.1", "localhost", "::1")


@dataclass
class Watch:
    """What a page did that it must not: dialogs (``alert``...) and requests off the machine."""

    dialogs: list[str] = field(default_factory=list)
    external: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)

    def attach(self, context: Any) -> Watch:
        """Watch every page of a Playwright browser context (also blocks external requests)."""

        def on_request(route: Any) -> None:
            url = route.request.url
            if is_local(url):
                route.continue_()
            else:
                self.external.append(url)
                route.abort()

        context.route("**/*", on_request)
        context.on("page", self._attach_page)
        for page in context.pages:
            self._attach_page(page)
        return self

    def _attach_page(self, page: Any) -> None:
        def on_dialog(dialog: Any) -> None:
            self.dialogs.append(f"{dialog.type}: {dialog.message}")
            dialog.dismiss()

        page.on("dialog", on_dialog)
        page.on("pageerror", lambda err: self.page_errors.append(str(err)))

    def assert_clean(self) -> None:
        assert not self.dialogs, f"a dialog fired: {self.dialogs}"
        assert not self.external, f"requests left the machine: {self.external[:10]}"


def new_page(
    browser: Any, width: int = 1500, height: int = 1000, timeout_ms: int = 120_000
) -> tuple[Any, Any]:
    """A fresh browser context (its own cookies and storage: a separate user) and its page."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(timeout_ms)
    return context, page


def busy(page: Any) -> int:
    return sum(page.locator(f'[data-testid="{tid}"]').count() for tid in BUSY_TEST_IDS)


def settle(page: Any, timeout: float = 300, calm_polls: int = 4, poll_s: float = 0.4) -> float:
    """Wait until no script run is in progress and nothing is loading; returns the seconds
    waited. Raises AssertionError past ``timeout`` (a frozen page)."""
    t0 = time.monotonic()
    deadline = t0 + timeout
    calm = 0
    time.sleep(0.5)
    while time.monotonic() < deadline:
        calm = calm + 1 if not busy(page) else 0
        if calm >= calm_polls:
            return time.monotonic() - t0
        time.sleep(poll_s)
    raise AssertionError(f"the app did not settle within {timeout:.0f} s")


def nav(page: Any, title: str, timeout: float = 300) -> float:
    """Click a page in the sidebar navigation, wait for its title, then for it to settle."""
    t0 = time.monotonic()
    page.locator('[data-testid="stSidebarNav"] a', has_text=title).first.click()
    heading(page, title).wait_for(timeout=timeout * 1000)
    settle(page, max(1.0, timeout - (time.monotonic() - t0)))
    return time.monotonic() - t0


def heading(page: Any, title: str) -> Any:
    """The page's title (every page of the app starts with ``st.title``)."""
    return page.locator('[data-testid="stMain"] h1').filter(has_text=title).first


def upload(page: Any, *paths: Path, timeout: float = 300) -> float:
    """Upload files through the Documents page's file chooser (the page must be open): its
    "Upload" button, or the "+" button once the uploader holds a file it refused (too big)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    for _ in range(4):  # a background job finishing reruns the page: a click can land mid-rerun
        try:
            with page.expect_file_chooser(timeout=20_000) as chooser:
                upload_button(page).click()
            break
        except PlaywrightTimeout:
            settle(page, timeout)
    else:
        raise AssertionError("the upload button never opened a file chooser")
    before = upload_cards(page).count()
    refused_before = refused(page).count()
    chooser.value.set_files([str(p) for p in paths])
    # the upload reaches the server a while after the chooser closes (its name shows in the
    # uploader at once, with a spinner): wait until the app has taken it, as a user would before
    # leaving the page (leaving earlier cancels the upload): the uploader is then a fresh, empty
    # one (or holds only the files it refused, over the size limit), then settle
    deadline = time.monotonic() + 120
    seen = False
    while time.monotonic() < deadline:
        now_refused = refused(page).count()
        pending = chips(page).count() - now_refused
        seen = seen or pending > 0
        if taken(seen, pending, now_refused - refused_before, len(paths)) or upload_cards(page).count() > before:
            break
        time.sleep(0.3)
    return settle(page, timeout)


def taken(seen: bool, pending: int, newly_refused: int, chosen: int) -> bool:
    """Whether the uploader is done with the files just chosen: those it sent have left it, or it
    refused every one of them (over the size limit: none is ever pending, so waiting for one to
    be seen would run to the deadline, two minutes)."""
    return pending == 0 and (seen or newly_refused >= chosen)


def upload_cards(page: Any) -> Any:
    """The Documents page's card of each uploaded file (its gray "upload · size" line)."""
    return page.locator('[data-testid="stMain"]').get_by_text(re.compile(r"^upload(?: · .*)?$"))


def chips(page: Any) -> Any:
    """The files the uploader holds (each a chip: uploading, or refused)."""
    return page.locator('[data-testid="stFileChip"]')


def refused(page: Any) -> Any:
    """Files the uploader refused (red chips: over the size limit, or a wrong type)."""
    return page.locator('[data-testid="stFileChipIconError"]')


UPLOAD_BUTTON = (
    '[data-testid="stFileUploaderDropzone"] button, [data-testid="stFileUploader"] button:has-text("add")'
)


def upload_button(page: Any) -> Any:
    return page.locator(UPLOAD_BUTTON).first


def main_text(page: Any) -> str:
    """What a reader sees in the main area: its text without the invisible word joiners that
    escaped messages carry (``pages.ui.safe.md``)."""
    return page.locator('[data-testid="stMain"]').inner_text().replace("\u2060", "")


def sidebar_text(page: Any) -> str:
    return page.locator('[data-testid="stSidebar"]').inner_text().replace("\u2060", "")


def screenshot(page: Any, name: str, *, full_page: bool = False, directory: Path = ARTIFACTS) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    page.screenshot(path=str(path), full_page=full_page)
    return path


# -- async variants (several users at once from one Chromium: one context each) ---------------


async def abusy(page: Any) -> int:
    total = 0
    for tid in BUSY_TEST_IDS:
        total += await page.locator(f'[data-testid="{tid}"]').count()
    return total


async def asettle(page: Any, timeout: float = 300, calm_polls: int = 4, poll_s: float = 0.4) -> float:
    """Async :func:`settle`."""
    import asyncio

    t0 = time.monotonic()
    deadline = t0 + timeout
    calm = 0
    await asyncio.sleep(0.5)
    while time.monotonic() < deadline:
        calm = calm + 1 if not await abusy(page) else 0
        if calm >= calm_polls:
            return time.monotonic() - t0
        await asyncio.sleep(poll_s)
    raise AssertionError(f"the app did not settle within {timeout:.0f} s")


async def anav(page: Any, title: str, timeout: float = 300) -> float:
    t0 = time.monotonic()
    await page.locator('[data-testid="stSidebarNav"] a', has_text=title).first.click()
    await heading(page, title).wait_for(timeout=timeout * 1000)
    await asettle(page, max(1.0, timeout - (time.monotonic() - t0)))
    return time.monotonic() - t0


async def aupload(page: Any, *paths: Path, timeout: float = 300) -> float:
    """:func:`upload`, async: waits for the app's card of each file, then settles."""
    async with page.expect_file_chooser() as chooser:
        await upload_button(page).click()
    before = await upload_cards(page).count()
    refused_before = await refused(page).count()
    await (await chooser.value).set_files([str(p) for p in paths])
    deadline = time.monotonic() + timeout
    seen = False
    while time.monotonic() < deadline:  # as in upload: until the app has taken the files
        now_refused = await refused(page).count()
        pending = await chips(page).count() - now_refused
        seen = seen or pending > 0
        if taken(seen, pending, now_refused - refused_before, len(paths)) or await upload_cards(page).count() > before:
            break
        await asyncio.sleep(0.3)
    return await asettle(page, timeout)


async def amain_text(page: Any) -> str:
    return await page.locator('[data-testid="stMain"]').inner_text()
