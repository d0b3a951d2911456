"""The cursor's readout: each visible series' value at the cursor in its plot's title, and one line under the
loss plot with the x, the times and the GPU at that moment."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from rich.text import Text
from textual.markup import escape

from rocmtui.base.series import Series
from rocmtui.base.units import fmt_bytes
from rocmtui.ui.look.axis_ticks import elapsed_label
from rocmtui.ui.state.gpu_track import GpuMoment
from rocmtui.ui.state.run_state import RunState


@dataclass(frozen=True)
class Reading:
    """One series at the cursor, as its plot's title shows it."""

    name: str
    color: str
    """The legend's Textual colour name (``LEGEND_COLOR``)."""
    series: Series | None
    x: float | None
    """The series' run's own x at the cursor (None: that run has no point there)."""
    weight: float | None = None
    """The EMA's weight, for a series drawn smoothed (its smoothed value follows the raw one, after ``~``)."""

    def text(self, digits: int = 4) -> str:
        point = self.series.at(self.x, self.weight) if self.series is not None and self.x is not None else None
        name = f"{self.name} " if self.name else ""
        if point is None:
            return f"{name}-"
        smoothed = point.smoothed is not None and self.weight
        tail = f"~{value_text(point.smoothed or 0.0, digits)}" if smoothed else ""
        return f"{name}{value_text(point.value, digits)}{tail}"


def value_text(value: float, digits: int = 4) -> str:
    """``digits`` significant digits: a loss as 0.4312, an accuracy as 87.12, a throughput as 1.234e+04."""
    return f"{value:.{digits}g}" if math.isfinite(value) else "-"


def title_markup(readings: list[Reading], width: int = 1000) -> str:
    """The title while the cursor is shown: each series' value in its line's colour (names escaped), to four
    significant digits, or three when that does not fit ``width``."""
    texts = [r.text() for r in readings]
    if sum(len(t) + 2 for t in texts) > width:
        texts = [r.text(3) for r in readings]
    return " ".join(f"[{r.color}]━{escape(t)}[/]" for r, t in zip(readings, texts, strict=True))


def x_text(state: RunState, x: float) -> str:
    """The cursor's x: ``step 470``, or for a train run ``ep 2.40 step 470``."""
    if state.scalars.x_name != "epoch":
        return f"step {round(x)}"
    steps = state.last_steps.steps_per_epoch if state.last_steps is not None else 0
    return f"ep {x:.2f}" + (f" step {round(x * steps)}" if steps else "")


def gpu_text(moment: GpuMoment | None, *, long: bool = True) -> str:
    """``GPU 87% mem 12.0 GiB 45%`` (short: ``GPU 87% 12.0 GiB``); of several GPUs, the busiest and fullest."""
    if moment is None:
        return "GPU -"
    util = "-" if moment.util_pct is None else f"{moment.util_pct:.0f}%"
    memory = "" if moment.memory_bytes is None else f" {'mem ' if long else ''}{fmt_bytes(moment.memory_bytes)}"
    if moment.memory_pct is not None and long:
        memory += f" {moment.memory_pct:.0f}%"
    which = "GPU" if moment.gpus <= 1 else (f"max of {moment.gpus} GPUs" if long else f"{moment.gpus} GPUs")
    return f"{which} {util}{memory}"


def readout_line(
    state: RunState, x: float | None, gpu: GpuMoment | None, wall: float | None, *, width: int, has_gpu: bool = True
) -> Text:
    """The main run at the cursor: ``ep 2.40 step 470 · +1m02 · GPU 87% mem 12.0 GiB 45% · 14:02:11``, or a
    shorter form that fits ``width`` (``ep 2.40 · +1m02 · GPU 87% 12.0 GiB · 14:02:11``, then without the wall
    clock); without ``has_gpu`` (a run with no GPU samples) no GPU part."""
    if x is None:
        return Text("cursor: no point of this run here", style="dim")
    elapsed = state.timeline.at(x, "elapsed")
    since = [f"+{elapsed_label(round(elapsed, 1))}"] if elapsed is not None else []
    clock = [time.strftime("%H:%M:%S", time.localtime(wall))] if wall is not None else []
    short_x = x_text(state, x).split(" step ")[0]
    variants = [
        [x_text(state, x), *since, *([gpu_text(gpu)] if has_gpu else []), *clock],
        [short_x, *since, *([gpu_text(gpu, long=False)] if has_gpu else []), *clock],
        [short_x, *since, *([gpu_text(gpu, long=False)] if has_gpu else [])],
    ]
    lines = [" · ".join(parts) for parts in variants]
    line = next((line for line in lines if len(line) <= width), lines[-1])
    return Text(line, style="bold", no_wrap=True, overflow="crop")
