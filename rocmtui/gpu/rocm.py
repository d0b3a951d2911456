"""The ROCm backend through pyrsmi (``from pyrsmi import rocml``), AMD SMI underneath (ROCm 6.0+).

After ``smi_initialize()`` pyrsmi's getters return -1 (or "" for names) on error instead of
raising: those become None. What pyrsmi cannot say comes from elsewhere: temperatures and
per-GPU processes from the ``amdsmi`` package when it works (temperatures else from the
amdgpu hwmon files); power cap and clocks from hwmon; memory errors and throttle reasons from the
card's ``ras`` and ``gpu_metrics`` files. amdsmi's devices and the hwmon files are
matched to pyrsmi's by order, and only when each sees the same number of GPUs as pyrsmi (otherwise
those fields stay None rather than show another card's).

Without amdsmi, processes come per card with their VRAM from the kernel's DRM fdinfo
(``drm_clients``) when the sysfs cards match pyrsmi's devices; a card with none there falls
back to ``smi_get_device_compute_process()``, which lists compute PIDs for the whole system
without the GPU: they are reported once, from ``processes(0)``, with ``gpu_index``
UNKNOWN_GPU when there is more than one GPU, and without memory figures.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path
from typing import Any

from rocmtui.config import MonitorConfig
from rocmtui.gpu import amdgpu_files as files
from rocmtui.gpu import drm_clients, gpu_metrics
from rocmtui.gpu.amdsmi_extras import AmdSmiExtras, open_amdsmi_extras
from rocmtui.gpu.backend import UNKNOWN_GPU, BackendUnavailable, describe_error, release_quietly
from rocmtui.gpu.host import describe_process
from rocmtui.gpu.proc_stats import ProcessStats
from rocmtui.gpu.sample import GpuProcess, GpuSample


class RocmBackend:
    """pyrsmi's devices 0..n-1, with temperatures and clocks filled in from amdsmi / hwmon."""

    name = "rocm"

    def __init__(
        self,
        rocml: Any,
        count: int,
        sensors: list[files.CardSensors] | None,
        extras: AmdSmiExtras | None,
        proc_root: Path = Path("/proc"),
    ) -> None:
        self._rocml = rocml
        self._count = count
        self._sensors = sensors
        self._extras = extras
        self._pci = [drm_clients.pci_address(s.device) for s in sensors] if sensors is not None else None
        self._clients = drm_clients.ProcessScan(proc_root)
        self._names = [_name(rocml.smi_get_device_name(i), i) for i in range(count)]
        self._uuids = [_uuid(rocml, i) for i in range(count)]
        self._bus_ids = [(self._pci[i] if self._pci is not None else None) or _bus_id(rocml, i) for i in range(count)]
        """Identities, read once at open: the sysfs card's PCI address where the cards match, else pyrsmi's BDF."""
        self._processes_supported = True
        self._closed = False
        self._stats = ProcessStats()

    def device_count(self) -> int:
        return self._count

    def sample(self, index: int) -> GpuSample:
        r = self._rocml
        hwmon = self._sensors[index].read() if self._sensors is not None else files.HwmonReading()
        temps = self._extras.temperatures(index) if self._extras is not None else ()
        device = self._sensors[index].device if self._sensors is not None else None
        ecc = files.read_ras_umc(device) if device is not None else (None, None)
        return GpuSample(
            index=index,
            name=self._names[index],
            timestamp=time.time(),
            utilization_pct=_pct(r.smi_get_device_utilization(index)),
            memory_used_bytes=_int(r.smi_get_device_memory_used(index, "VRAM")),
            memory_total_bytes=_int(r.smi_get_device_memory_total(index, "VRAM")),
            gtt_used_bytes=_int(r.smi_get_device_memory_used(index, "GTT")),
            gtt_total_bytes=_int(r.smi_get_device_memory_total(index, "GTT")),
            memory_busy_pct=_pct(r.smi_get_device_memory_busy(index)),
            temperatures_c=temps or hwmon.temperatures_c,
            power_w=_float(r.smi_get_device_average_power(index)),
            power_cap_w=hwmon.power_cap_w,
            sclk_mhz=hwmon.sclk_mhz,
            mclk_mhz=hwmon.mclk_mhz,
            fan_rpm=_float(r.smi_get_device_fan_rpms(index, 0)),
            fan_pct=hwmon.fan_pct,
            temp_crit_c=hwmon.temp_crit_c,
            temp_emergency_c=hwmon.temp_emergency_c,
            uuid=self._uuids[index],
            pci_bus_id=self._bus_ids[index],
            ecc_corrected=ecc[0],
            ecc_uncorrected=ecc[1],
            throttle_reasons=gpu_metrics.read_throttle_reasons(device) if device is not None else None,
        )

    def processes(self, index: int) -> tuple[GpuProcess, ...]:
        per_gpu = self._extras.processes(index) if self._extras is not None else None
        if per_gpu is not None:
            return tuple(self._stats.enrich(describe_process(index, pid, vram)) for pid, vram in per_gpu)
        if self._pci is not None:  # per card with VRAM, for the processes this user may read
            found = self._clients.processes(index, self._pci[index])
            if found:
                return found
        if index != 0 or not self._processes_supported:
            return ()
        try:
            pids = self._rocml.smi_get_device_compute_process()
        except AttributeError:
            # pyrsmi 1.1 calls rsmi_compute_process_info_get, which libamd_smi.so does not export:
            # stop asking; the process table says the backend cannot list processes.
            self._processes_supported = False
            return ()
        gpu = 0 if self._count == 1 else UNKNOWN_GPU
        return tuple(self._stats.enrich(describe_process(gpu, int(pid), None)) for pid in pids if _int(pid))

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._extras is not None:
            self._extras.close()
        self._rocml.smi_shutdown()


