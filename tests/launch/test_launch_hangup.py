"""The trainer outlives its terminal: a real TUI in a real pty, the pty closed under it (as a dropped SSH
link does), the training going on, then stopped from outside with a checkpoint and nothing left running."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest
from processes import UiProcess, drain, first_epoch, pid_alive, start_in_pty, start_tui, trains_on, wait_until

from rocmtui.cli.main import main
from rocmtui.run.lock import is_locked
from rocmtui.run.status import read_status

pytestmark = pytest.mark.slow  # functional tier: real processes and a pty


@pytest.mark.parametrize(
    ("how", "expected"),
    [
        ("the terminal closes", 128 + signal.SIGHUP),
        ("SIGTERM to the UI", 128 + signal.SIGTERM),
        ("kill -9 of the UI", -signal.SIGKILL),
    ],
)
def test_losing_the_ui_leaves_the_run_training(
    how: str, expected: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    ui_pid, master = start_tui(runs)
    ui = UiProcess(ui_pid, master)
    try:
        run_dir, status = first_epoch(runs, master, "in the TUI")
        assert status.pid != ui_pid
        trainer_pid, epoch_then = status.pid, status.epoch
        assert os.getsid(trainer_pid) == trainer_pid  # a session of its own: the hangup cannot reach it
        if how == "SIGTERM to the UI":
            os.kill(ui_pid, signal.SIGTERM)
            wait_until(ui.exited, 60, "the UI to exit on SIGTERM")  # before the terminal closes: one signal
    finally:
        if how == "kill -9 of the UI":
            os.kill(ui_pid, signal.SIGKILL)  # no handler, no goodbye
        os.close(master)  # the terminal goes away: the kernel hangs up the UI's session
    if not ui.ended:
        _, wait_status = os.waitpid(ui_pid, 0)
        ui.ended.append(os.waitstatus_to_exitcode(wait_status))
    assert ui.ended == [expected]  # the UI left...

    trains_on(run_dir, epoch_then, "the UI left")  # ...and the run trained on
    assert is_locked(run_dir) and pid_alive(trainer_pid)

    assert main(["stop", str(run_dir)]) == 0
    assert "stopped at epoch" in capsys.readouterr().out
    stopped = read_status(run_dir)
    assert stopped is not None and stopped.state == "stopped"
    assert (run_dir / "checkpoint-last.pt").is_file()
    wait_until(lambda: not pid_alive(trainer_pid), 10, "the trainer to exit")

    assert main(["runs", "--runs-dir", str(runs), "--json"]) == 0
    [listed] = json.loads(capsys.readouterr().out)
    assert listed["state"] == "stopped"
    done = stopped.epoch
    argv = ["train", "cifar", "--resume", str(run_dir), "--epochs", str(done + 1), "--headless"]
    assert main(argv) == 0  # the folder the lost UI left is resumed in place
    final = read_status(run_dir)
    assert final is not None and final.state == "finished" and final.epoch == done + 1


def test_with_stop_on_hangup_closing_the_terminal_stops_the_run_with_a_checkpoint(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    ui_pid, master = start_tui(runs, "--stop-on-hangup")
    try:
        run_dir, status = first_epoch(runs, master, "in the TUI")
    finally:
        os.close(master)
    _, wait_status = os.waitpid(ui_pid, 0)
    assert os.waitstatus_to_exitcode(wait_status) == 128 + signal.SIGHUP
    wait_until(lambda: not pid_alive(status.pid), 60, "the trainer to stop")
    final = read_status(run_dir)
    assert final is not None and final.state == "stopped"
    assert (run_dir / "checkpoint-last.pt").is_file() and not is_locked(run_dir)


def test_a_headless_run_given_detach_trains_on_when_its_terminal_closes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    pid, master = start_tui(runs, "--headless", "--detach")
    try:
        run_dir, status = first_epoch(runs, master, "of the headless run")
    finally:
        os.close(master)  # its terminal goes away; its next lines have nowhere to go
    trains_on(run_dir, status.epoch + 1, "the terminal closed")
    assert is_locked(run_dir)
    assert main(["stop", str(run_dir)]) == 0
    assert "stopped at epoch" in capsys.readouterr().out
    _, wait_status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(wait_status) == 0  # stopped by the user, with a checkpoint
    final = read_status(run_dir)
    assert final is not None and final.state == "stopped" and (run_dir / "checkpoint-last.pt").is_file()


@pytest.mark.parametrize(
    ("how", "expected"),
    [("the terminal closes", 128 + signal.SIGHUP), ("SIGTERM to the watcher", 128 + signal.SIGTERM)],
)
def test_a_watcher_losing_its_terminal_leaves_the_run_training(
    how: str, expected: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``rocmtui watch`` of a live run, its SSH link lost or the watcher terminated: it goes, the run trains on."""
    runs = tmp_path / "runs"
    pid, master = start_tui(runs, "--headless", "--detach")
    try:
        run_dir, status = first_epoch(runs, master, "of the headless run")
        watcher, screen = start_in_pty("watch", str(run_dir))
        ui = UiProcess(watcher, screen)
        try:

            def drained_and_locked() -> bool:
                drain(screen)
                return is_locked(run_dir)

            wait_until(drained_and_locked, 30, "the watcher to draw")
            trains_on(run_dir, status.epoch + 1, "the watcher started")
            if how == "SIGTERM to the watcher":
                os.kill(watcher, signal.SIGTERM)
                wait_until(ui.exited, 60, "the watcher to exit on SIGTERM")
        finally:
            os.close(screen)  # the watcher's terminal hangs up
        if not ui.ended:
            _, wait_status = os.waitpid(watcher, 0)
            ui.ended.append(os.waitstatus_to_exitcode(wait_status))
        assert ui.ended == [expected]
        epoch_then = read_status(run_dir).epoch  # type: ignore[union-attr]
        trains_on(run_dir, epoch_then + 1, "the watcher's terminal closed")
        assert read_status(run_dir).state == "running"  # type: ignore[union-attr]
    finally:
        os.close(master)
    assert main(["stop", str(run_dir)]) == 0
    capsys.readouterr()
    os.waitpid(pid, 0)
