"""What the training screen's run state costs per event, and what a plot's redraw asks of its series.

Folds a synthetic run into a ``RunState`` up to ``--points`` points per series (untimed, in large events),
then times ``RunState.apply`` of further events of the usual size, and after each batch of them the two
plots' ``draw`` at 120x30 (the series' queries and plotext's data input; plotext's rendering is the same
whatever the series, and left out). Two kinds of run:

- ``train``: ``StepsCompleted`` of 25 losses each (100 steps/s at the default 0.25 s between events);
- ``tracked``: a script's ``MetricsLogged`` of three names, one point each.

    python scripts/ui_event_cost.py --points 10000 1000000
    python scripts/ui_event_cost.py --points 10000 1000000 --mode time   # the plots against the run's clock
"""

from __future__ import annotations

import argparse
import gc
import math
import random
import statistics
import sys
import time
import tracemalloc

from textual.geometry import Size

from rocmtui.config import TrainConfig
from rocmtui.events import MetricsLogged, RunStarted, StepsCompleted, TrackStarted, TrainEvent
from rocmtui.ui.state.run_state import RunState
from rocmtui.ui.widgets.accuracy_plot import AccuracyPlot
from rocmtui.ui.widgets.loss_plot import LossPlot

LOSSES_PER_EVENT = 25
STEPS_PER_EPOCH = 10_000
FILL_CHUNK = 5_000
"""Points per untimed event while the run is filled (a small number of large events)."""


class SizedLossPlot(LossPlot):
    @property
    def size(self) -> Size:
        return Size(118, 30)


class SizedAccuracyPlot(AccuracyPlot):
    @property
    def size(self) -> Size:
        return Size(118, 30)


def loss_at(step: int, rng: random.Random) -> float:
    return 2.3 * math.exp(-step / 200_000) + 0.2 + 0.1 * rng.random()


def train_events(first: int, count: int, per_event: int, rng: random.Random) -> list[TrainEvent]:
    """``count`` StepsCompleted of ``per_event`` steps each, after step ``first``."""
    events: list[TrainEvent] = []
    step = first
    for _ in range(count):
        step += per_event
        losses = tuple(loss_at(s, rng) for s in range(step - per_event + 1, step + 1))
        epoch, epoch_step = divmod(step - 1, STEPS_PER_EPOCH)
        events.append(StepsCompleted(epoch, step, epoch_step + 1, STEPS_PER_EPOCH, losses, 3000.0, 0.001, step / 100))
    return events


def tracked_events(first: int, count: int, rng: random.Random) -> list[TrainEvent]:
    return [
        MetricsLogged(step, {"loss": loss_at(step, rng), "lr": 0.001, "grad_norm": rng.random()}, step / 1000)
        for step in range(first + 1, first + count + 1)
    ]


def started(kind: str) -> TrainEvent:
    if kind == "tracked":
        return TrackStarted(name="bench", run_dir="/nonexistent/bench")
    config = TrainConfig(epochs=1_000)
    return RunStarted(
        config,
        "/nonexistent/bench",
        "cpu",
        "bench",
        "CPU",
        "none",
        "cifar10",
        50_000,
        10_000,
        (),
        STEPS_PER_EPOCH,
        0,
        "synthetic",
    )


def fill(state: RunState, kind: str, points: int, rng: random.Random) -> int:
    """Apply events until ``points`` points per series; returns the last step."""
    if kind == "train":
        for event in train_events(0, points // FILL_CHUNK, FILL_CHUNK, rng):
            state.apply(event)
        return points // FILL_CHUNK * FILL_CHUNK
    for start in range(0, points, 100_000):
        for event in tracked_events(start, min(100_000, points - start), rng):
            state.apply(event)
    return points


def redraw(plot: LossPlot | AccuracyPlot, mode: str) -> None:
    """A plot's ``draw`` and, where the plots draw through a canvas, its axes' finish (round ticks; in the time
    modes, every x mapped through the run's timeline). Code without the canvas draws in step mode only."""
    plot.plt.clear_figure()
    canvas = getattr(plot, "canvas", None)
    if canvas is None:
        plot.draw()
        return
    canvas.reset()
    canvas.mode = mode
    canvas.use(plot.timeline)
    plot.draw()
    canvas.finish(plot.size.height)


def measure(kind: str, points: int, rounds: int, per_round: int, mode: str = "step") -> str:
    rng = random.Random(0)
    state = RunState()
    state.apply(started(kind))
    tracemalloc.start()
    step = fill(state, kind, points, rng)
    memory = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    plots = (SizedLossPlot(state), SizedAccuracyPlot(state))
    per_event, per_draw = [], []
    for _ in range(rounds):
        if kind == "train":
            events = train_events(step, per_round, LOSSES_PER_EVENT, rng)
            step += per_round * LOSSES_PER_EVENT
        else:
            events = tracked_events(step, per_round, rng)
            step += per_round
        gc.collect()
        start = time.perf_counter()
        for event in events:
            state.apply(event)
        per_event.append((time.perf_counter() - start) / per_round)
        start = time.perf_counter()
        for plot in plots:
            redraw(plot, mode)
        per_draw.append(time.perf_counter() - start)
    return (
        f"{kind:8} {points:>9,} points, x {mode}: apply {1e6 * statistics.median(per_event):9.1f} us/event,"
        f" redraw of both plots {1e3 * statistics.median(per_draw):7.2f} ms, state {memory / 1e6:6.1f} MB"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, nargs="+", default=[10_000, 1_000_000])
    parser.add_argument("--kinds", nargs="+", choices=("train", "tracked"), default=["train", "tracked"])
    parser.add_argument("--rounds", type=int, default=5, help="batches of events timed, each followed by a redraw")
    parser.add_argument("--events", type=int, default=20, help="events per batch")
    parser.add_argument("--mode", choices=("step", "time", "wall"), default="step", help="the plots' x axis")
    args = parser.parse_args()
    for kind in args.kinds:
        for points in args.points:
            print(measure(kind, points, args.rounds, args.events, args.mode), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
