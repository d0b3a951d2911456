"""HIP device index -> DRM card, over the REAL KFD topologies captured on three APUs (tests/data/amd, LACT)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes.amd_sysfs_layout import lay_out

from rocmtui.doctor.checks import INFO, WARN, Machine
from rocmtui.doctor.hip_map import check_hip_devices
from rocmtui.gpu.hip_order import KfdGpu, hip_devices, kfd_gpus, visible

CAPTURES = Path(__file__).parent.parent / "data" / "amd"
APUS = ("strixpoint", "phoenix", "vangogh")
"""The captures with their KFD topology: node 0 is the CPU (absent from the Van Gogh capture), then the GPU."""


@pytest.fixture(scope="module")
def trees(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("kfd")
    return {card: lay_out(CAPTURES / card, root / card).root for card in APUS}


def test_the_cpu_node_is_skipped_and_the_gpu_node_names_the_cards_pci_address(trees: dict[str, Path]) -> None:
    assert kfd_gpus(trees["strixpoint"]) == [KfdGpu(1, "0000:c1:00.0", None)]  # location_id 49408 = c1:00.0
    assert kfd_gpus(trees["phoenix"]) == [KfdGpu(1, "0000:64:00.0", None)]
    devices, unknown = hip_devices(trees["strixpoint"], {})
    assert unknown == []
    assert [(d.hip_index, d.card, d.gpu.node) for d in devices] == [(0, "card0", 1)]


def test_rocr_visible_devices_keeps_and_orders_by_kfd_index(trees: dict[str, Path]) -> None:
    gpus = [gpu for card in APUS for gpu in kfd_gpus(trees[card])]  # three GPUs, as one machine would list them
    kept, unknown = visible(gpus, "2,0")
    assert [g.pci_bus_id for g in kept] == ["0000:04:00.0", "0000:c1:00.0"]  # Van Gogh first, then Strix Point
    assert unknown == []
    assert visible(gpus, "0,7,GPU-1234") == ([gpus[0]], ["7", "GPU-1234"])  # no such index; unique_id is 0 here


def test_doctor_names_each_hip_device_and_warns_of_a_mask_past_the_gpus(trees: dict[str, Path]) -> None:
    check = check_hip_devices(Machine(sys_root=trees["vangogh"], environ={}))
    assert check is not None and check.status == INFO
    assert check.detail == "HIP 0 = card0 (0000:04:00.0)"
    masked = check_hip_devices(Machine(sys_root=trees["vangogh"], environ={"ROCR_VISIBLE_DEVICES": "1"}))
    assert masked is not None and masked.status == WARN
    assert "names no GPU for 1" in masked.detail


def test_no_kfd_topology_no_line(tmp_path: Path) -> None:
    assert check_hip_devices(Machine(sys_root=tmp_path, environ={})) is None
