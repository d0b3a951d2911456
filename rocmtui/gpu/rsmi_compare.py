"""rocmtui's reading of a card beside AMD's ROCm SMI library's, field by field, in rocmtui's units.

A field agrees when both say nothing, or both say a value within its unit's rounding: whole percent,
bytes, 1 °C (the library's millidegrees), 0.001 W (its microwatts), 1 MHz, 1 RPM. Fan speed is compared
as the library's PWM (0..255) against ``fan_pct``, within one PWM step.

The clocks differ by design: the library gives the DPM level marked current in ``pp_dpm_*``, rocmtui the
hwmon ``freq*_input`` (the clock now, which can sit below the lowest level in deep sleep). Both are kept
for the reader to see; ``CLOCK_FIELDS`` names them.
"""

from __future__ import annotations

from dataclasses import dataclass

from rocmtui.gpu.rsmi_lib import RsmiReading
from rocmtui.gpu.sample import GpuSample

CLOCK_FIELDS = frozenset({"sclk_mhz", "mclk_mhz"})
PWM_MAX = 255


@dataclass(frozen=True)
class FieldPair:
    """One field as each side reads it, in rocmtui's units."""

    field: str
    rocmtui: float | None
    library: float | None
    tolerance: float

    @property
    def agrees(self) -> bool:
        if self.rocmtui is None or self.library is None:
            return self.rocmtui is None and self.library is None
        return abs(self.rocmtui - self.library) <= self.tolerance

    def describe(self) -> str:
        return f"{self.field}: rocmtui {_shown(self.rocmtui)}, library {_shown(self.library)}"


def _shown(value: float | None) -> str:
    return "N/A" if value is None else f"{value:g}"


def _scaled(value: int | None, factor: float) -> float | None:
    return None if value is None else value * factor


def compare(sample: GpuSample, reading: RsmiReading) -> list[FieldPair]:
    """Every compared field of one card, in a fixed order."""
    temps = dict(sample.temperatures_c)
    fan_pwm = None if sample.fan_pct is None else sample.fan_pct * PWM_MAX / 100.0
    pairs = [
        FieldPair("utilization_pct", sample.utilization_pct, _scaled(reading.busy_pct, 1.0), 0.0),
        FieldPair("memory_busy_pct", sample.memory_busy_pct, _scaled(reading.memory_busy_pct, 1.0), 0.0),
        FieldPair("memory_used_bytes", _int(sample.memory_used_bytes), _scaled(reading.vram_used_bytes, 1.0), 0.0),
        FieldPair("memory_total_bytes", _int(sample.memory_total_bytes), _scaled(reading.vram_total_bytes, 1.0), 0.0),
        FieldPair("gtt_used_bytes", _int(sample.gtt_used_bytes), _scaled(reading.gtt_used_bytes, 1.0), 0.0),
        FieldPair("gtt_total_bytes", _int(sample.gtt_total_bytes), _scaled(reading.gtt_total_bytes, 1.0), 0.0),
    ]
    for label in ("edge", "junction", "mem"):
        library_temp = _scaled(reading.temperatures_millic.get(label), 1e-3)
        pairs.append(FieldPair(f"temp_{label}_c", temps.get(label), library_temp, 1.0))
    pairs += [
        FieldPair("power_w", sample.power_w, _scaled(reading.power_average_uw, 1e-6), 1e-3),
        FieldPair("power_cap_w", sample.power_cap_w, _scaled(reading.power_cap_uw, 1e-6), 1e-3),
        FieldPair("sclk_mhz", sample.sclk_mhz, _scaled(reading.sclk_hz, 1e-6), 1.0),
        FieldPair("mclk_mhz", sample.mclk_mhz, _scaled(reading.mclk_hz, 1e-6), 1.0),
        FieldPair("fan_rpm", sample.fan_rpm, _scaled(reading.fan_rpm, 1.0), 1.0),
        FieldPair("fan_pwm", fan_pwm, _scaled(reading.fan_pwm, 1.0), 1.0),
    ]
    return pairs


def _int(value: int | None) -> float | None:
    return None if value is None else float(value)


def disagreements(pairs: list[FieldPair], include_clocks: bool = False) -> list[FieldPair]:
    """The pairs that differ; the clocks only when asked (they measure different things)."""
    return [p for p in pairs if not p.agrees and (include_clocks or p.field not in CLOCK_FIELDS)]
