"""What ``rocmtui doctor`` learns from PyTorch: its build (ROCm, CUDA or CPU) and the GPUs it sees.

``read_torch()`` imports torch (seconds: only doctor and training do); the checks take the
resulting TorchInfo, so tests describe a ROCm or CUDA machine without one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rocmtui.doctor.checks import FAIL, INFO, PASS, WARN, Check

ROCM_WHEEL_FIX = "pip install torch torchvision --index-url https://download.pytorch.org/whl/rocm6.2 (see README)"
CPU_WHEEL_FIX = (
    "pip uninstall -y torch torchvision $(pip list | grep -o '^nvidia-[^ ]*'); "
    "pip install torch torchvision --index-url https://download.pytorch.org/whl/cpu"
)


@dataclass(frozen=True)
class TorchInfo:
    """What torch reports; ``error`` is set (and the rest empty) when it does not import."""

    version: str | None = None
    hip: str | None = None
    cuda: str | None = None
    gpu_available: bool = False
    devices: tuple[str, ...] = ()
    gfx_targets: tuple[str, ...] = ()
    error: str | None = None
    nvidia_bytes: int = 0
    """Disk taken by the installed ``nvidia-*`` packages (the CUDA libraries a CUDA build of torch pulls in)."""


def nvidia_packages_bytes() -> int:
    """The summed size of the files of every installed ``nvidia-*`` distribution."""
    from importlib.metadata import distributions

    total = 0
    for dist in distributions():
        name = (dist.metadata["Name"] or "").lower()
        if not name.startswith("nvidia-"):
            continue
        for file in dist.files or ():
            try:
                total += Path(str(file.locate())).stat().st_size
            except OSError:
                continue  # listed in RECORD but gone
    return total


def read_torch() -> TorchInfo:
    """Import torch and ask it; any failure is recorded, not raised."""
    try:
        import torch
    except Exception as err:  # ImportError, or a broken install's OSError (missing libamdhip64.so)
        return TorchInfo(error=f"{type(err).__name__}: {err}")
    hip = getattr(torch.version, "hip", None)
    cuda = getattr(torch.version, "cuda", None)
    try:
        available = bool(torch.cuda.is_available())
        count = torch.cuda.device_count() if available else 0
        names = tuple(torch.cuda.get_device_name(i) for i in range(count))
        archs = tuple(str(getattr(torch.cuda.get_device_properties(i), "gcnArchName", "")) for i in range(count))
    except Exception as err:  # a driver/runtime mismatch surfaces here
        return TorchInfo(version=torch.__version__, hip=hip, cuda=cuda, error=f"GPU query failed: {err}")
    nvidia = nvidia_packages_bytes() if cuda else 0
    return TorchInfo(torch.__version__, hip, cuda, available, names, gfx_names(archs), nvidia_bytes=nvidia)


def gfx_names(archs: tuple[str, ...]) -> tuple[str, ...]:
    """AMD targets from ``gcnArchName`` values (``gfx90a:sramecc+:xnack-`` -> ``gfx90a``).

    CUDA builds fill gcnArchName with the product name ("NVIDIA H200"): those are not targets.
    """
    return tuple(a.split(":")[0] for a in archs if a.startswith("gfx"))


def torch_checks(info: TorchInfo, vendor_gpu_present: bool) -> list[Check]:
    """The build check and the GPUs-visible check.

    ``vendor_gpu_present``: the machine has a GPU of the build's vendor (AMD for ROCm, NVIDIA
    for CUDA). A GPU build that sees no GPU FAILs only then: the default Linux wheel is a CUDA
    build, and on a CPU laptop it simply trains on the CPU.
    """
    if info.version is None:
        return [Check("torch", FAIL, f"not importable: {info.error}", f"install PyTorch: {ROCM_WHEEL_FIX}")]
    if info.hip:
        build = Check("torch", PASS, f"{info.version}, ROCm build (HIP {info.hip})")
    elif info.cuda:
        build = Check("torch", PASS, f"{info.version}, CUDA build ({info.cuda})")
    else:
        build = Check("torch", WARN, f"{info.version}, CPU-only build: training runs on the CPU", ROCM_WHEEL_FIX)
    checks = [build, _gpu_check(info, vendor_gpu_present)]
    if info.cuda and not vendor_gpu_present:
        checks.append(_cuda_without_nvidia(info))
    return checks


def _cuda_without_nvidia(info: TorchInfo) -> Check:
    """A CUDA build where no NVIDIA GPU is: it trains on the CPU like the CPU wheel, at the CUDA libraries' cost."""
    size = f"{info.nvidia_bytes / 1e9:.1f} GB" if info.nvidia_bytes else "their size unknown"
    return Check(
        "torch build",
        WARN,
        f"a CUDA build without an NVIDIA GPU: its nvidia-* packages take {size} of disk for nothing",
        CPU_WHEEL_FIX,
    )


def _gpu_check(info: TorchInfo, vendor_gpu_present: bool) -> Check:
    if info.error is not None:
        return Check("torch GPUs", FAIL, info.error, "check that the driver matches the torch build (doctor above)")
    if info.devices:
        return Check("torch GPUs", PASS, f"{len(info.devices)}: {', '.join(info.devices)}")
    if (info.hip or info.cuda) and not vendor_gpu_present:
        vendor = "AMD" if info.hip else "NVIDIA"
        return Check("torch GPUs", INFO, f"none: no {vendor} GPU in this machine, so training runs on the CPU")
    if info.hip or info.cuda:
        return Check(
            "torch GPUs",
            FAIL,
            "a GPU build of torch, but it sees no GPU",
            "check the driver, the render/video groups and *_VISIBLE_DEVICES (see the other checks)",
        )
    return Check("torch GPUs", INFO, "none (CPU-only build)")
