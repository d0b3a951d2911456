"""The pyrsmi backend (with amdsmi or hwmon temperatures) against FAKE pyrsmi/amdsmi modules."""

from __future__ import annotations

import os
import pwd
import sys
from pathlib import Path

import pytest
from fakes import fake_amdsmi
from fakes.fake_amdsmi import AmdSmiTemperatureType as T
from fakes.fake_amdsmi import FakeAmdSmi
from fakes.fake_pyrsmi import FakeDevice, FakeRocml, ROCMLError_LibraryNotFound
from fakes.proc_tree import add_drm_client
from fakes.sysfs_tree import build_card

from rocmtui.config import MonitorConfig
from rocmtui.gpu import amdgpu_files, rocm
from rocmtui.gpu.amdsmi_extras import to_celsius
from rocmtui.gpu.backend import UNKNOWN_GPU, BackendUnavailable


def _config(root: Path) -> MonitorConfig:
    return MonitorConfig(backend="rocm", sysfs_root=root)


def test_sample_maps_pyrsmi_values_and_amdsmi_temperatures(monkeypatch, tmp_path) -> None:
    FakeRocml(devices=[FakeDevice(), FakeDevice(name="second")]).install(monkeypatch)
    FakeAmdSmi(temps=[{T.EDGE: 40, T.HOTSPOT: 55, T.VRAM: 61}, {T.EDGE: 41}]).install(monkeypatch)
    backend = rocm.open_backend(_config(tmp_path))
    assert backend.device_count() == 2
    s = backend.sample(0)
    assert s.name == "AMD Instinct MI300X"
    assert s.utilization_pct == 87.0
    assert (s.memory_used_bytes, s.memory_total_bytes) == (3 * 2**30, 192 * 2**30)
    assert (s.gtt_used_bytes, s.gtt_total_bytes) == (2**27, 64 * 2**30)
    assert s.memory_busy_pct == 23.0
    assert s.power_w == 550.0
    assert s.fan_rpm is None  # -1 from pyrsmi
    assert s.temperatures_c == (("edge", 40.0), ("junction", 55.0), ("mem", 61.0))
    assert backend.sample(1).temperatures_c == (("edge", 41.0),)  # unsupported sensors left out
    assert s.power_cap_w is None  # no hwmon files matched (no sysfs cards in tmp_path)


def test_minus_one_and_empty_name_become_none(monkeypatch, tmp_path) -> None:
    broken = FakeDevice(name="", utilization=-1, vram_used=-1, vram_total=-1, memory_busy=-1, power_w=-1)
    FakeRocml(devices=[broken]).install(monkeypatch)
    fake_amdsmi.install_missing(monkeypatch)
    s = rocm.open_backend(_config(tmp_path)).sample(0)
    assert s.name == "AMD GPU 0"
    assert s.utilization_pct is None
    assert s.memory_used_bytes is None and s.memory_total_bytes is None
    assert s.memory_busy_pct is None
    assert s.power_w is None
    assert s.memory_pct is None


@pytest.mark.parametrize(
    "error",
    [
        ROCMLError_LibraryNotFound("AMD SMI library (libamd_smi.so) not found."),
        RuntimeError("AMD GPU driver not initialized. Please ensure amdgpu driver is loaded."),
    ],
)
def test_initialise_failure_is_unavailable_with_the_reason(monkeypatch, tmp_path, error) -> None:
    FakeRocml(devices=[FakeDevice()], init_error=error).install(monkeypatch)
    with pytest.raises(BackendUnavailable) as info:
        rocm.open_backend(_config(tmp_path))
    assert str(error) in info.value.reason
    assert type(error).__name__ in info.value.reason


def test_real_pyrsmi_here_is_unavailable_not_a_crash(tmp_path) -> None:
    """The real pyrsmi 1.1 on this machine (no ROCm): its own error becomes the reason."""
    if os.path.exists("/opt/rocm/lib/libamd_smi.so"):
        pytest.skip("ROCm is installed here")
    with pytest.raises(BackendUnavailable, match="libamd_smi"):
        rocm.open_backend(_config(tmp_path))


