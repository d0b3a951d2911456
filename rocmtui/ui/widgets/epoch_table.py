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
    """A read-only table; rebuilt at each epoch (a handful of rows) so the best mark can move."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="none", zebra_stripes=True, show_cursor=False)
        self.shown = 0

    def on_mount(self) -> None:
        for label, width in COLUMNS:
            self.add_column(label, width=width)

    def show(self, epochs: Sequence[EpochCompleted]) -> None:
        if len(epochs) == self.shown:
            return
        self.shown = len(epochs)
        best = max(epochs, key=lambda e: e.test_acc, default=None)
        self.clear()
        for epoch in epochs:
            self.add_row(*epoch_row(epoch, epoch is best))
        self.scroll_end(animate=False)
