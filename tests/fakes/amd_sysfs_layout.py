"""Lays a captured card's sysfs tree out where AMD's ROCm SMI library (5.2.3) looks for it.

The capture (tests/data/amd/<card>/class/drm/cardN/...) holds every reading. The library also needs the
structure a live kernel gives and a capture of files does not (tests/data/amd/SOURCES.md lists each):

- ``class/drm/card0`` as a link into ``devices/.../<PCI address>/drm/card0``: the library takes the PCI
  address from the link's target (``ConstructBDFID``) and finds only ``card0`` .. ``card<n-1>`` where n
  counts the ``card*`` entries (``DiscoverAmdgpuDevices``), so a lone ``card1`` is laid out as ``card0``;
- ``drm/card0/device`` as a link back to the PCI device folder, which holds the capture's ``device/`` files;
- a KFD topology node for the GPU (``class/kfd/kfd/topology/nodes/1/{properties,gpu_id,name}``), whose
  ``domain`` and ``location_id`` come from the capture's ``PCI_SLOT_NAME``: the library keeps only
  cards with a matching node. Where the capture has its own KFD topology (the APUs), that is used;
- ``module/amdgpu/initstate`` (``live``), which the ``rocm-smi`` tool reads before it loads the library.

Text files lose the capture tool's NUL padding on the way (``_copy_unpadded``); values are unchanged.

The PCI address is the capture's own (``device/uevent``); a capture without one (the RX 6900 XT) gets
``FALLBACK_SLOT``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from rocmtui.gpu import rsmi_lib

FALLBACK_SLOT = "0000:03:00.0"
UNSHARE = ("unshare", "-m", "--propagation", "private")
"""A private mount namespace: what is mounted in it is seen by its processes only."""
OVER_SYS = 'mount --bind "$1" /sys && mount -t tmpfs rsmi-shm /dev/shm && shift && exec "$@"'
"""``sh -c OVER_SYS sh TREE COMMAND...``: TREE over /sys, and an empty /dev/shm (where the library keeps
a mutex per card, which a process it aborted leaves held), then COMMAND."""
KFD_GPU_NODE = 1
"""Node 0 is the CPU on a real machine; the harness adds only the GPU's node."""
BINARY_FILES = frozenset({"gpu_metrics", "pp_table", "config", "rom", "hdcp_srm"})
UNKNOWN_PROPERTIES = {"hive_id": 0, "simd_arrays_per_engine": 0, "array_count": 0, "cu_per_simd_array": 0}
"""Keys ``KFDNode::Initialize`` refuses to start without. The captures do not say them: 0 (no XGMI hive,
and a compute-unit count the library then reports as 0, which nothing here compares)."""


@dataclass(frozen=True)
class LaidOut:
    """A capture laid out under ``root`` (bind-mounted over /sys for the library)."""

    root: Path
    slot: str
    """The PCI address the card was given: the capture's, or FALLBACK_SLOT."""
    card: Path
    """``root/class/drm/card0``."""
    kfd_from_capture: bool


def namespace_unavailable_reason() -> str | None:
    """Why the harness cannot run here, or None."""
    if sys.platform != "linux" or os.geteuid() != 0:
        return "needs root on Linux to make a private mount namespace (unshare -m); CI runs as root"
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return "needs unshare and mount (util-linux)"
    try:
        rsmi_lib.load_library()
    except rsmi_lib.RsmiUnavailable as err:
        return f"{err}: apt-get install rocm-smi"
    probe = subprocess.run([*UNSHARE, "true"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        return f"cannot make a mount namespace here: {probe.stderr.strip() or probe.returncode}"
    return None


def captured_card(capture: Path) -> Path:
    """The capture's one ``class/drm/cardN`` folder."""
    (card,) = (p for p in (capture / "class" / "drm").iterdir() if p.name.startswith("card"))
    return card


def pci_slot(device: Path) -> str | None:
    """``PCI_SLOT_NAME`` from the captured ``device/uevent``."""
    try:
        text = (device / "uevent").read_text(errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key == "PCI_SLOT_NAME" and value.strip():
            return value.strip().lower()
    return None


def location_id(slot: str) -> tuple[int, int]:
    """(domain, location_id) of ``0000:03:00.0`` as the KFD topology writes them (bus << 8 | dev << 3 | fn)."""
    domain, bus, rest = slot.split(":")
    dev, fn = rest.split(".")
    return int(domain, 16), int(bus, 16) << 8 | int(dev, 16) << 3 | int(fn, 16)


def lay_out(capture: Path, root: Path) -> LaidOut:
    """Copy ``capture`` into ``root`` with the structure the library needs; returns where it went."""
    source_card = captured_card(capture)
    slot = pci_slot(source_card / "device") or FALLBACK_SLOT
    pci_device = root / "devices" / "pci0000:00" / slot
    shutil.copytree(source_card / "device", pci_device, copy_function=_copy_unpadded)
    drm_card = pci_device / "drm" / "card0"
    drm_card.mkdir(parents=True)
    for entry in source_card.iterdir():  # dev, uevent: the card's own files beside its device link
        if entry.is_file():
            _copy_unpadded(entry, drm_card / entry.name)
    os.symlink("../../../" + slot, drm_card / "device")
    (root / "class" / "drm").mkdir(parents=True)
    card = root / "class" / "drm" / "card0"
    os.symlink(f"../../devices/pci0000:00/{slot}/drm/card0", card)
    kfd_from_capture = (capture / "class" / "kfd").is_dir()
    if kfd_from_capture:
        shutil.copytree(capture / "class" / "kfd", root / "class" / "kfd")
    else:
        _kfd_node(root / "class" / "kfd" / "kfd" / "topology" / "nodes" / str(KFD_GPU_NODE), slot)
    module = root / "module" / "amdgpu"
    module.mkdir(parents=True)
    (module / "initstate").write_text("live\n")
    return LaidOut(root, slot, card, kfd_from_capture)


def _copy_unpadded(source: str | Path, target: str | Path) -> None:
    """Copy a file; a text file without its trailing NUL padding (a capture artefact: a live sysfs read
    returns none, and the library takes ``edge\\n\\0\\0...`` for a label it does not know and fails to
    start). Binary files (``gpu_metrics``, ``pp_table``) are copied as they are."""
    data = Path(source).read_bytes()
    text = data.rstrip(b"\0")
    if b"\0" not in text and text.isascii() and Path(source).name not in BINARY_FILES:
        data = text
    Path(target).write_bytes(data)


def _kfd_node(node: Path, slot: str) -> None:
    """What the library requires of a KFD GPU node: ``properties`` (``domain`` and ``location_id`` from the
    PCI address, and the keys it insists on), a non-zero ``gpu_id``, ``name`` and an ``io_links`` folder."""
    node.mkdir(parents=True)
    domain, location = location_id(slot)
    properties = {"domain": domain, "location_id": location, **UNKNOWN_PROPERTIES}
    (node / "properties").write_text("".join(f"{key} {value}\n" for key, value in properties.items()))
    (node / "io_links").mkdir()
    (node / "gpu_id").write_text(f"{location + 1}\n")
    (node / "name").write_text("amdgpu\n")
