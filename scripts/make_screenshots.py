"""Screenshots for the README from real runs: the training screen mid-run and finished, and the monitor.

Everything shown is real: a training run of rocmtui's own engine on this machine (CPU or GPU) with
the live sampler beside it, and the monitor fed a real telemetry stream (sampled live here, or a
``rocmtui monitor --json`` recording passed with ``--monitor-recording``). Nothing is made up.

    python scripts/make_screenshots.py                          # CPU here: bundled CIFAR-10 sample
    python scripts/make_screenshots.py --train-args "cifar --model fastnet --epochs 4 --batch-size 512 --amp bf16"
    python scripts/make_screenshots.py --monitor-recording h200.jsonl --label h200

Writes ``screenshots/<label>-train-midrun.svg``, ``-train-finished``, ``-train-compact`` (80x24),
``-monitor`` and ``-monitor-compact`` (80x24), each with a PNG, and ``<label>-hardware.txt`` naming
the machine. SVG -> PNG uses ``rsvg-convert`` (``apt-get install -y librsvg2-bin``; used here) or,
if that is missing, the ``cairosvg`` package (``pip install cairosvg``); without either, SVG only.

Also imported by ``scripts/shoot_tracked.py`` and ``scripts/shoot_watch.py`` (``to_png``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot

from rocmtui import __version__
from rocmtui.cli.main import build_parser, monitor_config, train_config
from rocmtui.config import MonitorConfig, TrainConfig
from rocmtui.events import Emit, EpochCompleted, RunControl, StepsCompleted, TrainEvent
from rocmtui.gpu.detect import open_sampler
from rocmtui.gpu.replay import ManualReplay, ReplaySource
from rocmtui.gpu.sample import SampleSet
from rocmtui.ui.app import MonitorApp, create_monitor_app
from rocmtui.ui.train_app import TrainApp

TRAIN_SIZE = (120, 40)
COMPACT_SIZE = (80, 24)
MONITOR_SIZE = (120, 40)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "unknown"


class MidRunTap:
    """Wraps the real ``train``: half-way through the second epoch it holds the trainer inside
    ``emit`` until the picture is taken (``taken``), so a fast run is caught mid-run as it was."""

    def __init__(self, trainer: Callable[[TrainConfig, Emit, RunControl], object]) -> None:
        self.trainer = trainer
        self.reached = threading.Event()
        self.taken = threading.Event()
        self.epochs_seen = 0

    def __call__(self, config: TrainConfig, emit: Emit, control: RunControl) -> object:
        def tap(event: TrainEvent) -> None:
            emit(event)
            if isinstance(event, EpochCompleted):
                self.epochs_seen += 1
            halfway = isinstance(event, StepsCompleted) and event.epoch_step * 2 >= event.steps_per_epoch
            if halfway and self.epochs_seen >= min(1, config.epochs - 1) and not self.reached.is_set():
                self.reached.set()
                self.taken.wait(120)

        return self.trainer(config, tap, control)


async def settle(app: MonitorApp, pilot: Pilot[int]) -> None:
    """Let queued messages land and draw the plots once (they otherwise redraw on their own timer)."""
    await pilot.pause()
    if isinstance(app, TrainApp) and app.screen is app.train_screen:
        app.train_screen.replot_now()
    await pilot.pause()


async def wait(event: threading.Event, timeout: float) -> None:
    if not await asyncio.to_thread(event.wait, timeout):
        raise SystemExit(f"timed out after {timeout:.0f} s waiting for the run")


async def shoot_train(config: TrainConfig, monitor: MonitorConfig, out: Path, label: str, timeout: float) -> str:
    """Run a real training twice (120x40 mid-run and finished, then 80x24 mid-run); returns the device line."""
    from rocmtui.train.loop import train  # torch loads here, not for the monitor shots

    device = "unknown device"
    for size, names in ((TRAIN_SIZE, ("train-midrun", "train-finished")), (COMPACT_SIZE, ("train-compact", None))):
        tap = MidRunTap(train)
        app = TrainApp(config, tap, open_sampler(monitor), theme=monitor.theme)
        async with app.run_test(size=size) as pilot:
            await wait(tap.reached, timeout)
            await settle(app, pilot)
            save(app, out, f"{label}-{names[0]}")
            tap.taken.set()
            if names[1] is not None:
                await wait(app.trainer_done, timeout)
                await settle(app, pilot)
                save(app, out, f"{label}-{names[1]}")
            started = app.state.started
            if started is not None:
                device = f"{started.device_name} ({started.backend}, torch {started.torch_version})"
            app.control.request_stop()
            await wait(app.trainer_done, timeout)
    return device


async def shoot_monitor(stream: list[SampleSet], interval_s: float, out: Path, label: str) -> None:
    """Play a real SampleSet stream into the monitor at two sizes."""
    for size, name in ((MONITOR_SIZE, "monitor"), (COMPACT_SIZE, "monitor-compact")):
        replay = ManualReplay(stream, interval_s=interval_s)
        app = create_monitor_app(MonitorConfig(interval_s=interval_s), replay)
        async with app.run_test(size=size) as pilot:
            for _ in stream:
                replay.step()
                await pilot.pause()
            save(app, out, f"{label}-{name}")


def record_live(config: MonitorConfig, samples: int) -> list[SampleSet]:
    """Sample this machine ``samples`` times at the configured interval (real telemetry)."""
    sampler = open_sampler(config)
    try:
        recorded: list[SampleSet] = []
        for _ in range(samples):
            recorded.append(sampler.sample_now())
            time.sleep(config.interval_s)
    finally:
        sampler.stop()
    return recorded


def load_recording(path: Path, samples: int) -> list[SampleSet]:
    """The last ``samples`` SampleSets of a ``rocmtui monitor --json`` file."""
    source = ReplaySource.from_jsonl(path, history_len=samples)
    while source.step() is not None:
        pass
    return list(source.history())


def save(app: MonitorApp, out: Path, name: str) -> None:
    svg = out / f"{name}.svg"
    app.save_screenshot(filename=svg.name, path=str(out))
    png = to_png(svg)
    print(f"wrote {svg}" + (f" and {png}" if png else " (no SVG->PNG converter found)"))


def to_png(svg: Path) -> Path | None:
    png = svg.with_suffix(".png")
    if shutil.which("rsvg-convert"):
        subprocess.run(["rsvg-convert", "-o", str(png), str(svg)], check=True)
        return png
    try:
        import cairosvg  # type: ignore[import-not-found]  # optional converter
    except ImportError:
        return None
    cairosvg.svg2png(url=str(svg), write_to=str(png))
    return png


def describe(sample_set: SampleSet, device: str, monitor_source: str) -> str:
    gpus = ", ".join(f"{g.index}: {g.name}" for g in sample_set.gpus) or "none found"
    host = sample_set.host
    return (
        f"date (UTC): {time.strftime('%Y-%m-%d %H:%M', time.gmtime())}\n"
        f"rocmtui {__version__}, Python {platform.python_version()}, {platform.platform()}\n"
        f"CPU: {host.cpu_name or platform.processor() or 'unknown'} ({host.cpu_count} logical cores)\n"
        f"GPUs ({sample_set.backend}): {gpus}\n"
        f"training device: {device}\n"
        f"monitor shots: {monitor_source}\n"
    )


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("screenshots"))
    parser.add_argument("--label", help="file name prefix, e.g. cpu or h200 (default: from the hardware)")
    parser.add_argument("--train-args", default="cifar --epochs 3", help="arguments of 'rocmtui train'")
    parser.add_argument("--monitor-recording", type=Path, help="a 'rocmtui monitor --json' file to replay")
    parser.add_argument("--samples", type=int, default=20, help="telemetry samples to show in the monitor")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds to wait for the training run")
    parser.add_argument("--skip-train", action="store_true", help="only the monitor screenshots")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse(argv)
    cli = build_parser().parse_args(["train", *shlex.split(args.train_args)])
    config, monitor = train_config(cli), monitor_config(cli)
    monitor = MonitorConfig(interval_s=0.5, history_len=monitor.history_len, backend=monitor.backend)
    if args.monitor_recording:
        stream = load_recording(args.monitor_recording, args.samples)
    else:
        stream = record_live(monitor, args.samples)
    if not stream:
        raise SystemExit("no telemetry samples to show")
    first = stream[-1]
    label = args.label or (slug(first.gpus[0].name) if first.gpus else "cpu")
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    asyncio.run(shoot_monitor(stream, monitor.interval_s, out, label))
    device = "not run"
    if not args.skip_train:
        if "--runs-dir" not in args.train_args:
            os.chdir(tempfile.mkdtemp(prefix="rocmtui-screenshots-"))  # run folders: ./runs/... out of the repo
        device = asyncio.run(shoot_train(config, monitor, out, label, args.timeout))
    info = out / f"{label}-hardware.txt"
    source = (
        f"the 'rocmtui monitor --json' recording {args.monitor_recording.name}, replayed"
        if args.monitor_recording
        else "sampled live on this machine"
    )
    info.write_text(describe(first, device, source), encoding="utf-8")
    print(f"wrote {info}:\n{info.read_text(encoding='utf-8')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
