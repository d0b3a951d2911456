"""``$ROCMTUI_RUNS_DIR`` is where every command makes and looks for runs when no ``--runs-dir`` is given."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest
from waiting import pilot_wait_for

from rocmtui.cli.main import main
from rocmtui.cli.parser import build_parser
from rocmtui.cli.train_options import config_from_args
from rocmtui.events import LogMessage, MetricsLogged, RunControl, RunFinished, TrackStarted
from rocmtui.run.session import RunSession


@pytest.mark.parametrize("command", [["watch"], ["runs"], ["stop"], ["export"], ["serve", "watch"]])
def test_each_command_defaults_to_the_environments_runs_folder(
    command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROCMTUI_RUNS_DIR", str(tmp_path / "elsewhere"))
    args = build_parser().parse_args(command)
    assert args.runs_dir == tmp_path / "elsewhere"
    assert build_parser().parse_args([*command, "--runs-dir", "mine"]).runs_dir == Path("mine")


def test_train_makes_its_run_there(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROCMTUI_RUNS_DIR", str(tmp_path / "elsewhere"))
    config = config_from_args(build_parser().parse_args(["train", "cifar"]))
    assert config.runs_dir == tmp_path / "elsewhere" and "runs_dir" not in config.given


def test_runs_lists_the_environments_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "elsewhere"
    (runs / "20260101-000000-mine").mkdir(parents=True)
    session = RunSession(runs / "20260101-000000-mine", RunControl(), name="mine")
    session.emit(LogMessage("x"))
    session.close()
    monkeypatch.setenv("ROCMTUI_RUNS_DIR", str(runs))
    monkeypatch.chdir(tmp_path)
    assert main(["runs"]) == 0
    assert "20260101-000000-mine" in capsys.readouterr().out


def _finished_run(runs: Path, name: str) -> Path:
    """A tracked script's run that logged ``loss`` at steps 1 to 3 and ended: a folder ``watch`` opens whole."""
    folder = runs / name
    folder.mkdir(parents=True)
    session = RunSession(folder, RunControl(), name=name)
    session.emit(TrackStarted(name, str(folder)))
    session.emit(MetricsLogged(3, {"loss": 0.25}, 1.0, steps=(1, 2, 3), logged={"loss": (1.0, 0.5, 0.25)}))
    session.emit(RunFinished("completed", 0, None, None, 1.0, 0.0, None, str(folder)))
    session.close()
    return folder


@pytest.fixture
def watched(monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """``watch`` as in a terminal, for real: the run picker and the watching app run headless, each driven by
    keys (``picker_keys``), and what each showed is kept: the picker's lines, the app's folder and curve."""
    from textual.app import App
    from textual.pilot import Pilot
    from textual.widgets import OptionList

    from rocmtui.cli import run_commands
    from rocmtui.ui.run_picker import RunPickerApp
    from rocmtui.ui.train_app import TrainApp

    seen: dict[str, object] = {"picker": None, "folder": None, "picker_keys": ("enter",)}

    async def pick(pilot: Pilot[object]) -> None:
        options = pilot.app.query_one(OptionList)
        await pilot_wait_for(pilot, lambda: options.option_count > 0, what="the runs listed")
        prompts = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        seen["picker"] = [prompt.split()[0] for prompt in prompts]
        await pilot.press(*seen["picker_keys"])  # type: ignore[misc]
        with contextlib.suppress(AssertionError):  # keys that fail to close the picker fail the test, not hang it
            await pilot_wait_for(pilot, lambda: pilot.app._exit, timeout=5, what="the picker to close")
        if not pilot.app._exit:
            pilot.app.exit(Path("the keys left the picker open"))

    async def watch(pilot: Pilot[object]) -> None:
        app = pilot.app
        assert isinstance(app, TrainApp)
        await pilot_wait_for(pilot, lambda: app.state.finished is not None, what="the run's history")
        seen["folder"] = app.train_screen.folder
        seen["curve"] = {name: series.view().last for name, series in app.state.scalars.steps.items()}
        await pilot.press("q")

    def headless(cls: type[App[Any]], drive: Callable[[Pilot[object]], Coroutine[Any, Any, None]]) -> None:
        real = cls.run

        def run(self: App[Any], **_: object) -> object:
            return real(self, headless=True, size=(100, 30), auto_pilot=drive)

        monkeypatch.setattr(cls, "run", run)

    monkeypatch.setattr(run_commands, "can_draw", lambda: True)  # the terminal check; the apps below are real
    headless(RunPickerApp, pick)
    headless(TrainApp, watch)
    return seen


def test_watch_with_several_runs_opens_the_one_picked_from_the_environments_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, watched: dict[str, object]
) -> None:
    runs = tmp_path / "elsewhere"
    _finished_run(runs, "20260101-000000-a")
    _finished_run(runs, "20260102-000000-b")
    watched["picker_keys"] = ("down", "enter")  # the second line: the older run
    monkeypatch.setenv("ROCMTUI_RUNS_DIR", str(runs))
    assert main(["watch"]) == 0
    assert watched["picker"] == ["20260102-000000-b", "20260101-000000-a"]
    assert watched["folder"] == runs / "20260101-000000-a"
    assert watched["curve"] == {"loss": [1.0, 0.5, 0.25]}


@pytest.mark.parametrize("key", ["q", "escape"])
def test_watch_left_from_the_picker_exits_0_and_opens_nothing(
    tmp_path: Path, watched: dict[str, object], key: str
) -> None:
    runs = tmp_path / "runs"
    _finished_run(runs, "20260101-000000-a")
    _finished_run(runs, "20260102-000000-b")
    watched["picker_keys"] = (key,)
    assert main(["watch", "--runs-dir", str(runs)]) == 0
    assert watched["picker"] is not None and watched["folder"] is None


def test_watch_of_a_folder_of_one_run_opens_it_without_a_picker(tmp_path: Path, watched: dict[str, object]) -> None:
    only = _finished_run(tmp_path / "runs", "20260101-000000-a")
    assert main(["watch", "--runs-dir", str(tmp_path / "runs")]) == 0
    assert watched["picker"] is None and watched["folder"] == only
    assert watched["curve"] == {"loss": [1.0, 0.5, 0.25]}


def test_watch_of_an_empty_folder_is_one_line(
    tmp_path: Path, watched: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["watch", "--runs-dir", str(tmp_path / "none")]) == 2
    error = f"rocmtui watch: error: no run of yours under {tmp_path / 'none'}; give a run folder, or --runs-dir"
    assert capsys.readouterr().err.strip().splitlines() == [error]
    assert watched["picker"] is None