def drop_pyrsmi_records(record: logging.LogRecord) -> bool:
    """Root-logger filter: False for pyrsmi's own log records.

    pyrsmi logs every failed call through the root logger (``logging.error``) and then
    returns -1, which this backend already shows as N/A; left alone, a GPU without a fan
    would print an error line to stderr every second, over the panel or the JSON stream.
    """
    return f"{os.sep}pyrsmi{os.sep}" not in record.pathname


def open_backend(config: MonitorConfig) -> RocmBackend:
    """Initialise pyrsmi; BackendUnavailable with pyrsmi's own reason when it cannot."""
    rocml = _import_rocml()
    root_logger = logging.getLogger()
    if drop_pyrsmi_records not in root_logger.filters:
        root_logger.addFilter(drop_pyrsmi_records)
    try:
        rocml.smi_initialize()
    except Exception as err:  # ROCMLError_LibraryNotFound, RuntimeError (driver not loaded), OSError
        raise BackendUnavailable(f"pyrsmi cannot initialise: {describe_error(err)}") from None
    try:
        count = int(rocml.smi_get_device_count())
    except Exception as err:  # a library that initialised but cannot enumerate is unusable
        release_quietly(rocml.smi_shutdown)
        raise BackendUnavailable(f"pyrsmi cannot count devices: {describe_error(err)}") from None
    extras: AmdSmiExtras | None = None
    try:
        extras, _note = open_amdsmi_extras() if count > 0 else (None, "")
        if extras is not None and extras.device_count != count:  # by index, another card's readings
            release_quietly(extras.close)
            extras = None
        cards = files.find_cards(config.sysfs_root)
        sensors = [files.CardSensors(d) for d in cards] if len(cards) == count else None
        return RocmBackend(rocml, max(count, 0), sensors, extras, config.proc_root)
    except BaseException:  # a failure (or an interrupt) after initialising: release what was opened
        if extras is not None:
            release_quietly(extras.close)
        release_quietly(rocml.smi_shutdown)
        raise


def _import_rocml() -> Any:
    try:
        from pyrsmi import rocml
    except Exception as err:  # not installed, or its import failed for another reason
        raise BackendUnavailable(f"pyrsmi is not usable ({describe_error(err)}); pip install pyrsmi") from None
    return rocml


def _float(value: object) -> float | None:
    """pyrsmi's number, or None for its -1 error value (and anything not a number)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        return None
    return float(value)


def _int(value: object) -> int | None:
    number = _float(value)
    return None if number is None else int(number)


def _pct(value: object) -> float | None:
    number = _float(value)
    return number if number is not None and number <= 100.0 else None


def _uuid(rocml: Any, index: int) -> str | None:
    """``smi_get_device_uuid`` (pyrsmi 1.1+: amdsmi's UUID, "" on error); None when absent or empty."""
    getter = getattr(rocml, "smi_get_device_uuid", None)
    value = getter(index) if getter is not None else None
    return value.strip() if isinstance(value, str) and value.strip() else None


def _bus_id(rocml: Any, index: int) -> str | None:
    """``smi_get_device_pci_id`` (a 64-bit BDFID, -1 on error) as ``0000:03:00.0``; None when absent."""
    getter = getattr(rocml, "smi_get_device_pci_id", None)
    bdf = _int(getter(index)) if getter is not None else None
    if bdf is None:
        return None
    return f"{bdf >> 32 & 0xFFFFFFFF:04x}:{bdf >> 8 & 0xFF:02x}:{bdf >> 3 & 0x1F:02x}.{bdf & 0x7:x}"


def _name(value: object, index: int) -> str:
    return value.strip() if isinstance(value, str) and value.strip() else f"AMD GPU {index}"
