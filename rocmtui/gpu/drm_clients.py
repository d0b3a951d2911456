"""GPU memory and GPU % per process from the kernel's DRM fdinfo, for amdgpu when no SMI library lists processes.

Every open DRM file has ``/proc/<pid>/fdinfo/<fd>`` with ``key: value`` lines (the kernel's
Documentation/gpu/drm-usage-stats.rst), for example::

    drm-driver:      amdgpu
    drm-pdev:        0000:03:00.0
    drm-client-id:   12
    drm-engine-gfx:  1234567 ns         (time the client kept the graphics engine busy, cumulative)
    drm-memory-vram: 1048576 KiB        (amdgpu's own key)
    drm-total-vram:  1 GiB              (the generic key, newer kernels)

Several descriptors can share one client (``dup``, ``fork``), so each client id counts once. Without
privileges only the caller's own processes can be read; the others are left out, as nvtop does.

GPU % is the engine time a client gained between two scans over the wall time between them, summed over
a process's clients and capped at 100. Only ``drm-engine-gfx`` counts: ROCm compute work goes through KFD,
which fdinfo does not show, so a ROCm training run reads 0 here.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, replace
from pathlib import Path

from rocmtui.gpu.host import describe_process
from rocmtui.gpu.proc_stats import ProcessStats
from rocmtui.gpu.sample import GpuProcess

UNIT_BYTES = {"": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
VRAM_KEYS = ("drm-total-vram", "drm-memory-vram")
"""Keys for the VRAM a client holds, in order of preference."""
GFX_KEY = "drm-engine-gfx"
SCAN_REUSE_S = 1.0
"""One /proc scan serves every card of a sampler tick (the sampler asks once per card)."""
SCAN_CPU_SHARE = 0.01
"""Most of a core the scans may take: a slow scan (thousands of open files) is reused for longer.
A scan reads a link per open file of every process, about 7 us each (2-core EPYC, 271 files: 1.9 ms)."""
_PCI_ADDRESS = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]$")


@dataclass(frozen=True)
class DrmClient:
    """One open DRM client of a process, as its fdinfo describes it."""

    driver: str
    pdev: str
    client_id: str
    vram_bytes: int | None
    gfx_ns: int | None = None
    """Cumulative busy time on the graphics engine (``drm-engine-gfx``); None when not reported."""


def parse_fdinfo(text: str) -> DrmClient | None:
    """The client an fdinfo file describes; None when it is not a DRM file (no driver, device or id)."""
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip()] = value.strip()
    driver, pdev, client_id = fields.get("drm-driver"), fields.get("drm-pdev"), fields.get("drm-client-id")
    if not (driver and pdev and client_id):
        return None
    vram = next((parse_amount(fields[key]) for key in VRAM_KEYS if key in fields), None)
    return DrmClient(driver, pdev.lower(), client_id, vram, parse_ns(fields.get(GFX_KEY, "")))


def parse_ns(value: str) -> int | None:
    """``"1234 ns"`` -> 1234 (the kernel's engine counters); None for anything else."""
    number, _, unit = value.partition(" ")
    return int(number) if number.isdigit() and unit.strip() in ("ns", "") else None


def parse_amount(value: str) -> int | None:
    """``"1024 KiB"`` -> 1048576; None for anything else."""
    number, _, unit = value.partition(" ")
    if not number.isdigit() or unit.strip() not in UNIT_BYTES:
        return None
    return int(number) * UNIT_BYTES[unit.strip()]


def pci_address(device: Path) -> str | None:
    """``0000:03:00.0`` for a sysfs ``device`` folder (the name its link resolves to); None if not PCI."""
    try:
        name = device.resolve().name.lower()
    except OSError:
        return None
    return name if _PCI_ADDRESS.match(name) else None


def scan_clients(proc_root: Path, driver: str = "amdgpu") -> list[tuple[int, DrmClient]]:
    """(pid, client) for each DRM client of ``driver`` in the processes we may read, each once per process."""
    seen: set[tuple[int, str, str]] = set()
    clients: list[tuple[int, DrmClient]] = []
    for pid, fd in _drm_descriptors(proc_root):
        try:
            text = (proc_root / str(pid) / "fdinfo" / fd).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue  # the process ended or closed the file meanwhile
        client = parse_fdinfo(text)
        if client is None or client.driver != driver or (pid, client.pdev, client.client_id) in seen:
            continue
        seen.add((pid, client.pdev, client.client_id))
        clients.append((pid, client))
    return clients


def scan(proc_root: Path, driver: str = "amdgpu") -> dict[str, dict[int, int | None]]:
    """PCI address -> {pid: VRAM bytes (None if not reported)} over the processes we may read."""
    return vram_by_device(scan_clients(proc_root, driver))


def vram_by_device(clients: list[tuple[int, DrmClient]]) -> dict[str, dict[int, int | None]]:
    """PCI address -> {pid: VRAM bytes summed over its clients (None if none reports it)}."""
    usage: dict[str, dict[int, int | None]] = {}
    for pid, client in clients:
        per_pid = usage.setdefault(client.pdev, {})
        if client.vram_bytes is None:
            per_pid.setdefault(pid, None)
        else:
            per_pid[pid] = (per_pid.get(pid) or 0) + client.vram_bytes
    return usage


def _drm_descriptors(proc_root: Path) -> list[tuple[int, str]]:
    """(pid, fd) of every readable descriptor that points into ``/dev/dri``."""
    found: list[tuple[int, str]] = []
    try:
        pids = [int(entry.name) for entry in os.scandir(proc_root) if entry.name.isdigit()]
    except OSError:
        return found
    for pid in pids:
        fd_dir = proc_root / str(pid) / "fd"
        try:
            entries = list(os.scandir(fd_dir))
        except OSError:
            continue  # another user's process, or gone
        for entry in entries:
            try:
                target = os.readlink(entry.path)
            except OSError:
                continue
            if target.startswith("/dev/dri/"):
                found.append((pid, entry.name))
    return found


class ProcessScan:
    """The processes on each card by PCI address, from one scan that the cards of a tick share."""

    def __init__(self, proc_root: Path = Path("/proc"), driver: str = "amdgpu") -> None:
        self.proc_root = proc_root
        self.driver = driver
        self._usage: dict[str, dict[int, int | None]] = {}
        self._util: dict[str, dict[int, float]] = {}
        """PCI address -> {pid: GPU %} over the last two scans (absent: not measurable yet)."""
        self._gfx_ns: dict[tuple[str, str], int] = {}
        """(PCI address, client id) -> its gfx counter at the last scan."""
        self._scanned_at = -SCAN_REUSE_S
        self._reuse_s = SCAN_REUSE_S
        self._stats = ProcessStats()

    def processes(self, gpu_index: int, pci: str | None) -> tuple[GpuProcess, ...]:
        """Processes with a DRM client on the card at ``pci`` (empty when it is not a PCI device)."""
        if pci is None:
            return ()
        if time.monotonic() - self._scanned_at >= self._reuse_s:
            started = time.monotonic()
            clients = scan_clients(self.proc_root, self.driver)
            self._usage = vram_by_device(clients)
            self._util = self._utilization(clients, started - self._scanned_at)
            self._scanned_at = started
            self._reuse_s = max(SCAN_REUSE_S, (time.monotonic() - started) / SCAN_CPU_SHARE)
        per_pid = self._usage.get(pci, {})
        util = self._util.get(pci, {})
        return tuple(
            replace(self._stats.enrich(describe_process(gpu_index, pid, vram)), gpu_util_pct=util.get(pid))
            for pid, vram in sorted(per_pid.items())
        )

    def _utilization(self, clients: list[tuple[int, DrmClient]], wall_s: float) -> dict[str, dict[int, float]]:
        """PCI address -> {pid: GPU %} from each client's gfx time since the previous scan, ``wall_s`` ago.

        A process gets a figure once one of its clients was seen at both scans; a counter that went back
        (the kernel allows a brief dip) counts as idle.
        """
        previous, self._gfx_ns = self._gfx_ns, {}
        busy_ns: dict[str, dict[int, int]] = {}
        for pid, client in clients:
            if client.gfx_ns is None:
                continue
            key = (client.pdev, client.client_id)
            self._gfx_ns[key] = client.gfx_ns
            if key in previous:
                per_pid = busy_ns.setdefault(client.pdev, {})
                per_pid[pid] = per_pid.get(pid, 0) + max(0, client.gfx_ns - previous[key])
        if wall_s <= 0:
            return {}
        return {
            pdev: {pid: min(100.0, 100.0 * ns / (wall_s * 1e9)) for pid, ns in per_pid.items()}
            for pdev, per_pid in busy_ns.items()
        }
