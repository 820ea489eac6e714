"""End to end in a real browser: the app served by Streamlit, driven by Playwright + Chromium.

Uploads a multi-page PDF through the file chooser, moves a slider on Explore and checks the
number of highlighted chunks changes, asks a question on Retrieve (real model) and checks
every configuration shows results. Screenshots go to ``test-artifacts/``.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "test-artifacts"

pytestmark = [pytest.mark.browser, pytest.mark.model, pytest.mark.slow]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not installed (make browser)")
    pytest.importorskip("playwright")
    port = _free_port()
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "CHUNK_EXPLORER_CACHE": str(tmp_path_factory.mktemp("browser-cache")),
    }
    env.pop("CHUNK_EXPLORER_FAKE_EMBEDDER", None)
    log = open(tmp_path_factory.mktemp("log") / "streamlit.log", "w+")  # noqa: SIM115
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.port", str(port), "--server.address", "127.0.0.1"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/"
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            time.sleep(0.3)
    else:
        proc.kill()
        log.seek(0)
        pytest.fail("streamlit did not start: " + log.read()[-2000:])
    yield url
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture()
def page(server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"],
        )
        pg = browser.new_page(viewport={"width": 1500, "height": 1000})
        pg.set_default_timeout(120_000)
        yield pg
        browser.close()


def settle(pg, timeout: float = 300) -> None:
    """Wait until the script run is over and no element is still loading."""
    deadline = time.time() + timeout
    calm = 0
    time.sleep(0.5)
    while time.time() < deadline:
        busy = sum(
            pg.locator(f'[data-testid="{tid}"]').count() for tid in ("stStatusWidget", "stSkeleton", "stProgress")
        )
        calm = calm + 1 if not busy else 0
        if calm >= 4:
            return
        time.sleep(0.4)
    raise AssertionError("the app did not settle")


def nav(pg, title: str) -> None:
    pg.locator('[data-testid="stSidebarNav"] a', has_text=title).first.click()
    settle(pg)


def chunk_badges(pg) -> int:
    return pg.locator(".ce-text .ce-idx").count()


def make_pdf(path: Path) -> Path:
    fpdf = pytest.importorskip("fpdf")
    pdf = fpdf.FPDF()
    pdf.set_font("Helvetica", size=11)
    topics = ["intake screens", "coagulation", "filtration", "disinfection", "sludge handling"]
    for n, topic in enumerate(topics, 1):
        pdf.add_page()
        pdf.multi_cell(0, 6, f"{n}. {topic.title()}", new_x="LMARGIN", new_y="NEXT")
        body = (
            f"The {topic} stage is inspected every shift. Operators record readings in the log and "
            f"report any deviation to the superintendent before the end of the shift. "
        )
        pdf.multi_cell(0, 6, body * 12, new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))
    return path


def test_upload_explore_slider_and_retrieve(page, server, tmp_path):
    ARTIFACTS.mkdir(exist_ok=True)
    pg = page
    pg.goto(server)
    settle(pg)
    nav(pg, "Documents")
    pdf = make_pdf(tmp_path / "plant-report.pdf")
    with pg.expect_file_chooser() as chooser:
        pg.locator('[data-testid="stFileUploaderDropzone"] button').first.click()
    chooser.value.set_files(str(pdf))
    settle(pg)
    assert pg.get_by_text("plant-report.pdf").first.is_visible()
    pg.screenshot(path=str(ARTIFACTS / "browser-documents.png"))

    nav(pg, "Explore")
    assert "plant-report.pdf" in pg.locator('[data-testid="stMain"]').inner_text()
    before = chunk_badges(pg)
    assert before > 1
    slider = pg.locator('[data-testid="stSidebar"] [data-testid="stSlider"]').first
    track = slider.locator('[role="group"] > div').first.bounding_box()
    # click the track at ~12% of its width: chunk_size drops from 1,000 to about 500
    pg.mouse.click(track["x"] + track["width"] * 0.12, track["y"] + track["height"] / 2)
    settle(pg)
    after = chunk_badges(pg)
    assert after != before, (before, after)
    pg.screenshot(path=str(ARTIFACTS / "browser-explore.png"))

    nav(pg, "Retrieve")
    pg.get_by_label("Question").fill("When is a deviation reported?")
    pg.get_by_role("button", name="Search").click()
    settle(pg, timeout=600)
    configs = re.findall(r"\d+\. ", pg.locator('[data-testid="stSidebar"] [data-testid="stMultiSelect"]').inner_text())
    hits = pg.get_by_role("button", name="Show in Explore").count()
    assert len(configs) >= 2 and hits == 5 * len(configs), (configs, hits)
    pg.screenshot(path=str(ARTIFACTS / "browser-retrieve.png"), full_page=True)
