"""``rocmtui doctor``'s AMD library checks, end to end: AMD's ROCm SMI library (REAL, Debian's librocm_smi64)
reading REAL card captures laid over /sys in a private mount namespace, against the sysfs backend.

Root only (``unshare -m``); skipped elsewhere with the reason.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fakes.amd_sysfs_layout import OVER_SYS, UNSHARE, lay_out, namespace_unavailable_reason

from rocmtui.doctor.amd_libs import amd_library_checks, check_agreement, check_libraries
from rocmtui.doctor.checks import INFO, PASS, WARN, Machine

CAPTURES = Path(__file__).parent.parent / "data" / "amd"
DOCTOR = (
    "import json; from rocmtui.doctor.amd_libs import amd_library_checks; from rocmtui.doctor.checks import Machine; "
    "print(json.dumps([c.__dict__ for c in amd_library_checks(Machine())]))"
)


def _doctor_over(card: str, tmp_path: Path) -> list[dict[str, str]]:
    """The two checks as doctor makes them on a machine whose /sys is the captured card's."""
    reason = namespace_unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    tree = lay_out(CAPTURES / card, tmp_path / card).root
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [*UNSHARE, "sh", "-c", OVER_SYS, "sh", str(tree), sys.executable, "-c", DOCTOR],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    checks: list[dict[str, str]] = json.loads(done.stdout.splitlines()[-1])
    return checks


def test_doctor_finds_the_library_and_its_agreement_with_sysfs(tmp_path: Path) -> None:
    libraries, agreement = _doctor_over("rx580", tmp_path)
    assert libraries["name"] == "AMD libraries"
    assert "librocm_smi64 " in libraries["detail"]
    assert (agreement["status"], agreement["name"]) == (PASS, "AMD library vs sysfs")
    assert agreement["detail"].startswith("agree on 13 readings of 1 GPU(s)")


def test_doctor_survives_the_library_aborting_on_an_rdna4_card(tmp_path: Path) -> None:
    _, agreement = _doctor_over("rx9070", tmp_path)
    assert agreement["status"] == WARN
    assert agreement["detail"].startswith(
        "librocm_smi64 aborted reading the clocks (SIGABRT); without them: agree on 13"
    )
    assert "rocm_smi_lib#182" in (agreement["fix"] or "")


def test_doctor_warns_when_the_library_cannot_start_where_sysfs_sees_a_card(tmp_path: Path) -> None:
    _, agreement = _doctor_over("r7-240", tmp_path)
    assert agreement["status"] == WARN
    assert "rsmi_init failed" in agreement["detail"]


def test_a_disagreement_is_named_with_both_values(tmp_path: Path) -> None:
    """A reading that differs from the tree (here the library's busy figure edited by hand) is shown as such."""
    reason = namespace_unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    tree = lay_out(CAPTURES / "rx580", tmp_path / "rx580").root
    done = subprocess.run(
        [*UNSHARE, "sh", "-c", OVER_SYS, "sh", str(tree), sys.executable, "-m", "rocmtui.gpu.rsmi_lib"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
        check=True,
    )
    answer: dict[str, Any] = {}
    for line in done.stdout.splitlines():  # the version line, then the readings
        answer.update(json.loads(line))
    answer["devices"][0]["busy_pct"] += 40
    check = check_agreement(Machine(sys_root=tree), answer)
    assert check.status == WARN
    assert "utilization_pct: rocmtui 11, library 51" in check.detail


def test_a_machine_described_under_another_root_does_not_run_the_library(tmp_path: Path) -> None:
    libraries, agreement = amd_library_checks(Machine(sys_root=tmp_path, rocm_roots=(tmp_path,)))
    assert agreement.status == INFO
    assert "reads /sys" in agreement.detail
    assert libraries == check_libraries(Machine(sys_root=tmp_path, rocm_roots=(tmp_path,)), {})
