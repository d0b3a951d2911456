"""Which AMD SMI libraries this machine has, and whether AMD's own library agrees with rocmtui's sysfs readings.

AMD's ROCm SMI library is read in a child process (``python -m rocmtui.gpu.rsmi_lib``): on some cards
(RDNA4's ``S:`` deep-sleep DPM level, ROCm/rocm_smi_lib#182) it aborts the process that loaded it. The child's
readings are matched to the sysfs backend's cards by PCI address and compared field by field
(``rocmtui.gpu.rsmi_compare``; the clocks are not, as they come from different files).
"""

from __future__ import annotations

import ctypes.util
import signal
import subprocess
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from rocmtui.codec import CodecError, decode_json
from rocmtui.config import MonitorConfig
from rocmtui.doctor.checks import INFO, PASS, WARN, Check, Machine
from rocmtui.gpu import rsmi_compare, sysfs
from rocmtui.gpu.backend import BackendUnavailable
from rocmtui.gpu.rsmi_lib import NO_CLOCKS, RsmiReading
from rocmtui.gpu.sample import GpuSample

READ_TIMEOUT_S = 20.0
LIBRARY_SYS_ROOT = Path("/sys")
ABORT_HINT = "a known bug of ROCm SMI with some cards' pp_dpm files (ROCm/rocm_smi_lib#182); rocmtui reads sysfs"
RsmiRunner = Callable[[bool], dict[str, Any]]
"""Runs the library (reading the clocks or not) and returns its answer: ``run_rsmi_child``."""


def run_rsmi_child(clocks: bool = True) -> dict[str, Any]:
    """The child's JSON answer; ``{"crash": ...}`` when it died by a signal, ``{"error": ...}`` otherwise."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "rocmtui.gpu.rsmi_lib", *([] if clocks else [NO_CLOCKS])],
            capture_output=True,
            text=True,
            timeout=READ_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        return {"error": f"could not run the library: {type(err).__name__}"}
    answer: dict[str, Any] = {}
    for line in done.stdout.splitlines():  # the library prints its own messages on stdout too
        if line.startswith("{"):
            try:
                answer.update(decode_json(line, dict[str, Any]))
            except CodecError:
                continue
    if done.returncode < 0:
        answer["crash"] = signal.Signals(-done.returncode).name
    elif "devices" not in answer and "error" not in answer:
        answer["error"] = f"no answer from the library (exit {done.returncode})"
    return answer


def _package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _amd_smi_path(m: Machine) -> str | None:
    for root in m.rocm_roots:
        for lib in ("lib", "lib64"):
            if (root / lib / "libamd_smi.so").is_file():
                return str(root / lib / "libamd_smi.so")
    return ctypes.util.find_library("amd_smi")


def check_libraries(m: Machine, answer: dict[str, Any]) -> Check:
    """One line naming each AMD library found: ROCm SMI (with its version), AMD SMI, pyrsmi, amdsmi."""
    found = []
    if "version" in answer:
        found.append(f"librocm_smi64 {answer['version']}")
    amd_smi = _amd_smi_path(m)
    if amd_smi:
        found.append(f"libamd_smi ({amd_smi})")
    for package in ("pyrsmi", "amdsmi"):
        version = _package_version(package)
        if version:
            found.append(f"{package} {version}")
    if not found:
        return Check("AMD libraries", INFO, "none found (rocmtui's sysfs backend needs none)")
    return Check("AMD libraries", INFO, ", ".join(found))


def _sysfs_samples(sys_root: Path) -> dict[str, GpuSample]:
    """The sysfs backend's cards by PCI address ({} when it finds none)."""
    try:
        backend = sysfs.open_backend(MonitorConfig(sysfs_root=sys_root))
    except BackendUnavailable:
        return {}
    try:
        samples = [backend.sample(i) for i in range(backend.device_count())]
    finally:
        backend.close()
    return {s.pci_bus_id: s for s in samples if s.pci_bus_id}


AGREEMENT = "AMD library vs sysfs"


def check_agreement(m: Machine, answer: dict[str, Any]) -> Check:
    """PASS when ROCm SMI and the sysfs backend agree on every GPU; WARN naming what differs, or why the
    library could not read the GPUs that sysfs sees."""
    samples = _sysfs_samples(m.sys_root)
    if "crash" in answer:
        crashed = f"librocm_smi64 aborted reading the clocks ({answer['crash']})"
        if not isinstance(answer.get("devices"), list):
            return Check(AGREEMENT, WARN if samples else INFO, crashed, ABORT_HINT)
        without_clocks = check_agreement(m, {k: v for k, v in answer.items() if k != "crash"})
        return Check(AGREEMENT, WARN, f"{crashed}; without them: {without_clocks.detail}", ABORT_HINT)
    if "version" not in answer:
        return Check(AGREEMENT, INFO, f"not compared: {answer.get('error', 'librocm_smi64 is not installed')}")
    devices = answer.get("devices")
    if not isinstance(devices, list):
        detail = f"not compared: {answer.get('error', 'no devices')}"
        fix = "rocmtui reads sysfs without it" if samples else None
        return Check(AGREEMENT, WARN if samples else INFO, detail, fix)
    if not devices and not samples:
        return Check(AGREEMENT, INFO, "no AMD GPU here to compare")
    return _compare(devices, samples)


def _compare(devices: list[dict[str, Any]], samples: dict[str, GpuSample]) -> Check:
    """The library's devices against the sysfs cards of the same PCI address."""
    differences, compared = [], 0
    for device in devices:
        reading = RsmiReading(**device)
        sample = samples.get(reading.pci_bus_id or "")
        if sample is None:
            differences.append(f"{reading.pci_bus_id}: not seen by sysfs")
            continue
        pairs = rsmi_compare.compare(sample, reading)
        compared += len(pairs) - len(rsmi_compare.CLOCK_FIELDS)
        differences += [f"{reading.pci_bus_id} {p.describe()}" for p in rsmi_compare.disagreements(pairs)]
    if differences or len(devices) != len(samples):
        shown = "; ".join(differences) or f"the library sees {len(devices)} GPU(s), sysfs {len(samples)}"
        return Check(AGREEMENT, WARN, shown, "report it with the two readings: one of the readers is wrong")
    return Check(AGREEMENT, PASS, f"agree on {compared} readings of {len(devices)} GPU(s) (clocks not compared)")


def amd_library_checks(m: Machine, runner: RsmiRunner | None = None) -> list[Check]:
    """The two checks, from one run of the library (not run for a machine described under another root:
    the library reads only /sys)."""
    if runner is None and m.sys_root != LIBRARY_SYS_ROOT:
        answer: dict[str, Any] = {"error": f"the library reads {LIBRARY_SYS_ROOT}, not {m.sys_root}"}
    else:
        run = runner or run_rsmi_child
        answer = run(True)
        if "crash" in answer:  # the clocks are where it aborts (ROCm/rocm_smi_lib#182): the rest without them
            answer = {**run(False), "crash": answer["crash"]}
    return [check_libraries(m, answer), check_agreement(m, answer)]
