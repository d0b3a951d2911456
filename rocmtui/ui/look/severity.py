"""Calm, warning or critical: how a GPU reading should be coloured, against the card's own limits where known.

Thresholds (a reading at or above one takes its level):

- utilisation: warning 75%, critical 95% (a GPU at 99% is busy, which the user wants to see at a glance);
- VRAM: warning 85% of the total, critical 95% (an allocation is about to fail);
- temperature: critical at the card's throttling limit (hwmon ``temp*_crit``, NVML's slowdown threshold),
  warning 10 °C below it; without a limit, 80 °C and 90 °C;
- power: warning 90% of the cap, critical 98% (the card is being held back by its power limit);
- throttle reasons, where the backend gives them: thermal, hardware slowdown and power brake are critical
  (the card slows itself to protect itself), the power cap and the others a warning. They also raise the
  level of the reading they concern: a thermal reason makes the temperature critical, a power cap makes
  power at least a warning, whatever the numbers say.
"""

from __future__ import annotations

from typing import Literal

from rocmtui.gpu import throttle
from rocmtui.gpu.sample import GpuSample

Level = Literal["calm", "warning", "critical"]
TEMP_DEFAULTS_C = (80.0, 90.0)
"""(warning, critical) when the backend gives no limit."""
TEMP_MARGIN_C = 10.0
CRITICAL_REASONS = frozenset({throttle.THERMAL, throttle.HW_SLOWDOWN, throttle.POWER_BRAKE})
_ORDER: dict[Level | None, int] = {None: 0, "calm": 1, "warning": 2, "critical": 3}


def level(value: float | None, warning: float, critical: float) -> Level | None:
    """The level of ``value``; None when it is unknown."""
    if value is None:
        return None
    if value >= critical:
        return "critical"
    return "warning" if value >= warning else "calm"


def worst(*levels: Level | None) -> Level | None:
    """The most severe of ``levels`` (None when all are unknown)."""
    return max(levels, key=_ORDER.__getitem__)


def throttle_level(gpu: GpuSample) -> Level | None:
    """Critical for a reason that protects the card, a warning for the others; None when nothing is held back."""
    reasons = set(gpu.throttle_reasons or ())
    if not reasons:
        return None
    return "critical" if reasons & CRITICAL_REASONS else "warning"


def util_level(gpu: GpuSample) -> Level | None:
    return level(gpu.utilization_pct, 75.0, 95.0)


def memory_level(gpu: GpuSample) -> Level | None:
    return level(gpu.memory_pct, 85.0, 95.0)


def temp_level(gpu: GpuSample) -> Level | None:
    limit = gpu.temp_crit_c
    warning, critical = (limit - TEMP_MARGIN_C, limit) if limit else TEMP_DEFAULTS_C
    thermal: Level | None = "critical" if throttle.THERMAL in (gpu.throttle_reasons or ()) else None
    return worst(level(gpu.temperature_c, warning, critical), thermal)


def power_level(gpu: GpuSample) -> Level | None:
    capped: Level | None = "warning" if throttle.POWER in (gpu.throttle_reasons or ()) else None
    if gpu.power_w is None or not gpu.power_cap_w:
        return capped
    return worst(level(100.0 * gpu.power_w / gpu.power_cap_w, 90.0, 98.0), capped)


def ecc_level(gpu: GpuSample) -> Level | None:
    """Critical for any uncorrected memory error, a warning for corrected ones, calm at zero."""
    if gpu.ecc_uncorrected:
        return "critical"
    if gpu.ecc_corrected:
        return "warning"
    return None if gpu.ecc_corrected is None and gpu.ecc_uncorrected is None else "calm"
