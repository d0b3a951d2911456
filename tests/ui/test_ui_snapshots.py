"""SVG snapshots of the screens at the sizes people use (pytest-textual-snapshot).

Training screens replay the recorded CPU run (fixed timings from its events) with real host
telemetry recorded here; multi-GPU monitor snapshots use SYNTHETIC TEST INPUTS (ui_helpers), since
they test the layout, not the hardware. Plots are drawn explicitly (their timer never fires).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from pathlib import Path

import pytest
from ui_helpers import ReplayTrainer, host_recording, recorded_config, recorded_events, synthetic_gpu_sets

from rocmtui.config import MonitorConfig
from rocmtui.gpu.replay import ManualReplay, ReplaySource
from rocmtui.gpu.sample import NO_GPU, GpuProcess, SampleSet
from rocmtui.ui.app import MonitorApp, create_monitor_app
from rocmtui.ui.train_app import TrainApp

pytestmark = pytest.mark.snapshot
UI_DATA = Path(__file__).resolve().parent / "data"


def stopped_clock() -> float:
    """A clock that never moves: the elapsed time shown is the run's own, whenever the picture is taken."""
    return 0.0


NEVER = 3600.0


def train_app(hold_at: int | None, theme: str = "textual-dark") -> tuple[TrainApp, ReplayTrainer, ManualReplay]:
    trainer = ReplayTrainer(recorded_events(), hold_at=hold_at)
    source = ManualReplay(host_recording())
    app = TrainApp(recorded_config(), trainer, source, theme=theme, plot_period_s=NEVER, clock=stopped_clock)
    return app, trainer, source


def settle(app: TrainApp, source: ManualReplay, ready, samples: int = 8):
    """A run_before that waits for the trainer, plays some telemetry and draws the plots once."""

    async def run_before(pilot) -> None:
        assert await asyncio.to_thread(ready.wait, 10)
        for _ in range(samples):
            source.step()
            await pilot.pause()
        assert app.train_screen is not None
        app.train_screen.replot_now()
        await pilot.pause()

    return run_before


SIZES = [(80, 24), (120, 40), (200, 50)]


@pytest.mark.parametrize("size", SIZES)
def test_train_mid_run(snap_compare, size) -> None:
    app, trainer, source = train_app(hold_at=36)
    assert snap_compare(app, terminal_size=size, run_before=settle(app, source, trainer.holding))


@pytest.mark.parametrize("size", SIZES)
def test_train_images_per_s_in_the_second_plot(snap_compare, size) -> None:
    """``n`` until the second plot shows images/s at each report: any series of the run, not only accuracy."""
    app, trainer, source = train_app(hold_at=36)
    before = settle(app, source, trainer.holding)

    async def run_before(pilot) -> None:
        await before(pilot)
        while app.train_screen.accuracy_plot.view != "images_per_s":
            await pilot.press("n")

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", [(120, 40), (200, 50)])
def test_train_finished(snap_compare, size) -> None:
    app, trainer, source = train_app(hold_at=45)  # parked before RunFinished, as a real run would be
    before = settle(app, source, trainer.holding)

    async def run_before(pilot) -> None:
        await before(pilot)
        trainer.release.set()
        assert await asyncio.to_thread(app.trainer_done.wait, 10)
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)


def test_train_finished_compact_zoomed_and_smoothed(snap_compare) -> None:
    """80x24 after the run: the summary card under the curves, the last epoch zoomed, EMA 0.9 in the legend."""
    app, trainer, source = train_app(hold_at=45)
    before = settle(app, source, trainer.holding)

    async def run_before(pilot) -> None:
        await before(pilot)
        trainer.release.set()
        assert await asyncio.to_thread(app.trainer_done.wait, 10)
        await pilot.pause()
        await pilot.press("z", "z", "left_square_bracket", "left_square_bracket")

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_train_light_theme_log_scale(snap_compare) -> None:
    app, trainer, source = train_app(hold_at=36, theme="textual-light")
    before = settle(app, source, trainer.holding)

    async def run_before(pilot) -> None:
        await before(pilot)
        await pilot.press("l")

    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def monitor_app(gpus: int) -> tuple[MonitorApp, ManualReplay]:
    source = ManualReplay(synthetic_gpu_sets(gpus) if gpus else host_recording())
    return create_monitor_app(MonitorConfig(), source), source


