"""FAKE ``pynvml`` (nvidia-ml-py) for the per-tick readings: there is no NVIDIA driver on the test machine.

Keeps nvidia-ml-py's real names, argument order, units and error convention: encoder/decoder utilisation
as ``[utilization %, samplingPeriodUs]``; ``nvmlDeviceGetPcieThroughput(device, NVML_PCIE_UTIL_RX_BYTES |
NVML_PCIE_UTIL_TX_BYTES)`` in KB/s; ``nvmlDeviceGetTotalEccErrors(handle, errorType, counterType)`` a
count; the clocks-event reasons a bitmask of ``nvmlClocksEventReason*``. A reading scripted as None
raises the module's own ``NVMLError`` with NVML_ERROR_NOT_SUPPORTED, as a GPU without it answers; a
device's ``broken`` set raises NVML_ERROR_UNKNOWN for those calls. Without ``event_reasons_call`` the
module is an older nvidia-ml-py that has only ``nvmlDeviceGetCurrentClocksThrottleReasons``.
"""

from __future__ import annotations

import types
from collections import Counter
from dataclasses import dataclass, field

import pynvml

CONSTANTS = (
    "NVMLError", "NVML_TEMPERATURE_GPU", "NVML_CLOCK_GRAPHICS", "NVML_CLOCK_MEM", "NVML_PCIE_UTIL_RX_BYTES",
    "NVML_PCIE_UTIL_TX_BYTES", "NVML_MEMORY_ERROR_TYPE_CORRECTED", "NVML_MEMORY_ERROR_TYPE_UNCORRECTED",
    "NVML_VOLATILE_ECC", "NVML_TEMPERATURE_THRESHOLD_SLOWDOWN", "NVML_TEMPERATURE_THRESHOLD_SHUTDOWN",
    "NVML_ERROR_NOT_SUPPORTED",
)  # fmt: skip


@dataclass
class FakeGpu:
    """One FAKE device's answers (None: NOT_SUPPORTED)."""

    encoder_pct: int | None = None
    decoder_pct: int | None = None
    pcie_rx_kb_s: int | None = None
    pcie_tx_kb_s: int | None = None
    ecc_corrected: int | None = None
    ecc_uncorrected: int | None = None
    clocks_event_mask: int | None = None
    broken: set[str] = field(default_factory=set)
    """Call names that fail with NVML_ERROR_UNKNOWN (a driver hiccup in one query)."""
    asked: Counter[str] = field(default_factory=Counter)
    """How many times each scripted call was made."""


def _fail(code: int) -> pynvml.NVMLError:
    return pynvml.NVMLError(code)


def _answer(gpu: FakeGpu, call: str, value: object) -> object:
    gpu.asked[call] += 1
    if call in gpu.broken:
        raise _fail(pynvml.NVML_ERROR_UNKNOWN)
    if value is None:
        raise _fail(pynvml.NVML_ERROR_NOT_SUPPORTED)
    return value


def fake_module(gpus: list[FakeGpu], *, event_reasons_call: bool = True) -> types.ModuleType:
    """A FAKE ``pynvml`` module over ``gpus``; every query not scripted here answers NOT_SUPPORTED."""
    mod = types.ModuleType("pynvml", "FAKE pynvml")
    for name in CONSTANTS:
        setattr(mod, name, getattr(pynvml, name))

    def unsupported(*_args: object, **_kwargs: object) -> object:
        raise _fail(pynvml.NVML_ERROR_NOT_SUPPORTED)

    for name in (
        "nvmlDeviceGetName", "nvmlDeviceGetUUID", "nvmlDeviceGetPciInfo", "nvmlDeviceGetUtilizationRates",
        "nvmlDeviceGetMemoryInfo", "nvmlDeviceGetTemperature", "nvmlDeviceGetPowerUsage",
        "nvmlDeviceGetEnforcedPowerLimit", "nvmlDeviceGetClockInfo", "nvmlDeviceGetFanSpeed",
        "nvmlDeviceGetTemperatureThreshold",
    ):  # fmt: skip
        setattr(mod, name, unsupported)
    mod.nvmlDeviceGetHandleByIndex = lambda index: gpus[index]  # type: ignore[attr-defined]
    mod.nvmlDeviceGetEncoderUtilization = lambda h: [  # type: ignore[attr-defined]
        _answer(h, "encoder", h.encoder_pct),
        167000,
    ]
    mod.nvmlDeviceGetDecoderUtilization = lambda h: [  # type: ignore[attr-defined]
        _answer(h, "decoder", h.decoder_pct),
        167000,
    ]

    def pcie(h: FakeGpu, counter: int) -> object:
        h.asked["pcie throughput"] += 1
        if counter == pynvml.NVML_PCIE_UTIL_RX_BYTES:
            return _answer(h, "pcie", h.pcie_rx_kb_s)
        if counter == pynvml.NVML_PCIE_UTIL_TX_BYTES:
            return _answer(h, "pcie", h.pcie_tx_kb_s)
        raise _fail(pynvml.NVML_ERROR_INVALID_ARGUMENT)

    def ecc(h: FakeGpu, error_type: int, counter_type: int) -> object:
        if counter_type != pynvml.NVML_VOLATILE_ECC:
            raise _fail(pynvml.NVML_ERROR_INVALID_ARGUMENT)
        value = h.ecc_corrected if error_type == pynvml.NVML_MEMORY_ERROR_TYPE_CORRECTED else h.ecc_uncorrected
        return _answer(h, "ecc", value)

    mod.nvmlDeviceGetPcieThroughput = pcie  # type: ignore[attr-defined]
    mod.nvmlDeviceGetTotalEccErrors = ecc  # type: ignore[attr-defined]
    mod.nvmlDeviceGetCurrentClocksThrottleReasons = lambda h: _answer(h, "clocks", h.clocks_event_mask)  # type: ignore[attr-defined]
    if event_reasons_call:
        mod.nvmlDeviceGetCurrentClocksEventReasons = lambda h: _answer(h, "clocks", h.clocks_event_mask)  # type: ignore[attr-defined]
    mod.nvmlShutdown = lambda: None  # type: ignore[attr-defined]
    return mod
