"""``$ROCMTUI_RUNS_DIR`` is where every command makes and looks for runs when no ``--runs-dir`` is given."""

from __future__ import annotations

from pathlib import Path

import pytest

from rocmtui.cli.main import main
from rocmtui.cli.parser import build_parser
from rocmtui.cli.train_options import config_from_args
from rocmtui.events import LogMessage, RunControl
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
    (runs / name).mkdir(parents=True)
    session = RunSession(runs / name, RunControl(), name=name)
    session.emit(LogMessage("x"))
    session.close()
    return runs / name


@pytest.fixture
def watched(monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """``watch`` in a terminal, its app not run: what it would have opened, and what the picker was shown."""
    from rocmtui.cli import run_commands
    from rocmtui.ui import run_picker, train_app

    seen: dict[str, object] = {"picker": None, "folder": None}

    def run_app(app: train_app.TrainApp) -> tuple[int, list[str]]:
        seen["folder"] = app.train_screen.folder
        return 0, []

    def pick(runs: list[object], runs_dir: Path) -> Path | None:
        seen["picker"] = [Path(info.folder).name for info in runs]  # type: ignore[attr-defined]
        return seen.get("choose")  # type: ignore[return-value]

    monkeypatch.setattr(run_commands, "can_draw", lambda: True)
    monkeypatch.setattr(train_app, "run_train_app", run_app)
    monkeypatch.setattr(run_picker, "pick_run", pick)
    return seen


def test_watch_with_several_runs_opens_the_one_picked_from_the_environments_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, watched: dict[str, object]
) -> None:
    runs = tmp_path / "elsewhere"
    _finished_run(runs, "20260101-000000-a")
    watched["choose"] = _finished_run(runs, "20260102-000000-b")
    monkeypatch.setenv("ROCMTUI_RUNS_DIR", str(runs))
    assert main(["watch"]) == 0
    assert watched["picker"] == ["20260102-000000-b", "20260101-000000-a"]
    assert watched["folder"] == runs / "20260102-000000-b"


def test_watch_left_from_the_picker_exits_0_and_opens_nothing(tmp_path: Path, watched: dict[str, object]) -> None:
    runs = tmp_path / "runs"
    _finished_run(runs, "20260101-000000-a")
    _finished_run(runs, "20260102-000000-b")
    assert main(["watch", "--runs-dir", str(runs)]) == 0
    assert watched["picker"] is not None and watched["folder"] is None


def test_watch_of_a_folder_of_one_run_opens_it_without_a_picker(tmp_path: Path, watched: dict[str, object]) -> None:
    only = _finished_run(tmp_path / "runs", "20260101-000000-a")
    assert main(["watch", "--runs-dir", str(tmp_path / "runs")]) == 0
    assert watched["picker"] is None and watched["folder"] == only


def test_watch_of_an_empty_folder_is_one_line(
    tmp_path: Path, watched: dict[str, object], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["watch", "--runs-dir", str(tmp_path / "none")]) == 2
    error = f"rocmtui watch: error: no run of yours under {tmp_path / 'none'}; give a run folder, or --runs-dir"
    assert capsys.readouterr().err.strip().splitlines() == [error]
    assert watched["picker"] is None
