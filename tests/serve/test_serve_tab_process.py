"""The process each served tab runs: the command ``rocmtui serve`` checked builds the app the tab is served."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest

from rocmtui.cli.demo_command import DEFAULT_SPEED
from rocmtui.cli.parser import build_parser
from rocmtui.cli.web_commands import served_command
from rocmtui.serve import tab_process
from rocmtui.ui.app import MonitorApp
from rocmtui.ui.demo_app import DemoApp
from rocmtui.ui.train_app import TrainApp

H200 = Path(__file__).resolve().parents[1] / "data" / "h200-fastnet-run"


def _tab_app(serve_args: list[str]) -> Any:
    """The app a tab of ``rocmtui serve ARGS`` gets: its command's arguments, parsed and built by the tab entry."""
    words = shlex.split(served_command(build_parser().parse_args(["serve", *serve_args])))
    assert words[1:3] == ["-m", "rocmtui.serve.tab_process"]
    return tab_process.build_app(tab_process._parser().parse_args(words[3:]))


def test_a_demo_tab_plays_at_the_served_speed_and_loops_when_asked() -> None:
    looping = _tab_app(["demo", "--speed", "2.5", "--loop"])
    assert isinstance(looping, DemoApp) and (looping.pace.speed, looping.loop) == (2.5, True)
    once = _tab_app(["demo"])
    assert (once.pace.speed, once.loop) == (DEFAULT_SPEED, False)
    bare = tab_process.build_app(tab_process._parser().parse_args(["demo"]))  # run by hand: as `rocmtui demo`
    assert isinstance(bare, DemoApp) and (bare.pace.speed, bare.loop) == (DEFAULT_SPEED, False)


def test_a_watch_tab_follows_the_served_run_and_a_monitor_tab_shows_the_gpus(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "20261201-071828-cifar10-fastnet"
    shutil.copytree(H200, run)
    watching = _tab_app(["watch", "--runs-dir", str(tmp_path / "runs")])
    assert isinstance(watching, TrainApp) and not isinstance(watching, DemoApp)
    assert watching.train_screen.folder == run.resolve() and watching.detachable  # q leaves the run alone
    assert watching.config.model == "fastnet"  # the run's own settings, from its folder
    assert not watching.notify_end  # a finished run has no end to announce
    monitor = _tab_app(["monitor"])
    assert isinstance(monitor, MonitorApp) and not isinstance(monitor, TrainApp)


class Ran:
    def __init__(self, result: object) -> None:
        self.result = result

    def run(self) -> object:
        return self.result


@pytest.mark.parametrize(("result", "code"), [(3, 3), (0, 0), (None, 0)])
def test_the_tab_process_exits_with_the_apps_code(result: object, code: int, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[str] = []

    def build(args: Any) -> Ran:
        built.append(args.what)
        return Ran(result)

    monkeypatch.setattr(tab_process, "build_app", build)
    assert tab_process.main(["monitor"]) == code
    assert built == ["monitor"]
