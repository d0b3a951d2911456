"""Time ``rocmtui serve``'s first frame in a real headless Chromium: from opening the page to the app's first bytes
drawn (textual-serve marks the page ``-first-byte``), each tab a fresh app process.

    .venv/bin/python scripts/bench_serve.py [--tabs 5] [--app demo]

Needs Debian's chromium at /usr/bin/chromium and Playwright. One tab at a time, only against 127.0.0.1.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "serve"))
from browser import CHROMIUM, free_port, start_serve
from playwright.sync_api import sync_playwright


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tabs", type=int, default=5)
    parser.add_argument("--app", default="demo", choices=["demo", "monitor"])
    args = parser.parse_args()
    port = free_port()
    with tempfile.TemporaryDirectory() as shots:
        process, url = start_serve([args.app], port, Path(shots))
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
                times = []
                for _ in range(args.tabs):
                    page = browser.new_page(viewport={"width": 1600, "height": 1000})
                    t0 = time.perf_counter()
                    page.goto(url, wait_until="commit")  # the URL serve printed: its token included
                    page.wait_for_selector("body.-first-byte", state="attached", timeout=30_000)
                    times.append(time.perf_counter() - t0)
                    page.close()
                browser.close()
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)
    shown = ", ".join(f"{t:.2f}" for t in times)
    print(f"serve {args.app}: first frame in {statistics.median(times):.2f} s median over {args.tabs} tabs ({shown} s)")


if __name__ == "__main__":
    main()
