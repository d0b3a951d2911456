"""The NVIDIA backend through nvidia-ml-py (``import pynvml``).

Units as NVML gives them, converted to GpuSample's: memory in bytes, temperature in C,
power and the enforced limit in mW (-> W), clocks in MHz, fan in %, PCIe throughput in KB/s (-> bytes/s,
KB being 1024 bytes as nvidia-smi counts them). Each field is read on its own: an NVMLError (NOT_SUPPORTED
for the fan of a datacenter GPU, or for the encoder of an H200, say) makes that field None and leaves the
others; NOT_SUPPORTED is the card's answer for the session, and that field is not asked again.

``nvmlDeviceGetPcieThroughput`` counts bytes over 20 ms inside the call and spins for part of it: 0.9 ms of the
sampler's CPU per call on an H200, two calls (rx, tx) per GPU, most of a tick's cost. So PCIe throughput is
sampled every ``PCIE_EVERY_S`` and the last figures repeated in between (NVML's PCIe byte-counter fields are
32-bit on an H200: at tens of GB/s they wrap several times a second, so they cannot stand in).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any, TypeVar

from rocmtui.config import MonitorConfig
from rocmtui.gpu import throttle
from rocmtui.gpu.backend import BackendUnavailable, describe_error, release_quietly
from rocmtui.gpu.host import describe_process
from rocmtui.gpu.proc_stats import ProcessStats
from rocmtui.gpu.sample import GpuProcess, GpuSample

_T = TypeVar("_T")

PCIE_EVERY_S = 5.0
"""How often PCIe throughput is sampled (the figures are repeated in between)."""
UTIL_FIRST_WINDOW_US = 1_000_000
"""How far back the first per-process utilisation query of a device looks (NVML keeps a few seconds)."""


class NvmlBackend:
    """NVML devices 0..n-1 (NVML's own order, which is PCI order, not CUDA_VISIBLE_DEVICES')."""

    name = "nvml"

    def __init__(self, pynvml: Any, count: int, *, pcie_every_s: float = PCIE_EVERY_S) -> None:
        self._nvml = pynvml
        self._pcie_every_s = pcie_every_s
        self._pcie: dict[int, tuple[float, float | None, float | None]] = {}
        """Per device, the last PCIe sample: (monotonic time read, rx bytes/s, tx bytes/s)."""
        self._unsupported: set[tuple[int, str]] = set()
        """(device, reading) that NVML answered NOT_SUPPORTED: the card's answer, not asked again each tick."""
        self._handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
        self._names = [_text(self._field(partial(pynvml.nvmlDeviceGetName, h))) or "NVIDIA GPU" for h in self._handles]
        self._limits = [self._temp_limits(h) for h in self._handles]
        """(slowdown, shutdown) °C per device: fixed by the card, read once."""
        self._identities = [self._identity(h) for h in self._handles]
        """(UUID, PCI bus id) per device: fixed, read once at open, never per tick."""
        self._closed = False
        self._stats = ProcessStats()
        self._util_seen: dict[int, int] = {}
        """Per device, the newest per-process utilisation sample read (NVML's µs timestamp)."""

    def device_count(self) -> int:
        return len(self._handles)

    def sample(self, index: int) -> GpuSample:
        nv, h = self._nvml, self._handles[index]

        def field(name: str, read: Callable[[], _T]) -> _T | None:
            return self._field(read, (index, name))

        util = field("utilization", lambda: nv.nvmlDeviceGetUtilizationRates(h))
        memory = self._memory(index)
        temp = field("temperature", lambda: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU))
        power_mw = field("power", lambda: nv.nvmlDeviceGetPowerUsage(h))
        limit_mw = field("power limit", lambda: nv.nvmlDeviceGetEnforcedPowerLimit(h))
        ecc = self._ecc(index)
        pcie_rx, pcie_tx = self._pcie_throughput(index)
        return GpuSample(
            index=index,
            name=self._names[index],
            timestamp=time.time(),
            utilization_pct=None if util is None else float(util.gpu),
            memory_busy_pct=None if util is None else float(util.memory),
            memory_used_bytes=None if memory is None else int(memory.used),
            memory_total_bytes=None if memory is None else int(memory.total),
            temperatures_c=() if temp is None else (("gpu", float(temp)),),
            power_w=None if power_mw is None else power_mw / 1000.0,
            power_cap_w=None if limit_mw is None else limit_mw / 1000.0,
            sclk_mhz=_maybe_float(field("sclk", lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_GRAPHICS))),
            mclk_mhz=_maybe_float(field("mclk", lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM))),
            fan_pct=_maybe_float(field("fan", lambda: nv.nvmlDeviceGetFanSpeed(h))),
            temp_crit_c=self._limits[index][0],
            temp_emergency_c=self._limits[index][1],
            uuid=self._identities[index][0],
            pci_bus_id=self._identities[index][1],
            encoder_pct=_first_float(field("encoder", lambda: nv.nvmlDeviceGetEncoderUtilization(h))),
            decoder_pct=_first_float(field("decoder", lambda: nv.nvmlDeviceGetDecoderUtilization(h))),
            pcie_rx_bytes_per_s=pcie_rx,
            pcie_tx_bytes_per_s=pcie_tx,
            ecc_corrected=ecc[0],
            ecc_uncorrected=ecc[1],
            throttle_reasons=self._throttle(index),
        )

    def _pcie_throughput(self, index: int) -> tuple[float | None, float | None]:
        """(rx, tx) bytes/s: NVML's 20 ms sample, taken again once ``pcie_every_s`` has passed."""
        now = time.monotonic()
        last = self._pcie.get(index)
        if last is not None and now - last[0] < self._pcie_every_s:
            return last[1], last[2]
        nv, h = self._nvml, self._handles[index]
        rx, tx = (
            _kib(self._field(partial(nv.nvmlDeviceGetPcieThroughput, h, counter), (index, f"pcie {counter}")))
            for counter in (nv.NVML_PCIE_UTIL_RX_BYTES, nv.NVML_PCIE_UTIL_TX_BYTES)
        )
        self._pcie[index] = (now, rx, tx)
        return rx, tx

    def _ecc(self, index: int) -> tuple[int | None, int | None]:
        """(corrected, uncorrected) volatile ECC counts (since the driver loaded); None without ECC."""
        nv, handle = self._nvml, self._handles[index]

        def count(kind: int) -> int | None:
            value = self._field(
                lambda: nv.nvmlDeviceGetTotalEccErrors(handle, kind, nv.NVML_VOLATILE_ECC), (index, f"ecc {kind}")
            )
            return None if value is None else int(value)

        return count(nv.NVML_MEMORY_ERROR_TYPE_CORRECTED), count(nv.NVML_MEMORY_ERROR_TYPE_UNCORRECTED)

    def _throttle(self, index: int) -> tuple[str, ...] | None:
        """The clocks-event reasons (nvidia-ml-py 12.535+), else the older throttle-reasons call, decoded."""
        nv = self._nvml
        for name in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
            read = getattr(nv, name, None)
            mask = self._field(partial(read, self._handles[index]), (index, name)) if read is not None else None
            if mask is not None:
                return throttle.from_nvml(int(mask))
        return None

    def _identity(self, handle: Any) -> tuple[str | None, str | None]:
        nv = self._nvml
        uuid = _text(self._field(lambda: nv.nvmlDeviceGetUUID(handle)))
        pci = self._field(lambda: nv.nvmlDeviceGetPciInfo(handle))
        bus_id = None if pci is None else _text(getattr(pci, "busId", None))
        return uuid or None, bus_id or None  # as NVML (and the DCGM exporter) spell it: 00000000:1B:00.0

    def _temp_limits(self, handle: Any) -> tuple[float | None, float | None]:
        nv = self._nvml
        slowdown = self._field(
            lambda: nv.nvmlDeviceGetTemperatureThreshold(handle, nv.NVML_TEMPERATURE_THRESHOLD_SLOWDOWN)
        )
        shutdown = self._field(
            lambda: nv.nvmlDeviceGetTemperatureThreshold(handle, nv.NVML_TEMPERATURE_THRESHOLD_SHUTDOWN)
        )
        return _maybe_float(slowdown), _maybe_float(shutdown)

    def processes(self, index: int) -> tuple[GpuProcess, ...]:
        """Compute processes with their GPU memory (None where NVML cannot say, e.g. in containers) and
        their SM utilisation (None where NVML does not sample processes, e.g. under MIG)."""
        procs = self._nvml.nvmlDeviceGetComputeRunningProcesses(self._handles[index])
        if not procs:  # the utilisation query costs about 2 ms of CPU on an H200 even when it finds nothing
            return ()
        util = self._process_utilization(index)
        return tuple(
            replace(
                self._stats.enrich(
                    describe_process(index, int(p.pid), None if p.usedGpuMemory is None else int(p.usedGpuMemory))
                ),
                gpu_util_pct=None if util is None else util.get(int(p.pid), 0.0),
            )
            for p in procs
        )

    def _process_utilization(self, index: int) -> dict[int, float] | None:
        """PID -> SM % from NVML's newest sample per process since the last call; None when NVML cannot say.

        NVML keeps samples of the processes that ran work; a process with none since the last call was idle
        (0%), and NVMLError_NotFound means that no process has any: every process idle, not an error.
        """
        nv = self._nvml
        since = self._util_seen.get(index, int(time.time() * 1e6) - UTIL_FIRST_WINDOW_US)
        try:
            samples = nv.nvmlDeviceGetProcessUtilization(self._handles[index], since)
        except nv.NVMLError as err:
            if not isinstance(err, getattr(nv, "NVMLError_NotFound", ())):
                return None  # NOT_SUPPORTED (MIG, older GPUs), NO_PERMISSION, ...
            samples = []
        newest: dict[int, tuple[int, float]] = {}
        for s in samples:
            stamp, pid = int(s.timeStamp), int(s.pid)
            if stamp > since and (pid not in newest or stamp >= newest[pid][0]):
                newest[pid] = (stamp, min(100.0, max(0.0, float(s.smUtil))))
        self._util_seen[index] = max([since, *(stamp for stamp, _ in newest.values())])
        return {pid: pct for pid, (_, pct) in newest.items()}

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._nvml.nvmlShutdown()

    def _memory(self, index: int) -> Any:
        """Memory info v2 (``used`` excludes driver-reserved memory, as nvidia-smi shows), else v1."""
        nv, handle = self._nvml, self._handles[index]
        v2 = getattr(nv, "nvmlMemory_v2", None)
        memory = None
        if v2 is not None:
            memory = self._field(lambda: nv.nvmlDeviceGetMemoryInfo(handle, version=v2), (index, "memory v2"))
        if memory is None:
            memory = self._field(lambda: nv.nvmlDeviceGetMemoryInfo(handle), (index, "memory"))
        return memory

    def _field(self, read: Callable[[], _T], key: tuple[int, str] | None = None) -> _T | None:
        """``read()``, or None when NVML says this field is not available on this GPU; with ``key`` (device,
        reading), a NOT_SUPPORTED answer is kept and the reading not asked again (other errors are)."""
        if key in self._unsupported:
            return None
        try:
            return read()
        except self._nvml.NVMLError as err:
            if key is not None and err.value == getattr(self._nvml, "NVML_ERROR_NOT_SUPPORTED", None):
                self._unsupported.add(key)
            return None


