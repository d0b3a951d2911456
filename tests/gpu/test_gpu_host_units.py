"""Host readings, process helpers, human units, and the pyrsmi log filter."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rocmtui.base import units
from rocmtui.gpu import host
from rocmtui.gpu.backend import UNKNOWN_GPU
from rocmtui.gpu.rocm import drop_pyrsmi_records


def test_host_sample_has_ram_and_a_cpu_count() -> None:
    reader = host.HostReader()
    first = reader.sample()  # right after priming: too short a window
    assert first.cpu_pct is None
    assert first.ram_total_bytes is not None and 0 < (first.ram_used_bytes or 0) <= first.ram_total_bytes
    assert first.cpu_count == os.cpu_count()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("processor\t: 0\nmodel name\t: AMD EPYC   7B13 64-Core Processor\n", "AMD EPYC 7B13 64-Core Processor"),
        ("processor\t: 0\nHardware\t: BCM2835\nModel\t: Raspberry Pi 4\n", "BCM2835"),
    ],
)
def test_cpu_name_from_cpuinfo(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "cpuinfo"
    path.write_text(text)
    assert host.read_cpu_name(path) == expected


def test_cpu_name_without_cpuinfo_does_not_raise(tmp_path: Path) -> None:
    name = host.read_cpu_name(tmp_path / "missing")
    assert name is None or isinstance(name, str)


_WAITING_CHILD = "import sys; print('ready', flush=True); sys.stdin.read()"


def _start_child(*extra: str) -> subprocess.Popen[bytes]:
    """A child that has exec'd (so its command line is its own) and waits for stdin to close."""
    child = subprocess.Popen(
        [sys.executable, "-c", _WAITING_CHILD, *extra], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert child.stdout is not None and child.stdout.readline() == b"ready\n"
    return child


def test_process_helpers_for_a_live_and_a_vanished_process() -> None:
    child = _start_child()
    try:
        proc = host.describe_process(3, child.pid, 2**30)
        assert proc.command is not None and "sys.stdin.read()" in proc.command
        assert proc.user is not None
        assert (proc.gpu_index, proc.gpu_memory_bytes) == (3, 2**30)
    finally:
        child.communicate(b"")
    gone = host.describe_process(0, child.pid, None)
    assert gone.user is None and gone.command is None


def test_long_command_lines_are_shortened() -> None:
    child = _start_child("x" * 500)
    try:
        command = host.process_command(child.pid)
    finally:
        child.communicate(b"")
    assert command is not None and len(command) == 200 and command.endswith("...")


def test_command_lines_with_newlines_fit_on_one_line() -> None:
    child = _start_child("first line\n    second\tline")
    try:
        command = host.process_command(child.pid)
    finally:
        child.communicate(b"")
    assert command is not None and "\n" not in command
    assert command.endswith("first line second line")


def test_processes_of_an_unknown_gpu_show_a_question_mark() -> None:
    assert (units.fmt_gpu_index(UNKNOWN_GPU), units.fmt_gpu_index(2)) == ("?", "2")


@pytest.mark.parametrize(
    ("value", "text"),
    [(None, "N/A"), (512, "512 B"), (1536, "1.5 KiB"), (3 * 2**30, "3.0 GiB"), (2**50, "1024.0 TiB")],
)
def test_fmt_bytes(value, text) -> None:
    assert units.fmt_bytes(value) == text


def test_other_formats() -> None:
    assert units.fmt_used_total(2**30, None) == "1.0 GiB / N/A"
    assert units.fmt_used_total(None, 16 * 2**30) == "N/A / 16.0 GiB"
    assert units.fmt_used_total(None, None) == "N/A"
    assert units.fmt_used_total(3 * 2**30, 16 * 2**30) == "3.0 / 16.0 GiB"
    assert units.fmt_used_total(300 * 2**20, 512 * 2**20, sep="/") == "300.0/512.0 MiB"  # the total's unit
    assert units.fmt_temp(64.6) == "65°C"
    assert units.fmt_pct(87.4) == "87%"
    assert units.fmt_pct(None) == "N/A"
    assert units.fmt_power(215.2, 300.0) == "215 / 300 W"
    assert units.fmt_power(None, 300.0) == "N/A / 300 W"
    assert units.fmt_power(99.6, None) == "100 W"
    assert units.fmt_mhz(2100.4) == "2100 MHz"
    assert units.fmt_fan(1200.0, 35.0) == "35% 1200 RPM"
    assert units.fmt_fan(None, None) == "N/A"
    assert units.fmt_temps((("edge", 45.0), ("mem", 60.2))) == "edge 45°C, mem 60°C"
    assert units.fmt_temps(()) == "N/A"


def test_pyrsmi_log_records_are_dropped_and_others_kept() -> None:
    def record(path: str) -> logging.LogRecord:
        return logging.LogRecord("root", logging.ERROR, path, 1, "AMDSMI Error: not supported", None, None)

    pyrsmi_file = os.path.join(os.sep, "venv", "site-packages", "pyrsmi", "rocml.py")
    assert drop_pyrsmi_records(record(pyrsmi_file)) is False
    assert drop_pyrsmi_records(record(os.path.join(os.sep, "app", "mine.py"))) is True
