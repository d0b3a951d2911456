"""Training loss: every step (faint), its EMA, and the per-epoch train and test loss."""

from __future__ import annotations

from textual.reactive import reactive

from rocmtui.ui.run_state import RunState
from rocmtui.ui.widgets.throttled_plot import ThrottledPlot

COLORS = {"step": "gray", "EMA": "cyan+", "train": "orange", "test": "magenta+"}
"""Plotext colour of each line; the legend in the title uses the same names."""

MAX_POINTS = 500
"""Most points drawn per line; plotext's cost grows with points, and braille shows two per cell."""


def thin(xs: list[float], ys: list[float], limit: int = MAX_POINTS) -> tuple[list[float], list[float]]:
    """Every k-th point so that at most ``limit`` remain, always keeping the newest."""
    if len(xs) <= limit:
        return xs, ys
    stride = -(-len(xs) // limit)
    idx = list(range(len(xs) - 1, -1, -stride))[::-1]
    return [xs[i] for i in idx], [ys[i] for i in idx]


class LossPlot(ThrottledPlot):
    """Loss against epochs; ``log_scale`` switches the y axis."""

    log_scale: reactive[bool] = reactive(False, init=False)

    def __init__(self, state: RunState, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.state = state
        self.set_legend("Loss", COLORS)

    def watch_log_scale(self, log_scale: bool) -> None:
        self.set_legend("Loss (log)" if log_scale else "Loss", COLORS)
        self.replot()

    @property
    def tracked(self) -> bool:
        """A script's run (``rocmtui.track()``): its own series against the step."""
        return self.state.started is None and self.state.scalars.any

    def replot(self) -> None:
        if self.tracked:
            from rocmtui.ui.widgets.scalar_plot import loss_legend

            self.set_legend(*loss_legend(self.state.scalars, self.log_scale))
        super().replot()

    def draw(self) -> None:
        if self.tracked:
            from rocmtui.ui.widgets.scalar_plot import draw_loss

            draw_loss(self, self.state.scalars, self.log_scale)
            return
        plt, state = self.plt, self.state
        series = state.loss
        if series.raw:
            limit = min(MAX_POINTS, max(50, 2 * self.size.width))
            xs, raw = thin(series.x, series.raw, limit)
            _, ema = thin(series.x, series.ema, limit)
            plt.plot(xs, raw, color=COLORS["step"], marker="braille")
            plt.plot(xs, ema, color=COLORS["EMA"], marker="braille")
        if state.epochs:
            ex = [float(e.epoch + 1) for e in state.epochs]
            self.epoch_line(ex, [e.train_loss for e in state.epochs], COLORS["train"])
            self.epoch_line(ex, [e.test_loss for e in state.epochs], COLORS["test"])
        if self.log_scale:
            plt.yscale("log")
        self.epoch_axis(state.total_epochs, series.x[-1] if series.x else 0.0)