def open_backend(config: MonitorConfig) -> NvmlBackend:
    """Initialise NVML; BackendUnavailable with NVML's reason (library not found, driver not loaded)."""
    try:
        import pynvml
    except Exception as err:  # not installed (or a broken install)
        raise BackendUnavailable(
            f"nvidia-ml-py is not usable ({describe_error(err)}); pip install nvidia-ml-py"
        ) from None
    try:
        pynvml.nvmlInit()
    except Exception as err:  # NVMLError_LibraryNotFound, NVMLError_DriverNotLoaded, ...
        raise BackendUnavailable(f"NVML cannot initialise: {describe_error(err)}") from None
    try:
        return NvmlBackend(pynvml, int(pynvml.nvmlDeviceGetCount()))
    except Exception as err:  # initialised but cannot enumerate: unusable, say why
        release_quietly(pynvml.nvmlShutdown)
        raise BackendUnavailable(f"NVML cannot list devices: {describe_error(err)}") from None


def _maybe_float(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]  # NVML returns ints here


def _first_float(value: object) -> float | None:
    """The utilisation of NVML's ``[utilization, samplingPeriodUs]`` pair."""
    return float(value[0]) if isinstance(value, list | tuple) and value else None


def _kib(value: object) -> float | None:
    """KB/s as NVML counts PCIe throughput -> bytes/s."""
    return None if value is None else float(value) * 1024.0  # type: ignore[arg-type]  # NVML returns an int


def _text(value: object) -> str | None:
    """NVML names are str in nvidia-ml-py 12+, bytes in older releases."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value if isinstance(value, str) else None
