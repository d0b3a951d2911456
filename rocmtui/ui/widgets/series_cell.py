"""One cell of the grid of every series: a small plot of one series of the run, its y range fitted to it.

A per-step series is drawn as the loss plot draws its loss (each point faint, the EMA over it); a per-epoch one
as a point at each epoch. On a log axis the values at or below zero are left out and the title says how many.
Runs compared (``watch RUN1 RUN2``): each run's line of the series (a per-step one smoothed), in the run's colour,
the runs named in the legend. The grid assigns each cell a series (``assign``) and redraws it when its data
changed (``stale``), at most once per ``PLOT_PERIOD_S`` like every other plot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rocmtui.base.series import SeriesView
from rocmtui.ui.look.series_line import drawn_xs, envelope
from rocmtui.ui.look.y_range import accuracy_bounds, fitted_range, log_range
from rocmtui.ui.state.compare import ComparedRun, run_color, run_colors
from rocmtui.ui.state.grid import key_label
from rocmtui.ui.state.run_state import RunState
from rocmtui.ui.state.scalars import EPOCH
from rocmtui.ui.widgets.scalar_plot import step_end, steps_to
from rocmtui.ui.widgets.throttled_plot import ThrottledPlot

STEP_COLORS = ("gray", "cyan+")
"""Each point of a per-step series, and its EMA."""
EPOCH_COLOR = "green+"


@dataclass(frozen=True)
class Lines:
    """What a cell draws: (x, y) lines, faint first, and the values they span (None: nothing to draw)."""

    lines: tuple[tuple[list[float], list[float]], ...]
    span: tuple[float, float] | None
    left_out: int = 0
    """Points not drawn: at or below zero on a log axis."""


def positive(xs: list[float], ys: list[float]) -> tuple[list[float], list[float]]:
    pairs = [(x, y) for x, y in zip(xs, ys, strict=True) if y > 0]
    return [x for x, _ in pairs], [y for _, y in pairs]


def cell_lines(view: SeriesView, per_epoch: bool, log_scale: bool, *, overlay: bool = False) -> Lines:
    """The lines of one series' view: a per-epoch one its last values, a per-step one its envelope and EMA
    (``overlay``, one run among others: its EMA alone, or its values when not smoothed)."""
    if per_epoch:
        lines = [(view.x, view.last)]
    elif overlay:
        lines = [(view.x, view.smoothed if view.smoothed else view.last)]
    else:
        lines = [envelope(view), (view.x, view.smoothed)]
    left_out = 0
    if log_scale:
        kept = [positive(xs, ys) for xs, ys in lines]
        left_out = len(lines[0][1]) - len(kept[0][1])
        lines = kept
    values = [y for _, ys in lines for y in ys]
    span = (min(values), max(values)) if values else None
    return Lines(tuple(lines), span, left_out)


class SeriesCell(ThrottledPlot):
    """A small plot of the series ``key`` of ``state``'s scalars (None: an empty cell, hidden); ``runs``, more
    than one: the runs compared, ``state``'s first, each run's series overlaid."""

    def __init__(self, state: RunState, runs: Sequence[ComparedRun] = ()) -> None:
        super().__init__(classes="series-cell")
        self.state = state
        self.runs = list(runs) if len(runs) > 1 else []
        self.key: str | None = None
        self.log_scale = False
        self.drawn: tuple[object, ...] = ()
        """What the last redraw drew: the key, the axis and the series' length and last point."""

    def assign(self, key: str | None, log_scale: bool, selected: bool) -> None:
        """Show ``key`` (on a log axis or not); ``selected`` frames the cell."""
        self.set_class(selected, "-selected")
        self.display = key is not None
        if (key, log_scale) != (self.key, self.log_scale):
            self.key, self.log_scale = key, log_scale
            self.mark_dirty()

    @property
    def states(self) -> list[RunState]:
        """The runs drawn: the compared ones, or the one."""
        return [run.state for run in self.runs] or [self.state]

    def signature(self) -> tuple[object, ...]:
        drawn: list[object] = [self.key, self.log_scale, self.zoom, self.smoothing]
        for state in self.states:
            series = state.scalars.series(self.key) if self.key is not None else None
            if series is not None:
                drawn += [len(series), series.last_x, series.last_value]
        return tuple(drawn)

    @property
    def stale(self) -> bool:
        """Shown, and its data (or what it draws) changed since it was last drawn."""
        return self.key is not None and (self.dirty or self.signature() != self.drawn)

    def replot(self) -> None:
        self.drawn = self.signature()
        self.set_legend(self.title(), run_colors(self.runs), own_row=True)
        super().replot()

    @property
    def per_epoch(self) -> bool:
        return bool(self.key and self.key.startswith(EPOCH))

    def lines(self, state: RunState | None = None) -> Lines:
        """The lines of ``state``'s series (the cell's own run by default)."""
        series = (state or self.state).scalars.series(self.key) if self.key is not None else None
        if series is None or not len(series):
            return Lines((), None)
        view = series.view(self.view_start, drawn_xs(self.size.width), self.smoothing)
        return cell_lines(view, self.per_epoch, self.log_scale, overlay=bool(self.runs))

    def title(self) -> str:
        if self.key is None:
            return ""
        series = self.state.scalars.series(self.key)
        last = series.last_value if series is not None else None
        title = key_label(self.key) + (f" {last:.4g}" if last is not None else "")
        if not self.log_scale:
            return title
        left_out = sum(self.lines(state).left_out for state in self.states)
        return f"{title} (log, {left_out} ≤ 0 left out)" if left_out else f"{title} (log)"

    def draw(self) -> None:
        if self.key is None:
            return
        steps = self.state.last_steps
        self.zoom_from(
            self.x_end(),
            steps_per_epoch=steps.steps_per_epoch if steps is not None else None,
            step_axis=self.state.scalars.x_name != "epoch",
        )
        if self.runs:
            self.draw_compared()
            return
        drawn = self.lines()
        if len(drawn.lines) == 1 and drawn.lines[0][0]:
            self.epoch_line(*drawn.lines[0], EPOCH_COLOR)
        elif len(drawn.lines) == 2:
            for (xs, ys), color in zip(drawn.lines, STEP_COLORS, strict=True):
                if xs:
                    self.canvas.plot(xs, ys, color=color, marker="braille")
        if drawn.span is not None:
            self.y_axis(*drawn.span)
        self.x_axis()

    def draw_compared(self) -> None:
        """Each run's line, in its colour; y over all of them, x over the longest run."""
        spans: list[tuple[float, float]] = []
        for index, run in enumerate(self.runs):
            drawn = self.lines(run.state)
            self.canvas.use(run.state.timeline)
            for xs, ys in drawn.lines:
                if xs and self.per_epoch:
                    self.epoch_line(xs, ys, run_color(index))
                elif xs:
                    self.canvas.plot(xs, ys, color=run_color(index), marker="braille")
            spans += [drawn.span] if drawn.span is not None else []
        self.canvas.use(self.timeline)
        if spans:
            self.y_axis(min(low for low, _ in spans), max(high for _, high in spans))
        self.x_axis()

    def y_axis(self, low: float, high: float) -> None:
        if self.log_scale:
            self.canvas.yscale("log")
            self.canvas.ylim(*log_range(low, high))
        else:
            self.canvas.ylim(*fitted_range(low, high, accuracy_bounds(self.key or "", low, high)))

    def x_end(self) -> float:
        """Where x ends in every cell: the newest epoch (a train run) or step (a script's) of the runs drawn."""
        if self.state.scalars.x_name == "epoch":
            return max(state.loss.last_x or float(state.epochs_done) for state in self.states)
        return max(step_end(state.scalars) for state in self.states)

    def x_axis(self) -> None:
        """The run's x range (zoomed: its newest part), the same in every cell: epochs (a train run) or steps (a
        script's)."""
        if self.state.scalars.x_name == "epoch":
            self.epoch_axis(max(state.total_epochs for state in self.states), self.x_end())
        else:
            steps_to(self, self.x_end())
