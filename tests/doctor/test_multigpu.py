"""The ROCm multi-GPU pitfalls: device masks, RCCL and the IOMMU, fine-grain PCIe, Radeon peer-to-peer."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from rocmtui.doctor import report
from rocmtui.doctor.checks import Machine, check_visible_devices, compose_visible
from rocmtui.doctor.multigpu import (
    IOMMU_FIX,
    check_fine_grain_pcie,
    check_iommu,
    check_radeon_p2p,
    multi_gpu_checks,
    rocm_release,
)
from rocmtui.doctor.torch_info import TorchInfo

NO_IOMMU_PT = "BOOT_IMAGE=/vmlinuz-6.8.0 root=/dev/sda1 ro quiet splash"
WITH_IOMMU_PT = "BOOT_IMAGE=/vmlinuz-6.8.0 root=/dev/sda1 ro amd_iommu=on iommu=pt"


@pytest.mark.parametrize(
    ("rocr", "hip", "said"),
    [
        (
            "1,2,3",
            "0",
            "leaves 3 GPU(s), renumbered 0-2; HIP_VISIBLE_DEVICES='0' indexes into those: the machine's GPU(s) 1",
        ),
        ("1,2,3", "0,2", "the machine's GPU(s) 1, 3"),
        ("2,3", "2", "and 2 is past them: no such GPU"),
        ("GPU-4b2c1a9f8d3e6f7a,1", "1", "the machine's GPU(s) 1"),
        ("0,1", "GPU-4b2c1a9f8d3e6f7a", "selects among those, not among the machine's GPUs"),
    ],
)
def test_rocr_applies_first_and_hip_indexes_what_it_leaves(rocr: str, hip: str, said: str) -> None:
    assert said in compose_visible(rocr, "HIP_VISIBLE_DEVICES", hip)


def test_both_masks_set_is_a_warning_that_says_how_they_compose(tmp_path: Path) -> None:
    check = check_visible_devices(
        Machine(sys_root=tmp_path, environ={"ROCR_VISIBLE_DEVICES": "4,5", "CUDA_VISIBLE_DEVICES": "1"})
    )
    assert check.status == "WARN"
    assert "ROCR_VISIBLE_DEVICES='4,5' applies first" in check.detail and "GPU(s) 5" in check.detail
    assert check.fix is not None and "ROCR_VISIBLE_DEVICES on ROCm" in check.fix
    alone = check_visible_devices(Machine(sys_root=tmp_path, environ={"ROCR_VISIBLE_DEVICES": "0,1"}))
    assert alone.status == "PASS"


@pytest.mark.parametrize(
    ("cmdline", "vendor", "status"),
    [
        (NO_IOMMU_PT, "AuthenticAMD", "WARN"),
        (NO_IOMMU_PT, "GenuineIntel", "INFO"),
        (WITH_IOMMU_PT, "AuthenticAMD", None),
        ("ro amd_iommu=off", "AuthenticAMD", None),
        (None, "AuthenticAMD", None),
    ],
)
def test_iommu_pt(cmdline: str | None, vendor: str, status: str | None) -> None:
    check = check_iommu(cmdline, vendor)
    assert (check.status if check else None) == status
    if status == "WARN":
        assert check is not None and check.fix == IOMMU_FIX


def test_a_look_alike_argument_is_not_iommu_pt() -> None:
    assert check_iommu("ro amd_iommu=pt_off", "AuthenticAMD") is not None


@pytest.mark.parametrize(
    ("hip", "environ", "status"),
    [
        ("5.6.31061-8c743ae5d", {}, "WARN"),
        ("5.6.31061-8c743ae5d", {"HSA_FORCE_FINE_GRAIN_PCIE": "1"}, "PASS"),
        ("5.7.31921", {}, None),
        ("6.2.41133", {}, None),
    ],
)
def test_fine_grain_pcie_only_before_rocm_5_7(hip: str, environ: dict[str, str], status: str | None) -> None:
    check = check_fine_grain_pcie(environ, hip)
    assert (check.status if check else None) == status


def test_rocm_release_reads_major_and_minor() -> None:
    assert rocm_release("6.2.41133") == (6, 2) and rocm_release("5.10.1") == (5, 10) and rocm_release("") is None


@pytest.mark.parametrize(
    ("targets", "environ", "status"),
    [
        (("gfx1100", "gfx1100"), {}, "WARN"),
        (("gfx1201", "gfx1201", "gfx1201"), {}, "WARN"),
        (("gfx1100", "gfx1100"), {"NCCL_P2P_DISABLE": "1"}, "PASS"),
        (("gfx90a", "gfx90a"), {}, None),
        (("gfx1100", "gfx942"), {}, None),
    ],
)
def test_radeon_pairs_hint_at_nccl_p2p_disable(targets, environ: dict[str, str], status: str | None) -> None:
    check = check_radeon_p2p(environ, targets)
    assert (check.status if check else None) == status
    if status == "WARN":
        assert check is not None and check.fix is not None and "NCCL_P2P_DISABLE=1" in check.fix


@pytest.mark.parametrize(
    ("hip", "targets"),
    [(None, ("gfx1100", "gfx1100")), ("6.2.41133", ("gfx1100",)), ("5.6.31061", ()), (None, ())],
    ids=["cuda-build", "one-gpu", "no-gpu", "cpu"],
)
def test_nothing_is_reported_without_several_gpus_on_rocm(hip: str | None, targets: tuple[str, ...]) -> None:
    assert multi_gpu_checks({}, hip, targets, NO_IOMMU_PT, "AuthenticAMD") == []


def proc_tree(root: Path, cmdline: str, vendor: str) -> Path:
    proc = root / "proc"
    proc.mkdir()
    (proc / "cmdline").write_text(cmdline + "\n")
    (proc / "cpuinfo").write_text(f"processor\t: 0\nvendor_id\t: {vendor}\ncpu family\t: 25\n")
    return proc


def test_doctor_names_the_pitfalls_of_two_radeon_cards(tmp_path: Path) -> None:
    machine = Machine(
        sys_root=tmp_path / "sys",
        dev_root=tmp_path / "dev",
        proc_root=proc_tree(tmp_path, NO_IOMMU_PT, "AuthenticAMD"),
        rocm_roots=(),
        environ={},
    )
    assert machine.kernel_cmdline() == NO_IOMMU_PT and machine.cpu_vendor() == "AuthenticAMD"
    two = TorchInfo(
        version="2.5.0+rocm6.2",
        hip="6.2.41133",
        gpu_available=True,
        devices=("AMD Radeon RX 7900 XTX", "AMD Radeon RX 7900 XTX"),
        gfx_targets=("gfx1100", "gfx1100"),
    )
    out = io.StringIO()
    report.run_doctor(False, machine=machine, torch_reader=lambda: two, out=out)
    text = out.getvalue()
    assert "RCCL: IOMMU" in text and "fix: add iommu=pt" in text
    assert "RCCL: peer-to-peer" in text and "NCCL_P2P_DISABLE=1" in text
    one = TorchInfo(
        version=two.version, hip=two.hip, gpu_available=True, devices=two.devices[:1], gfx_targets=("gfx1100",)
    )
    assert not [c for c in report.collect(machine, lambda: one) if c.name.startswith("RCCL")]
