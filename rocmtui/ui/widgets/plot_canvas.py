"""What a plot's drawing code draws on: plotext's figure, with x mapped to the axis shown and round ticks.

The drawing code of each plot speaks in its run's own x (epochs or steps). The canvas maps each x to the
axis shown (``XMode``: x itself, the run's clock, or the wall clock, through the run's ``Timeline``), keeps
the ranges drawn, and finishes the axes: ticks at round values on y (decades in log scale), and in the time
modes a time axis over what was drawn in place of the one the drawing code asked for.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from textual_plotext.plot import Plot

from rocmtui.base.ticks import ONE_TWO_FIVE, nice_ticks
from rocmtui.ui.look.axis_ticks import (
    clock_label,
    elapsed_label,
    labelled,
    local_offset_s,
    log_ticks,
    time_step,
    time_ticks,
)
from rocmtui.ui.state.cursor import XMode
from rocmtui.ui.state.timeline import Timeline

LABEL_MIN = 3
"""Columns of the y axis' labels at least: the GPU strip's names (``gpu``, ``mem``) fit beside it."""
X_NAMES = {"time": "time since start", "wall": "wall clock"}


def y_ticks(low: float, high: float, rows: int) -> list[float]:
    """Round values for a plot ``rows`` high, at most one every other data row (the rows over the x axis and
    its labels): plotext draws two ticks that fall in one row over each other."""
    most = max(2, (rows - 1) // 2)
    finer: list[float] = []
    for count in range(5, 0, -1):
        ticks = nice_ticks(low, high, count, multiples=ONE_TWO_FIVE)
        if len(ticks) <= most:
            break
        finer = ticks
    if len(ticks) < 2 and len(finer) >= 2:  # one tick says no scale: every other tick of the finer step
        thinned = finer[:: math.ceil(len(finer) / most)]
        ticks = thinned if len(thinned) >= 2 else ticks
    return ticks


class PlotCanvas:
    """The plotext calls the plots make, with x mapped (``use``) and the ranges drawn recorded."""

    def __init__(self, plot: Plot) -> None:
        self.figure = plot
        self.mode: XMode = "step"
        self.timeline: Timeline | None = None
        """The run whose x the next lines are drawn in (``use``)."""
        self.reset()

    def reset(self) -> None:
        """A new picture: nothing drawn, no range set."""
        self.x_low = math.inf
        self.x_high = -math.inf
        self.y_low = math.inf
        self.y_high = -math.inf
        self.x_limits: tuple[float, float] | None = None
        """What the drawing code asked for x, in the run's own x."""
        self.y_limits: tuple[float, float] | None = None
        self.log = False
        self.x_range: tuple[float, float] | None = None
        """The x axis shown, in the axis' units, once ``finish`` has set it."""
        self.clip_from = -math.inf
        """Points at a run's x before this are left out (a zoom: the y axis fits what is shown)."""

    def use(self, timeline: Timeline) -> None:
        """Lines from here on are of the run of this timeline."""
        self.timeline = timeline

    @property
    def timed(self) -> bool:
        return self.mode != "step"

    def to_axis(self, x: float, timeline: Timeline | None = None) -> float:
        """A run's x on the axis shown (NaN when the run has no time for it yet)."""
        if self.mode == "step":
            return x
        line = timeline or self.timeline
        value = line.at(x, "elapsed" if self.mode == "time" else "wall") if line is not None else None
        return math.nan if value is None else value

    def _points(self, xs: Sequence[float], ys: Sequence[float]) -> tuple[list[float], list[float]]:
        if self.clip_from > -math.inf:
            kept = [(x, y) for x, y in zip(xs, ys, strict=False) if x >= self.clip_from]
            xs, ys = [x for x, _ in kept], [y for _, y in kept]
        mapped = [self.to_axis(x) for x in xs] if self.timed else list(xs)
        pairs = [(x, y) for x, y in zip(mapped, ys, strict=False) if math.isfinite(x) and math.isfinite(y)]
        if self.log:
            pairs = [(x, y) for x, y in pairs if y > 0]
        for x, y in pairs:
            self.x_low, self.x_high = min(self.x_low, x), max(self.x_high, x)
            self.y_low, self.y_high = min(self.y_low, y), max(self.y_high, y)
        return [x for x, _ in pairs], [y for _, y in pairs]

    def plot(self, xs: Sequence[float], ys: Sequence[float], **style: Any) -> None:
        xs, ys = self._points(xs, ys)
        if xs:
            self.figure.plot(xs, ys, **style)

    def scatter(self, xs: Sequence[float], ys: Sequence[float], **style: Any) -> None:
        xs, ys = self._points(xs, ys)
        if xs:
            self.figure.scatter(xs, ys, **style)

    def xlim(self, low: float, high: float) -> None:
        self.x_limits = (low, high)
        if not self.timed:
            self.figure.xlim(low, high)

    def xticks(self, ticks: Sequence[float], labels: Sequence[str] | None = None) -> None:
        if not self.timed:
            self.figure.xticks(list(ticks), None if labels is None else list(labels))

    def xlabel(self, label: str) -> None:
        self.figure.xlabel(X_NAMES.get(self.mode, label))

    def ylim(self, low: float, high: float) -> None:
        """On a log axis (``yscale``), plotext takes the limits as log10 of the values."""
        self.y_limits = (low, high)
        self.figure.ylim(low, high)

    def yscale(self, scale: str) -> None:
        self.log = scale == "log"
        self.figure.yscale(scale)

    def finish(self, rows: int) -> None:
        """Round ticks on y for a plot ``rows`` high; in the time modes, the time axis."""
        self._finish_y(rows)
        if self.timed:
            self._finish_time()
        elif self.x_limits is not None:
            self.x_range = self.x_limits
        elif self.x_low <= self.x_high:
            self.x_range = (self.x_low, self.x_high)

    def _finish_y(self, rows: int) -> None:
        low, high = self.y_limits or (self.y_low, self.y_high)
        if self.log and self.y_limits is not None:
            low, high = 10.0**low, 10.0**high
        if not low <= high:
            return
        ticks = log_ticks(low, high) if self.log else y_ticks(low, high, rows)
        if ticks:
            self.figure.yticks(ticks, [label.rjust(LABEL_MIN) for label in labelled(ticks)])

    def _finish_time(self) -> None:
        if not self.x_low <= self.x_high:
            return
        low = self.x_low
        if self.x_limits is not None:  # the start the drawing code asked for (a zoom's), where it is known
            start = self.to_axis(self.x_limits[0], self.timeline)
            low = start if math.isfinite(start) and start < self.x_high else low
        high = max(self.x_high, low + 1.0)
        high = low + (high - low) * 1.02
        self.x_range = (low, high)
        self.figure.xlim(low, high)
        if self.mode == "wall":
            offset = local_offset_s(high)
            ticks = time_ticks(low, high, 4, offset)
            step = time_step(high - low, 4)
            self.figure.xticks(ticks, [clock_label(t, step) for t in ticks])
        else:
            ticks = time_ticks(low, high, 4)
            self.figure.xticks(ticks, [elapsed_label(t) for t in ticks])

    def vline(self, x: float, color: str) -> None:
        self.figure.vline(x, color)
