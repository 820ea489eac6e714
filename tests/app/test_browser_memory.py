"""A shared server holds under three big uploads at once, and gives memory back after them.

Issue 12: one 19 MB upload took a server from 2.1 to 5.4 GB, three to 9.4 GB, and nothing was
given back when the browsers closed. Three browser sessions here upload ~15 MB texts of ordinary
sentences at the same time and open Explore (chunks, token counts, flags, the highlighted text);
the server's RSS is sampled throughout. Budgets (the server's RSS, real default model loaded
for token counts; measured on this 2-core machine at 1.1–3.2 GB peak, 0.85–2.0 GB after):

- peak under ``PEAK_MB``: the shared caches are bounded by bytes (explorer.limits), one tokenizer
  per model file is shared, uploads are not embedded in the background above
  ``limits.WARM_MAX_CHARS``;
- after every browser closed, RSS falls back under ``END_MB``: what stays is the byte-bounded
  caches, not one copy per session.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support import browser_util as bu

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    # Skipped under CI: its peak varies from 1.1 to 3.4 GB across runs here against a 3.5 GB
    # budget, too close for a shared CI machine. (It also used to flake: a session left
    # Documents while its 15 MB file was still uploading, which cancels the upload, and then
    # found no such document on Explore; the upload helpers now wait for the file's card.)
    pytest.mark.skipif(
        bool(os.environ.get("CI")), reason="peak memory too close to its budget on shared CI machines"
    ),
]

PEAK_MB = 3500
END_MB = 2600
SESSIONS = 3
MB = 15


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def big_text(path: Path, marker: str) -> Path:
    sentence = (
        f"The {marker} committee reviewed the quarterly figures and asked the operators to log "
        "every reading before the end of the shift. "
    )
    paragraph = sentence * 6 + "\n\n"
    path.write_text(f"{marker} report\n\n" + paragraph * (MB * 1_000_000 // len(paragraph)), encoding="utf-8")
    return path


async def session(browser, url: str, path: Path, marker: str) -> None:
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    page.set_default_timeout(600_000)
    t0 = time.monotonic()

    def step(what: str) -> None:
        print(f"{marker}: {what} at {time.monotonic() - t0:.0f} s", flush=True)

    try:
        await page.goto(url)
        await bu.asettle(page, timeout=600)
        await bu.anav(page, "Documents", timeout=600)
        step("open")
        await bu.aupload(page, path, timeout=600)
        await page.locator('[data-testid="stMain"]').get_by_text(path.name).first.wait_for()
        step("uploaded")
        await bu.anav(page, "Explore", timeout=600)
        main = page.locator('[data-testid="stMain"]')
        if not await main.get_by_text(path.name).count():  # not the upload: pick it in the sidebar
            box = page.locator('[data-testid="stSidebar"] [data-testid="stSelectbox"]').filter(
                has_text="Document"
            )
            await box.first.click()
            await page.get_by_role("option").filter(has_text=path.name).first.click()
            await bu.asettle(page, timeout=600)
        await main.get_by_text(path.name).first.wait_for()
        await main.get_by_text(marker).first.wait_for()  # and its text is drawn
        await page.locator(".ce-text .ce-idx").first.wait_for()
        step("chunks shown")
    finally:
        await context.close()


async def sample(pid: int, out: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        out.append(rss_mb(pid))
        await asyncio.sleep(0.5)


async def run(url: str, pid: int, files: list[tuple[Path, str]]) -> list[float]:
    from playwright.async_api import async_playwright

    seen: list[float] = []
    stop = asyncio.Event()
    sampler = asyncio.create_task(sample(pid, seen, stop))
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=bu.CHROMIUM, args=bu.LAUNCH_ARGS)
        try:
            await asyncio.gather(*(session(browser, url, f, m) for f, m in files))
        finally:
            await browser.close()
    stop.set()
    await sampler
    return seen


def test_three_big_uploads_stay_under_budget_and_memory_comes_back(tmp_path):
    bu.require_browser()
    # the derived models exist before the server starts: a first build (its own process) or a
    # fallback to torch while it runs would be measured instead of the documents
    subprocess.run([sys.executable, "-m", "explorer", "models", "--build"], check=True, capture_output=True)
    files = [(big_text(tmp_path / f"big-{i}.txt", f"Zorblax{i}q"), f"Zorblax{i}q") for i in range(SESSIONS)]
    with bu.streamlit_server(tmp_path / "cache") as server:
        pid = server.process.pid
        start = rss_mb(pid)
        seen = asyncio.run(run(server.url, pid, files))
        time.sleep(75)  # sessions are dropped 20 s after their websockets close; the trimmer runs every 30 s
        end = rss_mb(pid)
    peak = max(seen)
    print(f"server RSS MB: start {start:.0f}, peak {peak:.0f}, end {end:.0f}")
    assert peak < PEAK_MB, f"peak {peak:.0f} MB (start {start:.0f}, end {end:.0f})"
    assert end < END_MB and end < peak, f"end {end:.0f} MB (peak {peak:.0f} MB)"
