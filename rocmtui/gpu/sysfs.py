"""The amdgpu sysfs backend: reads ``/sys/class/drm/card*/device`` directly, no ROCm needed.

What nvtop and amdgpu_top read. The roots are injectable (``MonitorConfig.sysfs_root`` and
``proc_root``) so tests point them at trees. ``processes()`` lists, per card, the processes with the
card open and their VRAM, from the DRM fdinfo under ``/proc/PID/fdinfo`` (``drm_clients``): all of
them as root, the user's own otherwise. PCIe traffic comes from ``pcie_bw`` on a thread of its own
(``pcie_bw``), throttle reasons from ``gpu_metrics`` where its version says them simply (``gpu_metrics``),
memory errors from ``ras/umc_err_count`` on cards with RAS.
"""

from __future__ import annotations

import time
from pathlib import Path

from rocmtui.config import MonitorConfig
from rocmtui.gpu import amdgpu_files as files
from rocmtui.gpu import drm_clients, gpu_metrics
from rocmtui.gpu.backend import BackendUnavailable
from rocmtui.gpu.pcie_bw import PcieBandwidth
from rocmtui.gpu.sample import GpuProcess, GpuSample


class SysfsBackend:
    """One amdgpu card per device index, in card-number order, fixed when opened."""

    name = "sysfs"

    def __init__(self, devices: list[Path], proc_root: Path = Path("/proc")) -> None:
        self._devices = devices
        self._names = [files.card_name(d) for d in devices]
        self._sensors = [files.CardSensors(d) for d in devices]
        self._pci = [drm_clients.pci_address(d) for d in devices]
        self._unique_ids = [files.unique_id(d) for d in devices]
        """Read once at open, with the names: fixed for the card's life."""
        self._clients = drm_clients.ProcessScan(proc_root)
        self._pcie = PcieBandwidth(devices)
        """Started at the first sample, so that opening the backend starts no thread."""

    def device_count(self) -> int:
        return len(self._devices)

    def sample(self, index: int) -> GpuSample:
        device = self._devices[index]
        now = time.time()
        if not device.is_dir():
            return GpuSample(index, self._names[index], now, error=f"{device.parent.name} is gone ({device})")
        if files.read_text(device / "power" / "runtime_status") == "suspended":
            # Reading the counters would wake a sleeping laptop GPU (and drain its battery): skip it.
            return GpuSample(index, self._names[index], now, error="suspended (runtime power management)")
        sensors = self._sensors[index].read()
        self._pcie.start()
        rx, tx = self._pcie.latest(index)
        ecc_corrected, ecc_uncorrected = files.read_ras_umc(device)
        return GpuSample(
            index=index,
            name=self._names[index],
            timestamp=now,
            utilization_pct=files.read_pct(device / "gpu_busy_percent"),
            memory_used_bytes=files.read_int(device / "mem_info_vram_used"),
            memory_total_bytes=files.read_int(device / "mem_info_vram_total"),
            gtt_used_bytes=files.read_int(device / "mem_info_gtt_used"),
            gtt_total_bytes=files.read_int(device / "mem_info_gtt_total"),
            memory_busy_pct=files.read_pct(device / "mem_busy_percent"),
            temperatures_c=sensors.temperatures_c,
            power_w=sensors.power_w,
            power_cap_w=sensors.power_cap_w,
            sclk_mhz=sensors.sclk_mhz,
            mclk_mhz=sensors.mclk_mhz,
            fan_rpm=sensors.fan_rpm,
            fan_pct=sensors.fan_pct,
            temp_crit_c=sensors.temp_crit_c,
            temp_emergency_c=sensors.temp_emergency_c,
            uuid=self._unique_ids[index],
            pci_bus_id=self._pci[index],
            pcie_rx_bytes_per_s=rx,
            pcie_tx_bytes_per_s=tx,
            ecc_corrected=ecc_corrected,
            ecc_uncorrected=ecc_uncorrected,
            throttle_reasons=gpu_metrics.read_throttle_reasons(device),
        )

    def processes(self, index: int) -> tuple[GpuProcess, ...]:
        """From the DRM fdinfo of the processes this user may read (all of them as root)."""
        return self._clients.processes(index, self._pci[index])

    def close(self) -> None:
        """Stop the ``pcie_bw`` thread; nothing else to release (every read opens and closes its file)."""
        self._pcie.close()


def open_backend(config: MonitorConfig) -> SysfsBackend:
    """The sysfs backend for ``config.sysfs_root``; BackendUnavailable when it finds no amdgpu card."""
    drm = config.sysfs_root / "class" / "drm"
    if not drm.is_dir():
        raise BackendUnavailable(f"no DRM devices: {drm} does not exist")
    devices = files.find_cards(config.sysfs_root)
    if not devices:
        raise BackendUnavailable(f"no amdgpu cards under {drm} (amdgpu driver not loaded, or no AMD GPU)")
    return SysfsBackend(devices, config.proc_root)
