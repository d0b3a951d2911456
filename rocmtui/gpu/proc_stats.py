"""Per-process host readings for the process table: CPU %, resident memory, start time and owner (psutil);
and, where there is no GPU, the host's busiest processes in place of GPU processes.

CPU % needs two readings of the same process, so ``ProcessStats`` keeps one ``psutil.Process`` per PID
between samples (bounded: past ``KEEP`` entries, those whose process ended are dropped).
"""

from __future__ import annotations

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


_SCAN_ATTRS = ["cpu_percent", "memory_info"]
"""What is read of every process on each scan: one read of ``/proc/PID/stat`` and one of ``statm``."""


class BusiestProcesses:
    """The host's busiest processes by CPU %, for the process table on a machine with no GPU.

    Each scan reads only CPU % and RSS of every process (``psutil.process_iter`` keeps its Process objects
    between calls, so CPU % is measured since the previous scan); the owner, start time and command line are
    read for the ``limit`` busiest alone."""

    def __init__(self, limit: int = HOST_PROCESS_ROWS) -> None:
        self.limit = limit
        self._seen: set[int] = set()
        """PIDs seen by the previous scan: their CPU % is measured (a new PID's first reading is None)."""

    def read(self) -> tuple[GpuProcess, ...]:
        """The ``limit`` busiest processes now (CPU %, then RSS); () when ``/proc`` cannot be read."""
        scanned: list[tuple[float, int, psutil.Process]] = []
        try:
            for process in psutil.process_iter(_SCAN_ATTRS, ad_value=None):
                info = process.info
                memory = info["memory_info"]
                scanned.append((info["cpu_percent"] or 0.0, int(memory.rss) if memory else 0, process))
        except (psutil.Error, OSError):
            return ()
        seen, self._seen = self._seen, {p.pid for _, _, p in scanned}
        scanned.sort(key=lambda entry: (entry[0], entry[1]), reverse=True)
        return tuple(
            _described(process, cpu if process.pid in seen else None, rss)
            for cpu, rss, process in scanned[: self.limit]
        )


def _described(process: psutil.Process, cpu: float | None, rss: int) -> GpuProcess:
    """A host process with its owner, start time and command line where they can be read."""
    listed = GpuProcess(gpu_index=NO_GPU, pid=process.pid, cpu_pct=cpu, host_memory_bytes=rss)
    try:
        with process.oneshot():
            listed = replace(listed, started_at=float(process.create_time()), uid=int(process.uids().real))
            listed = replace(listed, command=one_command(process.cmdline() or [process.name()]))
            listed = replace(listed, user=str(process.username()))
    except (psutil.Error, OSError, KeyError):
        pass  # ended, hidden (another user's command line), or a uid with no passwd entry: what was read stays
    return listed
