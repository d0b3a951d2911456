"""GPU temperatures through the ``amdsmi`` Python package, when it imports and initialises.

pyrsmi has no temperature call. ``amdsmi`` (shipped with ROCm 6+) does:
``amdsmi_get_temp_metric(handle, AmdSmiTemperatureType.EDGE|HOTSPOT|VRAM,
AmdSmiTemperatureMetric.CURRENT)``. Its import can fail with errors other than ImportError
when libamd_smi.so is absent, and older releases answer in millidegrees, so both are guarded.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from rocmtui.gpu.backend import release_quietly

_SENSORS = (("edge", "EDGE"), ("junction", "HOTSPOT"), ("mem", "VRAM"))
_RANGE_C = (-50.0, 200.0)


class AmdSmiTemps:
    """Temperatures of the devices in ``amdsmi_get_processor_handles()`` order (pyrsmi's order too)."""

    def __init__(self, amdsmi: ModuleType, handles: list[Any]) -> None:
        self._amdsmi = amdsmi
        self._handles = handles

    @property
    def device_count(self) -> int:
        return len(self._handles)

    def read(self, index: int) -> tuple[tuple[str, float], ...]:
        """(label, C) for edge, junction (hotspot) and mem; sensors that fail or make no sense are left out."""
        if index >= len(self._handles):
            return ()
        lib = self._amdsmi
        temps: list[tuple[str, float]] = []
        for label, kind in _SENSORS:
            try:
                raw = lib.amdsmi_get_temp_metric(
                    self._handles[index],
                    getattr(lib.AmdSmiTemperatureType, kind),
                    lib.AmdSmiTemperatureMetric.CURRENT,
                )
            except Exception:  # AmdSmiException (sensor not supported) or a missing enum member
                continue  # that sensor is simply absent from the panel
            celsius = to_celsius(raw)
            if celsius is not None:
                temps.append((label, celsius))
        return tuple(temps)

    def close(self) -> None:
        release_quietly(self._amdsmi.amdsmi_shut_down)


def to_celsius(raw: object) -> float | None:
    """Degrees C from an amdsmi reading: "N/A" and out-of-range values are None; millidegrees are scaled."""
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        return None
    value = float(raw)
    if value > 1000.0:  # older amdsmi releases report millidegrees
        value /= 1000.0
    return value if _RANGE_C[0] <= value <= _RANGE_C[1] else None


def open_amdsmi_temps() -> tuple[AmdSmiTemps | None, str]:
    """(reader, note) when amdsmi works, else (None, why not)."""
    try:
        import amdsmi
    except Exception as err:  # ImportError, or OSError/KeyError from its library loader
        return None, f"amdsmi not usable: {type(err).__name__}: {err}"
    try:
        amdsmi.amdsmi_init(amdsmi.AmdSmiInitFlags.INIT_AMD_GPUS)
        handles = list(amdsmi.amdsmi_get_processor_handles())
    except Exception as err:  # AmdSmiLibraryException and friends: no driver, no permission
        return None, f"amdsmi init failed: {type(err).__name__}: {err}"
    return AmdSmiTemps(amdsmi, handles), f"temperatures from amdsmi ({len(handles)} devices)"
