"""One row per completed epoch, newest at the bottom; the best test accuracy is marked.

Plain text, not a DataTable: adding a row to a DataTable changes its virtual size, which re-lays out
the whole screen (about 0.1 s of the UI thread at 120x40); this widget repaints only itself.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.widget import Widget

from rocmtui.events import EpochCompleted
from rocmtui.ui.format import fmt_acc, fmt_span

COLUMNS = (
    (" epoch", 7),
    ("train loss", 11),
    ("train acc", 10),
    ("test loss", 10),
    ("test acc", 9),
    ("lr", 9),
    ("time", 7),
)
"""Labels and widths."""


def epoch_row(epoch: EpochCompleted, best: bool) -> tuple[str, ...]:
    mark = "*" if best else " "
    return (
        f"{mark}{epoch.epoch + 1}/{epoch.epochs}",
        f"{epoch.train_loss:.4f}",
        fmt_acc(epoch.train_acc),
        f"{epoch.test_loss:.4f}",
        fmt_acc(epoch.test_acc),
        f"{epoch.lr:.2e}",
        fmt_span(epoch.seconds),
    )


def table_line(cells: Sequence[str]) -> str:
    return "".join(cell.ljust(width) for cell, (_, width) in zip(cells, COLUMNS, strict=True)).rstrip()


class EpochTable(Widget):
    """Header plus the newest rows that fit; ``show`` repaints when an epoch was added."""

    DEFAULT_CSS = """
    EpochTable { width: 1fr; height: 1fr; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.epochs: tuple[EpochCompleted, ...] = ()

    @property
    def row_count(self) -> int:
        return len(self.epochs)

    def show(self, epochs: Sequence[EpochCompleted]) -> None:
        if len(epochs) != len(self.epochs):
            self.epochs = tuple(epochs)
            self.refresh()

    def rows(self) -> list[str]:
        """Every row as text (the best one marked), oldest first."""
        best = max(range(len(self.epochs)), key=lambda i: self.epochs[i].test_acc, default=None)
        return [table_line(epoch_row(e, i == best)) for i, e in enumerate(self.epochs)]

    def render(self) -> Text:
        text = Text(table_line([label for label, _ in COLUMNS]), style="bold", no_wrap=True, overflow="crop")
        rows = self.rows()
        visible = rows[-max(0, self.size.height - 1) :] if self.size.height > 1 else []
        for row in visible:
            text.append("\n")
            text.append(row, style="bold" if row.startswith("*") else "")
        return text
