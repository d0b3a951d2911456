"""The summary shown when a run ends, beside the curves: best accuracy, time, speed, peaks, run folder."""

from __future__ import annotations

import statistics

from textual.widgets import Static

from rocmtui.run.milestones import time_to_accuracy
from rocmtui.ui.look.meters import NA, fmt_acc, fmt_bytes, fmt_rate, fmt_span, fmt_temp
from rocmtui.ui.look.safe_text import safe_text
from rocmtui.ui.state.peaks import Peaks
from rocmtui.ui.state.run_state import RunState


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


def summary_lines(state: RunState, peaks: Peaks) -> list[str]:
    """The finished (or failed) run in a few labelled lines."""
    if state.is_script:
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
        f"best test accuracy  {fmt_acc(best_acc)}"
        + (f" (epoch {best.epoch + 1})" if best else "")
        + (f"; {fmt_acc(done.tta_test_acc)} with TTA" if done and done.tta_test_acc is not None else ""),
        f"time to accuracy    {time_to_accuracy(state.epochs, done)}",
        f"epochs              {state.epochs_done}/{state.total_epochs}"
        if state.total_epochs
        else "epochs              -",
        f"total time          {fmt_span(done.total_s if done else state.elapsed_s)}",
        f"training speed      {fmt_rate(statistics.median(rates) if rates else None)} (median epoch)",
        f"run folder          {run_dir}",  # before the peaks: at 80x24 the card shows 7 lines
        f"whole run           {fmt_rate(done.images_per_s if done else None)} (test passes timed apart)",
        f"peak VRAM           {vram}",
        f"peak temperature    {temp}",
    ]


class SummaryCard(Static):
    """The run's summary in place of the epoch table once it ended (``TrainScreen.show_card``): the curves
    stay in view, and q quits."""

    def __init__(self, lines: list[str], failed: bool) -> None:
        super().__init__(
            safe_text("\n".join(lines[1:]), lines=True), id="summary-card", classes="-failed" if failed else ""
        )
        self.lines = lines
        self.failed = failed
        self.border_title = safe_text(lines[0])
        self.border_subtitle = "q: quit"
