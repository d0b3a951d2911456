"""Several GPUs on ROCm: the pitfalls doctor names before a multi-GPU run (RCCL, peer-to-peer, device masks).

Pure functions over what they are given (environment, kernel command line, CPU vendor, the GPUs torch
sees), so tests describe any host. Each returns nothing where it does not apply: one GPU, a CUDA or CPU
build of torch. Sources: ROCm's install FAQ ("Application hangs on multi-GPU systems": add ``iommu=pt``),
RCCL's own start-up warnings (``iommu=pt``, and ``HSA_FORCE_FINE_GRAIN_PCIE=1`` before ROCm 5.7), and
RCCL hangs reported on pairs of Radeon cards that go away with ``NCCL_P2P_DISABLE=1``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from rocmtui.doctor.checks import INFO, PASS, WARN, Check

IOMMU_FIX = (
    "add iommu=pt to GRUB_CMDLINE_LINUX_DEFAULT in /etc/default/grub, run sudo update-grub, reboot, "
    "and check /proc/cmdline"
)
FINE_GRAIN_FROM = (5, 7)
"""RCCL from ROCm 5.7 no longer needs HSA_FORCE_FINE_GRAIN_PCIE=1 for peer-to-peer over PCIe."""


def rocm_release(hip_version: str | None) -> tuple[int, int] | None:
    """(major, minor) of a HIP version string such as ``6.2.41133`` or ``5.6.31061-8c743ae5d``."""
    match = re.match(r"(\d+)\.(\d+)", hip_version or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def is_radeon(target: str) -> bool:
    """RDNA targets (gfx10xx, gfx11xx, gfx12xx: Radeon and Radeon PRO cards), as opposed to Instinct (gfx9xx)."""
    return re.fullmatch(r"gfx1[0-2][0-9a-f]{2}", target) is not None


def check_iommu(cmdline: str | None, cpu_vendor: str | None) -> Check | None:
    """RCCL warns that a multi-GPU host without ``iommu=pt`` may hang; AMD CPUs keep the IOMMU on by default."""
    if cmdline is None:
        return None
    args = cmdline.split()
    if "iommu=pt" in args or any(a in args for a in ("iommu=off", "amd_iommu=off", "intel_iommu=off")):
        return None
    detail = "iommu=pt is not on the kernel command line: RCCL collectives may hang across several GPUs"
    if cpu_vendor == "AuthenticAMD":
        return Check("RCCL: IOMMU", WARN, detail + " (an AMD CPU keeps its IOMMU translating)", IOMMU_FIX)
    return Check("RCCL: IOMMU", INFO, detail + "; if they do, " + IOMMU_FIX)


def check_fine_grain_pcie(environ: Mapping[str, str], hip_version: str | None) -> Check | None:
    """Before ROCm 5.7, RCCL needs HSA_FORCE_FINE_GRAIN_PCIE=1 for peer-to-peer transfers over PCIe."""
    release = rocm_release(hip_version)
    if release is None or release >= FINE_GRAIN_FROM:
        return None
    if environ.get("HSA_FORCE_FINE_GRAIN_PCIE") == "1":
        return Check("RCCL: fine-grain PCIe", PASS, f"HSA_FORCE_FINE_GRAIN_PCIE=1 (needed by ROCm {hip_version})")
    return Check(
        "RCCL: fine-grain PCIe",
        WARN,
        f"ROCm {hip_version}: RCCL before 5.7 can hang or crawl over PCIe without HSA_FORCE_FINE_GRAIN_PCIE=1",
        "export HSA_FORCE_FINE_GRAIN_PCIE=1 (or use a ROCm 5.7+ build of torch, which does not need it)",
    )


def check_radeon_p2p(environ: Mapping[str, str], targets: Sequence[str]) -> Check | None:
    """Radeon (RDNA) cards over PCIe: RCCL's direct peer-to-peer copies are reported to hang; NCCL_P2P_DISABLE=1
    routes them through host memory."""
    radeon = [t for t in targets if is_radeon(t)]
    if len(radeon) < 2:
        return None
    shown = ", ".join(radeon)
    if environ.get("NCCL_P2P_DISABLE") == "1":
        return Check("RCCL: peer-to-peer", PASS, f"NCCL_P2P_DISABLE=1: RCCL copies through host memory ({shown})")
    return Check(
        "RCCL: peer-to-peer",
        WARN,
        f"{len(radeon)} Radeon cards ({shown}): RCCL's direct PCIe peer-to-peer copies are known to hang on them",
        "if a multi-GPU run hangs at its first collective, export NCCL_P2P_DISABLE=1 (slower, through host memory)",
    )


def multi_gpu_checks(
    environ: Mapping[str, str],
    hip_version: str | None,
    targets: Sequence[str],
    cmdline: str | None,
    cpu_vendor: str | None,
) -> list[Check]:
    """The checks that matter when a ROCm build of torch sees several GPUs (``targets``: their gfx names)."""
    if hip_version is None or len(targets) < 2:
        return []
    found = (
        check_iommu(cmdline, cpu_vendor),
        check_fine_grain_pcie(environ, hip_version),
        check_radeon_p2p(environ, targets),
    )
    return [c for c in found if c is not None]
