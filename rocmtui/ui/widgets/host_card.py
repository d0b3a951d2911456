"""The machine itself: CPU and RAM through the sampler's host reading, with a CPU history."""

from __future__ import annotations

from collections.abc import Sequence

from rocmtui.gpu.sample import HostSample
from rocmtui.ui.look.meters import fmt_pct, fmt_used_total, meter, ratio
from rocmtui.ui.widgets.readout import ReadingCard, Readout


def host_lines(host: HostSample, width: int, compact: bool) -> list[str]:
    """CPU and RAM meters: two lines, or one line when compact."""
    cores = f" of {host.cpu_count}" if host.cpu_count else ""
    cpu = meter(
        "CPU", ratio(host.cpu_pct, 100.0), f"{fmt_pct(host.cpu_pct)}{cores}", width // 2 - 2 if compact else width
    )
    ram_value = fmt_used_total(host.ram_used_bytes, host.ram_total_bytes, sep="/")
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


class HostCard(ReadingCard[HostSample]):
    """The machine: its CPU and RAM readout and CPU history."""

    def __init__(self) -> None:
        super().__init__(HostReadout(), classes="host-card", history_classes="cpu-history")
        self.border_title = "Host"

    def show(self, host: HostSample, cpu_history: Sequence[float | None]) -> None:
        self.show_reading(f"Host · {host.cpu_name}" if host.cpu_name else "Host", host, cpu_history)
