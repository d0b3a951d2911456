"""Test inputs for the UI: a recorded training run replayed by a trainer stub, and telemetry sources.

The trainer stub replays ``tests/data/recorded-run.jsonl`` (a real seeded CPU run) and honours
RunControl like the engine does: it waits while paused and stops at a step boundary. GPU sample
sets built here are SYNTHETIC TEST INPUTS (fixed, made-up numbers) for layout tests only; the
screenshots in ``screenshots/`` come from real recordings.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from textual.pilot import Pilot

from rocmtui.config import MonitorConfig, TrainConfig
from rocmtui.events import (
    Emit,
    LogMessage,
    MetricsLogged,
    RunControl,
    RunFinished,
    StepsCompleted,
    TrackStarted,
    TrainEvent,
    event_from_dict,
)
from rocmtui.gpu.replay import ManualReplay, ReplaySource
from rocmtui.gpu.sample import BackendStatus, GpuProcess, GpuSample, HostSample, SampleSet
from rocmtui.ui.app import MonitorApp, create_monitor_app
from rocmtui.ui.screens.grid_screen import GridScreen
from rocmtui.ui.train_app import TrainApp
from rocmtui.ui.widgets.gpu_graph_card import GpuGraphCard

DATA = Path(__file__).resolve().parents[1] / "data"
RECORDED_RUN = DATA / "recorded-run.jsonl"
HOST_RECORDING = Path(__file__).resolve().parent / "data" / "monitor-cpu-host.jsonl"
"""A real ``rocmtui monitor --json`` recording from a 2-core machine without a GPU."""


def recorded_events() -> list[TrainEvent]:
    lines = RECORDED_RUN.read_text(encoding="utf-8").splitlines()
    return [event_from_dict(json.loads(line)) for line in lines if line.strip()]


def recorded_config() -> TrainConfig:
    first = recorded_events()[0]
    return first.config  # type: ignore[union-attr]


@dataclass
class ReplayTrainer:
    """A trainer callable that emits a recorded run; ``hold_at`` parks it before that event index.

    While parked or between events it honours ``RunControl`` exactly as the engine's loop does:
    no step is emitted while paused, and a stop request ends the run with RunFinished("stopped").
    """

    events: list[TrainEvent]
    hold_at: int | None = None
    holding: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    emitted: list[TrainEvent] = field(default_factory=list)
    saves: int = 0
    stop_while_held: bool = True
    """False: stay parked until ``release`` even when asked to stop (to watch the app wait)."""
    waiting_paused: threading.Event = field(default_factory=threading.Event)
    """Set when the trainer is blocked by a pause, before a step it has not emitted."""

    def __call__(self, config: TrainConfig, emit: Emit, control: RunControl) -> None:
        for index, event in enumerate(self.events):
            if index == self.hold_at:
                self.holding.set()
                while not self.release.is_set() and not (self.stop_while_held and control.stop.is_set()):
                    self.release.wait(0.01)
            if isinstance(event, StepsCompleted):
                while control.paused and not control.stop.is_set():
                    self.waiting_paused.set()
                    control.wait_while_paused(0.01)
                self.waiting_paused.clear()
                if control.take_save_request():
                    self.saves += 1
            if control.stop.is_set() and isinstance(event, StepsCompleted | RunFinished):
                self._send(emit, self._stopped(event))
                return
            self._send(emit, event)

    def _send(self, emit: Emit, event: TrainEvent) -> None:
        self.emitted.append(event)
        emit(event)

    def _stopped(self, event: TrainEvent) -> RunFinished:
        final = self.events[-1]
        assert isinstance(final, RunFinished)
        epochs = sum(1 for e in self.emitted if type(e).__name__ == "EpochCompleted")
        return msgspec.structs.replace(
            final, reason="stopped", epochs_completed=epochs, checkpoint=f"{final.run_dir}/checkpoint-last.pt"
        )


def host_recording() -> list[SampleSet]:
    source = ReplaySource.from_jsonl(HOST_RECORDING)
    samples: list[SampleSet] = []
    while (sample := source.step()) is not None:
        samples.append(sample)
    return samples


def synthetic_gpu_sets(gpus: int, count: int = 40) -> list[SampleSet]:
    """SYNTHETIC TEST INPUT: ``gpus`` made-up MI300X-like cards with fixed, deterministic readings."""
    sets = []
    for t in range(count):
        cards = tuple(
            GpuSample(
                index=i,
                name="AMD Instinct MI300X (synthetic)",
                timestamp=1000.0 + t,
                utilization_pct=float((t * 7 + i * 13) % 101),
                memory_used_bytes=(20 + 10 * i) * 1024**3,
                memory_total_bytes=192 * 1024**3,
                memory_busy_pct=float((t * 3 + i) % 40),
                temperatures_c=(("edge", 40.0 + i), ("junction", 50.0 + i), ("mem", 45.0 + i)),
                power_w=300.0 + 10 * i,
                power_cap_w=750.0,
                sclk_mhz=2100.0,
                mclk_mhz=1300.0,
                fan_rpm=None,
            )
            for i in range(gpus)
        )
        procs = tuple(
            GpuProcess(
                gpu_index=i,
                pid=4000 + i,
                user="alice",
                gpu_memory_bytes=(18 + 10 * i) * 1024**3,
                command="python train.py",
            )
            for i in range(gpus)
        )
        host = HostSample(
            timestamp=1000.0 + t,
            cpu_pct=25.0,
            cpu_count=64,
            ram_used_bytes=100 * 1024**3,
            ram_total_bytes=512 * 1024**3,
            cpu_name="synthetic host",
        )
        statuses = (BackendStatus("rocm", True, "synthetic"),)
        sets.append(
            SampleSet(timestamp=1000.0 + t, backend="rocm", gpus=cards, host=host, processes=procs, statuses=statuses)
        )
    return sets


@contextlib.asynccontextmanager
async def monitor_sampled(
    gpus: int, *, settings_path: Path | None = None
) -> AsyncIterator[tuple[MonitorApp, Pilot[int]]]:
    """The monitor at 120x40 with one synthetic sample of ``gpus`` GPUs shown (so its process table is up)."""
    source = ManualReplay(synthetic_gpu_sets(gpus))
    app = create_monitor_app(MonitorConfig(), source, settings_path=settings_path)
    async with app.run_test(size=(120, 40)) as pilot:
        source.step()
        await pilot.pause()
        yield app, pilot


@contextlib.asynccontextmanager
async def monitor_shown(gpus: int, samples: int) -> AsyncIterator[tuple[MonitorApp, Pilot[int]]]:
    """The monitor at 80x24 over ``samples`` synthetic samples of ``gpus`` GPUs, all shown: (app, pilot).

    The GPU cards mount with the first GPU sample, which a loaded machine draws a few frames later.
    """
    source = ManualReplay(synthetic_gpu_sets(gpus, count=samples))
    app = create_monitor_app(MonitorConfig(), source)
    async with app.run_test(size=(80, 24)) as pilot:
        for _ in range(samples):
            source.step()
        for _ in range(100):
            await pilot.pause(0.02)
            cards = app.monitor_screen.query(GpuGraphCard)
            if cards and cards.first().graph.rows:
                break
        yield app, pilot


def script_events(names: list[str], steps: int = 20) -> list[TrainEvent]:
    """A tracked script that logged ``names`` at every step (each its own curve), then a log line."""
    logged = {
        name: tuple(math.sin(step / 3 + i) * (i + 1) for step in range(1, steps + 1)) for i, name in enumerate(names)
    }
    window = MetricsLogged(
        steps,
        {name: values[-1] for name, values in logged.items()},
        1.0,
        steps=tuple(range(1, steps + 1)),
        logged=logged,
    )
    return [TrackStarted("script", "/runs/script"), window, LogMessage("held here")]


@contextlib.asynccontextmanager
async def held(
    events: list[TrainEvent],
    host_source: ManualReplay,
    size: tuple[int, int] = (80, 24),
    theme: str | None = None,
) -> AsyncIterator[tuple[TrainApp, Pilot[int]]]:
    """The training screen over ``events``, held before the last one, its plots drawn: (app, pilot)."""
    trainer = ReplayTrainer(events, hold_at=len(events) - 1)
    themed: dict[str, Any] = {} if theme is None else {"theme": theme}
    app = TrainApp(recorded_config(), trainer, host_source, plot_period_s=3600.0, **themed)  # frame draws
    async with app.run_test(size=size) as pilot:
        assert await asyncio.to_thread(trainer.holding.wait, 10)
        await pilot.pause()
        app.train_screen.replot_now()
        await pilot.pause()
        yield app, pilot


def mid_run_events() -> list[TrainEvent]:
    """The recorded run up to mid-epoch 3 (held before event 36, as ``held_trainer``)."""
    return recorded_events()[:37]


async def open_grid(app: TrainApp, pilot: Pilot[int]) -> GridScreen:
    """The grid of every series (``g``), its cells drawn."""
    await pilot.press("g")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, GridScreen)
    screen.replot_now()
    await pilot.pause()
    return screen
