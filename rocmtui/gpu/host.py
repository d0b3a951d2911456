"""The host: CPU and RAM through psutil, the CPU's name, and who runs a given PID."""

from __future__ import annotations

import platform
import time
from pathlib import Path

import psutil

from rocmtui.gpu.sample import GpuProcess, HostSample

MIN_CPU_WINDOW_S = 0.05
"""CPU % over a shorter window than this is reported as None."""
_COMMAND_MAX = 200
"""Characters of a command line kept for the process table."""


class HostReader:
    """Reads HostSamples. CPU % is measured between calls, so the first call primes it here."""

    def __init__(self, cpuinfo: Path = Path("/proc/cpuinfo")) -> None:
        psutil.cpu_percent(interval=None)  # primes the counter: the next call measures since now
        self._cpu_since = time.monotonic()
        self._cpu_name = read_cpu_name(cpuinfo)
        self._cpu_count = psutil.cpu_count(logical=True)

    @property
    def cpu_window_s(self) -> float:
        """Seconds since CPU % was last measured (or primed)."""
        return time.monotonic() - self._cpu_since

    def sample(self) -> HostSample:
        """CPU % since the previous call (non-blocking) and RAM now."""
        try:
            cpu: float | None = psutil.cpu_percent(interval=None)
        except (OSError, psutil.Error):
            cpu = None  # /proc/stat unreadable (sandbox): the panel shows N/A for CPU
        now = time.monotonic()
        if now - self._cpu_since < MIN_CPU_WINDOW_S:
            cpu = None  # too short a window to mean anything (psutil says 0.0): N/A, not a made-up 0%
        self._cpu_since = now
        used = total = None
        try:
            memory = psutil.virtual_memory()
            used, total = int(memory.total - memory.available), int(memory.total)
        except (OSError, psutil.Error):
            pass  # /proc/meminfo unreadable: RAM shows N/A
        return HostSample(
            timestamp=time.time(),
            cpu_pct=cpu,
            cpu_count=self._cpu_count,
            ram_used_bytes=used,
            ram_total_bytes=total,
            cpu_name=self._cpu_name,
        )


def read_cpu_name(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    """The CPU model from ``/proc/cpuinfo`` ("model name", or "Hardware"/"Model" on ARM), else platform's."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    for key in ("model name", "Hardware", "Model"):
        for line in text.splitlines():
            name, sep, value = line.partition(":")
            if sep and name.strip() == key and value.strip():
                return " ".join(value.split())
    return platform.processor() or None


def process_user(pid: int) -> str | None:
    """The user running ``pid``; None when the process is gone or hidden."""
    try:
        return str(psutil.Process(pid).username())
    except (psutil.Error, OSError, KeyError):
        return None  # KeyError: a uid with no passwd entry (containers)


def process_command(pid: int) -> str | None:
    """The command line of ``pid`` (shortened), or its name when the arguments are hidden."""
    try:
        proc = psutil.Process(pid)
        words = proc.cmdline() or [proc.name()]
    except (psutil.Error, OSError):
        return None
    return one_command(words)


def one_command(words: list[str]) -> str:
    """A command line's words on one line (arguments may hold newlines: python -c "..."), shortened."""
    command = " ".join(" ".join(words).split())
    return command if len(command) <= _COMMAND_MAX else command[: _COMMAND_MAX - 3] + "..."


def describe_process(gpu_index: int, pid: int, gpu_memory_bytes: int | None) -> GpuProcess:
    """A GpuProcess with the user and command filled in from psutil where it can."""
    return GpuProcess(
        gpu_index=gpu_index,
        pid=pid,
        user=process_user(pid),
        gpu_memory_bytes=gpu_memory_bytes,
        command=process_command(pid),
    )
