"""Several users at once against one server: each sees only its own documents and settings.

One Streamlit server, one Chromium, one browser context per user (separate cookies, storage
and websocket: separate Streamlit sessions). The users act at the same time (asyncio, with a
barrier before each step): each uploads a different document (.txt, .md, .pdf) holding a
marker word of its own through the file chooser, opens Explore, moves the chunk-size slider
to a different place, and then every page each user sees must hold its own marker and never
another user's, with its own slider value. Meanwhile the server's health endpoint is polled:
it, and every step of every user, must answer within ``RESPONSIVE_S``.

The server uses the app's fake-embedder hook: nothing here embeds (structural strategies
only), and the point is isolation and responsiveness, not the model. Every new session must
also start from the same defaults: on a fresh server this test caught sessions whose first
run overlapped another's seeing a half-loaded strategy registry (``test_hostile_concurrency``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support import browser_util as bu
from tests.support.hostile_inputs import make_pdf

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: Longest any one step (a page load, an upload, a slider move) may take on this 2-core
#: machine with three users at once; measured steps are printed (pytest -s).
RESPONSIVE_S = 60.0


@dataclass
class User:
    name: str
    marker: str
    file: Path
    fraction: float  # where on the chunk-size slider this user clicks
    timings: dict[str, float] = field(default_factory=dict)
    chunks_before: int = 0
    size_before: str = ""
    seen: list[str] = field(default_factory=list)  # "document · strategy · size" captions
    chunks_after: int = 0
    size_after: str = ""


def _prose(marker: str, n: int) -> list[str]:
    return [
        f"Paragraph {i} of the {marker} file. The {marker} pump is inspected every shift, and the "
        f"operators log each {marker} reading before the superintendent signs the sheet."
        for i in range(n)
    ]


def make_users(tmp: Path) -> list[User]:
    txt = tmp / "quokka-notes.txt"
    txt.write_text("\n\n".join(_prose("Zyxquokka", 18)), encoding="utf-8")
    md = tmp / "narwhal-guide.md"
    md.write_text(
        "# Vexnarwhal guide\n\n"
        + "\n\n".join(f"## Part {i}\n\n{p}" for i, p in enumerate(_prose("Vexnarwhal", 18))),
        encoding="utf-8",
    )
    pdf = tmp / "axolotl-report.pdf"
    lines = [line[:95] for line in _prose("Plumaxolotl", 60)]
    pdf.write_bytes(make_pdf([lines[:30], lines[30:]]))
    return [
        User("txt", "Zyxquokka", txt, 0.06),
        User("md", "Vexnarwhal", md, 0.11),
        User("pdf", "Plumaxolotl", pdf, 0.17),
    ]


async def _timed(user: User, label: str, coro) -> float:
    t0 = time.monotonic()
    await coro
    user.timings[label] = time.monotonic() - t0
    return user.timings[label]


def _chunk_size_slider(page):
    return (
        page.locator('[data-testid="stSidebar"] [data-testid="stSlider"]').filter(has_text="Chunk size").first
    )


async def _slider_value(page) -> str:
    value = await _chunk_size_slider(page).locator('[data-testid="stSliderThumbValue"]').inner_text()
    assert value.strip(), "no value shown on the chunk-size slider"
    return value.strip()


async def _first_paint(page) -> None:
    """The app opens on Explore: wait for its title and its chunks, then for calm."""
    await bu.heading(page, "Explore").wait_for()
    await page.locator(".ce-text .ce-idx").first.wait_for()
    await bu.asettle(page)


async def _caption(page) -> str:
    """Explore's "document · configuration · N characters" line."""
    text = await bu.amain_text(page)
    return next((line for line in text.splitlines() if " · " in line and "characters" in line), "")


async def _badges(page) -> int:
    return await page.locator(".ce-text .ce-idx").count()


async def _assert_only_own(page, user: User, users: list[User], where: str) -> None:
    """Wait (bounded) for the user's own marker, let the page settle, then look for the others'."""
    own = page.locator('[data-testid="stMain"]').get_by_text(user.marker).first
    with contextlib.suppress(Exception):  # a timeout is reported below, with the page's text
        await own.wait_for(timeout=RESPONSIVE_S * 1000)
    await bu.asettle(page)
    main = await bu.amain_text(page)
    text = main + await page.locator('[data-testid="stSidebar"]').inner_text()
    if user.marker not in text:
        await page.screenshot(
            path=str(bu.ARTIFACTS / f"multisession-{user.name}-missing.png"), full_page=True
        )
    assert user.marker in text, f"{user.name} does not see its own document on {where}: {main[:1500]}"
    for other in users:
        if other is not user:
            assert other.marker not in text, f"{user.name} sees {other.name}'s document on {where}"
            assert other.file.name not in text, f"{user.name} sees {other.file.name} on {where}"


