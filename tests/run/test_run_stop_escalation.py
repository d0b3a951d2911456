"""``rocmtui stop`` of a run that does not stop at a step: SIGTERM after ``--grace``, then SIGKILL; only to the
process the kernel says holds the folder's lock (never a pid a file in the folder names)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from msgspec.structs import replace

from rocmtui.cli import run_commands
from rocmtui.cli.main import main
from rocmtui.run.lock import is_locked, lock_holders
from rocmtui.run.status import read_status, write_status

WRITER = """
import signal, sys, time
from pathlib import Path
from rocmtui.events import RunControl
from rocmtui.run.session import RunSession
if sys.argv[2] == "deaf":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
session = RunSession(Path(sys.argv[1]), RunControl(), name="frozen")  # a control channel it never obeys
print("ready", flush=True)
signal.pause() if sys.argv[2] == "deaf" else time.sleep(600)
"""


def _writer(run_dir: Path, mode: str) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(run_dir), mode], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    assert child.stdout is not None and child.stdout.readline() == "ready\n"
    return child


@pytest.mark.slow
def test_a_run_deaf_to_stop_and_sigterm_is_killed_after_the_grace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(run_commands, "KILL_AFTER_TERM_S", 0.5)
    run_dir = tmp_path / "runs" / "20261207-010000-frozen"
    run_dir.mkdir(parents=True)
    child = _writer(run_dir, "deaf")
    try:
        assert lock_holders(run_dir) == {child.pid}
        assert main(["stop", str(run_dir), "--grace", "0.3"]) == 1
        assert child.wait(timeout=30) == -signal.SIGKILL
    finally:
        child.kill()
        child.wait()
    out, err = capsys.readouterr()
    assert f"did not stop within 0.3 s: sending SIGTERM to process {child.pid}" in err
    assert f"still held 0.5 s after SIGTERM: sending SIGKILL to process {child.pid}" in err
    assert "killed" in out and not is_locked(run_dir)


@pytest.mark.slow
def test_a_run_that_ends_on_sigterm_is_not_killed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = tmp_path / "runs" / "20261207-010000-slow"
    run_dir.mkdir(parents=True)
    child = _writer(run_dir, "sleeping")
    try:
        main(["stop", str(run_dir), "--grace", "0.2"])
        assert child.wait(timeout=30) == -signal.SIGTERM
    finally:
        child.kill()
        child.wait()
    assert "SIGKILL" not in capsys.readouterr().err


@pytest.mark.slow
def test_a_pid_planted_in_the_status_is_never_signalled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(run_commands, "KILL_AFTER_TERM_S", 0.3)
    run_dir = tmp_path / "runs" / "20261207-010000-planted"
    run_dir.mkdir(parents=True)
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    child = _writer(run_dir, "deaf")
    try:
        status = read_status(run_dir)
        assert status is not None
        write_status(run_dir, replace(status, pid=bystander.pid, state="running"), durable=True)
        (run_dir / "run.lock").write_text(f"process {bystander.pid} on here\n")
        main(["stop", str(run_dir), "--grace", "0.2"])
        assert child.wait(timeout=30) == -signal.SIGKILL
        assert bystander.poll() is None  # untouched
    finally:
        for process in (child, bystander):
            process.kill()
            process.wait()


def test_grace_is_checked_at_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    for bad, says in (("-1", "out of range"), ("nan", "out of range"), ("soon", "not a number")):
        with pytest.raises(SystemExit) as exit_:
            main(["stop", "x", "--grace", bad])
        assert exit_.value.code == 2
        assert says in capsys.readouterr().err


def test_no_lock_no_holders(tmp_path: Path) -> None:
    assert lock_holders(tmp_path) == set()
    os.mkfifo(tmp_path / "run.lock")
    assert lock_holders(tmp_path) == set()  # a FIFO planted as the lock: refused, never waited on
