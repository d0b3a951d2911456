"""A live tracked run for the tests of viewers that go away: ``steady_script.py`` under rocmtui's supervisor,
waited on through its run folder (the steps in ``status.json``), its processes checked gone at the end."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

from waiting import wait_for

from rocmtui.run.format import OUTPUT
from rocmtui.run.status import RunStatus, read_status

SCRIPT = Path(__file__).with_name("steady_script.py")
COMMAND = (sys.executable, str(SCRIPT))
"""What follows ``rocmtui run --``."""


def first_running(
    runs: Path, reached: Callable[[RunStatus], bool], timeout_s: float, what: str, meanwhile: Callable[[], object]
) -> tuple[Path, RunStatus]:
    """Wait, calling ``meanwhile`` (drain a viewer's screen), until the one run under ``runs`` is running and
    its status has ``reached`` a point; its folder and that status."""

    def there() -> bool:
        meanwhile()
        folders = list(runs.glob("*")) if runs.is_dir() else []
        status = read_status(folders[0]) if folders else None
        return status is not None and status.state == "running" and reached(status)

    wait_for(there, timeout_s, what)
    run_dir = next(runs.glob("*"))
    status = read_status(run_dir)
    assert status is not None
    return run_dir, status


def first_steps(runs: Path, where: str, meanwhile: Callable[[], object] = lambda: None) -> tuple[Path, RunStatus]:
    """Wait, calling ``meanwhile`` (drain a viewer's screen), until the one run under ``runs`` reports steps."""
    return first_running(runs, lambda status: status.step > 0, 60, f"the first steps {where}", meanwhile)


def steps_on(run_dir: Path, step_then: int, after: str) -> RunStatus:
    """Wait until the run reports a step past ``step_then`` (at 50 a second: within a second when it runs)."""
    seen: list[RunStatus] = []

    def advanced() -> bool:
        status = read_status(run_dir)
        seen[:] = [status] if status is not None else []
        return status is not None and status.state == "running" and status.step > step_then

    wait_for(advanced, 30, f"a step after {after}")
    return seen[0]


def script_pid(run_dir: Path) -> int:
    """The script's own pid, the first line it printed (in the folder's ``output.log``)."""
    found = re.match(rb"pid (\d+)\n", (run_dir / OUTPUT).read_bytes())
    assert found is not None, "the script's first line is its pid"
    return int(found.group(1))


def gone(pid: int) -> bool:
    """Whether ``pid`` has exited (and been reaped, or is a zombie left for a parent that is not this test)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


def nothing_left(pids: list[int]) -> None:
    """Wait until every one of ``pids`` has exited."""
    wait_for(lambda: all(gone(pid) for pid in pids), 30, f"processes {pids} to exit")
