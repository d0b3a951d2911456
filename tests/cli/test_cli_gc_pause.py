"""The collector paused while a command starts: each path resumes it once its start is over."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

from rocmtui.base import startup_gc
from rocmtui.config import MonitorConfig
from rocmtui.gpu.replay import ManualReplay
from rocmtui.ui.app import create_monitor_app


def collector_after(code: str) -> str:
    """``code`` run after ``import rocmtui.entry`` (the console script's first import), in a fresh interpreter;
    prints whether the collector is on at the end."""
    program = f"import gc, rocmtui.entry\nprint('paused' if not gc.isenabled() else 'on', end=' ')\n{code}\n"
    program += "print('on' if gc.isenabled() else 'paused')"
    return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True).stdout.strip()


def test_the_entry_point_pauses_and_a_plain_command_resumes_at_once(tmp_path: Path) -> None:
    code = f"from rocmtui.cli.main import main; main(['runs', '--runs-dir', {str(tmp_path)!r}])"
    said = collector_after(code).split()  # the command's own output between the two words
    assert (said[0], said[-1]) == ("paused", "on")


def test_the_monitor_without_a_terminal_resumes_before_it_streams() -> None:
    code = "from rocmtui.cli.main import main; main(['monitor', '--json', '--count', '1', '--backend', 'host'])"
    assert collector_after(code).split()[-1] == "on"


def test_resume_is_a_no_op_when_the_collector_runs() -> None:
    assert gc.isenabled()
    startup_gc.resume()
    assert gc.isenabled()


async def test_the_monitor_app_resumes_the_collector_after_its_first_frame() -> None:
    startup_gc.pause()
    try:
        app = create_monitor_app(MonitorConfig(), ManualReplay([]))
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            assert gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()