def test_temperatures_fall_back_to_hwmon_when_amdsmi_import_breaks(monkeypatch, tmp_path) -> None:
    FakeRocml(devices=[FakeDevice(), FakeDevice()]).install(monkeypatch)
    fake_amdsmi.install_broken(monkeypatch, OSError("libamd_smi.so: cannot open shared object file"))
    build_card(tmp_path, 0)
    build_card(tmp_path, 1, hwmon={"temp1_input": "33000"})
    backend = rocm.open_backend(_config(tmp_path))
    s0, s1 = backend.sample(0), backend.sample(1)
    assert s0.temperatures_c == (("edge", 45.0), ("junction", 52.0), ("mem", 60.0))
    assert s1.temperatures_c[0] == ("edge", 33.0)
    assert s0.power_cap_w == pytest.approx(300.0)
    assert s0.sclk_mhz == pytest.approx(2100.0)
    assert s0.power_w == 550.0  # power itself still from pyrsmi


def test_hwmon_is_not_used_when_card_counts_disagree(monkeypatch, tmp_path) -> None:
    FakeRocml(devices=[FakeDevice(), FakeDevice()]).install(monkeypatch)
    fake_amdsmi.install_missing(monkeypatch)
    build_card(tmp_path, 0)  # one card in sysfs, two GPUs in pyrsmi: matching by order would lie
    s = rocm.open_backend(_config(tmp_path)).sample(0)
    assert s.temperatures_c == ()
    assert s.power_cap_w is None


def test_amdsmi_init_failure_falls_back(monkeypatch, tmp_path) -> None:
    FakeRocml(devices=[FakeDevice()]).install(monkeypatch)
    FakeAmdSmi(temps=[{T.EDGE: 40}], init_error=fake_amdsmi.AmdSmiLibraryException(34)).install(monkeypatch)
    build_card(tmp_path, 0)
    assert rocm.open_backend(_config(tmp_path)).sample(0).temperatures_c[0] == ("edge", 45.0)


def test_amdsmi_units_are_range_checked(monkeypatch, tmp_path) -> None:
    FakeRocml(devices=[FakeDevice()]).install(monkeypatch)
    FakeAmdSmi(temps=[{T.EDGE: 45000, T.HOTSPOT: "N/A", T.VRAM: 65535000}]).install(monkeypatch)
    assert rocm.open_backend(_config(tmp_path)).sample(0).temperatures_c == (("edge", 45.0),)


@pytest.mark.parametrize(
    ("raw", "expected"), [(45, 45.0), (45.5, 45.5), (52000, 52.0), ("N/A", None), (True, None), (-300, None)]
)
def test_to_celsius(raw, expected) -> None:
    assert to_celsius(raw) == expected


def test_processes_without_gpu_attribution_and_with_psutil_details(monkeypatch, tmp_path) -> None:
    fake = FakeRocml(devices=[FakeDevice(), FakeDevice()], compute_pids=[os.getpid(), 2**22 + 12345])
    fake.install(monkeypatch)
    fake_amdsmi.install_missing(monkeypatch)
    backend = rocm.open_backend(_config(tmp_path))
    procs = backend.processes(0)
    assert backend.processes(1) == ()  # system-wide list, reported once
    assert [p.pid for p in procs] == [os.getpid(), 2**22 + 12345]
    mine, gone = procs
    assert mine.gpu_index == UNKNOWN_GPU
    assert mine.command  # this process's command line (pytest-xdist may have retitled it: no fixed word in it)
    assert mine.user == pwd.getpwuid(os.getuid()).pw_name
    assert gone.user is None and gone.command is None  # a vanished PID is tolerated


def test_processes_single_gpu_get_index_zero(monkeypatch, tmp_path) -> None:
    FakeRocml(devices=[FakeDevice()], compute_pids=[os.getpid()]).install(monkeypatch)
    fake_amdsmi.install_missing(monkeypatch)
    assert rocm.open_backend(_config(tmp_path)).processes(0)[0].gpu_index == 0


def test_missing_process_symbol_is_asked_once(monkeypatch, tmp_path) -> None:
    fake = FakeRocml(devices=[FakeDevice()], compute_pids=None)
    fake.install(monkeypatch)
    fake_amdsmi.install_missing(monkeypatch)
    backend = rocm.open_backend(_config(tmp_path))
    assert backend.processes(0) == ()
    assert backend.processes(0) == ()
    assert fake.calls.count("compute_process") == 1


def test_close_shuts_down_once(monkeypatch, tmp_path) -> None:
    fake = FakeRocml(devices=[FakeDevice()])
    fake.install(monkeypatch)
    amd = FakeAmdSmi(temps=[{T.EDGE: 40}])
    amd.install(monkeypatch)
    backend = rocm.open_backend(_config(tmp_path))
    backend.close()
    backend.close()
    assert fake.calls.count("shutdown") == 1
    assert amd.shut_down


