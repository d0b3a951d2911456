"""What one sample costs the monitor's main thread, in process: showing it, then drawing the frame.

Runs ``rocmtui monitor``'s app under Textual's headless test driver at a given size on a recording (played one
sample at a time by ``ManualReplay``), steps a sample, waits until the frame is drawn, and reports the thread's
CPU time per sample: in the app's ``show_samples`` (the widgets updated), in Textual's compositor (the changed
lines rendered into a frame) and in all (the message loop too). The terminal's writes are not included: the
test driver writes nothing (``scripts/monitor_cost.py`` measures the whole process in a pseudo-terminal).

    python scripts/monitor_tick_cost.py --ticks 300 --size 80x24
    python scripts/monitor_tick_cost.py --recording screenshots/h200-monitor-recording.jsonl --size 120x40
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.screen import Screen

from rocmtui.config import MonitorConfig
from rocmtui.gpu.replay import ManualReplay
from rocmtui.ui.app import MonitorApp, create_monitor_app

RECORDING = Path(__file__).resolve().parents[1] / "screenshots" / "h200-monitor-recording.jsonl"


def timed(spent: dict[str, float], label: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """``function``, adding the thread CPU time of each call to ``spent[label]``."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.thread_time()
        try:
            return function(*args, **kwargs)
        finally:
            spent[label] += time.thread_time() - start

    return wrapper


async def measure(recording: Path, size: tuple[int, int], ticks: int, warmup: int) -> dict[str, list[float]]:
    spent: dict[str, float] = defaultdict(float)
    Screen._compositor_refresh = timed(spent, "compositor", Screen._compositor_refresh)  # type: ignore[method-assign]
    MonitorApp.show_samples = timed(spent, "show_samples", MonitorApp.show_samples)  # type: ignore[method-assign]
    source = ManualReplay.from_jsonl(recording, loop=True, interval_s=1.0)
    app = create_monitor_app(MonitorConfig(), source)
    per_tick: dict[str, list[float]] = defaultdict(list)
    async with app.run_test(size=size) as pilot:
        await pilot.pause(0.2)
        for tick in range(warmup + ticks):
            spent.clear()
            start = time.thread_time()
            source.step()
            await pilot.pause()  # the sample's message handled and the frame drawn
            await pilot.wait_for_scheduled_animations()
            total = time.thread_time() - start
            if tick >= warmup:
                per_tick["all"].append(total)
                for label, seconds in spent.items():
                    per_tick[label].append(seconds)
    return per_tick


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recording", type=Path, default=RECORDING)
    parser.add_argument("--size", default="80x24", help="COLSxROWS")
    parser.add_argument("--ticks", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=20)
    args = parser.parse_args()
    cols, rows = (int(part) for part in args.size.split("x"))
    per_tick = asyncio.run(measure(args.recording, (cols, rows), args.ticks, args.warmup))
    print(f"monitor at {args.size}, {args.ticks} samples of {args.recording.name} (after {args.warmup}), ms a sample:")
    for label in ("show_samples", "compositor", "all"):
        values = [1000 * v for v in per_tick.get(label, [0.0])]
        print(
            f"  {label:13} median {statistics.median(values):6.3f}  mean {statistics.fmean(values):6.3f}  "
            f"p90 {statistics.quantiles(values, n=10)[-1]:6.3f}"
        )


if __name__ == "__main__":
    main()
