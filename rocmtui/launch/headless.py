"""``rocmtui train --headless``: plain lines for a log file; Ctrl-C, SIGTERM or SIGHUP stop with a checkpoint."""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Callable
from types import FrameType
from typing import TextIO

from rocmtui.base.text import plain
from rocmtui.base.units import fmt_acc, fmt_bytes
from rocmtui.config import MonitorConfig, TrainConfig
from rocmtui.events import (
    EpochCompleted,
    LogMessage,
    RunControl,
    RunFailed,
    RunFinished,
    RunStarted,
    StepsCompleted,
    TrainEvent,
)
from rocmtui.run.fold import RunFold
from rocmtui.run.milestones import time_to_accuracy
from rocmtui.run.outcome import exit_code
from rocmtui.train.loop import train
from rocmtui.train.plan import plan_run

PROGRESS_EVERY_S = 5.0
HANGUP = getattr(signal, "SIGHUP", None)
STOP_SIGNALS = tuple(s for s in (signal.SIGINT, signal.SIGTERM, HANGUP) if s is not None)


class LinePrinter:
    """Turns events into lines: one per epoch, a progress line at most every ``every_s`` seconds."""

    def __init__(self, out: TextIO, every_s: float = PROGRESS_EVERY_S, err: TextIO | None = None) -> None:
        self.out, self.every_s = out, every_s
        self.err = err or out
        """Where failures go: stderr, so that ``--headless > train.log`` still shows them at the terminal."""
        self.fold = RunFold()
        """The run so far (its epochs, for the time to accuracy): the fold every viewer uses."""
        self.last_progress = time.monotonic()
        self.closed = False

    def __call__(self, event: TrainEvent) -> None:
        line = self.format(event)
        if line is None or self.closed:
            return
        stream = self.err if isinstance(event, RunFailed) else self.out
        try:
            stream.write(plain(line, lines=True) + "\n")  # paths and messages may hold outside text
            stream.flush()
        except OSError:  # the reader went away (``| head``): keep training and saving, stop printing
            self.closed = True

    def format(self, event: TrainEvent) -> str | None:  # noqa: PLR0911 - one return per event type
        self.fold.apply(event)
        if isinstance(event, RunStarted):
            self.last_progress = time.monotonic()
            return (
                f"rocmtui: training {event.config.model} on {event.dataset} ({event.train_size:,} train / "
                f"{event.test_size:,} test images) on {event.device} ({event.device_name}, {event.backend}, "
                f"torch {event.torch_version}); run folder {event.run_dir}"
            )
        if isinstance(event, StepsCompleted):
            now = time.monotonic()
            if now - self.last_progress < self.every_s:
                return None
            self.last_progress = now
            loss = sum(event.losses) / len(event.losses)
            return (
                f"  epoch {event.epoch + 1}/{self.fold.total_epochs}  step {event.epoch_step}/{event.steps_per_epoch}  "
                f"loss {loss:.4f}  {event.images_per_s:,.0f} img/s  {event.elapsed_s:.1f}s"
            )
        if isinstance(event, EpochCompleted):
            self.last_progress = time.monotonic()
            return (
                f"epoch {event.epoch + 1}/{event.epochs}  train loss {event.train_loss:.4f} acc "
                f"{fmt_acc(event.train_acc)}  test loss {event.test_loss:.4f} acc {fmt_acc(event.test_acc)}  "
                f"{event.seconds:.2f}s (test {event.eval_s:.2f}s)  {event.images_per_s:,.0f} img/s"
                f"{'  best' if event.is_best else ''}"
            )
        if isinstance(event, LogMessage):
            return f"{event.level}: {event.message}"
        if isinstance(event, RunFinished):
            return _finished_lines(event, self.fold.epochs)
        if isinstance(event, RunFailed):
            return f"failed ({event.kind}): {event.message}" + (
                f"\nrun folder: {event.run_dir}" if event.run_dir else ""
            )
        return None  # the events of tracked scripts (rocmtui.track()): train() never sends them


def _finished_lines(event: RunFinished, epochs: list[EpochCompleted]) -> str:
    peak = "" if event.peak_memory_bytes is None else f", peak memory {fmt_bytes(event.peak_memory_bytes)}"
    tta = "" if event.tta_test_acc is None else f", {fmt_acc(event.tta_test_acc)} with test-time augmentation"
    tests = f" (and {event.eval_s:.2f}s of test passes)" if event.eval_s else ""
    lines = [
        f"{event.reason}: {event.epochs_completed} epoch(s), test acc {fmt_acc(event.final_test_acc)} "
        f"(best {fmt_acc(event.best_test_acc)}){tta}, {event.total_s:.2f}s of training{tests}, "
        f"{event.images_per_s:,.0f} img/s{peak}"
    ]
    if epochs:
        lines.append(f"time to accuracy: {time_to_accuracy(epochs, event)}")
    return "\n".join([*lines, f"run folder: {event.run_dir}"])


def run_headless(config: TrainConfig, *, detach: bool = False, telemetry: MonitorConfig | None = None) -> int:
    """Train without a UI; the exit code is ``rocmtui.run.outcome``'s (128+N when signal N stopped it).

    Ctrl-C, SIGTERM and SIGHUP stop with a checkpoint; with ``detach`` a hangup is ignored and the run
    trains on (its lines stop when the terminal is gone; the run folder has everything). ``telemetry``:
    the GPU samples recorded in the run folder (default settings when None).
    """
    plan = plan_run(config)  # a bad checkpoint or device is a usage error (exit 2), before anything starts
    control = RunControl()
    received: list[int] = []

    def on_signal(signum: int, _frame: FrameType | None) -> None:
        received.append(signum)
        control.request_stop()

    handlers: dict[int, signal.Handlers | Callable[[int, FrameType | None], None]]
    handlers = dict.fromkeys(STOP_SIGNALS, on_signal)
    if detach and HANGUP is not None:
        handlers[HANGUP] = signal.SIG_IGN
    previous = {sig: signal.signal(sig, handler) for sig, handler in handlers.items()}
    try:
        printer = LinePrinter(sys.stdout, err=sys.stderr)
        if plan.launches_ranks:
            from rocmtui.launch.rank_processes import launch_ranks

            summary = launch_ranks(
                plan,
                printer,
                control,
                telemetry=telemetry or MonitorConfig(),
                interrupt_stops=True,
                hangup_stops=not detach,
            )
        else:
            summary = train(plan, printer, control, telemetry=telemetry or MonitorConfig())
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if received:
        return 128 + received[0]
    return exit_code(summary.event)
