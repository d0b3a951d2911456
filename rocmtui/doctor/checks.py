"""The system checks of ``rocmtui doctor``: driver, device nodes, kernel, ROCm, visible devices, gfx target.

Every check reads through a ``Machine`` (paths, environment, kernel release) so tests point it
at a tmp tree. AMD-specific checks are informative (INFO), not failures, on a machine with
no AMD GPU: an NVIDIA box or a CPU laptop passes doctor.
"""

from __future__ import annotations

import os
import platform
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from rocmtui.gpu.amdgpu_files import AMD_VENDOR_ID, read_text

PASS, WARN, FAIL, INFO = "PASS", "WARN", "FAIL", "INFO"
NVIDIA_VENDOR_ID = "0x10de"
VISIBLE_DEVICE_VARS = ("HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES")
SUPPORTED_GFX = frozenset(
    {"gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx950", "gfx1030", "gfx1100", "gfx1101", "gfx1200", "gfx1201"}
)
"""GPU targets on ROCm 6.x's official support lists (Instinct and Radeon); others may need an override."""
_OVERRIDES = {(10, 3): "10.3.0", (11, 0): "11.0.0", (12, 0): "12.0.0"}
"""Family -> the supported sibling whose code runs on the whole family."""
GROUP_FIX = "add yourself to the render and video groups: sudo usermod -aG render,video $USER, then log in again"


@dataclass(frozen=True)
class Check:
    """One line of doctor's report."""

    name: str
    status: str
    detail: str
    fix: str | None = None


def default_rocm_roots(environ: Mapping[str, str], opt: Path = Path("/opt")) -> tuple[Path, ...]:
    """Where ROCm may be: $ROCM_PATH, /opt/rocm, then versioned /opt/rocm-X.Y.Z (newest first)."""
    roots = [Path(environ["ROCM_PATH"])] if environ.get("ROCM_PATH") else []
    roots.append(opt / "rocm")
    roots.extend(sorted(opt.glob("rocm-*"), reverse=True))
    return tuple(roots)


@dataclass(frozen=True)
class Machine:
    """Where the checks look. The defaults are this machine."""

    sys_root: Path = Path("/sys")
    dev_root: Path = Path("/dev")
    proc_root: Path = Path("/proc")
    rocm_roots: tuple[Path, ...] = field(default_factory=lambda: default_rocm_roots(os.environ))
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    kernel_release: str = field(default_factory=platform.release)

    def display_devices(self, vendor: str) -> list[str]:
        """PCI addresses of ``vendor``'s display devices (class 0x03xxxx), driver loaded or not."""
        found = []
        for device in sorted((self.sys_root / "bus" / "pci" / "devices").glob("*")):
            pci_class = read_text(device / "class") or ""
            if read_text(device / "vendor") == vendor and pci_class.startswith("0x03"):
                found.append(device.name)
        return found

    def amd_gpus(self) -> list[str]:
        return self.display_devices(AMD_VENDOR_ID)

    def has_gpu_for(self, hip: bool) -> bool:
        """An AMD (``hip``) or NVIDIA GPU is here: on the PCI bus, or its device node exists (containers)."""
        if hip:
            return bool(self.amd_gpus()) or (self.dev_root / "kfd").exists()
        return bool(self.display_devices(NVIDIA_VENDOR_ID)) or (self.dev_root / "nvidia0").exists()

    def amdgpu_live(self) -> bool:
        return read_text(self.sys_root / "module" / "amdgpu" / "initstate") == "live"

    def kernel_cmdline(self) -> str | None:
        """The kernel's boot arguments (``/proc/cmdline``), or None when unreadable."""
        return read_text(self.proc_root / "cmdline")

    def cpu_vendor(self) -> str | None:
        """``vendor_id`` of the first CPU in ``/proc/cpuinfo`` (AuthenticAMD, GenuineIntel), or None."""
        for line in (read_text(self.proc_root / "cpuinfo") or "").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "vendor_id":
                return value.strip()
        return None


