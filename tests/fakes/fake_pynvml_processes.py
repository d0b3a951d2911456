"""FAKE ``pynvml`` (nvidia-ml-py) for the process table's tests: no NVIDIA GPU or libnvidia-ml here.

Keeps the real names and types: the error classes are nvidia-ml-py's own (``NVMLError``,
``NVMLError_NotFound``, ...), and ``nvmlDeviceGetProcessUtilization(handle, lastSeenTimeStamp)`` returns
nvidia-ml-py's ``c_nvmlProcessUtilizationSample_t`` structs (pid, timeStamp in µs, smUtil, memUtil,
encUtil, decUtil) newer than ``lastSeenTimeStamp``, or raises NVMLError_NotFound when there are none,
as the real call does. Devices are scripted per index: their compute processes and utilisation samples;
every other device query answers NVML_ERROR_NOT_SUPPORTED.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace

import pynvml


@dataclass
class FakeDevice:
    """One FAKE device: (pid, used bytes) compute processes and (pid, µs timestamp, SM %) samples."""

    processes: list[tuple[int, int | None]] = field(default_factory=list)
    samples: list[tuple[int, int, int]] = field(default_factory=list)
    utilization_error: int | None = None
    """An NVML return code that nvmlDeviceGetProcessUtilization raises instead (NVML_ERROR_NOT_SUPPORTED)."""
    seen: list[int] = field(default_factory=list)
    """The lastSeenTimeStamp of each utilisation call."""


class FakeNvml:
    """The part of the ``pynvml`` module that NvmlBackend calls, over scripted devices."""

    NVMLError = pynvml.NVMLError
    NVMLError_NotFound = pynvml.NVMLError_NotFound
    NVML_TEMPERATURE_GPU = pynvml.NVML_TEMPERATURE_GPU
    NVML_TEMPERATURE_THRESHOLD_SLOWDOWN = pynvml.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN
    NVML_TEMPERATURE_THRESHOLD_SHUTDOWN = pynvml.NVML_TEMPERATURE_THRESHOLD_SHUTDOWN
    NVML_CLOCK_GRAPHICS = pynvml.NVML_CLOCK_GRAPHICS
    NVML_CLOCK_MEM = pynvml.NVML_CLOCK_MEM
    NVML_PCIE_UTIL_RX_BYTES = pynvml.NVML_PCIE_UTIL_RX_BYTES
    NVML_PCIE_UTIL_TX_BYTES = pynvml.NVML_PCIE_UTIL_TX_BYTES
    NVML_MEMORY_ERROR_TYPE_CORRECTED = pynvml.NVML_MEMORY_ERROR_TYPE_CORRECTED
    NVML_MEMORY_ERROR_TYPE_UNCORRECTED = pynvml.NVML_MEMORY_ERROR_TYPE_UNCORRECTED
    NVML_VOLATILE_ECC = pynvml.NVML_VOLATILE_ECC

    def __init__(self, devices: list[FakeDevice]) -> None:
        self.devices = devices

    def nvmlDeviceGetHandleByIndex(self, index: int) -> FakeDevice:  # NVML's name
        return self.devices[index]

    def nvmlDeviceGetComputeRunningProcesses(self, handle: FakeDevice) -> list[SimpleNamespace]:
        return [SimpleNamespace(pid=pid, usedGpuMemory=used) for pid, used in handle.processes]

    def nvmlDeviceGetProcessUtilization(
        self,
        handle: FakeDevice,
        timeStamp: int,
    ) -> list[pynvml.c_nvmlProcessUtilizationSample_t]:
        handle.seen.append(timeStamp)
        if handle.utilization_error is not None:
            raise pynvml.NVMLError(handle.utilization_error)
        newer = [
            pynvml.c_nvmlProcessUtilizationSample_t(pid=pid, timeStamp=stamp, smUtil=sm, memUtil=sm // 2)
            for pid, stamp, sm in handle.samples
            if stamp > timeStamp
        ]
        if not newer:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_FOUND)
        return newer

    def nvmlShutdown(self) -> None:
        pass

    def __getattr__(self, name: str) -> Callable[..., object]:
        """Any other ``nvmlDevice*`` query answers NVML_ERROR_NOT_SUPPORTED, as a GPU without it would."""
        if not name.startswith("nvmlDevice"):
            raise AttributeError(name)

        def unsupported(*_args: object, **_kwargs: object) -> object:
            raise pynvml.NVMLError(pynvml.NVML_ERROR_NOT_SUPPORTED)

        return unsupported
