"""Per-process host readings for the process table: CPU %, resident memory, start time and owner (psutil);
and, where there is no GPU, the host's busiest processes in place of GPU processes.

CPU % needs two readings of the same process, so ``ProcessStats`` keeps one ``psutil.Process`` per PID
between samples (bounded: past ``KEEP`` entries, those whose process ended are dropped).
"""

from __future__ import annotations

import time
from dataclasses import replace

import psutil

from rocmtui.gpu.host import one_command
from rocmtui.gpu.sample import HOST_PROCESS_ROWS, NO_GPU, GpuProcess

KEEP = 256


class ProcessStats:
    """Adds cpu_pct, host_memory_bytes, started_at and uid to GpuProcesses."""

    def __init__(self) -> None:
        self._known: dict[int, psutil.Process] = {}

    def enrich(self, proc: GpuProcess) -> GpuProcess:
        """``proc`` with its host readings; unchanged when the process is gone or hidden."""
        if len(self._known) > KEEP:
            self._known = {pid: p for pid, p in self._known.items() if p.is_running()}
        try:
            handle = self._known.get(proc.pid)
            first = handle is None or not handle.is_running()  # a new PID, or one reused by another process
            if first:
                handle = self._known[proc.pid] = psutil.Process(proc.pid)
            assert handle is not None  # set above when missing
            with handle.oneshot():
                cpu = handle.cpu_percent(interval=None)
                return replace(
                    proc,
                    cpu_pct=None if first else cpu,
                    host_memory_bytes=int(handle.memory_info().rss),
                    started_at=float(handle.create_time()),
                    uid=int(handle.uids().real),
                )
        except (psutil.Error, OSError):
            self._known.pop(proc.pid, None)
            return proc


_SCAN_ATTRS = ["cpu_times"]
"""What is read of every process on each scan: its CPU times, one read of ``/proc/PID/stat``."""


class BusiestProcesses:
    """The host's busiest processes by CPU %, for the process table on a machine with no GPU.

    Each scan reads only the CPU times of every process (CPU % is their growth since the previous scan; the
    times themselves break ties, so that idle processes keep their order); RSS is read for the ``limit``
    busiest alone, and their owner, start time and command line once for as long as they stay among them.
    ``psutil.process_iter`` keeps one Process object per running process between calls, which tells a reused
    PID from the process it had before."""

    def __init__(self, limit: int = HOST_PROCESS_ROWS) -> None:
        self.limit = limit
        self._times: dict[int, tuple[psutil.Process, float]] = {}
        """Each process's CPU seconds at the previous scan."""
        self._scanned_at = 0.0
        self._described: dict[int, tuple[psutil.Process, GpuProcess]] = {}
        """The busiest of the previous scan, described (what does not change while a process lives)."""

    def read(self) -> tuple[GpuProcess, ...]:
        """The ``limit`` busiest processes now (CPU %, then CPU time); () when ``/proc`` cannot be read."""
        now = time.monotonic()
        window = now - self._scanned_at
        scanned: list[tuple[float | None, float, psutil.Process]] = []
        try:
            for process in psutil.process_iter(_SCAN_ATTRS, ad_value=None):
                times = process.info["cpu_times"]
                total = float(times.user + times.system) if times is not None else 0.0
                before = self._times.get(process.pid)
                measured = before is not None and before[0] is process and window > 0  # not new, nor a reused PID
                cpu = max(0.0, 100.0 * (total - before[1]) / window) if before is not None and measured else None
                scanned.append((cpu, total, process))
        except (psutil.Error, OSError):
            return ()
        self._times = {process.pid: (process, total) for _, total, process in scanned}
        self._scanned_at = now
        scanned.sort(key=lambda entry: (entry[0] or 0.0, entry[1]), reverse=True)
        top = scanned[: self.limit]
        self._described = {process.pid: (process, self._describe(process)) for _, _, process in top}
        return tuple(
            replace(self._described[process.pid][1], cpu_pct=cpu, host_memory_bytes=_rss(process))
            for cpu, _, process in top
        )

    def _describe(self, process: psutil.Process) -> GpuProcess:
        kept = self._described.get(process.pid)
        return kept[1] if kept is not None and kept[0] is process else _described(process)


def _rss(process: psutil.Process) -> int | None:
    try:
        return int(process.memory_info().rss)
    except (psutil.Error, OSError):
        return None


def _described(process: psutil.Process) -> GpuProcess:
    """A host process with its owner, start time and command line where they can be read."""
    listed = GpuProcess(gpu_index=NO_GPU, pid=process.pid)
    try:
        with process.oneshot():
            listed = replace(listed, started_at=float(process.create_time()), uid=int(process.uids().real))
            listed = replace(listed, command=one_command(process.cmdline() or [process.name()]))
            listed = replace(listed, user=str(process.username()))
    except (psutil.Error, OSError, KeyError):
        pass  # ended, hidden (another user's command line), or a uid with no passwd entry: what was read stays
    return listed