def check_driver(m: Machine) -> Check:
    gpus = m.amd_gpus()
    if m.amdgpu_live():
        return Check("amdgpu driver", PASS, f"loaded (/sys/module/amdgpu/initstate is live); {len(gpus)} AMD GPU(s)")
    if gpus:
        return Check(
            "amdgpu driver",
            FAIL,
            f"AMD GPU at {', '.join(gpus)} but the amdgpu driver is not loaded",
            "sudo modprobe amdgpu (and check `dmesg | grep amdgpu`); install amdgpu-dkms if the module is missing",
        )
    return Check("amdgpu driver", INFO, "no AMD GPU driver loaded and no AMD GPU found (fine on NVIDIA or CPU)")


def check_device_nodes(m: Machine) -> list[Check]:
    """/dev/kfd and /dev/dri/renderD* must open read-write for ROCm (the render and video groups)."""
    if not m.amdgpu_live():
        return [Check("/dev/kfd, /dev/dri", INFO, "not checked: amdgpu is not loaded")]
    nodes = [m.dev_root / "kfd", *sorted((m.dev_root / "dri").glob("renderD*"))]
    if len(nodes) == 1:
        nodes.append(m.dev_root / "dri" / "renderD*")
    return [_open_check(node) for node in nodes]


def _open_check(node: Path) -> Check:
    try:
        fd = os.open(node, os.O_RDWR)
    except FileNotFoundError:
        return Check(str(node), FAIL, "missing", "load amdgpu with KFD support (ROCm's amdgpu-dkms) and reboot")
    except PermissionError:
        return Check(str(node), FAIL, "permission denied", GROUP_FIX)
    except OSError as err:
        return Check(str(node), FAIL, f"cannot open: {err.strerror or err}", GROUP_FIX)
    os.close(fd)
    return Check(str(node), PASS, "opens read-write")


def check_kernel(m: Machine) -> Check:
    match = re.match(r"(\d+)\.(\d+)", m.kernel_release)
    if match is None:
        return Check("kernel", WARN, f"cannot parse kernel release {m.kernel_release!r}")
    version = (int(match.group(1)), int(match.group(2)))
    if version >= (5, 15):
        return Check("kernel", PASS, m.kernel_release)
    status = WARN if m.amd_gpus() else INFO
    return Check("kernel", status, f"{m.kernel_release}: ROCm 6.x wants 5.15 or newer", "upgrade the kernel")


def check_rocm_version(m: Machine) -> Check:
    for root in m.rocm_roots:
        version = read_text(root / ".info" / "version")
        if version:
            major = int(version.split(".")[0]) if version.split(".")[0].isdigit() else 0
            if major < 6:
                return Check("ROCm", WARN, f"{version} at {root}: pyrsmi telemetry needs 6.0+", "install ROCm 6.x")
            return Check("ROCm", PASS, f"{version} at {root}")
    if m.amd_gpus():
        return Check(
            "ROCm",
            WARN,
            "no ROCm install found (/opt/rocm/.info/version)",
            "install ROCm 6.x for the rocm backend; the sysfs backend and torch wheels work without it",
        )
    return Check("ROCm", INFO, "not installed (not needed without an AMD GPU)")


def check_visible_devices(m: Machine) -> Check:
    set_vars = {name: m.environ[name] for name in VISIBLE_DEVICE_VARS if name in m.environ}
    shown = ", ".join(f"{k}={v!r}" for k, v in set_vars.items())
    if any(v.strip() == "" for v in set_vars.values()):
        return Check("visible devices", WARN, f"{shown}: empty, which hides every GPU", "unset it to see all GPUs")
    hip_var = next((n for n in ("HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES") if n in set_vars), None)
    if "ROCR_VISIBLE_DEVICES" in set_vars and hip_var is not None:
        detail = compose_visible(set_vars["ROCR_VISIBLE_DEVICES"], hip_var, set_vars[hip_var])
        return Check("visible devices", WARN, detail, VISIBLE_FIX)
    if len(set_vars) > 1:
        return Check(
            "visible devices",
            WARN,
            f"{shown}: on ROCm both select GPUs for HIP (torch takes HIP_VISIBLE_DEVICES); NVIDIA reads only CUDA_",
            VISIBLE_FIX,
        )
    return Check("visible devices", PASS, shown or "none set: every GPU is visible")


