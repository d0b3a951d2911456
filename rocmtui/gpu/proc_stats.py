"""Per-process host readings for the process table: CPU %, resident memory, start time and owner (psutil).

CPU % needs two readings of the same process, so ``ProcessStats`` keeps one ``psutil.Process`` per PID
between samples (bounded: past ``KEEP`` entries, those whose process ended are dropped).
"""

from __future__ import annotations

from dataclasses import replace

import psutil

from rocmtui.gpu.sample import GpuProcess

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
