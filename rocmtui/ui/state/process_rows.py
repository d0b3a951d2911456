"""What the process table shows, without Textual: its columns, their order and sort keys, and the filter.

The monitor keeps a ``ProcessQuery`` from its start and imports the table itself with the first GPU sample.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from rich.text import Text

from rocmtui.base.text import one_line as plain_line
from rocmtui.base.units import fmt_gpu_index
from rocmtui.gpu.sample import GpuProcess
from rocmtui.ui.look.meters import NA, fmt_bytes

MARK = 2
"""Cells of a header's sort mark (`` ▲``), kept free on every column so that the mark always shows."""
PADDING = 2
"""Cells around each column's text (DataTable's cell padding, one each side)."""
MIN_COMMAND = 30
"""Characters of command kept before the less important columns give way."""


@dataclass(frozen=True)
class Column:
    """A column: its label, width, how it reads a process, its sort key, and how long it stays on a narrow
    table (the lowest ``keep`` gives way first)."""

    label: str
    width: int
    text: Callable[[GpuProcess, float], str]
    key: Callable[[GpuProcess, float], float | str]
    outside: bool = False
    """Text from outside rocmtui (a user name): drawn as a ``Text``, never as markup."""
    keep: int = 9

    @property
    def cells(self) -> int:
        """Columns it takes on screen: its text or its header with the sort mark, and padding."""
        return max(self.width, len(self.label) + MARK) + PADDING


def _num(value: float | None) -> float:
    return -1.0 if value is None else float(value)


def _pct(value: float | None) -> str:
    return NA if value is None else f"{value:.0f}%"


def _pct_key(value: float | None) -> float:
    """A percentage sorted as it is shown (whole numbers): rows whose shown values tie keep their order."""
    return -1.0 if value is None else float(round(value))


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
    Column("user", 8, lambda p, _: p.user or NA, lambda p, _: p.user or "", outside=True, keep=4),
    Column("GPU", 3, lambda p, _: fmt_gpu_index(p.gpu_index), lambda p, _: p.gpu_index),
    Column(
        "GPU mem",
        9,
        lambda p, _: NA if p.gpu_memory_bytes is None else fmt_bytes(p.gpu_memory_bytes),
        lambda p, _: _num(p.gpu_memory_bytes),
    ),
    Column("GPU%", 4, lambda p, _: _pct(p.gpu_util_pct), lambda p, _: _pct_key(p.gpu_util_pct), keep=3),
    Column("CPU%", 5, lambda p, _: _pct(p.cpu_pct), lambda p, _: _pct_key(p.cpu_pct), keep=2),
    Column(
        "host mem",
        9,
        lambda p, _: NA if p.host_memory_bytes is None else fmt_bytes(p.host_memory_bytes),
        lambda p, _: _num(p.host_memory_bytes),
        keep=0,
    ),
    Column(
        "elapsed",
        8,
        lambda p, now: fmt_elapsed(_elapsed(p, now)),
        lambda p, now: _num(_elapsed(p, now)),
        keep=1,
    ),
)
COMMAND = "command"
SORTS = (*(c.label for c in COLUMNS), COMMAND)
"""What ``s`` steps through."""
HOST_COLUMNS = tuple(
    replace(c, keep=3) if c.label == "host mem" else c for c in COLUMNS if not c.label.startswith("GPU")
)
"""The columns of the host's processes, listed where there is no GPU: no GPU, GPU memory or GPU %; their memory
is kept before their age on a narrow table."""
HOST_SORTS = (*(c.label for c in HOST_COLUMNS), COMMAND)
HOST_SORT = "CPU%"
"""The host's processes are its busiest: by CPU %, unless sorted by one of their own columns."""


def sort_shown(query: ProcessQuery, host: bool) -> tuple[str, bool]:
    """The sort in effect: the query's, or for host processes sorted by a GPU column, CPU % largest first."""
    if host and query.sort_by not in HOST_SORTS:
        return HOST_SORT, True
    return query.sort_by, query.sort_reverse


def fitting(width: int, sort_by: str = "", columns: tuple[Column, ...] = COLUMNS) -> tuple[tuple[Column, ...], int]:
    """The columns (of ``columns``) shown in a table ``width`` cells wide, and the command's width: the least
    kept columns give way until the command has ``MIN_COMMAND`` characters (or only PID, GPU, GPU mem and the
    sorted column are left: the order shown is always visible)."""
    shown = list(columns)
    while sum(c.cells for c in shown) + MIN_COMMAND + PADDING > width:
        droppable = [c for c in shown if c.keep < 9 and c.label != sort_by]
        if not droppable:
            break
        shown.remove(min(droppable, key=lambda c: c.keep))
    return tuple(shown), max(MIN_COMMAND, width - sum(c.cells for c in shown) - PADDING)


def matches(proc: GpuProcess, text: str) -> bool:
    """The filter: ``text`` found (case-insensitively) in the PID, user or command."""
    needle = text.lower().strip()
    return not needle or any(needle in (v or "").lower() for v in (str(proc.pid), proc.user, proc.command))


def one_line(command: str | None) -> str:
    """A command on one line (``python -c`` programs hold newlines), control characters made visible."""
    return plain_line(command, limit=COMMAND_LIMIT) if command else NA


COMMAND_LIMIT = 1024
"""Characters of a command line kept for the table (argv may be far longer than any screen)."""

Cell = str | Text


def cells(proc: GpuProcess, now: float, columns: Sequence[Column] = ()) -> tuple[Cell, ...]:
    """A row of the table: the ``columns``' texts (default: all), then the command; outside text as ``Text``
    (never markup)."""
    texts: list[Cell] = [Text(c.text(proc, now)) if c.outside else c.text(proc, now) for c in columns or COLUMNS]
    return (*texts, Text(one_line(proc.command)))


def ordered(processes: Sequence[GpuProcess], sort: str, reverse: bool, now: float) -> list[GpuProcess]:
    """``processes`` sorted by the column labelled ``sort`` (then GPU and PID, for a stable order)."""
    column = next((c for c in COLUMNS if c.label == sort), None)

    def key(p: GpuProcess) -> tuple[float | str, int, int]:
        first: float | str = column.key(p, now) if column is not None else (p.command or "")
        return first, p.gpu_index, p.pid

    return sorted(processes, key=key, reverse=reverse)


def row_key(proc: GpuProcess) -> str:
    return f"{proc.gpu_index}:{proc.pid}"


NUMERIC_FIRST_DESCENDING = {c.label for c in COLUMNS} - {"PID", "user"}
"""Columns whose first sort is largest first (the rest, and the command, read A to Z)."""


@dataclass
class ProcessQuery:
    """The table's order and filter: kept by the monitor before the table exists, and read by it after."""

    sort_by: str = "GPU mem"
    sort_reverse: bool = True
    filter_text: str = ""
