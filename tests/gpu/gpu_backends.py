"""Plain-Python GpuBackend implementations for sampler and detection tests (no vendor library involved)."""

from __future__ import annotations

import threading
import time

from rocmtui.gpu.sample import GpuProcess, GpuSample


class ScriptedBackend:
    """Devices that answer, raise or hang, as each test sets them."""

    def __init__(self, count: int = 2, name: str = "fake") -> None:
        self.name = name
        self.count = count
        self.failing: dict[int, Exception] = {}
        self.hanging: set[int] = set()
        self.entered_hang = threading.Event()
        self.release = threading.Event()
        self.calls: list[int] = []
        self.closed = False

    def device_count(self) -> int:
        return self.count

    def sample(self, index: int) -> GpuSample:
        self.calls.append(index)
        if index in self.hanging:
            self.entered_hang.set()
            self.release.wait()
        if index in self.failing:
            raise self.failing[index]
        return GpuSample(index=index, name=f"gpu{index}", timestamp=time.time(), utilization_pct=float(index))

    def processes(self, index: int) -> tuple[GpuProcess, ...]:
        return (GpuProcess(gpu_index=index, pid=1000 + index),)

    def close(self) -> None:
        self.closed = True
