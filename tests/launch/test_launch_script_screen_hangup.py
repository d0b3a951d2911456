"""The screen of ``rocmtui run -- SCRIPT`` is a viewer: a real pty closed under it (a dropped SSH link), or a
SIGTERM sent to it, ends the screen and leaves the script's run writing; only ``rocmtui stop`` stops it."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from processes import UiProcess, start_in_pty, wait_until
from steady_run import COMMAND, first_steps, nothing_left, script_pid, steps_on

from rocmtui.cli.main import main
from rocmtui.run.lock import is_locked
from rocmtui.run.status import read_status

pytestmark = pytest.mark.slow  # functional tier: real processes and a pty


@pytest.mark.parametrize(
    ("how", "code"), [("the terminal closes", 128 + signal.SIGHUP), ("SIGTERM to the UI", 128 + signal.SIGTERM)]
)
def test_losing_the_run_screen_leaves_the_script_running(
    how: str, code: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    ui_pid, master = start_in_pty("run", "--runs-dir", str(runs), "--", *COMMAND)
    ui = UiProcess(ui_pid, master)
    try:
        run_dir, status = first_steps(runs, "on the run screen", ui.terminal.read)
        supervisor, script = status.pid, script_pid(run_dir)
        assert supervisor != ui_pid and os.getsid(supervisor) == supervisor  # out of the terminal's session
        if how == "SIGTERM to the UI":
            os.kill(ui_pid, signal.SIGTERM)
            wait_until(ui.exited, 60, "the UI to exit on SIGTERM")
    finally:
        os.close(master)  # the terminal goes away: the kernel hangs up the UI's session
    if not ui.ended:
        _, wait_status = os.waitpid(ui_pid, 0)
        ui.ended.append(os.waitstatus_to_exitcode(wait_status))
    assert ui.ended == [code]  # the UI left...

    step_then = read_status(run_dir).step  # type: ignore[union-attr]
    steps_on(run_dir, step_then, f"{how}")  # ...and the script's run went on writing
    assert is_locked(run_dir)

    assert main(["stop", str(run_dir)]) == 0
    assert "stopped at step" in capsys.readouterr().out
    stopped = read_status(run_dir)
    assert stopped is not None and stopped.state == "stopped" and stopped.step > step_then
    nothing_left([supervisor, script])
