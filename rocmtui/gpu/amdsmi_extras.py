"""What pyrsmi lacks, from the ``amdsmi`` Python package when it imports and initialises.

pyrsmi has no temperature call and lists processes without their GPU. ``amdsmi`` (shipped
with ROCm 6+) has both: ``amdsmi_get_temp_metric(handle, AmdSmiTemperatureType.EDGE|HOTSPOT|VRAM,
AmdSmiTemperatureMetric.CURRENT)`` and ``amdsmi_get_gpu_process_list(handle)`` (a list of
dicts with ``pid`` and ``memory_usage["vram_mem"]`` in bytes). Its import can fail with
errors other than ImportError when libamd_smi.so is absent, older releases answer
temperatures in millidegrees and list processes as opaque handles: all of it is guarded.
"""

from __future__ import annotations

from types import ModuleType

from rocmtui.gpu.backend import release_quietly

_SENSORS = (("edge", "EDGE"), ("junction", "HOTSPOT"), ("mem", "VRAM"))
_RANGE_C = (-50.0, 200.0)


class AmdSmiExtras:
    """Temperatures and processes of the devices in ``amdsmi_get_processor_handles()`` order (pyrsmi's too)."""

    def __init__(self, amdsmi: ModuleType, handles: list[object]) -> None:
        self._amdsmi = amdsmi
        self._handles = handles

    @property
    def device_count(self) -> int:
        """Devices amdsmi sees; its readings are matched to pyrsmi's by index only when the counts agree."""
        return len(self._handles)

    def temperatures(self, index: int) -> tuple[tuple[str, float], ...]:
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

    def processes(self, index: int) -> list[tuple[int, int | None]] | None:
        """(pid, VRAM bytes or None) of each process on GPU ``index``; None when amdsmi cannot say."""
        if index >= len(self._handles):
            return None
        try:
            entries = self._amdsmi.amdsmi_get_gpu_process_list(self._handles[index])
        except Exception:  # AmdSmiException (no permission, not supported): the caller uses pyrsmi's list
            return None
        found: list[tuple[int, int | None]] = []
        for entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("pid"), int):
                return None  # an older release's process handles: not readable this way
            usage = entry.get("memory_usage")
            vram = usage.get("vram_mem") if isinstance(usage, dict) else entry.get("mem")
            found.append((entry["pid"], vram if isinstance(vram, int) and vram >= 0 else None))
        return found

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


def open_amdsmi_extras() -> tuple[AmdSmiExtras | None, str]:
    """(reader, note) when amdsmi works, else (None, why not)."""
    try:
        import amdsmi
    except Exception as err:  # ImportError, or OSError/KeyError from its library loader
        return None, f"amdsmi not usable: {type(err).__name__}: {err}"
    try:
        amdsmi.amdsmi_init(amdsmi.AmdSmiInitFlags.INIT_AMD_GPUS)
    except Exception as err:  # AmdSmiLibraryException and friends: no driver, no permission
        return None, f"amdsmi init failed: {type(err).__name__}: {err}"
    try:
        handles = list(amdsmi.amdsmi_get_processor_handles())
    except Exception as err:  # initialised, so shut it down again: nothing else will
        release_quietly(amdsmi.amdsmi_shut_down)
        return None, f"amdsmi cannot list devices: {type(err).__name__}: {err}"
    return AmdSmiExtras(amdsmi, handles), f"amdsmi: {len(handles)} devices"
