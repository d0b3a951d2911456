"""A writer that holds its run but no longer beats (SIGSTOP, a freeze) reads "stalled": in ``runs``, the
exporter's state, ``watch`` (its progress line and log), never "training" for ever."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from msgspec.structs import replace
from waiting import wait_for

from rocmtui.cli.main import main
from rocmtui.events import LogMessage, MetricsLogged, RunControl, TrainEvent, WriterStalled
from rocmtui.run import status as run_status
from rocmtui.run.follow import follow
from rocmtui.run.lock import RunLock
from rocmtui.run.session import RunSession
from rocmtui.run.status import STALE_S, effective, read_status, write_status
from rocmtui.ui.state.run_state import RunState
from rocmtui.ui.widgets.run_progress import progress_lines


def _held_run(tmp_path: Path, heartbeat_age_s: float) -> tuple[Path, RunLock]:
    """A run whose writer (this test) holds the lock and last beat ``heartbeat_age_s`` ago."""
    run_dir = tmp_path / "runs" / "20261207-020000-frozen"
    run_dir.mkdir(parents=True)
    session = RunSession(run_dir, RunControl(), name="frozen")
    session.emit(MetricsLogged(5, {"loss": 1.0}, 1.0, count=5, steps=(1, 2, 3, 4, 5)))
    status = read_status(run_dir)
    session.close()  # its thread no longer beats; the lock is taken again below, as a frozen writer holds it
    assert status is not None
    lock = RunLock.acquire(run_dir)
    write_status(run_dir, replace(status, state="running", heartbeat=time.time() - heartbeat_age_s), durable=True)
    return run_dir, lock


def test_a_held_run_whose_heartbeat_is_stale_reads_stalled_and_a_fresh_one_running(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir, lock = _held_run(tmp_path, STALE_S + 30)
    try:
        status = read_status(run_dir)
        assert status is not None and effective(run_dir, status).state == "stalled"
        assert main(["runs", "--json", "--runs-dir", str(run_dir.parent)]) == 0
        assert [run["state"] for run in json.loads(capsys.readouterr().out)] == ["stalled"]
        write_status(run_dir, replace(status, heartbeat=time.time()), durable=True)
        assert effective(run_dir, status).state == "stalled"
        assert effective(run_dir, replace(status, heartbeat=time.time())).state == "running"
    finally:
        lock.release()
    status = read_status(run_dir)
    assert status is not None and effective(run_dir, status).state == "lost"  # let go: gone, not stalled


def test_watch_tells_a_stall_and_its_end_and_the_progress_line_says_stalled(tmp_path: Path) -> None:
    run_dir, lock = _held_run(tmp_path, STALE_S + 30)
    seen: list[TrainEvent] = []
    control = RunControl()
    follower = threading.Thread(target=follow, args=(run_dir, seen.append, control), kwargs={"poll_s": 0.01})
    follower.start()
    try:
        wait_for(lambda: any(isinstance(e, WriterStalled) for e in seen), what="the stall told")
        status = read_status(run_dir)
        assert status is not None
        write_status(run_dir, replace(status, heartbeat=time.time()), durable=True)  # it beats again
        wait_for(lambda: sum(isinstance(e, WriterStalled) for e in seen) == 2, what="the recovery told")
    finally:
        control.leave.set()
        follower.join()
        lock.release()
    stalls = [e for e in seen if isinstance(e, WriterStalled)]
    assert [s.stalled for s in stalls] == [True, False] and stalls[0].heartbeat_age_s >= STALE_S
    notes = [e.message for e in seen if isinstance(e, LogMessage)]
    assert any(n.startswith("stalled: process ") for n in notes) and "the writer beats again" in notes
    state = RunState()
    for event in [e for e in seen if not isinstance(e, WriterStalled)] + [stalls[0]]:
        state.apply(event)
    line = " ".join(progress_lines(state, 100))
    assert "stalled" in line and "training" not in line and "- steps/s" in line
    state.apply(stalls[1])
    assert "stalled" not in " ".join(progress_lines(state, 100))


SCRIPT = """
import rocmtui, sys
with rocmtui.track("frozen", runs_dir=sys.argv[1]) as run:
    step = 0
    while not run.should_stop:
        step += 1
        run.log(step, loss=1.0 / step)
"""


@pytest.mark.slow
def test_a_real_writer_stopped_with_sigstop_reads_stalled_then_running_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(run_status, "STALE_S", 1.0)  # the reader's bound; the writer beats every 2 s as ever
    runs = tmp_path / "runs"
    child = subprocess.Popen([sys.executable, "-c", SCRIPT, str(runs)])
    try:

        def state() -> str | None:
            folders = list(runs.glob("*")) if runs.is_dir() else []
            status = read_status(folders[0]) if folders else None
            return None if status is None else effective(folders[0], status).state

        wait_for(lambda: state() == "running", timeout=60, what="the script running")
        os.kill(child.pid, signal.SIGSTOP)
        wait_for(lambda: state() == "stalled", timeout=30, what="a stall seen")
        os.kill(child.pid, signal.SIGCONT)
        wait_for(lambda: state() == "running", timeout=30, what="the beat back")
    finally:
        os.kill(child.pid, signal.SIGCONT)
        child.kill()
        child.wait()
