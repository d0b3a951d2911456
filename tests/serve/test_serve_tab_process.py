"""The process each served tab runs: the command ``rocmtui serve`` checked builds the app the tab is served."""

from __future__ import annotations

import json
import shlex
import shutil
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from rocmtui.cli.demo_command import DEFAULT_SPEED
from rocmtui.cli.parser import build_parser
from rocmtui.cli.web_commands import served_command
from rocmtui.events import RunControl
from rocmtui.run import format as fmt
from rocmtui.run.lock import RunLock
from rocmtui.run.stream import read_events
from rocmtui.serve import tab_process
from rocmtui.ui.app import MonitorApp
from rocmtui.ui.demo_app import DemoApp
from rocmtui.ui.state.settings import NOTIFY_ENV
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


def test_a_watch_tab_keeps_the_runs_last_hour_of_gpu_samples(tmp_path: Path) -> None:
    """An hour of the recorder's 1 s readings in the tab's GPU panel: 3,600 of the 3,650 recorded, the newest."""
    run = tmp_path / "runs" / "20261201-071828-cifar10-fastnet"
    shutil.copytree(H200, run)
    first = json.loads((run / fmt.GPU).read_text().splitlines()[0])
    lines = []
    for second in range(3650):
        first["timestamp"] = 1796109508.0 + second
        lines.append(json.dumps(first))
    (run / fmt.GPU).write_text("\n".join(lines) + "\n")
    watching = _tab_app(["watch", "--runs-dir", str(tmp_path / "runs")])
    kept = watching.sampler.history()
    assert len(kept) == 3600 and kept[-1].timestamp == 1796109508.0 + 3649


def test_a_watch_tab_follows_the_served_run_with_its_gpu_samples(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "20261201-071828-cifar10-fastnet"
    shutil.copytree(H200, run)
    watching = _tab_app(["watch", "--runs-dir", str(tmp_path / "runs")])
    assert isinstance(watching, TrainApp) and not isinstance(watching, DemoApp)
    assert watching.train_screen.folder == run.resolve() and watching.detachable  # q leaves the run alone
    assert watching.config.model == "fastnet"  # the run's own settings, from its folder
    assert not watching.notify_end  # a finished run has no end to announce
    recorded = [line for line in (run / fmt.GPU).read_text().splitlines() if line.strip()]
    assert len(watching.sampler.history()) == len(recorded)  # the run's GPU readings so far, at the first frame
    events: list[object] = []
    watching.source(watching.config, events.append, RunControl())
    assert events == read_events(run)


def test_a_watch_tab_of_a_live_run_rings_at_its_end_unless_told_not_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "runs" / "20261201-071828-cifar10-fastnet"
    shutil.copytree(H200, run)
    status = json.loads((run / fmt.STATUS).read_text())
    status.update(state="running", host=socket.gethostname(), heartbeat=time.time())
    (run / fmt.STATUS).write_text(json.dumps(status))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no settings file: the defaults
    monkeypatch.delenv(NOTIFY_ENV, raising=False)
    lock = RunLock.acquire(run)
    try:
        assert _tab_app(["watch", str(run)]).notify_end
        monkeypatch.setenv(NOTIFY_ENV, "0")
        assert not _tab_app(["watch", str(run)]).notify_end
    finally:
        lock.release()


def test_a_monitor_tab_samples_this_machine_and_lists_its_busiest_processes_without_a_gpu() -> None:
    monitor = _tab_app(["monitor"])
    assert isinstance(monitor, MonitorApp) and not isinstance(monitor, TrainApp)
    sample = monitor.sampler.read()  # type: ignore[attr-defined]
    try:
        assert sample.gpus or sample.host_processes
    finally:
        monitor.sampler.stop()


def test_the_tab_entry_without_an_app_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as refused:
        tab_process._parser().parse_args([])
    assert refused.value.code == 2 and "python -m rocmtui.serve.tab_process" in capsys.readouterr().err


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
