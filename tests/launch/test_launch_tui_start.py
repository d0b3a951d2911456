"""The TUI's start: the trainer process is started before the CLI checks the data, so a data error found then
must end that trainer, and still be one line and exit code 2 before the UI takes the terminal."""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pytest
from processes import UiProcess, start_tui, wait_until

pytestmark = pytest.mark.slow  # functional tier: real processes and a pty


def trainers_for(runs: Path) -> list[psutil.Process]:
    """Live trainer processes started for ``runs`` (its path is in the settings on their command line)."""
    found = []
    for process in psutil.process_iter():
        try:
            cmdline = process.cmdline()
            ours = "rocmtui.launch.trainer_process" in cmdline and any(str(runs) in part for part in cmdline)
            if ours and process.status() != psutil.STATUS_ZOMBIE:
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def test_a_data_error_is_one_line_exit_2_and_leaves_no_trainer_running(tmp_path: Path) -> None:
    runs, empty = tmp_path / "runs", tmp_path / "no-data"
    empty.mkdir()
    ui_pid, master = start_tui(runs, "--data-dir", str(empty))
    ui = UiProcess(ui_pid, master)
    terminal, ended, exited = ui.terminal, ui.ended, ui.exited

    try:
        wait_until(exited, 60, "the CLI to exit")
        survivors = trainers_for(runs)  # at once: a trainer left alone would still be importing torch
        lines = [line for line in terminal.read().decode(errors="replace").splitlines() if line.strip()]
    finally:
        os.close(master)
    assert ended == [2]
    assert len(lines) == 1 and "has no cifar10 data in torchvision's layout" in lines[0], lines
    assert survivors == []
    assert not runs.exists() or not any(runs.iterdir())  # no run folder was made
