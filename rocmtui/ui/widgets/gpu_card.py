"""One GPU: a text readout (utilization, VRAM, power, temperatures, clocks, fan) and its history."""

from __future__ import annotations

from collections.abc import Sequence

from rocmtui.gpu.sample import GpuSample
from rocmtui.ui.format import NA, bar, fmt_pct, fmt_power, fmt_temp, fmt_used_total, meter, ratio
from rocmtui.ui.widgets.readout import ReadingCard, Readout

SHORT_TEMP = {"junction": "junc", "hotspot": "hot", "memory": "mem"}


def temps_text(sample: GpuSample) -> str:
    """``edge 45°C junc 52°C mem 60°C`` (every sensor the backend reported)."""
    parts = [f"{SHORT_TEMP.get(label, label)} {fmt_temp(value)}" for label, value in sample.temperatures_c]
    return " ".join(parts) or NA


def clocks_text(sample: GpuSample) -> str:
    """``sclk 2100 mclk 1300 MHz  fan 1200 rpm``, skipping what is unknown."""
    parts = []
    if sample.sclk_mhz is not None:
        parts.append(f"sclk {sample.sclk_mhz:.0f}")
    if sample.mclk_mhz is not None:
        parts.append(f"mclk {sample.mclk_mhz:.0f}")
    text = " ".join(parts) + " MHz" if parts else f"clocks {NA}"
    if sample.fan_rpm is not None:
        text += f"  fan {sample.fan_rpm:.0f} rpm"
    elif sample.fan_pct is not None:
        text += f"  fan {sample.fan_pct:.0f}%"
    return text


def full_lines(sample: GpuSample, width: int) -> list[str]:
    """Five lines for a card of ``width`` cells."""
    if sample.error:
        return [f"unavailable: {sample.error}"]
    util = fmt_pct(sample.utilization_pct)
    if sample.memory_busy_pct is not None:
        util += f" mem {sample.memory_busy_pct:.0f}%"
    return [
        meter("util", ratio(sample.utilization_pct, 100.0), util, width),
        meter(
            "VRAM",
            ratio(sample.memory_used_bytes, sample.memory_total_bytes),
            fmt_used_total(sample.memory_used_bytes, sample.memory_total_bytes, sep="/"),
            width,
        ),
        meter("power", ratio(sample.power_w, sample.power_cap_w), fmt_power(sample.power_w, sample.power_cap_w), width),
        f"{'temp':<6}{temps_text(sample)}",
        f"{'clock':<6}{clocks_text(sample)}",
    ]


def compact_line(sample: GpuSample) -> str:
    """One line per GPU for small terminals."""
    head = f"{sample.index} {sample.name[:14]:<14}"
    if sample.error:
        return f"{head} unavailable: {sample.error}"
    return (
        f"{head} {bar(ratio(sample.utilization_pct, 100.0), 8)} {fmt_pct(sample.utilization_pct):>4}"
        f"  {fmt_used_total(sample.memory_used_bytes, sample.memory_total_bytes, sep='/'):>15}"
        f"  {fmt_temp(sample.temperature_c):>5}  {fmt_power(sample.power_w, sample.power_cap_w)}"
    )


def readout_lines(sample: GpuSample, width: int, compact: bool) -> list[str]:
    """The GPU's readout: one line when compact, else the full lines."""
    return [compact_line(sample)] if compact else full_lines(sample, width)


class GpuReadout(Readout[GpuSample]):
    """The numbers of one GPU as cheap text; redrawn only when a reading changes."""

    DEFAULT_CSS = """
    GpuReadout { width: 1fr; height: 5; }
    GpuReadout.-compact { height: 1; }
    """

    def __init__(self) -> None:
        super().__init__(readout_lines)


class GpuCard(ReadingCard[GpuSample]):
    """One GPU: its readout and utilization history."""

    def __init__(self, index: int) -> None:
        super().__init__(GpuReadout(), classes="gpu-card", history_classes="util-history")
        self.index = index

    def show(self, sample: GpuSample, util_history: Sequence[float | None]) -> None:
        self.show_reading(f"GPU {sample.index} · {sample.name}", sample, util_history)
