"""The throttle reasons in amdgpu's binary ``gpu_metrics`` file, for the table versions whose layout is simple.

The file starts with a header (``structure_size`` u16, ``format_revision`` u8, ``content_revision`` u8) and
each version has its own C layout (``kgd_pp_interface.h``). Only two carry the ASIC-independent
``indep_throttle_status`` (u64) at a fixed place: v1.3 (RDNA2/RDNA3 dGPUs; its last field, offset 112)
and v2.2 (APUs; its last field, offset 120). Other versions (v1.0 to v1.2, v2.1 as on Phoenix, v1.4/v1.5
of MI300, v3.0 of Strix Point) give None: the reasons there are ASIC-dependent bits or in another layout.
The struct is parsed by ``structure_size``, not by the file's length (a capture can be padded to 4096).
"""

from __future__ import annotations

import struct
from pathlib import Path

from rocmtui.gpu import throttle

NOT_AVAILABLE = 0xFFFFFFFFFFFFFFFF
"""What the firmware writes in a u64 it does not fill."""
INDEP_OFFSET = {(1, 3): 112, (2, 2): 120}
"""(format, content revision) -> offset of ``indep_throttle_status``."""


def indep_throttle_status(data: bytes) -> int | None:
    """The ASIC-independent throttle mask of one ``gpu_metrics`` read; None when this version has none."""
    if len(data) < 4:
        return None
    size, fmt, content = struct.unpack_from("<HBB", data, 0)
    offset = INDEP_OFFSET.get((fmt, content))
    if offset is None or size < offset + 8 or len(data) < offset + 8:
        return None
    (mask,) = struct.unpack_from("<Q", data, offset)
    return None if mask == NOT_AVAILABLE else int(mask)


def read_throttle_reasons(device: Path) -> tuple[str, ...] | None:
    """Reasons from ``device/gpu_metrics``; None when the file is missing, unreadable or of another version."""
    try:
        data = (device / "gpu_metrics").read_bytes()
    except OSError:
        return None
    mask = indep_throttle_status(data)
    return None if mask is None else throttle.from_amd_indep(mask)
