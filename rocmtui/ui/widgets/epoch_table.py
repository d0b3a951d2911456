"""One row per completed epoch, newest at the bottom; the best test accuracy is marked.

Plain text, not a DataTable: adding a row to a DataTable changes its virtual size, which re-lays out
the whole screen (about 0.1 s of the UI thread at 120x40); this widget repaints only itself. It scrolls
itself: every row is kept, the view follows the newest row until the user scrolls back (arrows,
PageUp/PageDown, Home/End, the mouse wheel), and follows again once scrolled to the end.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.events import MouseScrollDown, MouseScrollUp
from textual.geometry import Size
from textual.widget import Widget

from rocmtui.events import EpochCompleted
from rocmtui.ui.format import fmt_acc, fmt_span

COLUMNS = (
    (" epoch", 9),
    ("train loss", 11),
    ("train acc", 10),
    ("test loss", 10),
    ("test acc", 9),
    ("lr", 9),
    ("time", 7),
)
"""Labels and widths (the first fits ``*100/200`` and a space)."""


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
    """The cells in their columns; a cell as wide as its column still gets one space before the next."""
    out = ""
    for cell, (_, width) in zip(cells, COLUMNS, strict=True):
        out += cell.ljust(width - 1) + " "
    return out.rstrip()


class EpochTable(Widget, can_focus=True):
    """Header plus a window of rows; ``show`` repaints when an epoch was added or the run shown changed."""

    DEFAULT_CSS = """
    EpochTable { width: 1fr; height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "scroll_rows(-1)", "Row up", show=False),
        Binding("down", "scroll_rows(1)", "Row down", show=False),
        Binding("pageup", "scroll_page(-1)", "Page up", show=False),
        Binding("pagedown", "scroll_page(1)", "Page down", show=False),
        Binding("home", "scroll_to(0)", "First row", show=False),
        Binding("end", "follow", "Newest row", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.epochs: tuple[EpochCompleted, ...] = ()
        self.shown_key: object = None
        """Which run's rows are shown (the compare view switches runs)."""
        self.top: int | None = None
        """Index of the first row shown; None: follow the newest row."""
        self.caption = ""
        """Whose rows these are, at the end of the header (the compare view; seen also without a border)."""

    @property
    def row_count(self) -> int:
        return len(self.epochs)

    @property
    def page(self) -> int:
        """Rows that fit under the header."""
        return max(0, self.size.height - 1)

    @property
    def following(self) -> bool:
        return self.top is None

    @property
    def first_visible(self) -> int:
        """Index of the first row drawn."""
        last_top = max(0, len(self.epochs) - self.page)
        return last_top if self.top is None else min(self.top, last_top)

    def show(self, epochs: Sequence[EpochCompleted], key: object = None) -> None:
        """The rows of one run; another run (``key``) starts again at its newest row."""
        if key != self.shown_key:
            self.shown_key = key
            self.top = None
        elif len(epochs) == len(self.epochs) and (not epochs or epochs[-1] is self.epochs[-1]):
            return
        self.epochs = tuple(epochs)
        self.show_where()
        self.refresh()

    def scroll_rows_to(self, top: int) -> None:
        """Show rows from ``top``; at (or past) the end the view follows the newest row again."""
        last_top = max(0, len(self.epochs) - self.page)
        top = max(0, top)
        self.top = None if top >= last_top else top
        self.show_where()
        self.refresh()

    @property
    def where(self) -> str:
        """Which rows are shown, when not all fit (``3-7/20``); the way back when scrolled."""
        first, page = self.first_visible, self.page
        if first == 0 and first + page >= len(self.epochs):
            return ""
        where = f"{first + 1}-{min(len(self.epochs), first + page)}/{len(self.epochs)}"
        return where if self.following else f"{where} (End: newest)"

    def show_where(self) -> None:
        """In the bottom border (a compact layout draws none: then at the end of the header)."""
        self.border_subtitle = self.where

    def on_resize(self) -> None:
        self.show_where()

    def action_scroll_rows(self, rows: int) -> None:
        self.scroll_rows_to(self.first_visible + rows)

    def action_scroll_page(self, pages: int) -> None:
        self.scroll_rows_to(self.first_visible + pages * max(1, self.page - 1))

    def action_scroll_to(self, top: int) -> None:
        self.scroll_rows_to(top)

    def action_follow(self) -> None:
        self.scroll_rows_to(len(self.epochs))

    def on_mouse_scroll_up(self, event: MouseScrollUp) -> None:
        event.stop()
        self.action_scroll_rows(-1)

    def on_mouse_scroll_down(self, event: MouseScrollDown) -> None:
        event.stop()
        self.action_scroll_rows(1)

    def rows(self) -> list[str]:
        """Every row as text (the best one marked), oldest first."""
        best = max(range(len(self.epochs)), key=lambda i: self.epochs[i].test_acc, default=None)
        return [table_line(epoch_row(e, i == best)) for i, e in enumerate(self.epochs)]

    def get_content_width(self, container: Size, viewport: Size) -> int:
        """As wide as the header line (with its caption), so that the log beside it gets the rest."""
        caption = f"  {self.caption}" if self.caption else ""
        return sum(width for _, width in COLUMNS) - 1 + len(caption)

    def render(self) -> Text:
        header = table_line([label for label, _ in COLUMNS])
        if self.caption:
            header = f"{header}  {self.caption}"
        first, page = self.first_visible, self.page
        if self.where and self.styles.border_bottom[0] in ("", "none", "hidden"):
            header = f"{header}  {self.where}"
        width = self.content_size.width or len(header)  # each line cut to the width: none may wrap
        text = Text(header[:width], style="bold", no_wrap=True, overflow="crop")
        for row in self.rows()[first : first + page]:
            text.append("\n")
            text.append(row[:width], style="bold" if row.startswith("*") else "")
        return text
