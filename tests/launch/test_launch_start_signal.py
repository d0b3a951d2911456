"""SIGTERM at any moment of the train screen's start stops the trainer too: none is left training alone."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from processes import UiProcess, start_tui, wait_until
from test_launch_tui_start import trainers_for

pytestmark = pytest.mark.slow  # functional tier: real processes and a pty


@pytest.mark.parametrize("moment", ["trainer started", "folder held"])
def test_sigterm_during_the_start_leaves_no_trainer_running(tmp_path: Path, moment: str) -> None:
    runs = tmp_path / "runs"
    ui_pid, master = start_tui(runs, "--epochs", "1")
    ui = UiProcess(ui_pid, master)
    ended, exited = ui.ended, ui.exited

    try:
        if moment == "trainer started":
            wait_until(lambda: trainers_for(runs), 60, "the trainer to start")
        else:
            wait_until(lambda: runs.exists() and any(runs.iterdir()), 120, "the run folder")
        os.kill(ui_pid, signal.SIGTERM)
        wait_until(exited, 60, "the CLI to exit")
        wait_until(lambda: not trainers_for(runs), 60, "the trainer to stop")
    finally:
        if not ended:
            os.kill(ui_pid, signal.SIGKILL)
            os.waitpid(ui_pid, 0)
        for trainer in trainers_for(runs):
            trainer.kill()
        os.close(master)
    assert ended == [128 + signal.SIGTERM]
