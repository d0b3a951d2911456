"""One GPU: a text readout (utilization, VRAM, power, temperatures, clocks, fan) and its history."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.style import Style
from rich.text import Text

from rocmtui.gpu.sample import GpuSample
from rocmtui.ui.format import NA, bar, dim_tracks, fmt_pct, fmt_power, fmt_temp, fmt_used_total, meter, ratio
from rocmtui.ui.severity import Level, memory_level, power_level, temp_level, util_level
from rocmtui.ui.widgets.readout import ReadingCard, Readout

LABEL_W = 6
"""Cells of a line's label (``util``, ``VRAM``...), which keeps the text colour."""
SHORT_TEMP = {"junction": "junc", "hotspot": "hot", "memory": "mem"}


def temps_text(sample: GpuSample) -> str:
    """``edge 45°C junc 52°C mem 60°C`` (every sensor the backend reported)."""
    parts = [f"{SHORT_TEMP.get(label, label)} {fmt_temp(value)}" for label, value in sample.temperatures_c]
    return " ".join(parts) or NA


def clocks_text(sample: GpuSample) -> str:
    """``sclk 2100 mclk 1300 MHz  fan 1200 rpm``, skipping what is unknown; ``N/A`` when nothing is known."""
    clocks = []
    if sample.sclk_mhz is not None:
        clocks.append(f"sclk {sample.sclk_mhz:.0f}")
    if sample.mclk_mhz is not None:
        clocks.append(f"mclk {sample.mclk_mhz:.0f}")
    parts = [" ".join(clocks) + " MHz"] if clocks else []
    if sample.fan_rpm is not None:
        parts.append(f"fan {sample.fan_rpm:.0f} rpm")
    elif sample.fan_pct is not None:
        parts.append(f"fan {sample.fan_pct:.0f}%")
    return "  ".join(parts) or NA


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


def compact_fields(sample: GpuSample) -> list[tuple[str, Level | None]]:
    """One line per GPU for small terminals, as (text, level) pieces: util, VRAM, temperature, power."""
    head = f"{sample.index} {sample.name[:14]:<14}"
    if sample.error:
        return [(f"{head} unavailable: {sample.error}", None)]
    return [
        (f"{head} ", None),
        (f"{bar(ratio(sample.utilization_pct, 100.0), 8)} {fmt_pct(sample.utilization_pct):>4}", util_level(sample)),
        ("  ", None),
        (f"{fmt_used_total(sample.memory_used_bytes, sample.memory_total_bytes, sep='/'):>15}", memory_level(sample)),
        ("  ", None),
        (f"{fmt_temp(sample.temperature_c):>5}", temp_level(sample)),
        ("  ", None),
        (fmt_power(sample.power_w, sample.power_cap_w), power_level(sample)),
    ]


def compact_line(sample: GpuSample) -> str:
    """One line per GPU for small terminals."""
    return "".join(text for text, _ in compact_fields(sample))


def full_levels(sample: GpuSample) -> list[Level | None]:
    """The level of each of ``full_lines``: util, VRAM, power, temperature, clocks."""
    return [util_level(sample), memory_level(sample), power_level(sample), temp_level(sample), None]


def styled_readout(sample: GpuSample, width: int, compact: bool, styles: dict[str, Style]) -> Text:
    """The readout with each reading in the colour of its level (the label keeps the text colour)."""
    text = Text(no_wrap=True, overflow="crop")
    if sample.error:
        text.append("\n".join(readout_lines(sample, width, compact)), styles["critical"])
        return text
    if compact:
        for piece, piece_level in compact_fields(sample):
            text.append(piece, styles[piece_level] if piece_level else "")
        return dim_tracks(text)
    lines = full_lines(sample, width)
    for number, (line, line_level) in enumerate(zip(lines, full_levels(sample), strict=False)):
        if number:
            text.append("\n")
        text.append(line[:LABEL_W])
        text.append(line[LABEL_W:], styles[line_level] if line_level else "")
    return dim_tracks(text)


def readout_lines(sample: GpuSample, width: int, compact: bool) -> list[str]:
    """The GPU's readout: one line when compact, else the full lines."""
    return [compact_line(sample)] if compact else full_lines(sample, width)


class GpuReadout(Readout[GpuSample]):
    """The numbers of one GPU as cheap text, coloured by level; redrawn only when a reading changes."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"gpu-readout--calm", "gpu-readout--warning", "gpu-readout--critical"}
    DEFAULT_CSS = """
    GpuReadout { width: 1fr; height: 5; }
    GpuReadout.-compact { height: 1; }
    GpuReadout > .gpu-readout--calm { color: $text-success; }
    GpuReadout > .gpu-readout--warning { color: $text-warning; text-style: bold; }
    GpuReadout > .gpu-readout--critical { color: $text-error; text-style: bold; }
    """

    def __init__(self) -> None:
        super().__init__(readout_lines)

    def line_keys(self, reading: GpuSample) -> list[tuple[str, object]]:
        """Each line with its colour level, so a change of level repaints the line."""
        if self.has_class("-compact"):
            fields = compact_fields(reading)
            return [("".join(text for text, _ in fields), tuple(level for _, level in fields))]
        if reading.error:
            return [(line, "error") for line in readout_lines(reading, self.size.width, compact=False)]
        lines = full_lines(reading, self.size.width)
        return list(zip(lines, full_levels(reading), strict=False))

    def render(self) -> Text:
        if self.reading is None:
            return super().render()
        styles = {
            name: self.get_component_rich_style(f"gpu-readout--{name}", partial=True)
            for name in ("calm", "warning", "critical")
        }
        return styled_readout(self.reading, self.size.width, self.has_class("-compact"), styles)


class GpuCard(ReadingCard[GpuSample]):
    """One GPU: its readout and utilization history."""

    def __init__(self, index: int) -> None:
        super().__init__(GpuReadout(), classes="gpu-card", history_classes="util-history")
        self.index = index

    def show(self, sample: GpuSample, util_history: Sequence[float | None]) -> None:
        self.show_reading(f"GPU {sample.index} · {sample.name}", sample, util_history)
