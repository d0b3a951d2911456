"""Doctor's line for the HIP device index -> DRM card mapping (``rocmtui.gpu.hip_order``)."""

from __future__ import annotations

from rocmtui.doctor.checks import INFO, WARN, Check, Machine
from rocmtui.gpu.hip_order import hip_devices


def check_hip_devices(m: Machine) -> Check | None:
    """Which card each HIP index (torch's ``cuda:N``) is, as rocm-smi and rocmtui number GPUs by DRM card;
    None where the KFD topology lists no GPU."""
    devices, unknown = hip_devices(m.sys_root, m.environ)
    if not devices and not unknown:
        return None
    shown = ", ".join(f"HIP {d.hip_index} = {d.card or 'no DRM card'} ({d.gpu.pci_bus_id})" for d in devices)
    if unknown:
        detail = f"ROCR_VISIBLE_DEVICES names no GPU for {', '.join(unknown)}; {shown or 'no GPU is left'}"
        return Check("HIP devices", WARN, detail, "use indexes 0..N-1 of the KFD GPUs, or GPU-<unique_id>")
    return Check("HIP devices", INFO, shown)