VISIBLE_FIX = "set one: ROCR_VISIBLE_DEVICES on ROCm (AMD's advice on Linux), CUDA_VISIBLE_DEVICES on NVIDIA"


def compose_visible(rocr: str, hip_var: str, hip: str) -> str:
    """How the two masks compose: ROCR_VISIBLE_DEVICES applies first (the ROCm runtime), then HIP's list
    indexes into the GPUs it left, renumbered from 0."""
    kept = [item.strip() for item in rocr.split(",")]
    head = f"ROCR_VISIBLE_DEVICES={rocr!r} applies first and leaves {len(kept)} GPU(s), renumbered 0-{len(kept) - 1}"
    picks = [item.strip() for item in hip.split(",")]
    if not all(p.isdigit() for p in picks):
        return f"{head}; {hip_var}={hip!r} then selects among those, not among the machine's GPUs"
    beyond = [p for p in picks if int(p) >= len(kept)]
    if beyond:
        return f"{head}; {hip_var}={hip!r} indexes into those, and {', '.join(beyond)} is past them: no such GPU"
    chosen = ", ".join(kept[int(p)] for p in picks)
    return f"{head}; {hip_var}={hip!r} indexes into those: the machine's GPU(s) {chosen}"


def gfx_targets(m: Machine) -> list[str]:
    """``gfxNNNN`` of each GPU from the KFD topology (``gfx_target_version`` 100302 -> gfx1032)."""
    targets = []
    for props in sorted((m.sys_root / "class" / "kfd" / "kfd" / "topology" / "nodes").glob("*/properties")):
        for line in (read_text(props) or "").splitlines():
            key, _, value = line.partition(" ")
            if key == "gfx_target_version" and value.strip().isdigit() and int(value) > 0:
                n = int(value)
                targets.append(f"gfx{n // 10000}{(n // 100) % 100:x}{n % 100:x}")
    return targets


def check_gfx_override(m: Machine, targets: list[str]) -> Check:
    override = m.environ.get("HSA_OVERRIDE_GFX_VERSION")
    if override is not None:
        return Check("gfx target", INFO, f"HSA_OVERRIDE_GFX_VERSION={override} is set ({', '.join(targets) or '?'})")
    if not targets:
        return Check("gfx target", INFO, "no AMD GPU target found (KFD topology)")
    unsupported = [t for t in targets if t not in SUPPORTED_GFX]
    if not unsupported:
        return Check("gfx target", PASS, f"{', '.join(targets)} (on ROCm's support list)")
    hint = _override_for(unsupported[0])
    fix = f"try HSA_OVERRIDE_GFX_VERSION={hint} (unofficial: runs the nearest supported target's code)"
    detail = f"{', '.join(unsupported)} is not on ROCm's official support list"
    return Check("gfx target", WARN, detail, fix if hint else None)


def _override_for(target: str) -> str | None:
    match = re.fullmatch(r"gfx(\d+)([0-9a-f])([0-9a-f])", target)
    if match is None:
        return None
    return _OVERRIDES.get((int(match.group(1)), int(match.group(2), 16)))


def system_checks(m: Machine, targets: list[str]) -> list[Check]:
    """Every check in this module, in report order; ``targets`` are the GPUs' gfx names."""
    return [
        check_driver(m),
        *check_device_nodes(m),
        check_kernel(m),
        check_rocm_version(m),
        check_visible_devices(m),
        check_gfx_override(m, targets),
    ]
