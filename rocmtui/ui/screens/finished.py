"""The summary shown when a run ends, beside the curves: best accuracy, time, speed, peaks, run folder."""

from __future__ import annotations

import statistics

from textual.widgets import Static

from rocmtui.events import EpochCompleted
from rocmtui.ui.format import NA, fmt_acc, fmt_bytes, fmt_rate, fmt_span, fmt_temp
from rocmtui.ui.peaks import Peaks
from rocmtui.ui.run_state import RunState


def tracked_summary(state: RunState, peaks: Peaks) -> list[str]:
    """A script's run (``rocmtui.track()``): its steps, last values, time, peaks and folder."""
    done, failed, scalars = state.finished, state.failed, state.scalars
    if failed is not None:
        head = f"Run failed ({failed.kind}): {failed.message}"
    else:
        head = "Run finished" if done is None or done.reason == "completed" else f"Run {done.reason}"
    last = scalars.last
    values = dict(last.values) if last else {}
    values.update(scalars.last_epoch.values if scalars.last_epoch else {})
    shown = [f"{name[:18]:<19} {value:.6g}" for name, value in list(values.items())[:6]]
    run_dir = (done.run_dir if done else None) or (failed.run_dir if failed else None)
    run_dir = run_dir or (state.tracked.run_dir if state.tracked else NA)
    return [
        head,
        f"steps               {last.step if last else 0}",
        f"total time          {fmt_span(done.total_s if done else state.elapsed_s)}",
        f"run folder          {run_dir}",
        *shown,
        f"peak VRAM           {fmt_bytes(peaks.vram_bytes)}",
        f"peak temperature    {fmt_temp(peaks.temperature_c)}",
    ]


def time_to_accuracy(epochs: list[EpochCompleted], milestones: int = 3) -> str:
    """``41% at 1.2s, 42% at 1.5s``: when the test accuracy first reached each of the top whole percents.

    The time is the run's own clock at the end of that epoch (training and test passes, pauses excluded).
    """
    reached: list[tuple[int, float]] = []
    clock = 0.0
    for epoch in epochs:
        clock += epoch.seconds
        reached.append((int(100 * epoch.test_acc + 1e-9), clock))
    if not reached:
        return NA
    top = max(pct for pct, _ in reached)
    firsts: dict[float, int] = {}  # time -> the highest percent first reached then (one entry per moment)
    for pct in range(max(0, top - milestones + 1), top + 1):
        first = next((at for got, at in reached if got >= pct), None)
        if first is not None:
            firsts[first] = pct
    return ", ".join(f"{pct}% at {fmt_span(at)}" for at, pct in firsts.items())


def summary_lines(state: RunState, peaks: Peaks) -> list[str]:
    """The finished (or failed) run in a few labelled lines."""
    if state.started is None and (state.tracked is not None or state.scalars.any):
        return tracked_summary(state, peaks)
    done, failed = state.finished, state.failed
    if failed is not None:
        head = f"Training failed ({failed.kind}): {failed.message}"
    elif done is not None:
        head = "Training finished" if done.reason == "completed" else f"Training {done.reason}"
    else:
        head = "Training ended"
    best = state.best_epoch
    best_acc = done.best_test_acc if done and done.best_test_acc is not None else (best.test_acc if best else None)
    temp = fmt_temp(peaks.temperature_c)
    vram = fmt_bytes(peaks.vram_bytes)
    if done and done.peak_memory_bytes is not None:
        vram += f" (torch peak {fmt_bytes(done.peak_memory_bytes)})"
    run_dir = (done.run_dir if done else None) or (failed.run_dir if failed else None)
    run_dir = run_dir or (state.started.run_dir if state.started else NA)
    rates = [e.images_per_s for e in state.epochs if e.images_per_s > 0]
    return [
        head,
        f"best test accuracy  {fmt_acc(best_acc)}" + (f" (epoch {best.epoch + 1})" if best else ""),
        f"time to accuracy    {time_to_accuracy(state.epochs)}",
        f"epochs              {state.epochs_done}/{state.total_epochs}"
        if state.total_epochs
        else "epochs              -",
        f"total time          {fmt_span(done.total_s if done else state.elapsed_s)}",
        f"training speed      {fmt_rate(statistics.median(rates) if rates else None)} (median epoch)",
        f"run folder          {run_dir}",  # before the peaks: at 80x24 the card shows 7 lines
        f"whole run           {fmt_rate(done.images_per_s if done else None)} (with test passes and saves)",
        f"peak VRAM           {vram}",
        f"peak temperature    {temp}",
    ]


class SummaryCard(Static):
    """The run's summary in place of the epoch table once it ended (``TrainScreen.show_card``): the curves
    stay in view, and q quits."""

    def __init__(self, lines: list[str], failed: bool) -> None:
        super().__init__("\n".join(lines[1:]), id="summary-card", classes="-failed" if failed else "")
        self.lines = lines
        self.failed = failed
        self.border_title = lines[0]
        self.border_subtitle = "q: quit"
