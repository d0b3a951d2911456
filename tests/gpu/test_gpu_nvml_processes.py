"""GPU % per process from NVML's per-process utilisation samples, against a FAKE pynvml."""

from __future__ import annotations

import time

import pynvml
from fakes.fake_pynvml_processes import FakeDevice, FakeNvml

from rocmtui.gpu import nvml

PID = 4_190_000
"""Far above the pids a test machine uses, so psutil finds no real process behind them."""


def _backend(*devices: FakeDevice) -> nvml.NvmlBackend:
    return nvml.NvmlBackend(FakeNvml(list(devices)), len(devices))


def _util(backend: nvml.NvmlBackend, index: int = 0) -> dict[int, float | None]:
    return {p.pid: p.gpu_util_pct for p in backend.processes(index)}


def test_newest_sample_per_process_and_idle_processes_at_zero() -> None:
    now = int(time.time() * 1e6)
    device = FakeDevice(
        processes=[(PID, 2**30), (PID + 1, None), (PID + 2, 2**20)],
        samples=[(PID, now - 500_000, 40), (PID, now - 100_000, 75), (PID + 1, now - 200_000, 12)],
    )
    backend = _backend(device)
    assert _util(backend) == {PID: 75.0, PID + 1: 12.0, PID + 2: 0.0}
    assert now - nvml.UTIL_FIRST_WINDOW_US <= device.seen[0] <= int(time.time() * 1e6) - nvml.UTIL_FIRST_WINDOW_US
    # The next call asks only for what is newer than the newest sample read; none: every process idle.
    assert _util(backend) == {PID: 0.0, PID + 1: 0.0, PID + 2: 0.0}
    assert device.seen[1] == now - 100_000
    device.samples.append((PID + 2, now + 1_000, 180))  # out of range from the library: capped
    assert _util(backend) == {PID: 0.0, PID + 1: 0.0, PID + 2: 100.0}


def test_no_samples_is_an_empty_list_not_an_error() -> None:
    backend = _backend(FakeDevice(processes=[(PID, 2**20)]))  # NVML raises NVMLError_NotFound
    (only,) = backend.processes(0)
    assert (only.pid, only.gpu_memory_bytes, only.gpu_util_pct) == (PID, 2**20, 0.0)


def test_unsupported_utilization_is_none_and_the_rest_still_reads() -> None:
    old = FakeDevice(processes=[(PID, 2**20)], utilization_error=pynvml.NVML_ERROR_NOT_SUPPORTED)
    mig = FakeDevice(processes=[(PID + 1, None)], utilization_error=pynvml.NVML_ERROR_NO_PERMISSION)
    backend = _backend(old, mig)
    assert _util(backend, 0) == {PID: None} and _util(backend, 1) == {PID + 1: None}
    assert backend.processes(0)[0].gpu_memory_bytes == 2**20


def test_a_gpu_without_processes_is_not_asked_for_their_utilisation() -> None:
    idle = FakeDevice()
    assert _backend(idle).processes(0) == ()
    assert idle.seen == []  # the query costs milliseconds of CPU even when it finds nothing
