"""track(): the run folder it writes, its ends, and the viewer's commands reaching the loop."""

from __future__ import annotations

import io
import math
import threading
from pathlib import Path

import numpy as np
import pytest
import torch
from waiting import wait_for

import rocmtui
from rocmtui.events import EpochMetrics, MetricsLogged, RunFailed, RunFinished, TrackStarted
from rocmtui.run.control import send_command
from rocmtui.run.listing import list_runs
from rocmtui.run.lock import is_locked
from rocmtui.run.series_csv import write_csv
from rocmtui.run.status import read_status
from rocmtui.run.stream import read_events
from rocmtui.tracking import env


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
    assert metrics[0].values == pytest.approx({"loss": 1.0, "lr": 0.1})  # the newest of each
    assert metrics[0].steps == (1, 2) and metrics[0].logged_at == {}
    assert metrics[0].logged == {"loss": (2.0, 1.0), "lr": pytest.approx((0.1, 0.1))}  # every value kept
    assert metrics[1].points() == {"loss": ((3,), (0.5,))}
    epoch = next(e for e in events if isinstance(e, EpochMetrics))
    assert (epoch.epoch, epoch.step, epoch.values) == (1, 3, {"val_loss": 0.75, "val_acc": 0.5})
    walls = [started.started_at, *(m.wall for m in metrics), epoch.wall]  # each report says when it was made
    assert walls == sorted(walls) and walls[0] > 0
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

        def log_once() -> None:
            run.log(loss=1.0)
            logged.set()

        worker = threading.Thread(target=log_once)
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


def test_stop_of_a_tracked_run_says_what_happened_and_claims_no_checkpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from rocmtui.cli.main import main

    runs = tmp_path / "runs"

    def script() -> None:
        with rocmtui.track("script", runs_dir=runs) as run:
            step = 0
            while not run.should_stop:
                step += 1
                run.log(step=step, loss=1.0 / step)  # as fast as it can: the stop ends the loop, not a clock

    thread = threading.Thread(target=script)
    thread.start()
    try:
        wait_for(lambda: any(info.live and info.step for info in list_runs(runs)), 10, "the run to report")
        assert main(["stop", "--runs-dir", str(runs)]) == 0
    finally:
        thread.join(10)
    asked, result = capsys.readouterr().out.strip().splitlines()
    assert "asked" in asked and "waiting" in asked
    assert result.startswith("rocmtui: stopped at step ") and "no checkpoint written" in result


def test_every_logged_value_is_kept_at_its_step_also_when_names_come_and_go(tmp_path: Path) -> None:
    with rocmtui.track("sparse", runs_dir=tmp_path) as run:
        for step in range(1, 101):
            scalars = {"loss": torch.tensor(1.0 / step)}
            if step % 10 == 0:
                scalars["val_loss"] = torch.tensor(2.0 / step)
            run.log(step=step, **scalars)
            if step % 7 == 0:
                run.flush()
    logged: dict[str, dict[int, float]] = {}
    for event in read_events(run.run_dir):
        if isinstance(event, MetricsLogged):
            for name, (steps, values) in event.points().items():
                logged.setdefault(name, {}).update(zip(steps, values, strict=True))
    assert logged["loss"] == pytest.approx({step: 1.0 / step for step in range(1, 101)})
    assert logged["val_loss"] == pytest.approx({step: 2.0 / step for step in range(10, 101, 10)})


@pytest.mark.parametrize("stride", [1, 3], ids=["consecutive", "strided"])
def test_a_long_window_is_written_packed_and_read_back_bit_for_bit(tmp_path: Path, stride: int) -> None:
    rng = np.random.default_rng(stride)
    loss = [float(x) for x in rng.normal(0, 1, 1000)]
    loss[10], loss[11] = float("nan"), float("inf")  # non-finite values are kept as they were logged
    with rocmtui.track("fast", runs_dir=tmp_path) as run:
        for i, value in enumerate(loss):
            run.log(step=1 + stride * i, loss=value, **({"val": 0.5 * i} if i % 100 == 0 else {}))
    lines = (run.run_dir / "metrics.jsonl").read_bytes().splitlines()
    packed = [line for line in lines if b'"packed":{"loss":"' in line]  # a window of 64 calls or more
    assert packed and all((b'"step_run":[' in line) == (stride == 1) for line in packed)
    steps: list[int] = []
    values: list[float] = []
    val: dict[int, float] = {}
    for event in read_events(run.run_dir):
        if isinstance(event, MetricsLogged):
            points = event.points()
            steps += points["loss"][0]
            values += points["loss"][1]
            val.update(zip(*points.get("val", ((), ())), strict=True))
    assert steps == [1 + stride * i for i in range(1000)]
    assert np.array_equal(np.array(values), np.array(loss), equal_nan=True)
    assert val == {1 + stride * i: 0.5 * i for i in range(0, 1000, 100)}


