"""Processes using the GPUs: a sortable, filterable table with a row cursor (the monitor's kill keys act on it)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, RowKey

from rocmtui.gpu.sample import GpuProcess
from rocmtui.gpu.units import fmt_gpu_index
from rocmtui.ui.format import NA, fmt_bytes


@dataclass(frozen=True)
class Column:
    """A column: its label, width, how it reads a process, and its sort key."""

    label: str
    width: int
    text: Callable[[GpuProcess, float], str]
    key: Callable[[GpuProcess, float], float | str]


def _num(value: float | None) -> float:
    return -1.0 if value is None else float(value)


def _pct(value: float | None) -> str:
    return NA if value is None else f"{value:.0f}%"


def fmt_elapsed(seconds: float | None) -> str:
    """``<1m``, ``12m``, ``3h05m``, ``2d03h``: to the minute, so the column changes once a minute, not per sample."""
    if seconds is None:
        return NA
    minutes = int(seconds // 60)
    if minutes < 1:
        return "<1m"
    if minutes < 60:
        return f"{minutes}m"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours}h{minutes:02d}m"
    days, hours = divmod(hours, 24)
    return f"{days}d{hours:02d}h"


def _elapsed(proc: GpuProcess, now: float) -> float | None:
    return None if proc.started_at is None else max(0.0, now - proc.started_at)


COLUMNS = (
    Column("PID", 7, lambda p, _: str(p.pid), lambda p, _: p.pid),
    Column("user", 8, lambda p, _: p.user or NA, lambda p, _: p.user or ""),
    Column("GPU", 3, lambda p, _: fmt_gpu_index(p.gpu_index), lambda p, _: p.gpu_index),
    Column(
        "GPU mem",
        9,
        lambda p, _: NA if p.gpu_memory_bytes is None else fmt_bytes(p.gpu_memory_bytes),
        lambda p, _: _num(p.gpu_memory_bytes),
    ),
    Column("GPU%", 4, lambda p, _: _pct(p.gpu_util_pct), lambda p, _: _num(p.gpu_util_pct)),
    Column("CPU%", 5, lambda p, _: _pct(p.cpu_pct), lambda p, _: _num(p.cpu_pct)),
    Column(
        "host mem",
        9,
        lambda p, _: NA if p.host_memory_bytes is None else fmt_bytes(p.host_memory_bytes),
        lambda p, _: _num(p.host_memory_bytes),
    ),
    Column(
        "elapsed",
        8,
        lambda p, now: fmt_elapsed(_elapsed(p, now)),
        lambda p, now: _num(_elapsed(p, now)),
    ),
)
COMMAND = "command"
SORTS = (*(c.label for c in COLUMNS), COMMAND)
"""What ``s`` steps through."""


def matches(proc: GpuProcess, text: str) -> bool:
    """The filter: ``text`` found (case-insensitively) in the PID, user or command."""
    needle = text.lower().strip()
    return not needle or any(needle in (v or "").lower() for v in (str(proc.pid), proc.user, proc.command))


def one_line(command: str | None) -> str:
    """A command on one line (``python -c`` programs hold newlines)."""
    return " ".join(command.split()) if command else NA


def ordered(processes: Sequence[GpuProcess], sort: str, reverse: bool, now: float) -> list[GpuProcess]:
    """``processes`` sorted by the column labelled ``sort`` (then GPU and PID, for a stable order)."""
    column = next((c for c in COLUMNS if c.label == sort), None)

    def key(p: GpuProcess) -> tuple[float | str, int, int]:
        first: float | str = column.key(p, now) if column is not None else (p.command or "")
        return first, p.gpu_index, p.pid

    return sorted(processes, key=key, reverse=reverse)


class ProcessTable(DataTable[str]):
    """Rebuilt only when what it shows changes; the cursor stays on its process across rebuilds."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.rows_shown: tuple[tuple[str, ...], ...] | None = None
        self.listed: list[GpuProcess] = []
        self.processes: tuple[GpuProcess, ...] = ()
        self.now = 0.0
        self.sort_by = "GPU mem"
        self.sort_reverse = True
        self.filter_text = ""

    def on_mount(self) -> None:
        """Columns in the sort order set so far, and the processes shown so far (the monitor mounts the table
        with its first GPU sample)."""
        self._add_columns()
        self._rebuild()

    def _add_columns(self) -> None:
        for column in COLUMNS:
            marker = (" ▼" if self.sort_reverse else " ▲") if column.label == self.sort_by else ""
            self.add_column(column.label + marker, width=column.width, key=column.label)
        marker = (" ▼" if self.sort_reverse else " ▲") if self.sort_by == COMMAND else ""
        self.add_column(COMMAND + marker, key=COMMAND)

    @property
    def selected(self) -> GpuProcess | None:
        """The process under the cursor, if any."""
        row = self.cursor_row
        return self.listed[row] if 0 <= row < len(self.listed) else None

    def show(self, processes: Sequence[GpuProcess], now: float | None = None) -> None:
        """New processes (with the sample's time, for elapsed): redraw if the picture changed."""
        self.processes = tuple(processes)
        self.now = time.time() if now is None else now
        if self.is_mounted:
            self._rebuild()

    def set_sort(self, sort: str, reverse: bool) -> None:
        self.sort_by, self.sort_reverse = sort, reverse
        if not self.is_mounted:
            return
        self.clear(columns=True)
        self._add_columns()
        self.rows_shown = None
        self._rebuild()

    def set_filter(self, text: str) -> None:
        self.filter_text = text
        if self.is_mounted:
            self._rebuild()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        """A click on a header sorts by it; a second click reverses."""
        label = str(event.column_key.value)
        self.set_sort(label, not self.sort_reverse if label == self.sort_by else label not in ("PID", "user", COMMAND))

    def _rebuild(self) -> None:
        listed = [
            p
            for p in ordered(self.processes, self.sort_by, self.sort_reverse, self.now)
            if matches(p, self.filter_text)
        ]
        rows = tuple((*(c.text(p, self.now) for c in COLUMNS), one_line(p.command)) for p in listed)
        if rows == self.rows_shown:
            return
        keys = [row_key(p) for p in listed]
        if self.rows_shown is not None and keys == [row_key(p) for p in self.listed] and rows:
            self._update_cells(rows)  # same processes in the same order: rewrite only the changed rows
            self.listed = listed
            return
        keep = self.selected
        self.rows_shown = rows
        self.listed = listed
        self.clear()
        for key, row in zip(keys, rows, strict=True):
            self.add_row(*row, key=key)
        if not rows:
            note = "no process matches the filter" if self.processes else "no GPU processes reported"
            self.add_row(*(["-"] * len(COLUMNS)), note)
        if keep is not None:
            for index, proc in enumerate(listed):
                if row_key(proc) == row_key(keep):
                    self.move_cursor(row=index, animate=False)
                    break

    def _update_cells(self, rows: tuple[tuple[str, ...], ...]) -> None:
        """Change cells in place and repaint only their rows (DataTable.update_cell repaints the whole table,
        which at 120x40 cost more bytes than everything else on the screen)."""
        old = self.rows_shown or ()
        labels = [*(c.label for c in COLUMNS), COMMAND]
        for index, (before, after) in enumerate(zip(old, rows, strict=True)):
            if before == after:
                continue
            key = RowKey(row_key(self.listed[index]))
            for label, value in zip(labels, after, strict=True):
                self._data[key][ColumnKey(label)] = value
            self._update_count += 1  # DataTable's render caches are keyed by it
            self.refresh_row(index)
        self.rows_shown = rows


def row_key(proc: GpuProcess) -> str:
    return f"{proc.gpu_index}:{proc.pid}"
