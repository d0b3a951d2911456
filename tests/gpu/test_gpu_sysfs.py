"""The amdgpu sysfs backend against FAKE trees with the driver's real file names and formats."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fakes.sysfs_tree import build_card

from rocmtui.config import MonitorConfig
from rocmtui.gpu import sysfs
from rocmtui.gpu.backend import BackendUnavailable


def _open(root: Path) -> sysfs.SysfsBackend:
    return sysfs.open_backend(MonitorConfig(sysfs_root=root))


def test_full_card_reads_every_field_in_sample_units(tmp_path: Path) -> None:
    build_card(tmp_path, 0)
    backend = _open(tmp_path)
    assert backend.device_count() == 1  # the card0-DP-1 connector is not a second GPU
    s = backend.sample(0)
    assert s.name == "AMD Radeon RX 7900 XTX"
    assert s.error is None
    assert s.utilization_pct == 87.0
    assert s.memory_busy_pct == 23.0
    assert (s.memory_used_bytes, s.memory_total_bytes) == (3 * 2**30, 24 * 2**30)
    assert (s.gtt_used_bytes, s.gtt_total_bytes) == (2**27, 16 * 2**30)
    assert s.temperatures_c == (("edge", 45.0), ("junction", 52.0), ("mem", 60.0))
    assert s.temperature_c == 52.0
    assert s.power_w == pytest.approx(215.0)
    assert s.power_cap_w == pytest.approx(300.0)
    assert s.fan_rpm == 1200.0
    assert s.sclk_mhz == pytest.approx(2100.0)
    assert s.mclk_mhz == pytest.approx(1250.0)
    assert backend.processes(0) == ()


def test_power1_input_only(tmp_path: Path) -> None:
    build_card(tmp_path, 0, hwmon={"power1_average": None, "power1_input": "98500000"})
    assert _open(tmp_path).sample(0).power_w == pytest.approx(98.5)


def test_missing_files_are_none(tmp_path: Path) -> None:
    build_card(
        tmp_path,
        0,
        files={"product_name": None, "gpu_busy_percent": None, "mem_info_gtt_used": None},
        hwmon={"temp2_input": None, "temp3_label": None, "power1_average": None, "fan1_input": None},
    )
    s = _open(tmp_path).sample(0)
    assert s.name == "AMD GPU (0x744c)"
    assert s.utilization_pct is None
    assert s.gtt_used_bytes is None
    assert s.power_w is None
    assert s.fan_rpm is None
    assert s.temperatures_c == (("edge", 45.0), ("temp3", 60.0))
    assert s.error is None


def test_garbage_content_is_none(tmp_path: Path) -> None:
    build_card(
        tmp_path,
        0,
        files={"gpu_busy_percent": "busy", "mem_busy_percent": "250", "mem_info_vram_used": ""},
        hwmon={"temp1_input": "65535000", "power1_cap": "-1", "freq1_input": "1.5e9"},
    )
    (tmp_path / "class/drm/card0/device/mem_info_vram_total").write_bytes(b"\xff\xfe\n")
    s = _open(tmp_path).sample(0)
    assert s.utilization_pct is None
    assert s.memory_busy_pct is None
    assert s.memory_used_bytes is None
    assert s.memory_total_bytes is None
    assert s.power_cap_w is None
    assert s.sclk_mhz is None
    assert s.temperatures_c == (("junction", 52.0), ("mem", 60.0))


def test_no_amdgpu_hwmon_gives_no_sensors(tmp_path: Path) -> None:
    build_card(tmp_path, 0, hwmon={"name": "nvme"})
    s = _open(tmp_path).sample(0)
    assert s.temperatures_c == ()
    assert s.power_w is None
    assert s.utilization_pct == 87.0


def test_card_removed_between_samples_gives_an_error_not_an_exception(tmp_path: Path) -> None:
    build_card(tmp_path, 0)
    device = build_card(tmp_path, 1)
    backend = _open(tmp_path)
    assert backend.device_count() == 2
    shutil.rmtree(device)
    gone = backend.sample(1)
    assert gone.error is not None and "card1" in gone.error
    assert gone.utilization_pct is None
    assert backend.sample(0).error is None


def test_hwmon_renumbered_is_found_again(tmp_path: Path) -> None:
    device = build_card(tmp_path, 0)
    backend = _open(tmp_path)
    (device / "hwmon" / "hwmon3").rename(device / "hwmon" / "hwmon7")
    assert backend.sample(0).fan_rpm == 1200.0


def test_other_vendors_and_connectors_are_skipped(tmp_path: Path) -> None:
    build_card(tmp_path, 0, files={"vendor": "0x10de"}, driver="nvidia")
    build_card(tmp_path, 1)
    build_card(tmp_path, 2, driver="radeon")  # AMD, but the legacy driver: none of amdgpu's files
    build_card(tmp_path, 3, driver=None)  # no driver link: the AMD vendor id decides
    backend = _open(tmp_path)
    assert backend.device_count() == 2


def test_cards_are_in_number_order(tmp_path: Path) -> None:
    build_card(tmp_path, 10, files={"product_name": "ten"})
    build_card(tmp_path, 2, files={"product_name": "two"})
    backend = _open(tmp_path)
    assert [backend.sample(i).name for i in range(2)] == ["two", "ten"]


def test_unavailable_reasons(tmp_path: Path) -> None:
    with pytest.raises(BackendUnavailable, match="does not exist"):
        _open(tmp_path)
    build_card(tmp_path, 0, files={"vendor": "0x10de"}, driver="nvidia")
    with pytest.raises(BackendUnavailable, match="no amdgpu cards"):
        _open(tmp_path)


def test_runtime_suspended_card_is_not_woken(tmp_path: Path) -> None:
    device = build_card(tmp_path, 0)
    (device / "power").mkdir()
    (device / "power" / "runtime_status").write_text("suspended\n")
    backend = _open(tmp_path)
    asleep = backend.sample(0)
    assert asleep.error == "suspended (runtime power management)"
    assert asleep.utilization_pct is None
    (device / "power" / "runtime_status").write_text("active\n")
    assert backend.sample(0).utilization_pct == 87.0
