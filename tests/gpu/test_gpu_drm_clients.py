"""Per-process VRAM from DRM fdinfo, against FAKE /proc entries in the kernel's format."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fakes.proc_tree import add_drm_client, add_fd, drm_fdinfo, set_gfx_ns
from fakes.sysfs_tree import build_card

from rocmtui.config import MonitorConfig
from rocmtui.gpu import drm_clients, sysfs

GPU0, GPU1 = "0000:00:00.0", "0000:01:00.0"
"""PCI addresses of the FAKE cards 0 and 1 that build_card makes."""
PID = 4_190_000
"""Far above the pids a test machine uses, so psutil finds no real process behind them."""


def test_fdinfo_keys_and_units() -> None:
    legacy = drm_clients.parse_fdinfo(drm_fdinfo(GPU0, 7, "1024 KiB"))
    assert legacy == drm_clients.DrmClient("amdgpu", GPU0, "7", 2**20, 1234567)
    assert drm_clients.parse_fdinfo(drm_fdinfo(GPU0, 7, None, gfx_ns=None)) == drm_clients.DrmClient(
        "amdgpu", GPU0, "7", None, None
    )
    generic = drm_clients.parse_fdinfo(drm_fdinfo(GPU0, 7, "3 MiB", key="drm-total-vram"))
    assert generic is not None and generic.vram_bytes == 3 * 2**20
    no_vram = drm_clients.parse_fdinfo(drm_fdinfo(GPU0, 7, None))
    assert no_vram is not None and no_vram.vram_bytes is None
    assert drm_clients.parse_fdinfo("pos:\t0\nflags:\t02\nmnt_id:\t25\n") is None  # a plain file
    assert drm_clients.parse_amount("12") == 12 and drm_clients.parse_amount("1 GiB") == 2**30
    assert drm_clients.parse_amount("-1 KiB") is None and drm_clients.parse_amount("5 parsecs") is None
    assert drm_clients.parse_ns("9288864723 ns") == 9288864723 and drm_clients.parse_ns("12 ms") is None


def test_scan_counts_each_client_once_and_sums_a_process_clients(tmp_path: Path) -> None:
    proc = tmp_path / "proc"
    add_drm_client(proc, PID, 5, (GPU0, 1), "1024 KiB")
    add_drm_client(proc, PID, 6, (GPU0, 1), "1024 KiB")  # a dup of fd 5: the same client
    add_drm_client(proc, PID, 7, (GPU0, 2), "2048 KiB")  # a second client of the same process
    add_drm_client(proc, PID + 1, 3, (GPU1, 9), None)  # a client that does not report VRAM
    add_fd(proc, PID + 2, 1, "/dev/null", "pos:\t0\n")  # no DRM file at all
    add_fd(proc, PID + 3, 4, "/dev/dri/renderD129", drm_fdinfo(GPU0, 3, "1 MiB").replace("amdgpu", "i915"))
    (proc / str(PID + 4)).mkdir()  # a process whose fd folder cannot be read (another user's, or gone)
    (proc / "self").mkdir()
    usage = drm_clients.scan(proc)
    assert usage == {GPU0: {PID: 3 * 2**20}, GPU1: {PID + 1: None}}


def test_sysfs_backend_lists_processes_per_card(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build_card(tmp_path / "sys", 0)
    build_card(tmp_path / "sys", 1)
    proc = tmp_path / "proc"
    add_drm_client(proc, PID, 5, (GPU1, 4), "4096 KiB")
    backend = sysfs.open_backend(MonitorConfig(sysfs_root=tmp_path / "sys", proc_root=proc))
    assert backend.processes(0) == ()
    (only,) = backend.processes(1)
    assert (only.gpu_index, only.pid, only.gpu_memory_bytes) == (1, PID, 4 * 2**20)
    add_drm_client(proc, PID + 1, 6, (GPU1, 5), "1024 KiB")
    assert len(backend.processes(1)) == 1  # one scan serves every card of a tick
    later = time.monotonic() + 60
    monkeypatch.setattr(time, "monotonic", lambda: later)
    assert [p.pid for p in backend.processes(1)] == [PID, PID + 1]
    assert drm_clients.pci_address(tmp_path / "sys" / "class" / "drm" / "card1" / "device") == GPU1
    assert drm_clients.pci_address(tmp_path) is None  # not a PCI device folder


def test_gpu_percent_from_gfx_time_between_two_scans(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    proc = tmp_path / "proc"
    add_drm_client(proc, PID, 5, (GPU0, 1), "1024 KiB", gfx_ns=10_000_000_000)
    add_drm_client(proc, PID, 6, (GPU0, 1), "1024 KiB", gfx_ns=10_000_000_000)  # a dup: counts once
    add_drm_client(proc, PID, 7, (GPU0, 2), "1024 KiB", gfx_ns=0)  # a second client of the process
    add_drm_client(proc, PID + 1, 3, (GPU0, 3), "1024 KiB", gfx_ns=5_000_000_000)
    add_drm_client(proc, PID + 2, 4, (GPU0, 4), "1024 KiB", gfx_ns=None)  # no engine counter
    clock = [1000.0]
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    scan = drm_clients.ProcessScan(proc)

    def util() -> dict[int, float | None]:
        return {p.pid: p.gpu_util_pct for p in scan.processes(0, GPU0)}

    assert util() == {PID: None, PID + 1: None, PID + 2: None}  # one scan: no rate yet
    clock[0] += 2.0
    set_gfx_ns(proc, PID, 5, 10_500_000_000)  # +0.5 s of gfx time in 2 s
    set_gfx_ns(proc, PID, 7, 300_000_000)  # +0.3 s on the process's other client
    set_gfx_ns(proc, PID + 1, 3, 4_000_000_000)  # went back: idle, not negative
    assert util() == {PID: pytest.approx(40.0), PID + 1: 0.0, PID + 2: None}
    clock[0] += 1.0
    set_gfx_ns(proc, PID, 5, 12_500_000_000)  # 2 s of gfx time in 1 s (several queues): capped
    assert util()[PID] == 100.0
    add_drm_client(proc, PID + 3, 8, (GPU0, 9), "1024 KiB", gfx_ns=7)  # a new client: measured next scan
    clock[0] += 1.0
    assert util()[PID + 3] is None
