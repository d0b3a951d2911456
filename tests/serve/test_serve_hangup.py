"""A ``serve watch`` tab is a viewer: the tab closed, its app process terminated or the server stopped, the
tracked run it watched keeps writing; only ``rocmtui stop`` stops it.

The run is ``steady_script.py`` under ``rocmtui run`` without a terminal (plain lines), as on a server."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from browser import CHROMIUM, free_port, served_apps, showing, start_serve, wait_until
from steady_run import COMMAND, first_steps, nothing_left, script_pid, steps_on

from rocmtui.cli.main import main
from rocmtui.run.lock import is_locked
from rocmtui.run.status import read_status
from rocmtui.serve.guarded_server import QUIT_GRACE_S

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


@pytest.fixture
def tracked_run(tmp_path: Path):
    """A live tracked run; yields its folder, then stops it if the test did not and reaps ``rocmtui run``."""
    runs = tmp_path / "runs"
    args = [sys.executable, "-m", "rocmtui", "run", "--runs-dir", str(runs), "--", *COMMAND]
    runner = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        run_dir, _ = first_steps(runs, "of the tracked run")
        yield run_dir, runner
    finally:
        if runner.poll() is None:
            os.killpg(runner.pid, signal.SIGKILL)
        runner.wait(timeout=30)


@pytest.mark.parametrize("how", ["the tab closes", "SIGTERM to the tab's app", "the server stops"])
def test_a_served_watcher_going_away_leaves_the_run_writing(
    how: str, browser, tracked_run, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir, runner = tracked_run
    shots = tmp_path / "shots"
    shots.mkdir()
    serve, url = start_serve(["watch", str(run_dir)], free_port(), shots)
    try:
        page = browser.new_page(viewport={"width": 1600, "height": 1000})
        page.goto(url, wait_until="commit")
        page.wait_for_selector("body.-first-byte", state="attached", timeout=20_000)
        showing(page, run_dir / "screens", "steady_script")  # the tab follows the run (its pictures: in its folder)
        [app] = served_apps(serve.pid)
        if how == "the tab closes":
            page.close()  # the websocket closes: the server asks the tab's app to quit
        elif how == "SIGTERM to the tab's app":
            os.kill(app, signal.SIGTERM)
        else:
            os.killpg(serve.pid, signal.SIGTERM)  # Ctrl-C's neighbour: the server and its tabs' apps
            asked = time.monotonic()
            serve.wait(timeout=30)
            # the open tab's socket closed at once, its app asked to quit: no wait for the browser's next message
            assert time.monotonic() - asked < QUIT_GRACE_S, "the server took its time to stop with a tab open"
        wait_until(lambda: app not in served_apps(serve.pid), 30, "the tab's app to exit")
    finally:
        if serve.poll() is None:
            os.killpg(serve.pid, signal.SIGTERM)
        serve.wait(timeout=30)

    step_then = read_status(run_dir).step  # type: ignore[union-attr]
    steps_on(run_dir, step_then, how)  # the run went on writing
    assert is_locked(run_dir) and runner.poll() is None

    supervisor, script = read_status(run_dir).pid, script_pid(run_dir)  # type: ignore[union-attr]
    assert main(["stop", str(run_dir)]) == 0
    assert "stopped at step" in capsys.readouterr().out
    stopped = read_status(run_dir)
    assert stopped is not None and stopped.state == "stopped" and stopped.step > step_then
    assert runner.wait(timeout=30) == 0  # the script's exit code: it ended as asked
    nothing_left([supervisor, script])
