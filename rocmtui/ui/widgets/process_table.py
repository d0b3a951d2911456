"""Processes using the GPUs: a sortable, filterable table with a row cursor (the monitor's kill keys act on it).
Where there is no GPU it lists the host's busiest processes instead, in the host's own columns.

Imported with the first GPU sample (a DataTable is the dearest widget to load and set up); what it shows is
decided in ``rocmtui.ui.state.process_rows``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, RowKey

from rocmtui.gpu.sample import GpuProcess
from rocmtui.ui.state.process_rows import (
    COLUMNS,
    COMMAND,
    HOST_COLUMNS,
    MARK,
    Cell,
    Column,
    ProcessQuery,
    cells,
    fitting,
    matches,
    ordered,
    row_key,
    sort_shown,
)

SCROLLBAR = 1
"""Cells of the vertical scrollbar (set in DEFAULT_CSS), kept free so that no horizontal one appears."""


class ProcessTable(DataTable[Cell]):
    """Rebuilt only when what it shows changes; the cursor stays on its process across rebuilds. The
    columns fit the width: the least important give way before the command is cut below 30 characters."""

    DEFAULT_CSS = """
    ProcessTable { scrollbar-size-vertical: 1; overflow-x: hidden; }
    """

    def __init__(self, query: ProcessQuery, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.shown_columns: tuple[Column, ...] = COLUMNS
        self.command_width = 30
        self.process_query = query
        """The order and filter, owned by the monitor screen (which changes it, then calls ``requery``)."""
        self.rows_shown: tuple[tuple[Cell, ...], ...] | None = None
        self.listed: list[GpuProcess] = []
        self.processes: tuple[GpuProcess, ...] = ()
        self.host = False
        """Showing the host's busiest processes (no GPU here): the host's columns, by CPU % unless sorted by one."""
        self.now = 0.0

    @property
    def sort_by(self) -> str:
        return sort_shown(self.process_query, self.host)[0]

    @property
    def sort_reverse(self) -> bool:
        return sort_shown(self.process_query, self.host)[1]

    @property
    def columns_available(self) -> tuple[Column, ...]:
        """The columns of what is shown: a GPU process's, or a host process's."""
        return HOST_COLUMNS if self.host else COLUMNS

    def on_mount(self) -> None:
        """Columns in the sort order set so far, and the processes shown so far (the monitor mounts the table
        with its first GPU sample)."""
        self._add_columns()
        self._rebuild()

    def on_resize(self) -> None:
        """Another width: other columns may fit (the rows are drawn again only when they do)."""
        if self._fit():
            self.requery(sort_changed=True)

    def _fit(self) -> bool:
        """Choose the columns for the width and the sort; True when they changed."""
        fit = fitting(self.size.width - SCROLLBAR, self.sort_by, self.columns_available)
        if fit == (self.shown_columns, self.command_width):
            return False
        self.shown_columns, self.command_width = fit
        return True

    def _add_columns(self) -> None:
        for column in self.shown_columns:
            self.add_column(
                self._header(column.label), width=max(column.width, len(column.label) + MARK), key=column.label
            )
        self.add_column(self._header(COMMAND), width=self.command_width, key=COMMAND)

    def _header(self, label: str) -> str:
        """A column's label, with the sort mark when it is the sort column."""
        return label + ((" ▼" if self.sort_reverse else " ▲") if label == self.sort_by else "")

    @property
    def selected(self) -> GpuProcess | None:
        """The process under the cursor, if any."""
        row = self.cursor_row
        return self.listed[row] if 0 <= row < len(self.listed) else None

    def show(self, processes: Sequence[GpuProcess], now: float | None = None, *, host: bool = False) -> None:
        """New processes (with the sample's time, for elapsed): redraw if the picture changed. ``host``: they
        are the host's busiest, listed where there is no GPU."""
        self.processes = tuple(processes)
        self.now = time.time() if now is None else now
        if host != self.host:
            self.host = host
            if not self.is_mounted:
                self.shown_columns = self.columns_available  # on_mount adds them, a resize fits them
            self.requery(sort_changed=True)  # other columns
        elif self.is_mounted:
            self._rebuild()

    def requery(self, *, sort_changed: bool) -> None:
        """Show the processes in the query's order and filter (the headers' arrows too, when the sort changed)."""
        if not self.is_mounted:
            return  # on_mount draws with the query as it is then
        if sort_changed:
            self._fit()
            self.clear(columns=True)
            self._add_columns()
            self.rows_shown = None
        self._rebuild()

    def _rebuild(self) -> None:
        query = self.process_query
        listed = [
            p
            for p in ordered(self.processes, self.sort_by, self.sort_reverse, self.now)
            if matches(p, query.filter_text)
        ]
        rows = tuple(cells(p, self.now, self.shown_columns) for p in listed)
        if rows == self.rows_shown:
            return
        keep = self.selected
        if self.rows_shown is not None and len(rows) == len(self.rows_shown) and rows:
            # as many rows as before: rewrite only those that changed (the rows are keyed by position, so a process
            # that moves up or down repaints the rows between, not the whole table)
            self.listed = listed
            self._update_cells(rows)
        else:
            self.rows_shown = rows
            self.listed = listed
            self.clear()
            for index, row in enumerate(rows):
                self.add_row(*row, key=str(index))
            if not rows:
                note = "no process matches the filter" if self.processes else "no GPU processes reported"
                self.add_row(*(["-"] * len(self.shown_columns)), note)
        if keep is not None:  # the cursor stays on its process
            for index, proc in enumerate(listed):
                if row_key(proc) == row_key(keep):
                    if index != self.cursor_row:
                        self.move_cursor(row=index, animate=False)
                    break

    def _update_cells(self, rows: tuple[tuple[Cell, ...], ...]) -> None:
        """Change cells in place and repaint only their rows (DataTable.update_cell repaints the whole table,
        which at 120x40 cost more bytes than everything else on the screen)."""
        old = self.rows_shown or ()
        labels = [*(c.label for c in self.shown_columns), COMMAND]
        for index, (before, after) in enumerate(zip(old, rows, strict=True)):
            if before == after:
                continue
            key = RowKey(str(index))
            for label, value in zip(labels, after, strict=True):
                self._data[key][ColumnKey(label)] = value
            self._update_count += 1  # DataTable's render caches are keyed by it
            self.refresh_row(index)
        self.rows_shown = rows
