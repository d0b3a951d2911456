"""The run picker of ``rocmtui watch`` with no run named: newest first, live runs marked, the keyboard only,
every name drawn as text."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import OptionList

from rocmtui.events import LogMessage, RunControl
from rocmtui.run.listing import list_runs
from rocmtui.run.session import RunSession
from rocmtui.ui.run_picker import LIVE_MARK, RunPickerApp

SIZE = (80, 24)


def make_runs(runs_dir: Path, names: list[str]) -> list[RunSession]:
    """A finished run per name, oldest first; the sessions returned are still open (their runs live)."""
    sessions = []
    for name in names:
        (runs_dir / name).mkdir(parents=True)
        session = RunSession(runs_dir / name, RunControl(), name=name)
        session.emit(LogMessage("x"))
        sessions.append(session)
    return sessions


@pytest.fixture
def runs_dir(tmp_path: Path):
    runs = tmp_path / "runs"
    *finished, live = make_runs(runs, ["20260101-000000-old", "20260102-000000-evil\x1b[31m[bold]x", "20260103-live"])
    for session in finished:
        session.close()
    yield runs
    live.close()


def lines(app: RunPickerApp) -> list[str]:
    options = app.query_one(OptionList)
    return [str(options.get_option_at_index(n).prompt) for n in range(options.option_count)]


async def test_runs_come_newest_first_with_the_live_ones_marked_and_names_as_text(runs_dir: Path) -> None:
    app = RunPickerApp(list_runs(runs_dir), runs_dir)
    async with app.run_test(size=SIZE) as pilot:
        shown = lines(app)
        assert [line.lstrip(LIVE_MARK + " ")[:8] for line in shown] == ["20260103", "20260102", "20260101"]
        assert shown[0].startswith(f"{LIVE_MARK} 20260103-live") and "starting" in shown[0]
        assert not shown[1].startswith(LIVE_MARK) and "failed" in shown[1]
        assert "\x1b" not in shown[1] and "\\x1b[31m[bo" in shown[1]
        assert all(len(line) <= 78 for line in shown)
        await pilot.press("q")
    assert app.return_value is None


async def test_the_arrows_and_enter_pick_a_run(runs_dir: Path) -> None:
    app = RunPickerApp(list_runs(runs_dir), runs_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("down", "down", "up", "down", "enter")
    assert app.return_value == runs_dir / "20260101-000000-old"


@pytest.mark.parametrize("key", ["escape", "q", "ctrl+c"])
async def test_escape_q_and_ctrl_c_leave_without_a_run(runs_dir: Path, key: str) -> None:
    app = RunPickerApp(list_runs(runs_dir), runs_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press(key)
    assert app.return_value is None
