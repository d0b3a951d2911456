"""Train and test accuracy per epoch."""

from __future__ import annotations

from rocmtui.ui.run_state import RunState
from rocmtui.ui.widgets.throttled_plot import ThrottledPlot


class AccuracyPlot(ThrottledPlot):
    """Accuracy (%) against epochs; changes once per epoch, so it rarely redraws."""

    def __init__(self, state: RunState, *, period_s: float = 1.0, id: str | None = None) -> None:
        super().__init__(period_s=period_s, id=id)
        self.state = state

    def draw(self) -> None:
        plt, epochs = self.plt, self.state.epochs
        plt.title("Accuracy %")
        plt.xlabel("epoch")
        if epochs:
            ex = [float(e.epoch + 1) for e in epochs]
            plt.plot(ex, [100.0 * e.train_acc for e in epochs], color="orange", marker="dot", label="train")
            plt.plot(ex, [100.0 * e.test_acc for e in epochs], color="green+", marker="dot", label="test")
        plt.xlim(0, max(float(self.state.total_epochs), 1.0))
        plt.ylim(0, 100)
