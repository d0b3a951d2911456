"""One GPU: a text readout (utilization, VRAM, power, temperatures, clocks, fan) and its history.

Readings that only some backends give (throttle reasons, ECC errors, GTT, PCIe traffic, encoder and
decoder use) are not lines of their own: each goes at the end of the clock line, else of the temperature
line, where it fits, in that order of importance, and is left out when the backend cannot say.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rocmtui.base.units import fmt_throughput
from rocmtui.gpu.sample import GpuSample
from rocmtui.ui.look.meters import NA, bar, fmt_pct, fmt_power, fmt_temp, fmt_used_total, meter, ratio
from rocmtui.ui.look.severity import Level, ecc_level, memory_level, power_level, temp_level, throttle_level, util_level
from rocmtui.ui.widgets.readout import ReadingCard, Readout

LABEL_W = 6
"""Cells of a line's label (``util``, ``VRAM``...), which keeps the text colour."""
SHORT_TEMP = {"junction": "junc", "hotspot": "hot", "memory": "mem"}
GAP = "  "
Piece = tuple[str, Level | None]
"""A run of text and the level it is coloured by (None: the text colour)."""


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


def extra_fields(sample: GpuSample) -> list[list[Piece]]:
    """The readings only some backends give, most important first, each in its longest form first (a shorter
    one is tried where the long one does not fit); what the backend cannot say is absent."""
    pieces: list[list[Piece]] = []
    if sample.throttle_reasons:
        reasons, level = ", ".join(sample.throttle_reasons), throttle_level(sample)
        pieces.append([(f"throttled: {reasons}", level), (f"slow: {reasons}", level)])
    if sample.ecc_corrected is not None or sample.ecc_uncorrected is not None:
        corrected, uncorrected = sample.ecc_corrected or 0, sample.ecc_uncorrected or 0
        text = f"ECC {corrected} corr {uncorrected} uncorr" if corrected or uncorrected else "ECC 0"
        pieces.append([(text, ecc_level(sample))])
    if sample.gtt_used_bytes is not None or sample.gtt_total_bytes is not None:
        pieces.append([(f"GTT {fmt_used_total(sample.gtt_used_bytes, sample.gtt_total_bytes, sep='/')}", None)])
    if sample.pcie_rx_bytes_per_s is not None or sample.pcie_tx_bytes_per_s is not None:
        rx, tx = fmt_throughput(sample.pcie_rx_bytes_per_s), fmt_throughput(sample.pcie_tx_bytes_per_s)
        pieces.append([(f"PCIe rx {rx} tx {tx}", None)])
    if sample.encoder_pct or sample.decoder_pct:  # idle codecs (0%, or none) are not worth a place
        pieces.append([(f"enc {fmt_pct(sample.encoder_pct)} dec {fmt_pct(sample.decoder_pct)}", None)])
    return pieces


def full_fields(sample: GpuSample, width: int) -> list[list[Piece]]:
    """Five lines for a card of ``width`` cells, each as pieces: its label, then coloured readings."""
    if sample.error:
        return [[(f"unavailable: {sample.error}", "critical")]]
    util = fmt_pct(sample.utilization_pct)
    if sample.memory_busy_pct is not None:
        util += f" mem {sample.memory_busy_pct:.0f}%"
    memory = fmt_used_total(sample.memory_used_bytes, sample.memory_total_bytes, sep="/")
    power = fmt_power(sample.power_w, sample.power_cap_w)
    meters = [
        meter("util", ratio(sample.utilization_pct, 100.0), util, width),
        meter("VRAM", ratio(sample.memory_used_bytes, sample.memory_total_bytes), memory, width),
        meter("power", ratio(sample.power_w, sample.power_cap_w), power, width),
    ]
    levels = [util_level(sample), memory_level(sample), power_level(sample)]
    lines: list[list[Piece]] = [[(m[:LABEL_W], None), (m[LABEL_W:], lv)] for m, lv in zip(meters, levels, strict=True)]
    temp_line: list[Piece] = [(f"{'temp':<{LABEL_W}}", None), (temps_text(sample), temp_level(sample))]
    clock_line: list[Piece] = [(f"{'clock':<{LABEL_W}}", None), (clocks_text(sample), None)]
    for forms in extra_fields(sample):
        place(forms, [clock_line, temp_line], width)
    return [*lines, temp_line, clock_line]


def place(forms: list[Piece], lines: list[list[Piece]], width: int) -> None:
    """Append the first form that fits to the first line with room for it (every line tried per form)."""
    for piece in forms:
        for line in lines:
            if sum(len(text) for text, _ in line) + len(GAP) + len(piece[0]) <= width:
                line.extend([(GAP, None), piece])
                return


def full_lines(sample: GpuSample, width: int) -> list[str]:
    """Five lines for a card of ``width`` cells."""
    return ["".join(text for text, _ in line) for line in full_fields(sample, width)]


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

    LEVEL_CLASS = "gpu-readout"

    def __init__(self) -> None:
        super().__init__(readout_lines)

    def line_pieces(self, reading: GpuSample) -> Sequence[Sequence[Piece]]:
        """Each line's runs coloured by level; a GPU that cannot be read is all in the critical colour."""
        compact = self.has_class("-compact")
        if reading.error:
            return [[(line, "critical")] for line in readout_lines(reading, self.size.width, compact)]
        return [list(compact_fields(reading))] if compact else full_fields(reading, self.size.width)


class GpuCard(ReadingCard[GpuSample]):
    """One GPU: its readout and utilization history."""

    def __init__(self, index: int) -> None:
        super().__init__(GpuReadout(), classes="gpu-card", history_classes="util-history")
        self.index = index

    def show(self, sample: GpuSample, util_history: Sequence[float | None]) -> None:
        self.show_reading(f"GPU {sample.index} · {sample.name}", sample, util_history)
