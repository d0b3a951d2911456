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

from rocmtui.events import EpochCompleted, EpochMetrics
from rocmtui.ui.look.meters import fmt_acc, fmt_span

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


def table_line(cells: Sequence[str], columns: Sequence[tuple[str, int]] = COLUMNS) -> str:
    """The cells in their columns; a cell as wide as its column still gets one space before the next."""
    out = ""
    for cell, (_, width) in zip(cells, columns, strict=True):
        out += cell.ljust(width - 1) + " "
    return out.rstrip()


def metric_columns(events: Sequence[EpochMetrics]) -> tuple[tuple[str, int], ...]:
    """A script's columns: its epoch, then each name it logged per epoch (first seen first), as wide as needed."""
    names = list(dict.fromkeys(name for event in events for name in event.values))
    return ((" epoch", 7), *((name, max(len(name), 9) + 2) for name in names))


def metric_row(event: EpochMetrics, columns: Sequence[tuple[str, int]]) -> tuple[str, ...]:
    values = [event.values.get(name) for name, _ in columns[1:]]
    return (f" {event.epoch}", *("" if v is None else f"{v:.4g}" for v in values))


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
        self.columns: tuple[tuple[str, int], ...] = COLUMNS
        """Labels and widths: a training run's (``COLUMNS``), or what a script logs per epoch."""
        self.lines: tuple[str, ...] = ()
        """Every row, formatted, oldest first (the best training epoch starts with ``*``)."""
        self.shown: tuple[object, ...] = ()
        """The events the lines were made of (a new one, or another run, remakes them)."""
        self.shown_key: object = None
        """Which run's rows are shown (the compare view switches runs)."""
        self.top: int | None = None
        """Index of the first row shown; None: follow the newest row."""
        self.caption = ""
        """Whose rows these are, at the end of the header (the compare view; seen also without a border)."""

    @property
    def row_count(self) -> int:
        return len(self.lines)

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
        last_top = max(0, len(self.lines) - self.page)
        return last_top if self.top is None else min(self.top, last_top)

    def show(self, epochs: Sequence[EpochCompleted], key: object = None) -> None:
        """The rows of one training run; another run (``key``) starts again at its newest row."""
        if self._unchanged(epochs, key):
            return
        best = max(range(len(epochs)), key=lambda i: epochs[i].test_acc, default=None)
        self._set(COLUMNS, [epoch_row(e, i == best) for i, e in enumerate(epochs)], epochs)

    def show_metrics(self, events: Sequence[EpochMetrics], key: object = None) -> None:
        """The rows of a script's ``run.log_epoch`` calls, a column for each name it logged."""
        if self._unchanged(events, key):
            return
        columns = metric_columns(events)
        self._set(columns, [metric_row(event, columns) for event in events], events)

    def _unchanged(self, events: Sequence[object], key: object) -> bool:
        if key != self.shown_key:
            self.shown_key = key
            self.top = None
            return False
        return len(events) == len(self.shown) and (not events or events[-1] is self.shown[-1])

    def _set(self, columns: tuple[tuple[str, int], ...], rows: list[tuple[str, ...]], events: Sequence[object]) -> None:
        self.columns, self.shown = columns, tuple(events)
        self.lines = tuple(table_line(row, columns) for row in rows)
        self.show_where()
        self.refresh()

    def scroll_rows_to(self, top: int) -> None:
        """Show rows from ``top``; at (or past) the end the view follows the newest row again."""
        last_top = max(0, len(self.lines) - self.page)
        top = max(0, top)
        self.top = None if top >= last_top else top
        self.show_where()
        self.refresh()

    @property
    def where(self) -> str:
        """Which rows are shown, when not all fit (``3-7/20``); the way back when scrolled."""
        first, page = self.first_visible, self.page
        count = len(self.lines)
        if first == 0 and first + page >= count:
            return ""
        where = f"{first + 1}-{min(count, first + page)}/{count}"
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
        self.scroll_rows_to(len(self.lines))

    def on_mouse_scroll_up(self, event: MouseScrollUp) -> None:
        event.stop()
        self.action_scroll_rows(-1)

    def on_mouse_scroll_down(self, event: MouseScrollDown) -> None:
        event.stop()
        self.action_scroll_rows(1)

    def get_content_width(self, container: Size, viewport: Size) -> int:
        """As wide as the header line (with its caption), so that the log beside it gets the rest."""
        caption = f"  {self.caption}" if self.caption else ""
        return sum(width for _, width in self.columns) - 1 + len(caption)

    def render(self) -> Text:
        header = table_line([label for label, _ in self.columns], self.columns)
        if self.caption:
            header = f"{header}  {self.caption}"
        first, page = self.first_visible, self.page
        if self.where and self.styles.border_bottom[0] in ("", "none", "hidden"):
            header = f"{header}  {self.where}"
        width = self.content_size.width or len(header)  # each line cut to the width: none may wrap
        text = Text(header[:width], style="bold", no_wrap=True, overflow="crop")
        for row in self.lines[first : first + page]:
            text.append("\n")
            text.append(row[:width], style="bold" if row.startswith("*") else "")
        return text