async def _session(browser, url: str, user: User, users: list[User], barrier: asyncio.Barrier) -> None:
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    page.set_default_timeout(300_000)
    dialogs: list[str] = []
    page.on("dialog", lambda d: dialogs.append(d.message))
    try:
        await barrier.wait()
        await _timed(user, "open", page.goto(url))
        await _timed(user, "first paint", _first_paint(page))
        user.seen.append(await _caption(page))
        await _timed(user, "documents", bu.anav(page, "Documents"))

        await barrier.wait()  # everyone uploads at once
        await _timed(user, "upload", bu.aupload(page, user.file))
        main = await bu.amain_text(page)
        assert user.file.name in main, f"{user.name}: its upload is not listed"
        for other in users:
            if other is not user:
                assert other.file.name not in main, f"{user.name} sees {other.file.name} on Documents"

        await barrier.wait()
        await _timed(user, "explore", bu.anav(page, "Explore"))
        await _assert_only_own(page, user, users, "Explore")
        user.seen.append(await _caption(page))
        user.chunks_before = await _badges(page)
        user.size_before = await _slider_value(page)
        await page.screenshot(path=str(bu.ARTIFACTS / f"multisession-{user.name}-before.png"))
        assert user.chunks_before > 1, f"{user.name}: {user.chunks_before} chunks"

        await barrier.wait()  # everyone moves a slider at once
        track = await _chunk_size_slider(page).locator('[role="group"] > div').first.bounding_box()
        assert track is not None
        await page.mouse.click(track["x"] + track["width"] * user.fraction, track["y"] + track["height"] / 2)
        await _timed(user, "slider", bu.asettle(page))
        user.chunks_after = await _badges(page)
        user.size_after = await _slider_value(page)
        if user.chunks_after <= user.chunks_before:
            await page.screenshot(path=str(bu.ARTIFACTS / f"multisession-{user.name}-after.png"))
        assert user.chunks_after > user.chunks_before, (
            f"{user.name}: {user.chunks_before} chunks at size {user.size_before}, "
            f"{user.chunks_after} at {user.size_after}; seen {user.seen}"
        )

        await barrier.wait()  # after everybody changed everything: still one's own view
        await _timed(user, "rerun", bu.anav(page, "Documents"))
        await _timed(user, "explore again", bu.anav(page, "Explore"))
        await _assert_only_own(page, user, users, "Explore after the others' changes")
        size = await _slider_value(page)
        assert size == user.size_after, f"{user.name}: chunk size {size}, set to {user.size_after}"
        assert await _badges(page) == user.chunks_after
        await _timed(user, "compare", bu.anav(page, "Compare"))
        await _assert_only_own(page, user, users, "Compare")
        await page.screenshot(path=str(bu.ARTIFACTS / f"multisession-{user.name}.png"))
        assert not dialogs, dialogs
    finally:
        await context.close()


async def _poll_health(url: str, stop: asyncio.Event, latencies: list[float]) -> None:
    def once() -> float:
        t0 = time.monotonic()
        with urllib.request.urlopen(url + "_stcore/health", timeout=RESPONSIVE_S) as r:
            assert r.status == 200
        return time.monotonic() - t0

    while not stop.is_set():
        latencies.append(await asyncio.to_thread(once))
        await asyncio.sleep(0.5)


async def _run(url: str, users: list[User]) -> list[float]:
    from playwright.async_api import async_playwright

    latencies: list[float] = []
    stop = asyncio.Event()
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=bu.CHROMIUM, args=bu.LAUNCH_ARGS)
        poller = asyncio.create_task(_poll_health(url, stop, latencies))
        try:
            barrier = asyncio.Barrier(len(users))
            await asyncio.gather(*(_session(browser, url, u, users, barrier) for u in users))
        finally:
            stop.set()
            await poller
            await browser.close()
    return latencies


def test_three_users_at_once_see_only_their_own_documents(tmp_path):
    bu.require_browser()
    bu.ARTIFACTS.mkdir(exist_ok=True)
    users = make_users(tmp_path)
    with bu.streamlit_server(tmp_path / "cache", fake_embedder=True) as server:
        t0 = time.monotonic()
        latencies = asyncio.run(_run(server.url, users))
        total = time.monotonic() - t0
        assert server.process.poll() is None, "the server died: " + server.log_tail()
        log = server.log_tail(20_000)
    report = [f"3 users in {total:.1f} s; health checks: {len(latencies)}, slowest {max(latencies):.2f} s"]
    for u in users:
        steps = ", ".join(f"{k} {v:.1f}s" for k, v in u.timings.items())
        report.append(f"{u.name}: {u.chunks_before}→{u.chunks_after} chunks (size {u.size_after}); {steps}")
        report.append(f"    seen: {u.seen}")
    print("\n".join(report))
    assert "Traceback" not in log, log
    assert max(latencies) < RESPONSIVE_S
    for u in users:
        slow = {k: round(v, 1) for k, v in u.timings.items() if v > RESPONSIVE_S}
        assert not slow, f"{u.name} waited over {RESPONSIVE_S:.0f} s: {slow}"
    assert len({u.size_after for u in users}) == len(users), "each user moved the slider to its own place"
    firsts = {u.seen[0] for u in users}
    assert len(firsts) == 1, f"new sessions started with different defaults: {firsts}"
