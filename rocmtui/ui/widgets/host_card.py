"""The machine itself: CPU and RAM through the sampler's host reading, with a CPU history."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import Vertical

from rocmtui.gpu.sample import HostSample
from rocmtui.ui.format import fmt_mem_pair, fmt_pct, meter, ratio
from rocmtui.ui.widgets.history_bars import HistoryBars
from rocmtui.ui.widgets.readout import Readout


def host_lines(host: HostSample, width: int, compact: bool) -> list[str]:
    """CPU and RAM meters: two lines, or one line when compact."""
    cores = f" of {host.cpu_count}" if host.cpu_count else ""
    cpu = meter(
        "CPU", ratio(host.cpu_pct, 100.0), f"{fmt_pct(host.cpu_pct)}{cores}", width // 2 - 2 if compact else width
    )
    ram_value = fmt_mem_pair(host.ram_used_bytes, host.ram_total_bytes)
    ram = meter(
        "RAM", ratio(host.ram_used_bytes, host.ram_total_bytes), ram_value, width - width // 2 - 2 if compact else width
    )
    return [f"{cpu}  {ram}"] if compact else [cpu, ram]


class HostReadout(Readout[HostSample]):
    """CPU % and RAM as text."""

    DEFAULT_CSS = """
    HostReadout { width: 1fr; height: 2; }
    HostReadout.-compact { height: 1; }
    """

    def __init__(self) -> None:
        super().__init__(host_lines)


class HostCard(Vertical):
    """A bordered card naming the CPU, with its readout and CPU history."""

    def __init__(self) -> None:
        super().__init__(classes="host-card")
        self.border_title = "Host"
        self.readout = HostReadout()
        self.history = HistoryBars(classes="cpu-history")

    def compose(self) -> ComposeResult:
        yield self.readout
        yield self.history

    def set_compact(self, compact: bool) -> None:
        self.set_class(compact, "-compact")
        self.readout.set_class(compact, "-compact")
        self.readout.refresh(layout=True)

    def show(self, host: HostSample, cpu_history: Sequence[float | None]) -> None:
        title = f"Host · {host.cpu_name}" if host.cpu_name else "Host"
        if title != self.border_title:  # setting a title repaints the whole card
            self.border_title = title
        self.readout.set_reading(host)
        if not self.has_class("-compact"):
            self.history.set_values(cpu_history)
