"""Load on one server: 8 users at once, then a new visitor, measured in a real browser.

Bounded (a few minutes, localhost only). One ``streamlit run app.py`` with the real default
model, one headless Chromium, one browser context per user. Every user at the same time:

1. opens the app (first paint = Explore's heading and chunks shown, then calm);
2. uploads a text of its own (~``--kb`` KB of prose with a marker word, so no two users share
   a cache entry);
3. moves the chunk-size slider on Explore;
4. asks two questions on Retrieve (embedding its chunks: the heavy step).

While the users are embedding, a new visitor opens the app: its first paint is the figure
issue 12 asks for. The server's RSS is sampled throughout (start, peak, and end: a while after
every context has closed). Prints per-step p50/p95, the new visitor's first paint, RSS and
errors. Nothing is asserted: performance is reported, never tested.

Run: .venv/bin/python bench/bench_load.py [--users 8] [--kb 60] [--settle-end 30]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from common import chroma_text

from tests.support import browser_util as bu

QUESTIONS = ("How did the committee report the results?", "What was decided about the budget?")


@dataclass
class Run:
    steps: dict[str, list[float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    rss_mb: list[float] = field(default_factory=list)

    def add(self, step: str, seconds: float) -> None:
        self.steps.setdefault(step, []).append(seconds)


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def sample_rss(pid: int, run: Run, stop: asyncio.Event) -> None:
    while not stop.is_set():
        run.rss_mb.append(rss_mb(pid))
        await asyncio.sleep(0.5)


def user_file(tmp: Path, i: int, kb: int) -> Path:
    marker = f"Marker{i:02d}x"
    base = chroma_text(kb * 1000 + 50_000 * i)[50_000 * i :]
    text = f"{marker} report.\n\n" + base.replace("\n\n", f"\n\n{marker}: ", 40)
    path = tmp / f"user-{i:02d}.txt"
    path.write_text(text, encoding="utf-8")
    return path


T0 = time.monotonic()


async def timed(run: Run, step: str, coro, who: str = "") -> None:
    t0 = time.monotonic()
    await coro
    run.add(step, time.monotonic() - t0)
    # progress as it happens, so a run stopped early still says how far it got
    print(f"[{time.monotonic() - T0:6.0f} s] {who} {step}: {time.monotonic() - t0:.1f} s", flush=True)


async def first_paint(page) -> None:
    """Explore's heading and its highlighted chunks are on screen (background embedding may
    still be showing its progress bar: that is not part of the first paint)."""
    await bu.heading(page, "Explore").wait_for()
    await page.locator(".ce-text .ce-idx").first.wait_for()


async def open_app(page, url: str) -> None:
    await page.goto(url)
    await first_paint(page)


async def calm(page, timeout: float = 900) -> None:
    """No script run, skeleton or spinner on the page for a moment. A background job's progress
    bar (the user's documents being embedded, polled by a small fragment) does not count: the
    step is done when the page has redrawn, not when the embedding ends."""
    deadline = time.monotonic() + timeout
    quiet = 0
    await asyncio.sleep(0.3)
    while time.monotonic() < deadline:
        n = 0
        for tid in ("stSkeleton", "stSpinner"):
            n += await page.locator(f'[data-testid="{tid}"]').count()
        running = await page.locator('[data-testid="stStatusWidget"]').count()
        quiet = quiet + 1 if not (n or running) else 0
        if quiet >= 2:
            return
        await asyncio.sleep(0.3)
    raise TimeoutError(f"the page did not calm down within {timeout:.0f} s")


async def go(page, title: str) -> None:
    await page.locator('[data-testid="stSidebarNav"] a', has_text=title).first.click()
    await bu.heading(page, title).wait_for()
    await calm(page)


async def move_slider(page) -> None:
    slider = page.locator('[data-testid="stSidebar"] [data-testid="stSlider"]').filter(has_text="Chunk size")
    track = await slider.first.locator('[role="group"] > div').first.bounding_box()
    await page.mouse.click(track["x"] + track["width"] * 0.2, track["y"] + track["height"] / 2)
    await calm(page)


async def ask(page, question: str) -> None:
    box = page.get_by_label("Question", exact=True)
    await box.fill(question)
    await box.press("Enter")
    await bu.asettle(page, timeout=900)


async def user(browser, url: str, path: Path, run: Run, barrier: asyncio.Barrier, busy: asyncio.Event):
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    page.set_default_timeout(900_000)
    try:
        await barrier.wait()
        await timed(run, "open + first paint", open_app(page, url), path.stem)
        await bu.anav(page, "Documents")
        await barrier.wait()
        await timed(run, "upload", bu.aupload(page, path, timeout=900), path.stem)
        await go(page, "Explore")
        await page.locator(".ce-text .ce-idx").first.wait_for()
        await timed(run, "slider", move_slider(page), path.stem)
        await go(page, "Retrieve")
        busy.set()  # this user's documents are being embedded now: the newcomer comes in
        for q in QUESTIONS:  # the first one waits for the user's documents to be embedded
            await timed(run, "question", ask(page, q), path.stem)
    except Exception as err:  # reported, not raised: one failing user must not hide the others
        run.errors.append(f"{path.name}: {type(err).__name__}: {str(err)[:200]}")
    finally:
        await context.close()


async def newcomer(browser, url: str, run: Run, busy: asyncio.Event) -> None:
    await busy.wait()
    await asyncio.sleep(5)  # the users are embedding now
    context = await browser.new_context(viewport={"width": 1400, "height": 1000})
    page = await context.new_page()
    page.set_default_timeout(300_000)  # measured, not cut off
    try:
        await timed(run, "new visitor first paint", open_app(page, url), "new visitor")
    except Exception as err:
        run.errors.append(f"new visitor: {type(err).__name__}: {str(err)[:200]}")
    finally:
        await context.close()


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))]


async def main_async(args) -> Run:
    from playwright.async_api import async_playwright

    run = Run()
    with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp, bu.streamlit_server(tmp) as server:
        files = [user_file(Path(tmp), i, args.kb) for i in range(args.users)]
        stop = asyncio.Event()
        sampler = asyncio.create_task(sample_rss(server.process.pid, run, stop))
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=bu.CHROMIUM, args=bu.LAUNCH_ARGS)
            barrier, busy = asyncio.Barrier(args.users), asyncio.Event()
            await asyncio.gather(
                *(user(browser, server.url, f, run, barrier, busy) for f in files),
                newcomer(browser, server.url, run, busy),
            )
            await browser.close()
        peak = max(run.rss_mb)
        await asyncio.sleep(args.settle_end)
        stop.set()
        await sampler
        print(f"RSS MB: start {run.rss_mb[0]:.0f}, peak {peak:.0f}, end {run.rss_mb[-1]:.0f} "
              f"({args.settle_end} s after every browser closed)")  # fmt: skip
    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--users", type=int, default=8)
    ap.add_argument("--kb", type=int, default=60, help="KB of text each user uploads")
    ap.add_argument("--settle-end", type=int, default=30, help="seconds to wait before the end RSS")
    args = ap.parse_args()
    t0 = time.monotonic()
    run = asyncio.run(main_async(args))
    print(f"{args.users} users, {args.kb} KB each, {time.monotonic() - t0:.0f} s in all, "
          f"load {os.getloadavg()[0]:.1f} at the end")  # fmt: skip
    print(f"{'step':28} {'n':>3} {'p50 s':>7} {'p95 s':>7}")
    for step, xs in run.steps.items():
        print(f"{step:28} {len(xs):>3} {statistics.median(xs):7.1f} {pct(xs, 0.95):7.1f}")
    print(f"errors: {len(run.errors)}")
    for e in run.errors:
        print("  " + e)


if __name__ == "__main__":
    main()
