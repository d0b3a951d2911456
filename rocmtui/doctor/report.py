"""``rocmtui doctor``: PASS / WARN / FAIL (and INFO) checks for torch, GPUs, drivers and telemetry.

Exit 0 when nothing FAILs, 1 otherwise. torch is imported lazily, only here. The machine
(``doctor.checks.Machine``) and the torch reader are parameters so tests can describe any
machine.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from typing import TextIO

from rocmtui.base.text import plain
from rocmtui.codec import encode_json
from rocmtui.config import MonitorConfig
from rocmtui.doctor.amd_libs import amd_library_checks
from rocmtui.doctor.checks import FAIL, INFO, PASS, WARN, Check, Machine, gfx_targets, system_checks
from rocmtui.doctor.hip_map import check_hip_devices
from rocmtui.doctor.multigpu import multi_gpu_checks
from rocmtui.doctor.torch_info import TorchInfo, read_torch, torch_checks
from rocmtui.gpu.backend import release_quietly
from rocmtui.gpu.detect import AUTO_ORDER, probe


def telemetry_checks(config: MonitorConfig) -> list[Check]:
    """Each telemetry backend: PASS when it works, INFO with its reason when not; WARN if none works."""
    checks = []
    any_works = False
    for name in AUTO_ORDER:
        backend, status = probe(name, config)
        if backend is not None:
            any_works = True
            release_quietly(backend.close)
        checks.append(Check(f"telemetry: {name}", PASS if status.available else INFO, status.reason or ""))
    if not any_works:
        checks.append(
            Check(
                "telemetry",
                WARN,
                "no GPU telemetry backend works here: the GPU panel shows the host only",
                "fine on a CPU machine; otherwise see the reasons above",
            )
        )
    return checks


def collect(machine: Machine, torch_reader: Callable[[], TorchInfo] = read_torch) -> list[Check]:
    """Every check, in report order."""
    info = torch_reader()
    checks = torch_checks(info, machine.has_gpu_for(hip=bool(info.hip)))
    checks += telemetry_checks(MonitorConfig(sysfs_root=machine.sys_root))
    checks += amd_library_checks(machine)
    hip = check_hip_devices(machine)
    checks += [hip] if hip is not None else []
    targets = gfx_targets(machine) or list(info.gfx_targets)  # torch's view when KFD's is hidden (containers)
    checks += system_checks(machine, targets)
    checks += multi_gpu_checks(  # torch's own list: the GPUs a run would use, after the *_VISIBLE_DEVICES masks
        machine.environ, info.hip, info.gfx_targets, machine.kernel_cmdline(), machine.cpu_vendor()
    )
    return checks


def format_checks(checks: list[Check]) -> str:
    width = max(len(c.name) for c in checks)
    lines = ["rocmtui doctor"]
    for c in checks:  # GPU names, versions and library messages are outside text: shown, never sent raw
        lines.append(f"{c.status:<4}  {plain(c.name):<{width}}  {plain(c.detail, lines=True)}")
        if c.fix and c.status in (WARN, FAIL):
            lines.append(f"      {'':<{width}}  fix: {plain(c.fix, lines=True)}")
    failed = sum(c.status == FAIL for c in checks)
    warned = sum(c.status == WARN for c in checks)
    lines.append(f"{failed} failed, {warned} warnings" if failed or warned else "all checks passed")
    return "\n".join(lines) + "\n"


def run_doctor(
    as_json: bool,
    machine: Machine | None = None,
    torch_reader: Callable[[], TorchInfo] = read_torch,
    out: TextIO | None = None,
) -> int:
    """Run every check, print them (text or JSON); 0 when none FAILs, else 1."""
    checks = collect(machine or Machine(), torch_reader)
    ok = not any(c.status == FAIL for c in checks)
    stream = out or sys.stdout
    if as_json:
        stream.write(
            encode_json({"ok": ok, "checks": [dataclasses.asdict(c) for c in checks]}, indent=2).decode() + "\n"
        )
    else:
        stream.write(format_checks(checks))
    return 0 if ok else 1
