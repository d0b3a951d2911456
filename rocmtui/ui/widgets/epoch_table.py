"""One row per completed epoch; the best test accuracy is marked."""

from __future__ import annotations

from collections.abc import Sequence

from textual.widgets import DataTable

from rocmtui.events import EpochCompleted
from rocmtui.ui.format import fmt_acc, fmt_duration

COLUMNS = (
    (" epoch", 6),
    ("train loss", 10),
    ("train acc", 9),
    ("test loss", 9),
    ("test acc", 8),
    ("lr", 8),
    ("time", 7),
)
"""Labels and fixed widths (auto widths lag behind a cleared table)."""


def epoch_row(epoch: EpochCompleted, best: bool) -> tuple[str, ...]:
    mark = "★" if best else " "
    return (
        f"{mark}{epoch.epoch + 1}/{epoch.epochs}",
        f"{epoch.train_loss:.4f}",
        fmt_acc(epoch.train_acc),
        f"{epoch.test_loss:.4f}",
        fmt_acc(epoch.test_acc),
        f"{epoch.lr:.2e}",
        fmt_duration(epoch.seconds),
    )


class EpochTable(DataTable[str]):
    """A read-only table: new epochs are appended and the best mark moves by one cell update each."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="none", zebra_stripes=True, show_cursor=False)
        self.shown: list[EpochCompleted] = []
        self.best_row: int | None = None

    def on_mount(self) -> None:
        for label, width in COLUMNS:
            self.add_column(label, width=width, key=label.strip())

    def show(self, epochs: Sequence[EpochCompleted]) -> None:
        if len(epochs) == len(self.shown):
            return
        best = max(range(len(epochs)), key=lambda i: epochs[i].test_acc, default=None)
        for index in range(len(self.shown), len(epochs)):
            self.add_row(*epoch_row(epochs[index], index == best), key=str(index))
        if best != self.best_row:
            for row, mark in ((self.best_row, False), (best, True)):
                if row is not None and row < len(self.shown):
                    self.update_cell(str(row), "epoch", epoch_row(epochs[row], mark)[0])
            self.best_row = best
        self.shown = list(epochs)
        self.scroll_end(animate=False)
