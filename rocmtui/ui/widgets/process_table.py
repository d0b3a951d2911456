"""Processes using the GPUs: PID, user, GPU, GPU memory, command (where the backend offers them)."""

from __future__ import annotations

from collections.abc import Sequence

from textual.widgets import DataTable

from rocmtui.gpu.sample import GpuProcess
from rocmtui.gpu.units import fmt_gpu_index
from rocmtui.ui.format import NA, fmt_bytes

COLUMNS = (("PID", 8), ("user", 10), ("GPU", 3), ("GPU memory", 10), ("command", 48))
"""Labels and fixed widths (auto widths lag behind a cleared table); long commands are cropped."""


def process_row(proc: GpuProcess) -> tuple[str, ...]:
    memory = NA if proc.gpu_memory_bytes is None else fmt_bytes(proc.gpu_memory_bytes)
    return (str(proc.pid), proc.user or NA, fmt_gpu_index(proc.gpu_index), memory, proc.command or NA)


class ProcessTable(DataTable[str]):
    """Rebuilt only when the set of rows changes (most samples leave it as it was)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="none", zebra_stripes=True, show_cursor=False)
        self.rows_shown: tuple[tuple[str, ...], ...] | None = None

    def on_mount(self) -> None:
        for label, width in COLUMNS:
            self.add_column(label, width=width)

    def show(self, processes: Sequence[GpuProcess]) -> None:
        rows = tuple(process_row(p) for p in sorted(processes, key=lambda p: (p.gpu_index, p.pid)))
        if rows == self.rows_shown:
            return
        self.rows_shown = rows
        self.clear()
        for row in rows:
            self.add_row(*row)
        if not rows:
            self.add_row("-", "-", "-", "-", "no GPU processes reported")
