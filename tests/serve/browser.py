"""A served rocmtui in a real headless Chromium (Debian's, driven by Playwright): start, wait, read the app's SVG.

Also imported by ``scripts/bench_serve.py`` (``CHROMIUM``, ``free_port``, ``start_serve``).
"""

from __future__ import annotations

import html
import os
import re
import select
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

CHROMIUM = Path("/usr/bin/chromium")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until(predicate: Callable[[], object], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.05)


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def start_serve(args: list[str], port: int, shots: Path) -> tuple[subprocess.Popen[bytes], str]:
    """``rocmtui serve --port PORT ARGS`` started in ``shots``, where the ``S`` key of a tab with no run folder of
    its own saves its screenshots; returns it, once it listens, with the page's URL (token included) that it
    printed at start. It runs the rocmtui this process imported, wherever it lies."""
    import rocmtui

    here = str(Path(rocmtui.__file__).resolve().parents[1])
    paths = [here, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    process = subprocess.Popen(
        [sys.executable, "-m", "rocmtui", "serve", "--port", str(port), *args],
        cwd=shots,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(paths)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    assert process.stderr is not None
    said = b""
    deadline = time.monotonic() + 30
    while b"?token=" not in said or not said.endswith(b"\n"):
        ready, _, _ = select.select([process.stderr], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(process.stderr.fileno(), 4096) if ready else b""
        if not chunk:
            process.kill()
            raise AssertionError(f"serve did not print its URL: {said.decode(errors='replace')}")
        said += chunk
    url = next(word for word in said.decode().split() if "?token=" in word)
    wait_until(lambda: answers(url), 30, "serve")
    return process, url


def svg_text(path: Path) -> str:
    """The text an app's SVG screenshot shows, one string (spaces as spaces)."""
    parts = re.findall(r"<text[^>]*>(.*?)</text>", path.read_text(encoding="utf-8"), flags=re.S)
    return "".join(html.unescape(re.sub(r"<[^>]+>", "", part)) for part in parts).replace("\xa0", " ")


def shoot(page: Any, shots: Path) -> str:
    """F9 (or ``S``) in the page: the app saves its SVG screenshot into ``shots``, as it would for a user; returns the
    text it shows."""
    before = set(shots.glob("screen-*.svg"))
    page.keyboard.press("F9")  # the S key's other key: a key right after Escape would reach the app as alt+key
    wait_until(lambda: set(shots.glob("screen-*.svg")) - before, 20, "a screenshot")
    (path,) = set(shots.glob("screen-*.svg")) - before
    return svg_text(path)


def showing(page: Any, shots: Path, wanted: str, timeout: float = 30) -> str:
    """Screenshots until one shows ``wanted``; returns its text."""
    seen: list[str] = []

    def shows_it() -> bool:
        seen.append(shoot(page, shots))
        return wanted in seen[-1]

    wait_until(shows_it, timeout, repr(wanted))
    return seen[-1]


def served_apps(serve_pid: int) -> list[int]:
    """The app processes (one a tab) that the serve of ``serve_pid`` started: each tab's shell leads a session of
    its own (so that its whole group can be ended with its tab), started by serve; the app is the process in that
    session running the entry (the shell's own command line names the entry too: it is left out)."""
    return [int(name) for name in os.listdir("/proc") if name.isdigit() and _is_served_app(int(name), serve_pid)]


def _is_served_app(pid: int, serve_pid: int) -> bool:
    try:
        leader = os.getsid(pid)
        started_by_serve = psutil.Process(leader).ppid() == serve_pid
        return started_by_serve and b"\0-m\0rocmtui.serve.tab_process\0" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, psutil.Error):
        return False
