"""Why a GPU's clocks are held back, decoded from NVML's and amdgpu's bitmasks into a few shared names.

Only reasons that cost performance under load are named: NVML's "GPU idle", "applications clocks",
"sync boost" and "display clock" bits describe settings or an idle card, not a limit, and are dropped.
"""

from __future__ import annotations

POWER = "power cap"
THERMAL = "thermal"
HW_SLOWDOWN = "hw slowdown"
POWER_BRAKE = "power brake"
CURRENT = "current"
BOARD = "board limit"
RELIABILITY = "reliability"
OTHER = "other"
REASONS = (THERMAL, HW_SLOWDOWN, POWER_BRAKE, POWER, CURRENT, BOARD, RELIABILITY, OTHER)
"""Every name a sample may carry, most severe first (the order they are shown in)."""

NVML_BITS: dict[int, str] = {
    0x4: POWER,  # SwPowerCap
    0x8: HW_SLOWDOWN,  # HwSlowdown
    0x20: THERMAL,  # SwThermalSlowdown
    0x40: THERMAL,  # HwThermalSlowdown
    0x80: POWER_BRAKE,  # HwPowerBrakeSlowdown
    0x200: BOARD,  # BoardLimit (nvidia-ml-py 12.560+)
    0x400: RELIABILITY,  # Reliability
}
"""nvmlClocksEventReason* / nvmlClocksThrottleReason* bits (the same values under both names)."""

AMD_INDEP_GROUPS: tuple[tuple[range, str], ...] = (
    (range(8), POWER),  # SMU_THROTTLER_PPT0..3, SPL, FPPT, SPPT, SPPT_APU
    (range(16, 24), CURRENT),  # TDC_GFX/SOC/MEM/VDD/CVIP, EDC_CPU/GFX, APCC
    (range(32, 44), THERMAL),  # TEMP_GPU, CORE, MEM, EDGE, HOTSPOT, SOC, VR_*, LIQUID0/1
    (range(44, 48), HW_SLOWDOWN),  # VRHOT0/1, PROCHOT_CPU/GFX
    (range(56, 58), OTHER),  # PPM, FIT
)
"""Bit ranges of the kernel's ASIC-independent ``indep_throttle_status`` (``SMU_THROTTLER_*_BIT`` in amdgpu_smu.h)."""


def _ordered(found: set[str]) -> tuple[str, ...]:
    return tuple(name for name in REASONS if name in found)


def from_nvml(mask: int) -> tuple[str, ...]:
    """The reasons set in an NVML clocks-event mask, most severe first; () when none holds the clocks back."""
    return _ordered({name for bit, name in NVML_BITS.items() if mask & bit})


def from_amd_indep(mask: int) -> tuple[str, ...]:
    """The reasons set in amdgpu's ``indep_throttle_status``, most severe first."""
    return _ordered({name for bits, name in AMD_INDEP_GROUPS if any(mask >> bit & 1 for bit in bits)})
