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
