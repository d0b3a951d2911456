"""Calm, warning or critical: how a GPU reading should be coloured, against the card's own limits where known.

Thresholds (a reading at or above one takes its level):

- utilisation: warning 75%, critical 95% (a GPU at 99% is busy, which the user wants to see at a glance);
- VRAM: warning 85% of the total, critical 95% (an allocation is about to fail);
- temperature: critical at the card's throttling limit (hwmon ``temp*_crit``, NVML's slowdown threshold),
  warning 10 °C below it; without a limit, 80 °C and 90 °C;
- power: warning 90% of the cap, critical 98% (the card is being held back by its power limit).
"""

from __future__ import annotations

from typing import Literal

from rocmtui.gpu.sample import GpuSample

Level = Literal["calm", "warning", "critical"]
TEMP_DEFAULTS_C = (80.0, 90.0)
"""(warning, critical) when the backend gives no limit."""
TEMP_MARGIN_C = 10.0


def level(value: float | None, warning: float, critical: float) -> Level | None:
    """The level of ``value``; None when it is unknown."""
    if value is None:
        return None
    if value >= critical:
        return "critical"
    return "warning" if value >= warning else "calm"


def util_level(gpu: GpuSample) -> Level | None:
    return level(gpu.utilization_pct, 75.0, 95.0)


def memory_level(gpu: GpuSample) -> Level | None:
    return level(gpu.memory_pct, 85.0, 95.0)


def temp_level(gpu: GpuSample) -> Level | None:
    limit = gpu.temp_crit_c
    warning, critical = (limit - TEMP_MARGIN_C, limit) if limit else TEMP_DEFAULTS_C
    return level(gpu.temperature_c, warning, critical)


def power_level(gpu: GpuSample) -> Level | None:
    if gpu.power_w is None or not gpu.power_cap_w:
        return None
    return level(100.0 * gpu.power_w / gpu.power_cap_w, 90.0, 98.0)
