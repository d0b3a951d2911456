"""Telemetry values: frozen and timestamped. ``None`` always means "this GPU or library cannot say"."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class GpuSample:
    """One reading of one GPU. Units are in the field names; None is "not available"."""

    index: int
    name: str
    timestamp: float
    """time.time() when the reading was taken."""
    utilization_pct: float | None = None
    memory_used_bytes: int | None = None
    """Device memory (VRAM) in use."""
    memory_total_bytes: int | None = None
    gtt_used_bytes: int | None = None
    """AMD: system memory mapped for the GPU (GTT)."""
    gtt_total_bytes: int | None = None
    memory_busy_pct: float | None = None
    """Memory controller activity (AMD mem_busy_percent, NVIDIA memory utilization)."""
    temperatures_c: tuple[tuple[str, float], ...] = ()
    """(label, degrees C) pairs, e.g. ("edge", 45.0), ("junction", 52.0), ("mem", 60.0); NVIDIA: ("gpu", ...)."""
    power_w: float | None = None
    """Average board power."""
    power_cap_w: float | None = None
    """Enforced power limit."""
    sclk_mhz: float | None = None
    """Shader / graphics clock."""
    mclk_mhz: float | None = None
    """Memory clock."""
    fan_rpm: float | None = None
    fan_pct: float | None = None
    error: str | None = None
    """Why this device could not be read this time (the other fields are then None)."""
    temp_crit_c: float | None = None
    """The card's own limit for its headline temperature, where throttling starts: hwmon ``temp*_crit``
    (junction, else edge), NVML's slowdown threshold."""
    temp_emergency_c: float | None = None
    """Where the card shuts down: hwmon ``temp*_emergency``, NVML's shutdown threshold."""
    uuid: str | None = None
    """The device's own identity, fixed for its life: NVML's ``GPU-...`` UUID, amdgpu's ``unique_id``."""
    pci_bus_id: str | None = None
    """Where it sits on the PCI bus, as the backend names it: ``0000:03:00.0`` (NVML: ``00000000:1B:00.0``)."""
    encoder_pct: float | None = None
    """Video encoder use (NVML's encoder utilisation)."""
    decoder_pct: float | None = None
    """Video decoder use (NVML's decoder utilisation)."""
    pcie_rx_bytes_per_s: float | None = None
    """PCIe traffic into the GPU (NVML's RX counter; amdgpu ``pcie_bw``, packets times their payload)."""
    pcie_tx_bytes_per_s: float | None = None
    """PCIe traffic out of the GPU."""
    ecc_corrected: int | None = None
    """Corrected memory errors since the driver loaded (NVML volatile count; amdgpu ``ras/umc_err_count``)."""
    ecc_uncorrected: int | None = None
    """Uncorrected memory errors since the driver loaded."""
    throttle_reasons: tuple[str, ...] | None = None
    """Why the clocks are held back now, as ``throttle.REASONS`` names them; () when nothing holds them back,
    None when the backend cannot say."""

    @property
    def temperature_c(self) -> float | None:
        """The headline temperature: junction/hotspot if known, else edge, else the first."""
        temps = dict(self.temperatures_c)
        for label in ("junction", "hotspot", "gpu", "edge"):
            if label in temps:
                return temps[label]
        return self.temperatures_c[0][1] if self.temperatures_c else None

    @property
    def memory_pct(self) -> float | None:
        if self.memory_used_bytes is None or not self.memory_total_bytes:
            return None
        return 100.0 * self.memory_used_bytes / self.memory_total_bytes


NO_GPU = -1
"""The ``gpu_index`` of a host process listed where there is no GPU (shown as ``?``, like an unknown GPU)."""
HOST_PROCESS_ROWS = 30
"""How many of the host's busiest processes the monitor lists where there is no GPU (``SampleSet.host_processes``)."""


@dataclass(frozen=True)
class GpuProcess:
    """A process using a GPU."""

    gpu_index: int
    pid: int
    user: str | None = None
    gpu_memory_bytes: int | None = None
    command: str | None = None
    gpu_util_pct: float | None = None
    """Its share of the GPU's time, where the backend measures it per process."""
    cpu_pct: float | None = None
    """CPU use since the previous sample, % of one core (None at its first sample)."""
    host_memory_bytes: int | None = None
    """Resident memory on the host (RSS)."""
    started_at: float | None = None
    """time.time() when it started (elapsed = sample time - started_at; also tells a reused PID apart)."""
    uid: int | None = None
    """Real user id, to tell the user's own processes (which may be signalled) from others'."""


@dataclass(frozen=True)
class HostSample:
    """CPU and RAM of the machine itself, always available through psutil."""

    timestamp: float
    cpu_pct: float | None = None
    cpu_count: int | None = None
    ram_used_bytes: int | None = None
    ram_total_bytes: int | None = None
    cpu_name: str | None = None


@dataclass(frozen=True)
class BackendStatus:
    """Whether a telemetry backend works here, and why not when it does not."""

    name: str
    available: bool
    reason: str | None = None
    """One line: why it is unavailable, or a note (library version) when available."""


@dataclass(frozen=True)
class SampleSet:
    """Every device read in one sampling tick, plus the host; what the sampler hands to listeners."""

    timestamp: float
    backend: str
    """Name of the backend that produced ``gpus`` (``host`` when there is no GPU backend)."""
    gpus: tuple[GpuSample, ...]
    host: HostSample
    processes: tuple[GpuProcess, ...] = ()
    statuses: tuple[BackendStatus, ...] = field(default_factory=tuple)
    """Every backend tried at detection, for the panel's "unavailable because" line."""
    host_processes: tuple[GpuProcess, ...] = ()
    """The host's busiest processes (by CPU %), listed only where there is no GPU: the monitor's process table
    shows them in place of GPU processes. Their ``gpu_index`` is ``NO_GPU``."""
