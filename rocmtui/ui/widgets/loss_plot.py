"""Training loss: every step (faint), its EMA, and the per-epoch train and test loss."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

from textual.reactive import reactive

from rocmtui.ui.compare import ComparedRun, run_color
from rocmtui.ui.run_state import SMOOTHING_WEIGHTS, RunState
from rocmtui.ui.widgets.throttled_plot import ThrottledPlot

COLORS = {"EMA": "cyan+", "step": "gray", "train": "orange", "test": "magenta+"}
"""Plotext colour of each line; the legend in the title uses the same names (the EMA first, with its weight:
at 80 columns the end of the legend is cut)."""

MAX_POINTS = 500
"""Most points drawn per line; plotext's cost grows with points, and braille shows two per cell."""


def thin(xs: list[float], ys: list[float], limit: int = MAX_POINTS) -> tuple[list[float], list[float]]:
    """Every k-th point so that at most ``limit`` remain, always keeping the newest."""
    if len(xs) <= limit:
        return xs, ys
    stride = -(-len(xs) // limit)
    idx = list(range(len(xs) - 1, -1, -stride))[::-1]
    return [xs[i] for i in idx], [ys[i] for i in idx]


@dataclass(frozen=True)
class Zoom:
    """What the loss plot shows: the whole run, the newest ``epochs``, or the newest ``steps``."""

    epochs: float | None = None
    steps: int | None = None

    def span(self, steps_per_epoch: int | None) -> float | None:
        """Epochs shown (the x axis counts epochs); None: the whole run, or steps of a run not yet reporting."""
        if self.steps is not None:
            return self.steps / steps_per_epoch if steps_per_epoch else None
        return self.epochs

    @property
    def name(self) -> str:
        """Short: it shares the plot's title with the legend (at 80 columns, about 40 columns)."""
        if self.steps is not None:
            return f"last {self.steps} steps"
        return "all" if self.epochs is None else f"last {self.epochs:g} ep"


WINDOWS: tuple[Zoom, ...] = (Zoom(), Zoom(epochs=5.0), Zoom(epochs=1.0), Zoom(steps=100))
"""The zoom key's cycle, newest last: the whole run, 5 epochs, 1 epoch, 100 steps (the loss now, in a run of
long epochs)."""


def smoothing_name(weight: float) -> str:
    return f"EMA {weight:g}" if weight > 0 else "EMA off"


class LossPlot(ThrottledPlot):
    """Loss against epochs; ``log_scale`` switches the y axis, ``smoothing`` weighs the EMA line,
    ``window`` zooms on the newest epochs. The keys change them; each change redraws at once."""

    log_scale: reactive[bool] = reactive(False, init=False)

    def __init__(self, state: RunState, *, id: str | None = None, runs: Sequence[ComparedRun] = ()) -> None:
        super().__init__(id=id)
        self.state = state
        self.runs = runs
        """Runs compared (more than one: each run's smoothed loss and test loss in its colour)."""
        self.zoom = WINDOWS[0]
        """What is shown, newest last (``WINDOWS``)."""
        self.show_legend()

    def watch_log_scale(self, log_scale: bool) -> None:
        self.show_legend()
        self.replot()

    def step_smoothing(self, steps: int) -> None:
        """The next weight up (``steps`` 1) or down (-1) of ``SMOOTHING_WEIGHTS``, as a slider."""
        index = min(range(len(SMOOTHING_WEIGHTS)), key=lambda i: abs(SMOOTHING_WEIGHTS[i] - self.smoothing))
        index = max(0, min(len(SMOOTHING_WEIGHTS) - 1, index + steps))
        if SMOOTHING_WEIGHTS[index] != self.smoothing:
            self.smoothing = SMOOTHING_WEIGHTS[index]
            self.show_legend()
            self.replot()

    def next_window(self) -> None:
        """Zoom: all, the last 5 epochs, the last one, the last 100 steps, and round again."""
        self.zoom = WINDOWS[(WINDOWS.index(self.zoom) + 1) % len(WINDOWS)]
        self.show_legend()
        self.replot()

    @property
    def window(self) -> float | None:
        """Epochs shown, newest last; None: the whole run."""
        steps = self.state.last_steps
        return self.zoom.span(steps.steps_per_epoch if steps is not None else None)

    def show_legend(self) -> None:
        if self.tracked:
            from rocmtui.ui.widgets.scalar_plot import loss_legend

            title, colors = loss_legend(self.state.scalars, self.log_scale)
        elif self.comparing:
            what = [smoothing_name(self.smoothing), "● test"]
            what += [self.zoom.name] if self.zoom != WINDOWS[0] else []
            what += ["log"] if self.log_scale else []
            title = f"Loss ({', '.join(what)})"
            self.set_legend(title, {run.label: run_color(i) for i, run in enumerate(self.runs)})
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

    def draw(self) -> None:
        if self.tracked:
            from rocmtui.ui.widgets.scalar_plot import draw_loss

            draw_loss(self, self.state.scalars, self.log_scale)
            return
        if self.comparing:
            self.draw_compared()
            return
        plt, state = self.plt, self.state
        series = state.loss
        last_x = series.x[-1] if series.x else float(state.epochs_done)
        window = self.window
        low = max(0.0, last_x - window) if window is not None else 0.0
        if series.raw:
            first = bisect.bisect_left(series.x, low)  # the smoothed line is of the whole run, then cut
            limit = min(MAX_POINTS, max(50, 2 * self.size.width))
            xs, raw = thin(series.x[first:], series.raw[first:], limit)
            _, ema = thin(series.x[first:], series.smoothed(self.smoothing)[first:], limit)
            if self.smoothing > 0:  # at 0 the smoothed line is the raw one
                plt.plot(xs, raw, color=COLORS["step"], marker="braille")
            plt.plot(xs, ema, color=COLORS["EMA"], marker="braille")
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
        plt = self.plt
        last_x = max((run.state.loss.x[-1] for run in self.runs if run.state.loss.x), default=0.0)
        last_x = max([last_x, *(float(run.state.epochs_done) for run in self.runs)])
        window = self.window
        low = max(0.0, last_x - window) if window is not None else 0.0
        limit = min(MAX_POINTS, max(50, 2 * self.size.width))
        for index, run in enumerate(self.runs):
            color, series = run_color(index), run.state.loss
            if series.raw:
                first = bisect.bisect_left(series.x, low)
                xs, ema = thin(series.x[first:], series.smoothed(self.smoothing)[first:], limit)
                if xs:
                    plt.plot(xs, ema, color=color, marker="braille")
            epochs = [e for e in run.state.epochs if e.epoch + 1 >= low]
            if epochs:
                plt.scatter(
                    [float(e.epoch + 1) for e in epochs], [e.test_loss for e in epochs], color=color, marker="●"
                )
        if self.log_scale:
            plt.yscale("log")
        if window is None:
            self.epoch_axis(max(run.state.total_epochs for run in self.runs), last_x)
        else:
            self.window_axis(low, last_x if last_x > low else low + window)
