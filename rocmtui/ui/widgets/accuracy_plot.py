"""Train and test accuracy per epoch."""

from __future__ import annotations

from rocmtui.ui.run_state import RunState
from rocmtui.ui.widgets.throttled_plot import ThrottledPlot

COLORS = {"train": "orange", "test": "green+"}


class AccuracyPlot(ThrottledPlot):
    """Accuracy (%) against epochs; changes once per epoch, so it rarely redraws."""

    def __init__(self, state: RunState, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.state = state
        self.set_legend("Acc %", COLORS)

    def draw(self) -> None:
        plt, epochs = self.plt, self.state.epochs
        if epochs:
            ex = [float(e.epoch + 1) for e in epochs]
            self.epoch_line(ex, [100.0 * e.train_acc for e in epochs], COLORS["train"])
            self.epoch_line(ex, [100.0 * e.test_acc for e in epochs], COLORS["test"])
        self.epoch_axis(self.state.total_epochs, 0.0)
        plt.ylim(0, 100)
