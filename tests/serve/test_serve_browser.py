"""``rocmtui serve`` in a real headless Chromium: the page loads, keys reach the app, the app shows the run.

The terminal draws to a canvas, so what the app shows is read from its own SVG screenshot: the ``S`` key, as a
user takes one (written on the server, in the folder serve was started in).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from browser import CHROMIUM, free_port, served_apps, showing, start_serve

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


@pytest.fixture
def serve_demo(tmp_path: Path):
    port = free_port()
    process, url = start_serve(["demo", "--speed", "50"], port, tmp_path)
    yield url, tmp_path, process.pid
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=30)


def test_the_demo_in_a_browser_takes_keys_and_shows_the_h200_run(browser, serve_demo) -> None:
    url, shots, _ = serve_demo
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    page.goto(url, wait_until="commit")
    page.wait_for_selector("body.-first-byte", state="attached", timeout=20_000)  # the app's first bytes drew
    # no click first: the page focuses the terminal itself
    text = showing(page, shots, "Result")  # the closing card of the replayed run
    assert "NVIDIA H200" in text
    assert "93.57%" in text
    page.keyboard.press("m")  # another key: the monitor
    monitor = showing(page, shots, "rocmtui monitor")
    assert "Result" not in monitor
    assert "GPU 0 · NVIDIA H200" in showing(page, shots, "GPU 0 · NVIDIA H200")  # the recorded NVML samples


def test_two_tabs_get_two_apps(browser, serve_demo) -> None:
    url, _, serve_pid = serve_demo
    pages = [browser.new_page() for _ in range(2)]
    for page in pages:
        page.goto(url, wait_until="commit")
    for page in pages:
        page.wait_for_selector("body.-first-byte", state="attached", timeout=20_000)
    assert len(served_apps(serve_pid)) >= 2
    for page in pages:
        page.close()


def test_the_page_asks_no_other_host(browser, serve_demo) -> None:
    url, _, _ = serve_demo
    page = browser.new_page()
    hosts: set[str] = set()
    page.on("request", lambda request: hosts.add(request.url.split("/")[2]))
    page.goto(url, wait_until="load")
    page.wait_for_selector("body.-first-byte", state="attached", timeout=20_000)
    assert hosts == {url.split("/")[2]}


def test_the_cursor_takes_keys_and_the_mouse_in_a_browser(browser, serve_demo) -> None:
    """The same events as in a terminal: the arrow keys show and move the cursor, ``x`` the axis, a click places it."""
    url, shots, _ = serve_demo
    page = browser.new_page(viewport={"width": 1600, "height": 1000})
    page.goto(url, wait_until="commit")
    page.wait_for_selector("body.-first-byte", state="attached", timeout=20_000)
    showing(page, shots, "Result")
    page.keyboard.press("ArrowLeft")  # shows it at the newest point, the titles give the values there
    assert "━loss " in showing(page, shots, "ep 10.00 step 490")
    page.keyboard.press("ArrowLeft")
    assert "ep 10.00 " not in showing(page, shots, "ep 9.")  # a column left
    page.keyboard.press("x")
    assert "epoch" not in showing(page, shots, "time since start").split("Result")[0]  # the x axis named anew
    page.keyboard.press("Escape")
    assert "━loss " not in showing(page, shots, "EMA 0.98")  # hidden: the legend again
    box = page.locator("canvas").first.bounding_box()
    assert box is not None
    page.mouse.click(box["x"] + box["width"] * 0.15, box["y"] + box["height"] * 0.3)  # on the loss plot
    assert "━loss " in showing(page, shots, "━loss ")
