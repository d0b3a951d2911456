"""Each backend's device identity (``uuid``, ``pci_bus_id``): read once at open, carried by every sample.

NVML and pyrsmi are FAKES (``tests/fakes``, their real names): neither library runs on the test machine.
The amdgpu files are a FAKE sysfs tree with the kernel's layout (the card's ``device`` link names the slot).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from fakes import fake_amdsmi
from fakes.fake_nvml_identity import FakeNvml, FakeNvmlDevice
from fakes.fake_pyrsmi import FakeDevice, FakeRocml
from fakes.sysfs_tree import build_card

from rocmtui.config import MonitorConfig
from rocmtui.gpu import rocm, sysfs
from rocmtui.gpu import sample_codec as codec
from rocmtui.gpu.nvml import NvmlBackend

H200_LINE = (
    (Path(__file__).resolve().parents[1] / "data" / "h200-fastnet-run" / "gpu.jsonl").read_text().splitlines()[0]
)


def test_nvml_reads_uuid_and_bus_id_once_per_device_not_per_tick() -> None:
    fake = FakeNvml([FakeNvmlDevice(), FakeNvmlDevice(uuid="GPU-second", bus_id=b"00000000:9A:00.0")])
    backend = NvmlBackend(fake.module(), 2)
    for _ in range(3):
        first, second = backend.sample(0), backend.sample(1)
    assert (first.uuid, first.pci_bus_id) == ("GPU-5d3e7a10-1b2c-4d5e-8f90-a1b2c3d4e5f6", "00000000:1B:00.0")
    assert (second.uuid, second.pci_bus_id) == ("GPU-second", "00000000:9A:00.0")
    assert (fake.calls["nvmlDeviceGetUUID"], fake.calls["nvmlDeviceGetPciInfo"]) == (2, 2)
    assert fake.calls["nvmlDeviceGetPowerUsage"] == 6  # the readings themselves are per tick


def test_nvml_identity_not_supported_is_none() -> None:
    backend = NvmlBackend(FakeNvml([FakeNvmlDevice(uuid=None, bus_id=None)]).module(), 1)
    sample = backend.sample(0)
    assert (sample.uuid, sample.pci_bus_id) == (None, None)
    assert sample.name == "NVIDIA H200"


def test_sysfs_bus_id_is_the_device_link_and_uuid_the_unique_id_file(tmp_path: Path) -> None:
    build_card(tmp_path, 0, files={"unique_id": "4B3D1CF2A1B6E7C8"})
    build_card(tmp_path, 3)  # a consumer card: no unique_id file
    backend = sysfs.open_backend(MonitorConfig(sysfs_root=tmp_path))
    first, second = backend.sample(0), backend.sample(1)
    assert (first.uuid, first.pci_bus_id) == ("4b3d1cf2a1b6e7c8", "0000:00:00.0")
    assert (second.uuid, second.pci_bus_id) == (None, "0000:03:00.0")


def test_sysfs_identity_is_read_at_open(tmp_path: Path) -> None:
    device = build_card(tmp_path, 1, files={"unique_id": "aa"})
    backend = sysfs.open_backend(MonitorConfig(sysfs_root=tmp_path))
    (device / "unique_id").write_text("bb\n")
    assert backend.sample(0).uuid == "aa"


def test_rocm_uuid_and_bdf_from_pyrsmi_without_sysfs_cards(monkeypatch, tmp_path: Path) -> None:
    bdf = (0x0001 << 32) | (0xC1 << 8) | (0x02 << 3) | 0x1  # 0001:c1:02.1
    FakeRocml(devices=[FakeDevice(uuid="GPU-7e1f00aa", pci_id=bdf), FakeDevice()]).install(monkeypatch)
    fake_amdsmi.install_missing(monkeypatch)
    backend = rocm.open_backend(MonitorConfig(backend="rocm", sysfs_root=tmp_path))
    first, second = backend.sample(0), backend.sample(1)
    assert (first.uuid, first.pci_bus_id) == ("GPU-7e1f00aa", "0001:c1:02.1")
    assert (second.uuid, second.pci_bus_id) == (None, None)  # "" and -1: pyrsmi's error values


def test_rocm_prefers_the_matched_sysfs_card_address(monkeypatch, tmp_path: Path) -> None:
    FakeRocml(devices=[FakeDevice(pci_id=(0x99 << 8))]).install(monkeypatch)  # 0000:99:00.0
    fake_amdsmi.install_missing(monkeypatch)
    build_card(tmp_path, 0x41)
    backend = rocm.open_backend(MonitorConfig(backend="rocm", sysfs_root=tmp_path))
    assert backend.sample(0).pci_bus_id == "0000:41:00.0"


def test_identity_survives_the_codec_and_old_lines_load_without_it() -> None:
    old = codec.loads(H200_LINE)
    assert "uuid" not in H200_LINE and old.gpus[0].uuid is None and old.gpus[0].pci_bus_id is None
    backend = NvmlBackend(FakeNvml([FakeNvmlDevice()]).module(), 1)
    sample = backend.sample(0)
    again = codec.loads(codec.dumps(replace(old, gpus=(sample,))))
    assert (again.gpus[0].uuid, again.gpus[0].pci_bus_id) == (sample.uuid, sample.pci_bus_id)
