"""Train and test accuracy per epoch."""

from __future__ import annotations

from collections.abc import Sequence

from rocmtui.ui.compare import ComparedRun, run_color
from rocmtui.ui.run_state import RunState
from rocmtui.ui.widgets.throttled_plot import ThrottledPlot

COLORS = {"train": "orange", "test": "green+"}


class AccuracyPlot(ThrottledPlot):
    """Accuracy (%) against epochs; changes once per epoch, so it rarely redraws."""

    def __init__(self, state: RunState, *, id: str | None = None, runs: Sequence[ComparedRun] = ()) -> None:
        super().__init__(id=id)
        self.state = state
        self.runs = runs
        """Runs compared (more than one: each run's test accuracy in its colour)."""
        if len(runs) > 1:
            self.set_legend("Test %", {run.label: run_color(i) for i, run in enumerate(runs)})
        else:
            self.set_legend("Acc %", COLORS)
        self.series_index = 0
        """Which of a tracked script's other series is shown (``next_series``)."""

    @property
    def tracked(self) -> bool:
        """A script's run (``rocmtui.track()``): one of its series instead of accuracy."""
        return self.state.started is None and self.state.scalars.any

    def next_series(self) -> None:
        """Show the tracked run's next series, now (a key asked for it)."""
        self.series_index += 1
        if self.tracked:
            self.replot()

    def replot(self) -> None:
        if self.tracked:
            from rocmtui.ui.widgets.scalar_plot import series_legend

            self.set_legend(*series_legend(self.state.scalars, self.series_index))
        super().replot()

    def draw(self) -> None:
        if self.tracked:
            from rocmtui.ui.widgets.scalar_plot import draw_series

            draw_series(self, self.state.scalars, self.series_index)
            return
        if len(self.runs) > 1:
            self.draw_compared()
            return
        plt, epochs = self.plt, self.state.epochs
        if epochs:
            ex = [float(e.epoch + 1) for e in epochs]
            self.epoch_line(ex, [100.0 * e.train_acc for e in epochs], COLORS["train"])
            self.epoch_line(ex, [100.0 * e.test_acc for e in epochs], COLORS["test"])
        self.epoch_axis(self.state.total_epochs, 0.0)
        plt.ylim(0, 100)

    def draw_compared(self) -> None:
        """Each run's test accuracy per epoch, in the run's colour."""
        for index, run in enumerate(self.runs):
            epochs = run.state.epochs
            if epochs:
                ex = [float(e.epoch + 1) for e in epochs]
                self.epoch_line(ex, [100.0 * e.test_acc for e in epochs], run_color(index))
        last = max((float(run.state.epochs_done) for run in self.runs), default=0.0)
        self.epoch_axis(max(run.state.total_epochs for run in self.runs), last)
        self.plt.ylim(0, 100)
