"""A table that draws only the rows on screen: the runs table over thousands of runs.

Textual's ``DataTable`` measures every cell of every row it is given (10,000 runs: seconds before the first
frame). This view asks its owner for a cell only when the cell is drawn (``cell(row, column)``), so a frame costs
the rows on screen whatever the count. Column widths are fitted to the header and to the first ``WIDTH_SAMPLE``
rows, at most ``max_width`` each: a longer cell is cut with an ellipsis, and columns do not jump as the cursor
moves. The first ``frozen`` columns stay in place while the others scroll sideways to keep the cursor's column on
screen.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.coordinate import Coordinate
from textual.message import Message
from textual.widget import Widget

WIDTH_SAMPLE = 1000
"""Rows whose cells fit the column widths (from the first)."""
GAP = 2
"""Columns between two cells."""

CellSource = Callable[[int, int], Text]
"""The text of the cell at (row, column), asked for when it is drawn."""


class RowsView(Widget, can_focus=True):
    """Rows of cells under a header, a cell cursor, only what is on screen drawn."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "rows-view--header",
        "rows-view--cursor",
        "rows-view--cursor-row",
        "rows-view--even",
    }
    DEFAULT_CSS = """
    RowsView { height: 1fr; }
    RowsView > .rows-view--header { text-style: bold; background: $panel; }
    RowsView > .rows-view--cursor { background: $accent; color: $text; }
    RowsView > .rows-view--cursor-row { background: $boost; }
    RowsView > .rows-view--even { background: $surface; }
    RowsView:focus > .rows-view--cursor { background: $accent; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move(-1, 0)", show=False),
        Binding("down", "move(1, 0)", show=False),
        Binding("left", "move(0, -1)", show=False),
        Binding("right", "move(0, 1)", show=False),
        Binding("pageup", "page(-1)", show=False),
        Binding("pagedown", "page(1)", show=False),
        Binding("home", "end(False)", show=False),
        Binding("end", "end(True)", show=False),
        Binding("enter", "choose", show=False),
    ]

    class Chosen(Message):
        """Enter on a row."""

    def __init__(self, cell: CellSource, *, frozen: int = 0, max_width: int = 32, id: str | None = None) -> None:
        super().__init__(id=id)
        self.cell = cell
        self.frozen = frozen
        self.max_width = max_width
        self.labels: list[str] = []
        self.widths: list[int] = []
        self.row_count = 0
        self.cursor_coordinate = Coordinate(0, 0)
        self.top = 0
        """The first row on screen."""
        self.left = 0
        """The first scrolled column on screen (after the frozen ones)."""

    # -- data -----------------------------------------------------------------------------------------------------
    def set_rows(self, labels: Sequence[str], row_count: int, widths: Sequence[int] | None = None) -> None:
        """New columns (their headers) and rows; the widths fitted to the first rows unless given."""
        self.labels = list(labels)
        self.row_count = row_count
        self.widths = list(widths) if widths is not None else self.fitted_widths()
        self.move_cursor(row=self.cursor_coordinate.row, column=self.cursor_coordinate.column)
        self.refresh()

    def fitted_widths(self) -> list[int]:
        sample = range(min(self.row_count, WIDTH_SAMPLE))
        widths = []
        for column, label in enumerate(self.labels):
            longest = max((self.cell(row, column).cell_len for row in sample), default=0)
            widths.append(min(self.max_width, max(cell_len(label), longest, 1)))
        return widths

    # -- the cursor -----------------------------------------------------------------------------------------------
    @property
    def page_rows(self) -> int:
        return max(1, self.size.height - 1)

    def move_cursor(self, *, row: int | None = None, column: int | None = None) -> None:
        """Put the cursor at (row, column), kept inside the table, and scroll it into view."""
        row = self.cursor_coordinate.row if row is None else row
        column = self.cursor_coordinate.column if column is None else column
        row = max(0, min(row, self.row_count - 1)) if self.row_count else 0
        column = max(0, min(column, len(self.labels) - 1)) if self.labels else 0
        self.cursor_coordinate = Coordinate(row, column)
        if row < self.top:
            self.top = row
        elif row >= self.top + self.page_rows:
            self.top = row - self.page_rows + 1
        self.top = max(0, min(self.top, max(0, self.row_count - self.page_rows)))
        self._scroll_to_column(column)
        self.refresh()

    def _scroll_to_column(self, column: int) -> None:
        if column < self.frozen:
            return
        if column - self.frozen < self.left:
            self.left = column - self.frozen
            return
        while self.left < column - self.frozen and column not in self.shown_columns(self.size.width or 80):
            self.left += 1

    def action_move(self, rows: int, columns: int) -> None:
        self.move_cursor(row=self.cursor_coordinate.row + rows, column=self.cursor_coordinate.column + columns)

    def action_page(self, pages: int) -> None:
        self.action_move(pages * self.page_rows, 0)

    def action_end(self, last: bool) -> None:
        self.move_cursor(row=self.row_count - 1 if last else 0)

    def action_choose(self) -> None:
        if self.row_count:
            self.post_message(self.Chosen())

    def on_resize(self) -> None:
        self.move_cursor()

    # -- drawing --------------------------------------------------------------------------------------------------
    def shown_columns(self, width: int) -> list[int]:
        """The columns that fit ``width``: the frozen ones, then the scrolled ones from ``left``."""
        order = list(range(min(self.frozen, len(self.labels))))
        order += list(range(self.frozen + self.left, len(self.labels)))
        shown: list[int] = []
        used = 0
        for column in order:
            need = self.widths[column] + (GAP if shown else 0)
            if shown and used + need > width:
                break
            shown.append(column)
            used += need
        return shown

    def render(self) -> Text:
        width = self.size.width
        columns = self.shown_columns(width)
        header_style = self.get_component_rich_style("rows-view--header")
        lines = [self._line([Text(self.labels[c]) for c in columns], columns, header_style, width)]
        cursor_style = self.get_component_rich_style("rows-view--cursor")
        row_style = self.get_component_rich_style("rows-view--cursor-row")
        even_style = self.get_component_rich_style("rows-view--even")
        for row in range(self.top, min(self.row_count, self.top + self.page_rows)):
            cells = [self.cell(row, column) for column in columns]
            at_cursor = row == self.cursor_coordinate.row
            style = row_style if at_cursor else even_style if row % 2 == 0 else Style()
            column = self.cursor_coordinate.column
            cursor = columns.index(column) if at_cursor and column in columns else None
            lines.append(self._line(cells, columns, style, width, cursor=cursor, cursor_style=cursor_style))
        text = Text("\n").join(lines)
        text.no_wrap, text.overflow = True, "crop"
        return text

    def _line(
        self,
        cells: list[Text],
        columns: list[int],
        style: Style,
        width: int,
        *,
        cursor: int | None = None,
        cursor_style: Style | None = None,
    ) -> Text:
        line = Text(no_wrap=True, overflow="crop", end="", style=style)
        for index, (cell, column) in enumerate(zip(cells, columns, strict=True)):
            if index:
                line.append(" " * GAP)
            fitted = _fitted(cell, self.widths[column])
            if index == cursor and cursor_style is not None:
                fitted.stylize(cursor_style)
            line.append_text(fitted)
        if line.cell_len < width:
            line.append(" " * (width - line.cell_len))
        return line

    def on_click(self, event: events.Click) -> None:
        """A click puts the cursor on the cell under it."""
        if event.y < 1:
            return
        column_at = None
        x = 0
        for column in self.shown_columns(self.size.width):
            if x <= event.x < x + self.widths[column] + GAP:
                column_at = column
                break
            x += self.widths[column] + GAP
        self.move_cursor(row=self.top + event.y - 1, column=column_at)


def _fitted(cell: Text, width: int) -> Text:
    """``cell`` in exactly ``width`` columns: cut with an ellipsis, or padded (on the left when right-justified)."""
    if cell.cell_len > width:
        cut = cell.copy()
        cut.truncate(width, overflow="ellipsis")
        return cut
    pad = " " * (width - cell.cell_len)
    if cell.justify == "right":
        return Text(pad, end="") + cell
    return cell + Text(pad, end="")