def test_a_value_that_is_not_a_number_is_refused_at_its_call_and_the_run_goes_on(tmp_path: Path) -> None:
    with rocmtui.track("typed", runs_dir=tmp_path) as run:
        run.log(step=1, loss=1.0)
        with pytest.raises(TypeError, match="tag"):
            run.log(step=2, loss=0.5, tag="x")  # type: ignore[arg-type]
        run.log(step=3, loss=0.25)
    events = read_events(run.run_dir)
    points = [e.points()["loss"] for e in events if isinstance(e, MetricsLogged)]
    assert points == [((1, 3), (1.0, 0.25))] and isinstance(events[-1], RunFinished)


def test_the_smoothed_line_a_viewer_draws_is_tensorboards_over_every_step(tmp_path: Path) -> None:
    """600 noisy steps logged through track(), read back as a viewer does: at every weight the smoothed value
    at the last step equals TensorBoard's debiased EMA computed here from the raw values, within 1e-6."""
    from rocmtui.ui.state.run_state import SMOOTHING_WEIGHTS, RunState

    rng = np.random.default_rng(0)
    raw = [float(x) for x in 0.45 + 2.0 * np.exp(-np.arange(600) / 120) + rng.normal(0, 0.2, 600)]
    with rocmtui.track("noisy", runs_dir=tmp_path) as run:
        for step, loss in enumerate(raw, start=1):
            run.log(step=step, loss=loss)
            if step % 37 == 0:
                run.flush()
    state = RunState()
    for event in read_events(run.run_dir):
        state.apply(event)
    series = state.scalars.steps["loss"]
    assert len(series) == 600
    for weight in SMOOTHING_WEIGHTS:
        ema, debiased = 0.0, 0.0
        for n, value in enumerate(raw, start=1):  # TensorBoard: last = last * w + (1 - w) * v, debiased
            ema = ema * weight + (1 - weight) * value
            debiased = ema / (1 - weight**n) if weight else value
        assert series.smoothed_last(weight) == pytest.approx(debiased, abs=1e-6)


def test_a_save_reaches_the_scripts_own_save_and_a_script_without_one_says_so(tmp_path: Path) -> None:
    saved: list[int] = []

    def save() -> str:
        saved.append(run.step)
        return "here.pt"

    with rocmtui.track("saver", runs_dir=tmp_path / "a", on_save=save) as run:
        run.log(step=1, loss=1.0)
        run._sink.control.request_save()  # the viewer's s, as the session hands it on
        run.log(step=2, loss=0.5)
        run.log(step=3, loss=0.25)
    events = read_events(run.run_dir)
    assert isinstance(events[0], TrackStarted) and events[0].saves
    assert saved == [2] and any(getattr(e, "message", "") == "checkpoint saved: here.pt" for e in events)
    with rocmtui.track("plain", runs_dir=tmp_path / "b") as plain:
        plain.log(step=1, loss=1.0)
    first = read_events(plain.run_dir)[0]
    assert isinstance(first, TrackStarted) and not first.saves


def test_infinities_in_a_short_window_come_back_as_logged_through_the_reader_and_the_csv(tmp_path: Path) -> None:
    """JSON cannot write an infinity: a window holding one is written packed whatever its length."""
    logged = [1.5, math.inf, -math.inf, math.nan, 2.5]
    with rocmtui.track("edges", runs_dir=tmp_path) as run:
        for step, value in enumerate(logged, start=1):
            run.log(step=step, loss=value)
    values: list[float] = []
    for event in read_events(run.run_dir):
        if isinstance(event, MetricsLogged):
            values += event.points()["loss"][1]
    assert np.array_equal(np.array(values), np.array(logged), equal_nan=True)
    out = io.StringIO()
    write_csv(out, read_events(run.run_dir))
    assert [line.split(",")[-1] for line in out.getvalue().splitlines()[1:]] == ["1.5", "inf", "-inf", "nan", "2.5"]
