"""FAKE ``pynvml`` (nvidia-ml-py) for the device-identity tests: there is no NVIDIA driver on the test machine.

Keeps nvidia-ml-py's real names and types: the module's own ``NVMLError`` and
``NVMLError_NotSupported`` (what a datacenter GPU answers for its fan), ``nvmlDeviceGetUUID``
returning ``GPU-...`` text, and ``nvmlDeviceGetPciInfo`` returning the real ``nvmlPciInfo_t``
structure, whose ``busId`` is the bytes NVML writes (``00000000:1B:00.0``). Every call is
counted, so a test can tell what is read at open from what is read per tick.
"""

from __future__ import annotations

import types
from collections import Counter
from dataclasses import dataclass, field

import pynvml


@dataclass
class FakeNvmlDevice:
    name: str = "NVIDIA H200"
    uuid: str | None = "GPU-5d3e7a10-1b2c-4d5e-8f90-a1b2c3d4e5f6"
    """None: NVML answers NOT_SUPPORTED."""
    bus_id: bytes | None = b"00000000:1B:00.0"


@dataclass
class FakeNvml:
    devices: list[FakeNvmlDevice] = field(default_factory=list)
    calls: Counter[str] = field(default_factory=Counter)

    def module(self) -> types.ModuleType:
        mod = types.ModuleType("pynvml", "FAKE pynvml")
        mod.NVMLError = pynvml.NVMLError  # type: ignore[attr-defined]
        for name in (
            "NVML_TEMPERATURE_GPU", "NVML_CLOCK_GRAPHICS", "NVML_CLOCK_MEM", "NVML_PCIE_UTIL_RX_BYTES",
            "NVML_PCIE_UTIL_TX_BYTES", "NVML_MEMORY_ERROR_TYPE_CORRECTED", "NVML_MEMORY_ERROR_TYPE_UNCORRECTED",
            "NVML_VOLATILE_ECC",
        ):  # fmt: skip
            setattr(mod, name, getattr(pynvml, name))
        mod.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = pynvml.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN  # type: ignore[attr-defined]
        mod.NVML_TEMPERATURE_THRESHOLD_SHUTDOWN = pynvml.NVML_TEMPERATURE_THRESHOLD_SHUTDOWN  # type: ignore[attr-defined]
        for name in dir(self):
            if name.startswith("nvml"):
                setattr(mod, name, self._counted(name))
        for name in (
            "nvmlDeviceGetUtilizationRates", "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetTemperature",
            "nvmlDeviceGetPowerUsage", "nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetClockInfo",
            "nvmlDeviceGetFanSpeed", "nvmlDeviceGetTemperatureThreshold", "nvmlDeviceGetEncoderUtilization",
            "nvmlDeviceGetDecoderUtilization", "nvmlDeviceGetPcieThroughput", "nvmlDeviceGetTotalEccErrors",
            "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons",
        ):  # fmt: skip
            setattr(mod, name, self._counted(name, self._not_supported))
        return mod

    def _counted(self, name: str, fn: object = None) -> object:
        target = fn or getattr(self, name)

        def call(*args: object, **kwargs: object) -> object:
            self.calls[name] += 1
            return target(*args, **kwargs)  # type: ignore[operator]

        return call

    @staticmethod
    def _not_supported(*_args: object, **_kwargs: object) -> object:
        raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> FakeNvmlDevice:
        return self.devices[index]

    def nvmlDeviceGetName(self, handle: FakeNvmlDevice) -> str:
        return handle.name

    def nvmlDeviceGetUUID(self, handle: FakeNvmlDevice) -> str:
        if handle.uuid is None:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
        return handle.uuid

    def nvmlDeviceGetPciInfo(self, handle: FakeNvmlDevice) -> pynvml.nvmlPciInfo_t:
        if handle.bus_id is None:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)
        info = pynvml.nvmlPciInfo_t()
        info.busId = handle.bus_id
        return info
