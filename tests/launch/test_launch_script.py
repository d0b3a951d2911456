"""``rocmtui run``: real scripts under the supervisor, tracked or not, ended by themselves or stopped."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from waiting import wait_for

from rocmtui.events import LogMessage, RunFailed, RunFinished, TrackStarted
from rocmtui.run.layout import run_dirs
from rocmtui.run.status import read_status
from rocmtui.run.stream import read_events

pytestmark = pytest.mark.slow  # functional tier: real processes

ROCMTUI = [sys.executable, "-m", "rocmtui"]


def script(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "job.py"
    path.write_text(textwrap.dedent(body))
    return path


def rocmtui_run(tmp_path: Path, *command: str) -> subprocess.CompletedProcess[str]:
    args = [*ROCMTUI, "run", "--runs-dir", str(tmp_path / "runs"), "--", *command]
    return subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)


def test_a_tracked_script_reports_through_the_supervisor(tmp_path: Path) -> None:
    job = script(
        tmp_path,
        """
        import rocmtui
        print("hello from the script")
        with rocmtui.track(config={"lr": 0.1}) as run:
            for step in range(1, 6):
                run.log(step=step, loss=1.0 / step)
            run.log_epoch(epoch=1, val_loss=0.3)
        """,
    )
    done = rocmtui_run(tmp_path, sys.executable, str(job))
    assert done.returncode == 0, done.stderr
    [run_dir] = run_dirs(tmp_path / "runs")
    assert "hello from the script" in done.stdout
    assert "hello from the script" in (run_dir / "output.log").read_text()
    events = read_events(run_dir)
    started = [e for e in events if isinstance(e, TrackStarted)]
    assert [s.name for s in started] == ["job", "job"] and started[1].params == {"lr": 0.1}
    assert isinstance(events[-1], RunFinished) and events[-1].epochs_completed == 1
    status = read_status(run_dir)
    assert status is not None and status.state == "finished"


def test_a_script_that_never_tracks_still_says_how_it_ended(tmp_path: Path) -> None:
    job = script(tmp_path, "import sys\nprint('no such data', file=sys.stderr)\nsys.exit(3)\n")
    done = rocmtui_run(tmp_path, sys.executable, str(job))
    assert done.returncode == 3
    [run_dir] = run_dirs(tmp_path / "runs")
    failed = read_events(run_dir)[-1]
    assert isinstance(failed, RunFailed) and failed.message == "the script exited with code 3: no such data"
    assert json.loads((run_dir / "summary.json").read_text())["event"] == "RunFailed"
    status = read_status(run_dir)
    assert status is not None and status.state == "failed"


@pytest.mark.parametrize("tracks", [True, False])
def test_rocmtui_stop_ends_a_script_tracked_or_not(tmp_path: Path, tracks: bool) -> None:
    body = (
        """
        import threading, rocmtui
        with rocmtui.track() as run:
            print("ready", flush=True)
            while not run.should_stop:
                run.log(loss=1.0)
                threading.Event().wait(0.01)
        """
        if tracks
        else """
        import threading
        print("ready", flush=True)
        threading.Event().wait()
        """
    )
    job = script(tmp_path, body)
    args = [*ROCMTUI, "run", "--runs-dir", str(tmp_path / "runs"), "--", sys.executable, str(job)]
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as viewer:
        wait_for(lambda: bool(run_dirs(tmp_path / "runs")), 60, "the run folder")
        [run_dir] = run_dirs(tmp_path / "runs")
        wait_for(
            lambda: "ready" in (run_dir / "output.log").read_text() if (run_dir / "output.log").exists() else False,
            60,
            "the script to be ready",
        )
        stop = subprocess.run(
            [*ROCMTUI, "stop", str(run_dir)], capture_output=True, text=True, timeout=120, check=False
        )
        assert stop.returncode == 0, stop.stdout + stop.stderr
        viewer.wait(timeout=60)
    final = read_events(run_dir)[-1]
    assert isinstance(final, RunFinished) and final.reason == ("stopped" if tracks else "interrupted")
    status = read_status(run_dir)
    assert status is not None and status.state == "stopped"
    assert not [e for e in read_events(run_dir) if isinstance(e, LogMessage) and e.level == "error"]


@pytest.mark.parametrize(
    ("command", "message"),
    [
        ([], "give the command to run after --, e.g. rocmtui run -- python train.py"),
        (["no-such-program-here"], "no-such-program-here: command not found"),
    ],
)
def test_bad_commands_are_one_line_and_exit_2(tmp_path: Path, command: list[str], message: str) -> None:
    done = rocmtui_run(tmp_path, *command)
    assert done.returncode == 2
    assert done.stderr.strip() == f"rocmtui run: error: {message}"
    assert not run_dirs(tmp_path / "runs")
