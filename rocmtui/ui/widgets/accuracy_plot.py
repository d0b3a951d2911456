"""The second plot: a train run's accuracy per epoch first, or any other series of the run (``n``)."""

from __future__ import annotations

from collections.abc import Sequence

from rocmtui.ui.look.series_line import drawn_xs
from rocmtui.ui.state.compare import ComparedRun, run_color, run_colors
from rocmtui.ui.state.run_state import ACC_VIEW, RunState
from rocmtui.ui.state.scalars import EPOCH, GROUP
from rocmtui.ui.widgets.cursor_readout import Reading
from rocmtui.ui.widgets.scalar_plot import (
    EPOCH_SERIES_COLOR,
    GROUP_COLORS,
    SERIES_COLORS,
    draw_series,
    fit_percent,
    series_legend,
    step_end,
    steps_to,
    view_key,
)
from rocmtui.ui.widgets.throttled_plot import LEGEND_COLOR, ThrottledPlot

COLORS = {"train": "orange", "test": "green+"}


class AccuracyPlot(ThrottledPlot):
    """The second plot: one of the run's views (``rocmtui.ui.state.scalars``) at a time, cycled by ``next_series``.

    A train run's views start with train and test accuracy per epoch (%), then its other series (lr and
    images/s at each report, per-epoch images/s, time and losses); a tracked script's, its series other than
    the loss. Comparing runs: each run's test accuracy. Accuracy changes once per epoch, so the first view
    rarely redraws.
    """

    def __init__(self, state: RunState, *, id: str | None = None, runs: Sequence[ComparedRun] = ()) -> None:
        super().__init__(id=id, timeline=state.timeline)
        self.state = state
        self.runs = runs
        """Runs compared (more than one: each run's test accuracy in its colour)."""
        self.view: str | None = None
        """The key of the view shown (``Scalars.others``); None: the first. Kept by key, so that a series
        appearing later does not move the view."""
        if self.comparing:
            self.set_legend("Test %", run_colors(runs), own_row=True)
        else:
            self.set_legend(ACC_VIEW, COLORS)

    @property
    def tracked(self) -> bool:
        """A script's run (``rocmtui.track()``): its series against the step."""
        return self.state.started is None and self.state.scalars.any

    @property
    def comparing(self) -> bool:
        return len(self.runs) > 1 and not self.tracked

    @property
    def series_index(self) -> int:
        """Where the view shown is in the cycle (0 when it is not there yet)."""
        others = self.state.scalars.others()
        return others.index(self.view) if self.view in others else 0

    @property
    def shows_steps(self) -> bool:
        """The view shown changes at every report of the run, not once per epoch."""
        key = view_key(self.state.scalars, self.series_index)
        return key is not None and ":" not in key

    @property
    def scripts_compared(self) -> bool:
        """Scripts' runs compared: each run's series of the view shown, in the run's colour."""
        return len(self.runs) > 1 and self.tracked

    def next_series(self) -> None:
        """Show the run's next view, now (a key asked for it)."""
        if self.comparing:
            return
        self.view = view_key(self.state.scalars, self.series_index + 1)
        self.replot()

    def replot(self) -> None:
        if self.scripts_compared:
            self.set_legend(*self.compared_legend(), own_row=True)
        elif self.comparing:
            self.set_legend(self.with_view("Test %"), run_colors(self.runs), own_row=True)
        elif self.state.scalars.any:
            title, colors = series_legend(self.state.scalars, self.series_index)
            self.set_legend(self.with_view(title), colors)
        else:
            self.set_legend(self.with_view(ACC_VIEW), COLORS)
        super().replot()

    def with_view(self, title: str) -> str:
        """``title`` with the zoom and the log scale when they are on (the loss plot's title says its own)."""
        step_axis = self.state.scalars.x_name == "step"
        what = [self.zoom.step_name if step_axis else self.zoom.name] if not self.zoom.whole else []
        what += ["log"] if self.log_scale else []
        return f"{title} [{', '.join(what)}]" if what else title

    def compared_legend(self) -> tuple[str, dict[str, str]]:
        """The view's title, the runs that have its series in their colours, and which runs do not and why."""
        title, _ = series_legend(self.state.scalars, self.series_index)
        title = self.with_view(title)
        key = view_key(self.state.scalars, self.series_index)
        having: dict[str, str] = {}
        missing: list[str] = []
        for index, run in enumerate(self.runs):
            series = run.state.scalars.series(key) if key is not None else None
            if series is not None and len(series):
                having[run.label] = run_color(index)
            else:
                missing.append(run.label)
        if missing and key is not None:
            title = f"{title}; not logged by {', '.join(missing)}"
        return title, having

    def draw(self) -> None:
        if self.comparing:
            self.draw_compared()
            return
        if self.scripts_compared:
            self.draw_compared_scripts()
            return
        scalars, index = self.state.scalars, self.series_index
        if scalars.x_name == "epoch":
            members = scalars.members(view_key(scalars, index) or "")
            ends = [s.last_x for _, s in members if s.last_x is not None]
            last = max([*ends, self.state.loss.last_x or 0.0])
            self.zoom_from(last, steps_per_epoch=self.steps_per_epoch)
            draw_series(self, scalars, index)
            self.epoch_axis(self.state.total_epochs, last)
        else:
            draw_series(self, scalars, index)

    @property
    def steps_per_epoch(self) -> int | None:
        steps = self.state.last_steps
        return steps.steps_per_epoch if steps is not None else None

    def cursor_readings(self) -> list[Reading]:
        """Each run's test accuracy; one run: the series of the view shown (a step series raw and smoothed)."""
        if self.comparing:
            return self.compared_readings(self.runs, lambda state: state.scalars.epochs.get("test_acc"))
        scalars, x = self.state.scalars, self.native_x(self.state)
        key = view_key(scalars, self.series_index)
        if key is None:
            return []
        if key.startswith(GROUP):
            members = zip(scalars.members(key), GROUP_COLORS, strict=False)
            return [Reading(name, LEGEND_COLOR.get(color, ""), series, x) for (name, series), color in members]
        name = key.removeprefix(EPOCH)
        if key.startswith(EPOCH):
            return [Reading(name, LEGEND_COLOR[EPOCH_SERIES_COLOR], scalars.series(key), x)]
        weight = self.smoothing if self.smoothing > 0 else None
        return [Reading(name, LEGEND_COLOR[SERIES_COLORS["EMA"]], scalars.series(key), x, weight)]

    def draw_compared_scripts(self) -> None:
        """The view shown (a series of the main run) for each run that logged it, in the run's colour: a step
        series smoothed at the plot's weight, a per-epoch series point by point."""
        key = view_key(self.state.scalars, self.series_index)
        end = max([step_end(run.state.scalars) for run in self.runs] + [1.0])
        self.zoom_from(end, step_axis=True)
        for index, run in enumerate(self.runs):
            series = run.state.scalars.series(key) if key is not None and not key.startswith(GROUP) else None
            if series is None or not len(series):
                continue
            self.canvas.use(run.state.timeline)
            if key is not None and key.startswith(EPOCH):
                view = series.view()
                self.epoch_line(view.x, view.last, run_color(index))
            else:
                view = series.view(self.view_start, drawn_xs(self.size.width), self.smoothing)
                ys = view.smoothed if self.smoothing > 0 else view.last
                self.canvas.plot(view.x, ys, color=run_color(index), marker="braille")
        self.canvas.use(self.timeline)
        steps_to(self, end)

    def draw_compared(self) -> None:
        """Each run's test accuracy per epoch, in the run's colour."""
        drawn: list[float] = []
        last = max((float(run.state.epochs_done) for run in self.runs), default=0.0)
        last = max([last, *(run.state.loss.last_x or 0.0 for run in self.runs)])
        self.zoom_from(last, steps_per_epoch=self.steps_per_epoch)
        for index, run in enumerate(self.runs):
            self.canvas.use(run.state.timeline)
            epochs = run.state.epochs
            if epochs:
                ex = [float(e.epoch + 1) for e in epochs]
                drawn += (ys := [100.0 * e.test_acc for e in epochs])
                self.epoch_line(ex, ys, run_color(index))
        self.canvas.use(self.timeline)
        self.epoch_axis(max(run.state.total_epochs for run in self.runs), last)
        fit_percent(self, drawn)
