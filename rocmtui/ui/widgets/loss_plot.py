"""Training loss: every step (faint), its EMA, and the per-epoch train and test loss."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial

from rich.text import Text

from rocmtui.base.series import Series
from rocmtui.ui.look.series_line import drawn_xs, envelope
from rocmtui.ui.state.compare import ComparedRun, run_color, run_colors
from rocmtui.ui.state.gpu_track import GpuMoment, GpuTrack
from rocmtui.ui.state.run_state import RunState
from rocmtui.ui.state.zoom import WINDOWS
from rocmtui.ui.widgets.cursor_readout import Reading, readout_line
from rocmtui.ui.widgets.gpu_strip import strip_lines
from rocmtui.ui.widgets.scalar_plot import draw_compared_losses, draw_loss, loss_legend
from rocmtui.ui.widgets.throttled_plot import LEGEND_COLOR, ThrottledPlot

COLORS = {"EMA": "cyan+", "step": "gray", "train": "orange", "test": "magenta+"}
"""Plotext colour of each line; the legend in the title uses the same names (the EMA first, with its weight:
at 80 columns the end of the legend is cut)."""


STRIP_MIN_HEIGHT = 7
"""A loss plot at least this high keeps a row under it for the GPU's utilisation; two rows (utilisation and
memory) from ``STRIP_MIN_HEIGHT + 4``."""


def smoothing_name(weight: float) -> str:
    return f"EMA {weight:g}" if weight > 0 else "EMA off"


class LossPlot(ThrottledPlot):
    """Loss against epochs; ``log_scale`` switches the y axis, ``smoothing`` weighs the EMA line,
    ``window`` zooms on the newest epochs. The keys change them; each change redraws at once."""

    def __init__(self, state: RunState, *, id: str | None = None, runs: Sequence[ComparedRun] = ()) -> None:
        super().__init__(id=id, timeline=state.timeline)
        self.state = state
        self.runs = runs
        """Runs compared (more than one: each run's smoothed loss and test loss in its colour)."""
        self.gpu_track = GpuTrack()
        """The main run's GPU samples (the screen records them), drawn in a strip under the curves."""
        self.show_legend()

    def view_changed(self) -> None:
        """The log scale, the smoothing or the zoom changed: the legend says so, the plot redraws."""
        self.show_legend()
        self.replot()

    @property
    def window(self) -> float | None:
        """Epochs shown, newest last; None: the whole run."""
        steps = self.state.last_steps
        return self.zoom.span(steps.steps_per_epoch if steps is not None else None)

    def show_legend(self) -> None:
        if self.tracked and len(self.runs) > 1:
            what = [smoothing_name(self.smoothing)] + (["log"] if self.log_scale else [])
            what += [self.zoom.step_name] if not self.zoom.whole else []
            name = self.state.scalars.loss_name or "loss"
            self.set_legend(f"{name} ({', '.join(what)})", run_colors(self.runs), own_row=True)
            return
        if self.tracked:
            title, colors = loss_legend(self.state.scalars, self.log_scale)
            title += f" ({self.zoom.step_name})" if not self.zoom.whole else ""
        elif self.comparing:
            what = [smoothing_name(self.smoothing), "● test"]
            what += [self.zoom.name] if self.zoom != WINDOWS[0] else []
            what += ["log"] if self.log_scale else []
            title = f"Loss ({', '.join(what)})"
            self.set_legend(title, run_colors(self.runs), own_row=True)
            return
        else:
            what = [self.zoom.name] if self.zoom != WINDOWS[0] else []
            what += ["log"] if self.log_scale else []
            title = f"Loss ({', '.join(what)})" if what else "Loss"
            colors = dict(COLORS)
        self.set_legend(title, {smoothing_name(self.smoothing) if k == "EMA" else k: c for k, c in colors.items()})

    @property
    def tracked(self) -> bool:
        """A script's run (``rocmtui.track()``): its own series against the step."""
        return self.state.started is None and self.state.scalars.any

    @property
    def comparing(self) -> bool:
        return len(self.runs) > 1 and not self.tracked

    def replot(self) -> None:
        if self.tracked:
            self.show_legend()
        super().replot()

    def strip_rows(self, height: int) -> int:
        """Rows of the GPU strip under a plot ``height`` high (one for the line saying there are no samples)."""
        if height < STRIP_MIN_HEIGHT:
            return 0
        return 1 if height < STRIP_MIN_HEIGHT + 4 or not len(self.gpu_track) else 2

    def rows_under(self, height: int) -> int:
        return self.strip_rows(height) + (1 if self.plot_view.cursor is not None and height >= 5 else 0)

    def lines_under(self, width: int, rows: int) -> list[Text]:
        """The GPU strip, then the cursor's readout line (the main run's x, times and GPU)."""
        strip = self.strip_rows(self.size.height - self.legend_rows)
        canvas, view, timeline = self.canvas, self.plot_view, self.timeline
        lines: list[Text] = []
        if strip:
            drawn_to = canvas.x_high if canvas.x_low <= canvas.x_high else -float("inf")
            wall_at = partial(view.wall_at, timeline=timeline)
            lines += strip_lines(
                self.gpu_track,
                wall_at,
                axis=canvas.x_range,
                drawn_to=drawn_to,
                left=self.plot_left,
                width=width,
                rows=strip,
            )
        if view.cursor is not None and len(lines) < rows:
            x = self.native_x(self.state)
            wall = view.wall_at(view.cursor, timeline)
            track = self.gpu_track
            moment = self.gpu_at_cursor(view.cursor)
            lines.append(readout_line(self.state, x, moment, wall, width=width, has_gpu=len(track) > 0))
        return lines[:rows]

    def gpu_at_cursor(self, cursor: float) -> GpuMoment | None:
        """The GPU in the strip's column under the cursor (the readout and the strip agree)."""
        x_range, span = self.canvas.x_range, self.column_span
        if x_range is None or span <= 0:
            return None
        start = x_range[0] + math.floor((cursor - x_range[0]) / span) * span
        walls = [self.plot_view.wall_at(edge, self.timeline) for edge in (start, start + span)]
        if walls[0] is None or walls[1] is None:
            return None
        return self.gpu_track.moment(walls[0], walls[1])

    def cursor_readings(self) -> list[Reading]:
        """Each run's loss (raw and smoothed); one run: its per-epoch losses as well."""
        weight = self.smoothing if self.smoothing > 0 else None
        if len(self.runs) > 1:
            return self.compared_readings(self.runs, self.loss_series, weight)
        state, x = self.state, self.native_x(self.state)
        name = (state.scalars.loss_name or "loss") if self.tracked else "loss"
        readings = [Reading(name, LEGEND_COLOR["cyan+"], self.loss_series(state), x, weight)]
        if self.tracked:
            _, colors = loss_legend(state.scalars, self.log_scale)
            epochs = [(n, colors[n]) for n in state.scalars.epoch_losses()]
        else:
            epochs = [("train_loss", COLORS["train"]), ("test_loss", COLORS["test"])]
        for series_name, color in epochs:
            label = series_name.removesuffix("_loss") if not self.tracked else series_name
            readings.append(Reading(label, LEGEND_COLOR.get(color, ""), state.scalars.epochs.get(series_name), x))
        return readings

    def loss_series(self, state: RunState) -> Series | None:
        """The per-step loss this plot draws for a run."""
        if state.started is None and state.scalars.any:
            name = state.scalars.loss_name
            return state.scalars.steps.get(name) if name is not None else None
        return state.loss

    def draw(self) -> None:
        if self.tracked and len(self.runs) > 1:
            pairs = [(run.state, run_color(i)) for i, run in enumerate(self.runs)]
            draw_compared_losses(self, pairs, self.log_scale)
            return
        if self.tracked:
            draw_loss(self, self.state.scalars, self.log_scale)
            return
        if self.comparing:
            self.draw_compared()
            return
        plt, state = self.canvas, self.state
        series = state.loss
        last_x = series.last_x if series.last_x is not None else float(state.epochs_done)
        window = self.window
        low = max(0.0, last_x - window) if window is not None else 0.0
        if len(series):
            view = series.view(low, drawn_xs(self.size.width), self.smoothing)  # the EMA is of the whole run
            if self.smoothing > 0:
                plt.plot(*envelope(view), color=COLORS["step"], marker="braille")
                plt.plot(view.x, view.smoothed, color=COLORS["EMA"], marker="braille")
            else:  # no smoothing: the raw line alone, in the smoothed line's colour
                plt.plot(*envelope(view), color=COLORS["EMA"], marker="braille")
        epochs = [e for e in state.epochs if e.epoch + 1 >= low]
        if epochs:
            ex = [float(e.epoch + 1) for e in epochs]
            self.epoch_line(ex, [e.train_loss for e in epochs], COLORS["train"])
            self.epoch_line(ex, [e.test_loss for e in epochs], COLORS["test"])
        if self.log_scale:
            plt.yscale("log")
        if window is None:
            self.epoch_axis(state.total_epochs, last_x)
        else:
            self.window_axis(low, last_x if last_x > low else low + window)

    def draw_compared(self) -> None:
        """Each run's smoothed per-step loss and its per-epoch test loss, in the run's colour."""
        plt = self.canvas
        ends = [run.state.loss.last_x for run in self.runs]
        last_x = max([*(x for x in ends if x is not None), *(float(run.state.epochs_done) for run in self.runs)])
        window = self.window
        low = max(0.0, last_x - window) if window is not None else 0.0
        for index, run in enumerate(self.runs):
            color = run_color(index)
            plt.use(run.state.timeline)
            view = run.state.loss.view(low, drawn_xs(self.size.width), self.smoothing)
            if view.x:
                plt.plot(view.x, view.smoothed, color=color, marker="braille")
            epochs = [e for e in run.state.epochs if e.epoch + 1 >= low]
            if epochs:
                plt.scatter(
                    [float(e.epoch + 1) for e in epochs], [e.test_loss for e in epochs], color=color, marker="●"
                )
        plt.use(self.timeline)
        if self.log_scale:
            plt.yscale("log")
        if window is None:
            self.epoch_axis(max(run.state.total_epochs for run in self.runs), last_x)
        else:
            self.window_axis(low, last_x if last_x > low else low + window)
