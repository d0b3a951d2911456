"""track(): the run folder it writes, its ends, and the viewer's commands reaching the loop."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest
import torch

import rocmtui
from rocmtui.events import EpochMetrics, MetricsLogged, RunFailed, RunFinished, TrackStarted
from rocmtui.run.control import send_command
from rocmtui.run.listing import list_runs
from rocmtui.run.lock import is_locked
from rocmtui.run.status import read_status
from rocmtui.run.stream import read_events
from rocmtui.tracking import env


def wait_for(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        threading.Event().wait(0.01)


@pytest.fixture(autouse=True)
def _no_launcher(monkeypatch) -> None:
    for name in (env.RUN_DIR, env.RUNS_DIR, env.LINK, env.RUN_NAME):
        monkeypatch.delenv(name, raising=False)


def test_a_tracked_run_writes_a_folder_that_runs_lists(tmp_path: Path) -> None:
    with rocmtui.track("demo", config={"lr": 0.1, "path": tmp_path}, runs_dir=tmp_path, total_steps=4) as run:
        run.log(step=1, loss=torch.tensor(2.0), lr=0.1)
        run.log(step=2, loss=torch.tensor(1.0, requires_grad=True) * 1, lr=np.float32(0.1))
        run.flush()
        run.log(loss=0.5)
        run.log_epoch(epoch=1, val_loss=torch.tensor(0.75), val_acc=0.5)
    events = read_events(run.run_dir)
    started = events[0]
    assert isinstance(started, TrackStarted) and started.name == "demo" and started.total_steps == 4
    assert started.params == {"lr": 0.1, "path": str(tmp_path)}
    metrics = [e for e in events if isinstance(e, MetricsLogged)]
    assert [(m.step, m.count) for m in metrics] == [(2, 2), (3, 1)]
    assert metrics[0].values == pytest.approx({"loss": 1.5, "lr": 0.1})
    epoch = next(e for e in events if isinstance(e, EpochMetrics))
    assert (epoch.epoch, epoch.step, epoch.values) == (1, 3, {"val_loss": 0.75, "val_acc": 0.5})
    assert isinstance(events[-1], RunFinished) and events[-1].reason == "completed"
    assert not is_locked(run.run_dir)
    [info] = list_runs(tmp_path)
    assert (info.state, info.name, info.epoch) == ("finished", "demo", 1)


def test_the_folder_comes_from_the_environment(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(env.RUNS_DIR, str(tmp_path / "here"))
    with rocmtui.track("a") as run:
        pass
    assert run.run_dir.parent == tmp_path / "here"
    monkeypatch.setenv(env.RUN_DIR, str(tmp_path / "exact"))
    with rocmtui.track("b") as run:
        pass
    assert run.run_dir == tmp_path / "exact" and isinstance(read_events(run.run_dir)[-1], RunFinished)


def test_an_exception_is_recorded_in_one_line_and_raised_on(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="bad batch"), rocmtui.track("x", runs_dir=tmp_path) as run:
        run.log(step=7, loss=1.0)
        raise ValueError("bad batch\nsecond line")
    failed = read_events(run.run_dir)[-1]
    assert isinstance(failed, RunFailed)
    assert (failed.message, failed.step) == ("ValueError: bad batch", 7)
    status = read_status(run.run_dir)
    assert status is not None and status.state == "failed"


def test_ctrl_c_is_recorded_as_stopped(tmp_path: Path) -> None:
    with pytest.raises(KeyboardInterrupt), rocmtui.track("x", runs_dir=tmp_path) as run:
        raise KeyboardInterrupt
    final = read_events(run.run_dir)[-1]
    assert isinstance(final, RunFinished) and final.reason == "interrupted"
    status = read_status(run.run_dir)
    assert status is not None and status.state == "stopped"


def test_stop_and_pause_from_a_viewer_reach_the_loop(tmp_path: Path) -> None:
    with rocmtui.track("x", runs_dir=tmp_path) as run:
        send_command(run.run_dir, "pause")
        wait_for(lambda: run._sink.control.paused)
        logged = threading.Event()
        worker = threading.Thread(target=lambda: (run.log(loss=1.0), logged.set()))
        worker.start()
        assert not logged.wait(0.3)  # blocked while paused
        send_command(run.run_dir, "resume")
        assert logged.wait(10.0)
        worker.join()
        assert not run.should_stop
        send_command(run.run_dir, "stop")
        wait_for(lambda: run.should_stop)
    final = read_events(run.run_dir)[-1]
    assert isinstance(final, RunFinished) and final.reason == "stopped"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("1.0", r"loss: expected a real number \(int, float, bool, .*\), got str"),
        (torch.ones(3), "expected a 0-d tensor"),
    ],
)
def test_values_that_are_not_scalars_are_refused_at_the_call(tmp_path: Path, value, message: str) -> None:
    with rocmtui.track("x", runs_dir=tmp_path) as run:
        with pytest.raises(TypeError, match=message):
            run.log(loss=value)
        run.log(loss=1.0)
