"""The GPU and host metrics of one SampleSet: the sampler's newest, read at scrape time (never a GPU read).

Names carry the ``rocmtui_`` prefix and base units (ratios, bytes, watts, hertz, celsius). A value the
backend cannot read (None) is left out, not exported as 0. Labels: ``gpu`` (index), ``name``,
``hostname``, and ``uuid`` / ``pci_bus_id`` where the sample carries them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from rocmtui.gpu.sample import GpuSample, SampleSet

MHZ = 1e6


def _ratio(pct: float | None) -> float | None:
    return None if pct is None else pct / 100.0


def _hertz(mhz: float | None) -> float | None:
    return None if mhz is None else mhz * MHZ


GpuValue = Callable[[GpuSample], float | None]

GPU_GAUGES: tuple[tuple[str, str, GpuValue], ...] = (
    ("rocmtui_gpu_utilization_ratio", "GPU busy time, 0 to 1", lambda g: _ratio(g.utilization_pct)),
    ("rocmtui_gpu_memory_used_bytes", "Device memory (VRAM) in use", lambda g: g.memory_used_bytes),
    ("rocmtui_gpu_memory_total_bytes", "Device memory (VRAM) in all", lambda g: g.memory_total_bytes),
    ("rocmtui_gpu_memory_busy_ratio", "Memory controller activity, 0 to 1", lambda g: _ratio(g.memory_busy_pct)),
    ("rocmtui_gpu_gtt_used_bytes", "AMD: system memory mapped for the GPU (GTT) in use", lambda g: g.gtt_used_bytes),
    ("rocmtui_gpu_gtt_total_bytes", "AMD: system memory mapped for the GPU (GTT) in all", lambda g: g.gtt_total_bytes),
    ("rocmtui_gpu_power_watts", "Average board power", lambda g: g.power_w),
    ("rocmtui_gpu_power_limit_watts", "Enforced power limit", lambda g: g.power_cap_w),
    ("rocmtui_gpu_graphics_clock_hertz", "Shader (graphics, SM) clock", lambda g: _hertz(g.sclk_mhz)),
    ("rocmtui_gpu_memory_clock_hertz", "Memory clock", lambda g: _hertz(g.mclk_mhz)),
    ("rocmtui_gpu_fan_speed_ratio", "Fan speed, 0 to 1 of its range", lambda g: _ratio(g.fan_pct)),
    ("rocmtui_gpu_fan_speed_rpm", "Fan speed", lambda g: g.fan_rpm),
    (
        "rocmtui_gpu_temperature_slowdown_celsius",
        "The card's own limit for its headline temperature, where throttling starts",
        lambda g: g.temp_crit_c,
    ),
    ("rocmtui_gpu_temperature_shutdown_celsius", "Where the card shuts down", lambda g: g.temp_emergency_c),
)


def gpu_labels(gpu: GpuSample, hostname: str) -> dict[str, str]:
    """``gpu``, ``name``, ``hostname``, and the device's ``uuid`` and ``pci_bus_id`` where the backend reads them."""
    labels = {"gpu": str(gpu.index), "name": gpu.name, "hostname": hostname}
    if gpu.uuid:
        labels["uuid"] = gpu.uuid
    if gpu.pci_bus_id:
        labels["pci_bus_id"] = gpu.pci_bus_id
    return labels


def gpu_families(sample: SampleSet, hostname: str) -> Iterator[Metric]:
    """Every GPU metric of one SampleSet."""
    labelled = [(gpu, gpu_labels(gpu, hostname)) for gpu in sample.gpus]
    names = sorted({key for _, labels in labelled for key in labels})
    up = GaugeMetricFamily("rocmtui_gpu_up", "1 when the GPU was read at the last sample, 0 when not", labels=names)
    for gpu, labels in labelled:
        up.add_metric([labels.get(k, "") for k in names], 0.0 if gpu.error else 1.0)
    yield up
    for name, help_text, value in GPU_GAUGES:
        family = GaugeMetricFamily(name, help_text, labels=names)
        for gpu, labels in labelled:
            reading = value(gpu)
            if reading is not None:
                family.add_metric([labels.get(k, "") for k in names], float(reading))
        yield family
    temps = GaugeMetricFamily(
        "rocmtui_gpu_temperature_celsius", "Temperature of each sensor (edge, junction, mem; NVIDIA: gpu)",
        labels=[*names, "sensor"],
    )  # fmt: skip
    for gpu, labels in labelled:
        for sensor, celsius in gpu.temperatures_c:
            temps.add_metric([*(labels.get(k, "") for k in names), sensor], celsius)
    yield temps


def host_families(sample: SampleSet, hostname: str) -> Iterator[Metric]:
    """The host's CPU and RAM, and when the sample was taken."""
    host = sample.host
    readings = (
        ("rocmtui_host_cpu_utilization_ratio", "CPU busy time over all cores, 0 to 1", _ratio(host.cpu_pct)),
        ("rocmtui_host_cpus", "Logical CPUs", host.cpu_count),
        ("rocmtui_host_memory_used_bytes", "Host memory in use", host.ram_used_bytes),
        ("rocmtui_host_memory_total_bytes", "Host memory in all", host.ram_total_bytes),
        ("rocmtui_sample_timestamp_seconds", "When the exported sample was taken (Unix time)", sample.timestamp),
    )
    for name, help_text, value in readings:
        family = GaugeMetricFamily(name, help_text, labels=["hostname"])
        if value is not None:
            family.add_metric([hostname], float(value))
        yield family


class SampleCollector(Collector):
    """Reads ``latest()`` (a TelemetrySource's newest SampleSet) at each scrape; nothing before the first."""

    def __init__(self, latest: Callable[[], SampleSet | None], hostname: str) -> None:
        self._latest = latest
        self._hostname = hostname

    def collect(self) -> Iterator[Metric]:
        sample = self._latest()
        if sample is None:
            return
        yield from gpu_families(sample, self._hostname)
        yield from host_families(sample, self._hostname)
