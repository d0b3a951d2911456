"""What a frame of the grid of every series (``g``) costs, with few or many series.

Runs the training app headless (Textual's ``run_test``) over a synthetic tracked run of ``--series`` names of
``--points`` points each, opens the grid at each ``--size``, then times, over ``--frames`` frames:

- ``idle``: a frame when nothing changed (the grid looks up the run's series, filters them, checks each cell);
- ``live``: a frame after one ``MetricsLogged`` that moves every series: the page's cells redraw, each one's
  plotext build and its parse into Textual's lines (``render``) included.

The cost should follow the cells on screen, not the series of the run.

    python scripts/grid_cost.py --series 4 200 2000 --size 80x24 200x50
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import time

from rocmtui.config import TrainConfig
from rocmtui.events import Emit, MetricsLogged, RunControl, TrackStarted, TrainEvent
from rocmtui.gpu.replay import ManualReplay
from rocmtui.ui.screens.grid_screen import GridScreen
from rocmtui.ui.train_app import RunSource, TrainApp


def window(names: list[str], first: int, steps: int) -> MetricsLogged:
    """``steps`` points of every name from step ``first``."""
    at = tuple(range(first, first + steps))
    logged = {
        name: tuple(math.exp(-s / 5000) * (i + 1) + 0.01 * math.sin(s + i) for s in at) for i, name in enumerate(names)
    }
    return MetricsLogged(at[-1], {n: v[-1] for n, v in logged.items()}, float(at[-1]), steps=at, logged=logged)


def held_source(events: list[TrainEvent]) -> RunSource:
    """A run source that sends ``events`` and holds until the app stops it."""

    def source(config: TrainConfig, emit: Emit, control: RunControl) -> None:
        for event in events:
            emit(event)
        control.stop.wait()

    return source


async def measure(series: int, points: int, size: tuple[int, int], frames: int) -> tuple[float, float, int]:
    """Median ms of an idle and of a live frame, and the cells on the page."""
    names = ["loss", *(f"layer{i:04d}/grad_norm" for i in range(series - 1))]
    events: list[TrainEvent] = [TrackStarted("bench", "/runs/bench")]
    events += [window(names, first, 1000) for first in range(1, points + 1, 1000)]
    app = TrainApp(TrainConfig(), held_source(events), ManualReplay([]), plot_period_s=3600.0)
    idle, live = [], []
    async with app.run_test(size=size) as pilot:
        while app.state.scalars.last is None or app.state.scalars.last.step < points:
            await pilot.pause(0.05)
        await pilot.press("g")
        await pilot.pause()
        grid = app.screen
        assert isinstance(grid, GridScreen)
        grid.replot_now()
        await pilot.pause()
        step = points + 1
        for _ in range(frames):
            began = time.perf_counter()
            grid.frame()
            idle.append(time.perf_counter() - began)
            app.train_screen.apply(window(names, step, 1))
            step += 1
            began = time.perf_counter()
            grid.frame()
            for cell in grid.cells:
                if cell.key is not None:
                    cell.render()
            live.append(time.perf_counter() - began)
        cells = sum(1 for cell in grid.cells if cell.key is not None)
        app.control.request_stop()
    return 1000 * statistics.median(idle), 1000 * statistics.median(live), cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--series", type=int, nargs="+", default=[4, 200, 2000])
    parser.add_argument("--points", type=int, default=10_000, help="points per series before the frames")
    parser.add_argument("--size", nargs="+", default=["80x24", "200x50"])
    parser.add_argument("--frames", type=int, default=20)
    args = parser.parse_args()
    print("size     series  cells  idle frame ms  live frame ms")
    for text in args.size:
        width, height = (int(part) for part in text.split("x"))
        for series in args.series:
            idle, live, cells = asyncio.run(measure(series, args.points, (width, height), args.frames))
            print(f"{text:8} {series:6} {cells:6} {idle:14.2f} {live:14.1f}")


if __name__ == "__main__":
    main()