def test_per_gpu_processes_with_vram_from_amdsmi(monkeypatch, tmp_path) -> None:
    fake = FakeRocml(devices=[FakeDevice(), FakeDevice()], compute_pids=[1, 2])
    fake.install(monkeypatch)
    amd = FakeAmdSmi(temps=[{}, {}], processes=[[], [(os.getpid(), 5 * 2**30)]])
    amd.install(monkeypatch)
    backend = rocm.open_backend(_config(tmp_path))
    assert backend.processes(0) == ()
    (mine,) = backend.processes(1)
    assert (mine.gpu_index, mine.pid, mine.gpu_memory_bytes) == (1, os.getpid(), 5 * 2**30)
    assert mine.user is not None
    assert "compute_process" not in fake.calls  # pyrsmi's GPU-less list was not needed


def test_amdsmi_process_list_failure_falls_back_to_pyrsmi(monkeypatch, tmp_path) -> None:
    FakeRocml(devices=[FakeDevice()], compute_pids=[os.getpid()]).install(monkeypatch)
    FakeAmdSmi(temps=[{}], processes=None).install(monkeypatch)
    (proc,) = rocm.open_backend(_config(tmp_path)).processes(0)
    assert proc.pid == os.getpid() and proc.gpu_memory_bytes is None


def test_without_amdsmi_processes_come_per_card_from_drm_fdinfo(monkeypatch, tmp_path) -> None:
    """FAKE /proc: pyrsmi's list has no GPU or VRAM, so the kernel's per-client figures are used first."""
    fake = FakeRocml(devices=[FakeDevice(), FakeDevice()], compute_pids=[1, 2])
    fake.install(monkeypatch)
    fake_amdsmi.install_missing(monkeypatch)
    build_card(tmp_path, 0)
    build_card(tmp_path, 1)
    proc = tmp_path / "proc"
    add_drm_client(proc, 4_190_000, 7, ("0000:01:00.0", 3), "2048 KiB")
    backend = rocm.open_backend(MonitorConfig(backend="rocm", sysfs_root=tmp_path, proc_root=proc))
    (found,) = backend.processes(1)
    assert (found.gpu_index, found.pid, found.gpu_memory_bytes) == (1, 4_190_000, 2 * 2**20)
    assert "compute_process" not in fake.calls
    assert [p.pid for p in backend.processes(0)] == [1, 2]  # nothing in fdinfo for card 0: pyrsmi's list


def test_amdsmi_is_not_used_when_its_device_count_disagrees(monkeypatch, tmp_path) -> None:
    FakeRocml(devices=[FakeDevice(), FakeDevice()]).install(monkeypatch)
    amd = FakeAmdSmi(temps=[{T.EDGE: 40}])  # amdsmi sees one GPU, pyrsmi two: by index it would lie
    amd.install(monkeypatch)
    backend = rocm.open_backend(_config(tmp_path))
    assert backend.sample(0).temperatures_c == () and backend.sample(1).temperatures_c == ()
    assert amd.shut_down  # released at once, not left open until close()


def test_a_failure_after_initialising_releases_both_libraries(monkeypatch, tmp_path) -> None:
    rocml = FakeRocml(devices=[FakeDevice()])
    rocml.install(monkeypatch)
    amd = FakeAmdSmi(temps=[{T.EDGE: 40}])
    amd.install(monkeypatch)

    def broken_scan(_root: Path) -> list[Path]:
        raise OSError("EIO")

    monkeypatch.setattr(amdgpu_files, "find_cards", broken_scan)
    with pytest.raises(OSError, match="EIO"):
        rocm.open_backend(_config(tmp_path))
    assert amd.shut_down and "shutdown" in rocml.calls


def test_amdsmi_that_cannot_list_devices_is_shut_down(monkeypatch) -> None:
    from rocmtui.gpu.amdsmi_extras import open_amdsmi_extras

    amd = FakeAmdSmi(temps=[{T.EDGE: 40}])
    amd.install(monkeypatch)

    def broken() -> list[object]:
        raise fake_amdsmi.AmdSmiLibraryException(34)

    monkeypatch.setattr(sys.modules["amdsmi"], "amdsmi_get_processor_handles", broken)
    extras, note = open_amdsmi_extras()
    assert extras is None and "cannot list devices" in note
    assert amd.shut_down
