"""Which DRM card each HIP device index is.

The ROCm runtime numbers GPUs in KFD topology order (``/sys/class/kfd/kfd/topology/nodes/N``, CPU nodes
left out), and ``ROCR_VISIBLE_DEVICES`` then keeps and orders a subset of them, by index or by
``GPU-<unique id>``; torch's ``cuda:0`` is the first GPU left. rocm-smi, amdgpu sysfs and rocmtui number
GPUs by DRM card instead (``card0``, ``card1``...), and on a machine with an iGPU, or cards whose KFD nodes
are not in PCI order, the two disagree. Each KFD node names its PCI address (``domain``, ``location_id``);
each DRM card's ``device`` link resolves to one: the match is made on that.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from rocmtui.gpu import amdgpu_files, drm_clients


@dataclass(frozen=True)
class KfdGpu:
    """One GPU node of the KFD topology."""

    node: int
    pci_bus_id: str
    unique_id: int | None
    """The node's ``unique_id`` (what ``GPU-<hex>`` in ROCR_VISIBLE_DEVICES names); None where it is 0."""


@dataclass(frozen=True)
class HipDevice:
    """A HIP device index and the DRM card it is."""

    hip_index: int
    gpu: KfdGpu
    card: str | None
    """``card1``, or None when no amdgpu DRM card has its PCI address."""


def _properties(path: Path) -> dict[str, int]:
    values: dict[str, int] = {}
    for line in (amdgpu_files.read_text(path) or "").splitlines():
        key, _, value = line.partition(" ")
        if value.strip().isdigit():
            values[key] = int(value)
    return values


def kfd_gpus(sys_root: Path) -> list[KfdGpu]:
    """The GPU nodes of the KFD topology in node order (the order the ROCm runtime enumerates them)."""
    nodes = sys_root / "class" / "kfd" / "kfd" / "topology" / "nodes"
    try:
        numbers = sorted(int(p.name) for p in nodes.iterdir() if p.name.isdigit())
    except OSError:
        return []
    gpus = []
    for number in numbers:
        if not amdgpu_files.read_int(nodes / str(number) / "gpu_id"):
            continue  # a CPU node: gpu_id 0
        props = _properties(nodes / str(number) / "properties")
        if "location_id" not in props:
            continue
        loc = props["location_id"]
        bus_id = f"{props.get('domain', 0):04x}:{loc >> 8 & 0xFF:02x}:{loc >> 3 & 0x1F:02x}.{loc & 0x7:x}"
        gpus.append(KfdGpu(number, bus_id, props.get("unique_id") or None))
    return gpus


def visible(gpus: list[KfdGpu], rocr_visible: str | None) -> tuple[list[KfdGpu], list[str]]:
    """The GPUs ``ROCR_VISIBLE_DEVICES`` keeps, in its order, and the entries that name no GPU."""
    if rocr_visible is None:
        return list(gpus), []
    kept, unknown = [], []
    for entry in (e.strip() for e in rocr_visible.split(",") if e.strip()):
        if entry.isdigit():
            match = gpus[int(entry)] if int(entry) < len(gpus) else None
        else:
            wanted = entry.lower().removeprefix("gpu-")
            match = next((g for g in gpus if g.unique_id is not None and f"{g.unique_id:x}" == wanted), None)
        if match is None:
            unknown.append(entry)
        else:
            kept.append(match)
    return kept, unknown


def hip_devices(sys_root: Path, environ: Mapping[str, str]) -> tuple[list[HipDevice], list[str]]:
    """HIP index -> DRM card after ``ROCR_VISIBLE_DEVICES``, and the mask's entries that name no GPU."""
    cards = {drm_clients.pci_address(d): d.parent.name for d in amdgpu_files.find_cards(sys_root)}
    kept, unknown = visible(kfd_gpus(sys_root), environ.get("ROCR_VISIBLE_DEVICES"))
    return [HipDevice(i, gpu, cards.get(gpu.pci_bus_id)) for i, gpu in enumerate(kept)], unknown