def play(source: ManualReplay, samples: int):
    async def run_before(pilot) -> None:
        for _ in range(samples):
            source.step()
            await pilot.pause()

    return run_before


@pytest.mark.parametrize(("gpus", "size"), [(0, (80, 24)), (4, (160, 48)), (8, (160, 48))])
def test_monitor(snap_compare, gpus, size) -> None:
    app, source = monitor_app(gpus)
    assert snap_compare(app, terminal_size=size, run_before=play(source, 12 if gpus else 10))


RECORDINGS = {
    "h200": UI_DATA / "monitor-h200-nvml.jsonl",
    "8-gpus-combined": UI_DATA / "monitor-8gpu-combined.jsonl",
}
"""A real capture of one H200, and eight real H200 captures side by side (scripts/combine_recordings.py)."""


@pytest.mark.parametrize("recording", sorted(RECORDINGS))
def test_monitor_recorded_at_80x24(snap_compare, recording) -> None:
    """The graph filling from the left edge after 12 samples; with 8 GPUs, five processes and their commands."""
    source = ManualReplay(ReplaySource.from_jsonl(RECORDINGS[recording]).samples)
    app = create_monitor_app(MonitorConfig(), source)
    assert snap_compare(app, terminal_size=(80, 24), run_before=play(source, 12))


def test_monitor_help_at_80x24(snap_compare) -> None:
    """Every key, descriptions wrapped under themselves, the bottom border on screen."""
    app, source = monitor_app(8)
    before = play(source, 3)

    async def run_before(pilot) -> None:
        await before(pilot)
        await pilot.press("question_mark")

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_monitor_without_a_gpu_shows_why_on_w(snap_compare) -> None:
    app, source = monitor_app(0)
    before = play(source, 3)

    async def run_before(pilot) -> None:
        await before(pilot)
        await pilot.press("w")

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def busy_host(samples: list[SampleSet]) -> list[SampleSet]:
    """The recorded host samples, each with SYNTHETIC TEST INPUT host processes (as a Sampler lists them where
    there is no GPU): fixed CPU %, memory, owners and start times, so that the picture is the same every run."""
    processes = tuple(
        GpuProcess(
            gpu_index=NO_GPU,
            pid=3100 + i,
            user="alice" if i % 3 else "root",
            command=f"python worker.py --shard {i}" if i % 2 else f"/usr/bin/busy-daemon-{i} --serve",
            cpu_pct=max(0.0, 97.0 - 13.5 * i),
            host_memory_bytes=(12 - i) * 150 * 1024**2,
            started_at=samples[0].timestamp - 600 * (i + 1),
            uid=0 if i % 3 == 0 else 1000,
        )
        for i in range(12)
    )
    return [replace(sample, host_processes=processes) for sample in samples]


def test_monitor_without_a_gpu_lists_the_hosts_busiest_processes(snap_compare) -> None:
    source = ManualReplay(busy_host(host_recording()))
    app = create_monitor_app(MonitorConfig(), source)
    assert snap_compare(app, terminal_size=(80, 24), run_before=play(source, 10))


def test_monitor_replay_says_when_it_was_recorded(snap_compare, monkeypatch) -> None:
    monkeypatch.setenv("TZ", "UTC")  # the times said are local times
    time.tzset()
    try:
        source = ManualReplay(ReplaySource.from_jsonl(RECORDINGS["h200"]).samples)
        app = create_monitor_app(MonitorConfig(), source, recording=True)
        assert snap_compare(app, terminal_size=(80, 24), run_before=play(source, 12))
    finally:
        monkeypatch.undo()
        time.tzset()
