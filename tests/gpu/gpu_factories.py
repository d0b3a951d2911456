"""Small builders of telemetry values for the tests (plain data, no hardware)."""

from __future__ import annotations

from rocmtui.gpu.sample import BackendStatus, GpuProcess, GpuSample, HostSample, SampleSet


def gpu(index: int = 0, t: float = 1000.0, **fields: object) -> GpuSample:
    base: dict[str, object] = {
        "utilization_pct": 87.0,
        "memory_used_bytes": 3 * 2**30,
        "memory_total_bytes": 16 * 2**30,
        "temperatures_c": (("edge", 45.0), ("junction", 52.0)),
        "power_w": 215.5,
        "power_cap_w": 300.0,
        "sclk_mhz": 2100.0,
        "mclk_mhz": 1000.0,
        "fan_rpm": 1200.0,
    }
    base.update(fields)
    return GpuSample(index=index, name=f"AMD Radeon Test {index}", timestamp=t, **base)  # type: ignore[arg-type]


def sample_set(t: float = 1000.0, n_gpus: int = 2) -> SampleSet:
    return SampleSet(
        timestamp=t,
        backend="sysfs",
        gpus=tuple(gpu(i, t, utilization_pct=float(10 * i + t % 7)) for i in range(n_gpus)),
        host=HostSample(timestamp=t, cpu_pct=12.5, cpu_count=2, ram_used_bytes=2**30, ram_total_bytes=8 * 2**30),
        processes=(GpuProcess(gpu_index=0, pid=42, user="ada", gpu_memory_bytes=2**20, command="python train.py"),),
        statuses=(BackendStatus("rocm", False, "libamd_smi.so not found"), BackendStatus("sysfs", True, "2 GPUs")),
    )
