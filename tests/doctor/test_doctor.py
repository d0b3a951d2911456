"""``rocmtui doctor`` against machines described by tmp trees: CPU laptop, NVIDIA box, AMD box, broken AMD box."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from fakes.sysfs_tree import build_card

from rocmtui.doctor import report as doctor
from rocmtui.doctor.checks import Machine, check_kernel, check_visible_devices, default_rocm_roots, gfx_targets
from rocmtui.doctor.torch_info import TorchInfo, nvidia_packages_bytes, read_torch

CPU_TORCH = TorchInfo(version="2.5.0+cpu")
CUDA_TORCH_NO_GPU = TorchInfo(version="2.5.0+cu124", cuda="12.4")
CUDA_TORCH = TorchInfo(version="2.5.0+cu124", cuda="12.4", gpu_available=True, devices=("NVIDIA H200",))
ROCM_TORCH = TorchInfo(
    version="2.5.0+rocm6.2",
    hip="6.2.41133",
    gpu_available=True,
    devices=("AMD Radeon RX 6600",),
    gfx_targets=("gfx1032",),
)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def _pci(root: Path, address: str, vendor: str) -> None:
    _write(root / "sys/bus/pci/devices" / address / "vendor", vendor)
    _write(root / "sys/bus/pci/devices" / address / "class", "0x030000")


def _amd_machine(root: Path, *, gfx: int = 100302, live: bool = True, kfd: bool = True, **kw) -> Machine:
    _pci(root, "0000:03:00.0", "0x1002")
    if live:
        _write(root / "sys/module/amdgpu/initstate", "live")
        build_card(root / "sys", 0)
    if kfd:
        _write(root / "dev/kfd", "")
    _write(root / "dev/dri/renderD128", "")
    _write(root / "sys/class/kfd/kfd/topology/nodes/0/properties", "cpu_cores_count 16\ngfx_target_version 0")
    _write(root / "sys/class/kfd/kfd/topology/nodes/1/properties", f"simd_count 56\ngfx_target_version {gfx}")
    _write(root / "opt/rocm/.info/version", kw.pop("rocm", "6.2.0-115"))
    return Machine(
        sys_root=root / "sys",
        dev_root=root / "dev",
        rocm_roots=(root / "opt/rocm",),
        environ=kw.pop("environ", {}),
        kernel_release=kw.pop("kernel", "6.8.0-45-generic"),
    )


def _bare_machine(root: Path, **kw) -> Machine:
    (root / "sys").mkdir(exist_ok=True)
    return Machine(sys_root=root / "sys", dev_root=root / "dev", rocm_roots=(root / "opt/rocm",), environ={}, **kw)


def _run(machine: Machine, torch: TorchInfo, as_json: bool = False) -> tuple[int, str, dict[str, tuple[str, str]]]:
    out = io.StringIO()
    code = doctor.run_doctor(as_json, machine=machine, torch_reader=lambda: torch, out=out)
    checks = {c.name: (c.status, c.detail) for c in doctor.collect(machine, lambda: torch)}
    return code, out.getvalue(), checks


def test_cpu_laptop_passes_with_informative_amd_checks(tmp_path) -> None:
    code, text, checks = _run(_bare_machine(tmp_path, kernel_release="6.5.0"), CPU_TORCH)
    assert code == 0
    assert checks["torch"][0] == "WARN" and "CPU-only" in checks["torch"][1]
    assert checks["torch GPUs"][0] == "INFO"
    assert checks["amdgpu driver"][0] == "INFO"
    assert checks["/dev/kfd, /dev/dri"][0] == "INFO"
    assert checks["ROCm"][0] == "INFO"
    assert checks["telemetry"][0] == "WARN"
    assert "FAIL" not in text
    assert "fix: pip install torch" in text


def test_default_cuda_wheel_on_a_cpu_machine_is_not_a_failure(tmp_path) -> None:
    code, _, checks = _run(_bare_machine(tmp_path, kernel_release="6.5.0"), CUDA_TORCH_NO_GPU)
    assert code == 0
    assert checks["torch GPUs"][0] == "INFO"


def test_a_cuda_wheel_without_an_nvidia_gpu_says_what_it_costs_and_how_to_get_the_cpu_wheel(tmp_path) -> None:
    cuda = replace(CUDA_TORCH_NO_GPU, nvidia_bytes=3_364_581_452)
    code, text, checks = _run(_bare_machine(tmp_path, kernel_release="6.5.0"), cuda)
    assert code == 0 and checks["torch build"][0] == "WARN"
    assert "nvidia-* packages take 3.4 GB" in checks["torch build"][1]
    assert "--index-url https://download.pytorch.org/whl/cpu" in text
    _pci(tmp_path, "0000:18:00.0", "0x10de")  # an NVIDIA card: the CUDA build is the right one
    _, _, checks = _run(_bare_machine(tmp_path, kernel_release="6.5.0"), replace(CUDA_TORCH, nvidia_bytes=1))
    assert "torch build" not in checks


def test_the_nvidia_packages_installed_here_are_summed_from_their_files() -> None:
    from importlib.metadata import distributions

    names = [d.metadata["Name"] for d in distributions() if (d.metadata["Name"] or "").startswith("nvidia-")]
    assert (nvidia_packages_bytes() > 0) == bool(names)


@pytest.mark.parametrize(
    ("torch", "code", "gpu_status"), [(CUDA_TORCH, 0, "PASS"), (CUDA_TORCH_NO_GPU, 1, "FAIL")], ids=["sees", "blind"]
)
def test_nvidia_box(tmp_path, torch, code, gpu_status) -> None:
    machine = _bare_machine(tmp_path, kernel_release="5.15.0")
    _pci(tmp_path, "0000:18:00.0", "0x10de")
    got_code, text, checks = _run(machine, torch)
    assert got_code == code
    assert checks["torch GPUs"][0] == gpu_status
    assert checks["amdgpu driver"][0] == "INFO"
    if gpu_status == "PASS":
        assert checks["torch GPUs"][1] == "1: NVIDIA H200"
    else:
        assert "fix: check the driver" in text


def test_healthy_amd_box_with_a_consumer_card_gets_the_override_hint(tmp_path) -> None:
    code, text, checks = _run(_amd_machine(tmp_path), ROCM_TORCH)
    assert code == 0
    assert checks["torch"][0] == "PASS" and "HIP 6.2" in checks["torch"][1]
    assert checks["amdgpu driver"][0] == "PASS"
    assert checks[str(tmp_path / "dev/kfd")][0] == "PASS"
    assert checks[str(tmp_path / "dev/dri/renderD128")][0] == "PASS"
    assert checks["telemetry: sysfs"] == ("PASS", "1 GPU")
    assert checks["ROCm"] == ("PASS", f"6.2.0-115 at {tmp_path / 'opt/rocm'}")
    assert checks["gfx target"][0] == "WARN" and "gfx1032" in checks["gfx target"][1]
    assert "HSA_OVERRIDE_GFX_VERSION=10.3.0" in text


def test_supported_target_and_explicit_override(tmp_path) -> None:
    _, _, checks = _run(_amd_machine(tmp_path / "a", gfx=90010), ROCM_TORCH)
    assert checks["gfx target"] == ("PASS", "gfx90a (on ROCm's support list)")
    machine = _amd_machine(tmp_path / "b", environ={"HSA_OVERRIDE_GFX_VERSION": "10.3.0"})
    assert _run(machine, ROCM_TORCH)[2]["gfx target"][0] == "INFO"


def test_amd_gpu_without_the_driver_fails(tmp_path) -> None:
    code, text, checks = _run(_amd_machine(tmp_path, live=False), ROCM_TORCH)
    assert code == 1
    assert checks["amdgpu driver"][0] == "FAIL" and "0000:03:00.0" in checks["amdgpu driver"][1]
    assert "modprobe amdgpu" in text


def test_missing_kfd_fails(tmp_path) -> None:
    code, _, checks = _run(_amd_machine(tmp_path, kfd=False), ROCM_TORCH)
    assert code == 1
    assert checks[str(tmp_path / "dev/kfd")] == ("FAIL", "missing")


def test_unopenable_render_node_points_at_the_groups(tmp_path, monkeypatch) -> None:
    machine = _amd_machine(tmp_path)
    node = tmp_path / "dev/dri/renderD128"
    node.chmod(0)
    if os.geteuid() == 0:  # root opens any file: make the open fail as it does for a user outside the groups
        real_open = os.open

        def denying_open(path, flags, *args):
            if Path(path) == node:
                raise PermissionError(13, "Permission denied", str(path))
            return real_open(path, flags, *args)

        monkeypatch.setattr(os, "open", denying_open)
    code, text, _ = _run(machine, ROCM_TORCH)
    assert code == 1
    assert "usermod -aG render,video" in text


def test_old_rocm_and_old_kernel_warn_on_amd(tmp_path) -> None:
    _, _, checks = _run(_amd_machine(tmp_path, rocm="5.7.1", kernel="5.10.0-28-amd64"), ROCM_TORCH)
    assert checks["ROCm"][0] == "WARN" and "6.0+" in checks["ROCm"][1]
    assert checks["kernel"][0] == "WARN" and "5.15" in checks["kernel"][1]


def test_kernel_without_amd_gpu_is_informative(tmp_path) -> None:
    assert check_kernel(_bare_machine(tmp_path, kernel_release="5.4.0")).status == "INFO"
    assert check_kernel(_bare_machine(tmp_path, kernel_release="weird")).status == "WARN"


@pytest.mark.parametrize(
    ("environ", "status"),
    [
        ({}, "PASS"),
        ({"HIP_VISIBLE_DEVICES": "0"}, "PASS"),
        ({"HIP_VISIBLE_DEVICES": "0", "CUDA_VISIBLE_DEVICES": "1"}, "WARN"),
        ({"CUDA_VISIBLE_DEVICES": ""}, "WARN"),
    ],
)
def test_visible_devices(tmp_path, environ, status) -> None:
    check = check_visible_devices(Machine(sys_root=tmp_path, environ=environ))
    assert check.status == status
    for name, value in environ.items():
        assert f"{name}={value!r}" in check.detail


def test_gfx_target_names(tmp_path) -> None:
    for node, value in enumerate((90010, 90402, 110000, 100302)):
        _write(tmp_path / f"class/kfd/kfd/topology/nodes/{node}/properties", f"gfx_target_version {value}")
    assert gfx_targets(Machine(sys_root=tmp_path)) == ["gfx90a", "gfx942", "gfx1100", "gfx1032"]


def test_json_output(tmp_path) -> None:
    code, text, _ = _run(_amd_machine(tmp_path, live=False), ROCM_TORCH, as_json=True)
    data = json.loads(text)
    assert code == 1 and data["ok"] is False
    failed = [c for c in data["checks"] if c["status"] == "FAIL"]
    assert failed and all(c["fix"] for c in failed)


def test_torch_that_does_not_import_fails(tmp_path) -> None:
    code, _, checks = _run(_bare_machine(tmp_path, kernel_release="6.1"), TorchInfo(error="ModuleNotFoundError: torch"))
    assert code == 1
    assert checks["torch"][0] == "FAIL"


@pytest.mark.slow
def test_real_torch_and_cli_here() -> None:
    info = read_torch()
    assert info.version is not None and info.error is None
    result = subprocess.run(
        [sys.executable, "-m", "rocmtui", "doctor", "--json"], capture_output=True, text=True, timeout=120, check=False
    )
    data = json.loads(result.stdout)
    assert result.returncode == (0 if data["ok"] else 1)
    assert {c["name"] for c in data["checks"]} >= {"torch", "torch GPUs", "amdgpu driver", "visible devices"}


def test_rocm_is_looked_for_in_rocm_path_then_opt(tmp_path) -> None:
    for version in ("rocm-6.1.3", "rocm-6.2.0"):
        (tmp_path / version).mkdir()
    roots = default_rocm_roots({"ROCM_PATH": "/custom/rocm"}, opt=tmp_path)
    assert roots == (Path("/custom/rocm"), tmp_path / "rocm", tmp_path / "rocm-6.2.0", tmp_path / "rocm-6.1.3")
    assert default_rocm_roots({}, opt=tmp_path)[0] == tmp_path / "rocm"


def test_only_amd_arch_names_are_gfx_targets() -> None:
    from rocmtui.doctor.torch_info import gfx_names

    assert gfx_names(("gfx90a:sramecc+:xnack-", "NVIDIA H200", "", "gfx1100")) == ("gfx90a", "gfx1100")
