"""The NVML backend on a real NVIDIA GPU: its readings of the GPU torch uses agree with what torch itself sees."""

from __future__ import annotations

import os

import pytest

from rocmtui.config import MonitorConfig
from rocmtui.gpu import nvml

HELD_BYTES = 512 * 2**20


def _nvml_index_of_cuda0(backend: nvml.NvmlBackend, torch_uuid: str) -> int:
    """NVML's index of torch's device 0 (NVML counts in PCI order, ignoring CUDA_VISIBLE_DEVICES)."""
    for index in range(backend.device_count()):
        uuid = backend.sample(index).uuid or ""
        if uuid.removeprefix("GPU-").removeprefix("MIG-") == torch_uuid:
            return index
    raise AssertionError(f"no NVML device has torch's UUID {torch_uuid}")


@pytest.mark.gpu(reason="reads a real NVIDIA GPU through NVML")
def test_nvml_reads_the_gpu_torch_holds_memory_on() -> None:
    import torch

    if torch.version.hip:
        pytest.skip("NVML is NVIDIA's: a ROCm build is read through ROCm SMI")
    backend = nvml.open_backend(MonitorConfig())
    try:
        held = torch.empty(HELD_BYTES, dtype=torch.uint8, device="cuda:0")
        torch.cuda.synchronize()
        _, total = torch.cuda.mem_get_info(0)
        index = _nvml_index_of_cuda0(backend, str(torch.cuda.get_device_properties(0).uuid))
        sample = backend.sample(index)

        assert sample.error is None
        assert sample.name == torch.cuda.get_device_name(0)
        assert sample.memory_total_bytes is not None and sample.memory_used_bytes is not None
        # The driver keeps a little of the board's memory for itself: CUDA's total is NVML's less that.
        assert 0.9 * sample.memory_total_bytes <= total <= sample.memory_total_bytes
        assert sample.memory_used_bytes >= HELD_BYTES
        assert sample.utilization_pct is not None and 0 <= sample.utilization_pct <= 100
        temps = dict(sample.temperatures_c)
        assert 5 <= temps["gpu"] <= 110
        assert sample.power_w is not None and sample.power_cap_w is not None
        assert 0 < sample.power_w <= 1.2 * sample.power_cap_w
        assert sample.sclk_mhz is not None and sample.sclk_mhz > 0
        assert sample.temp_crit_c is not None and temps["gpu"] < sample.temp_crit_c

        ours = [p for p in backend.processes(index) if p.pid == os.getpid()]
        assert len(ours) == 1, [p.pid for p in backend.processes(index)]
        assert ours[0].gpu_memory_bytes is not None and ours[0].gpu_memory_bytes >= HELD_BYTES
        assert ours[0].command and "python" in ours[0].command
        del held
    finally:
        backend.close()
