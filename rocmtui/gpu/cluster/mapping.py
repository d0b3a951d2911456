"""THE table from exporters' metrics to rocmtui's GPU sample fields, and the fold of a page's samples into GPUs.

Three exporters are read, each by the names and units it prints (docs/cluster.md shows the table):

- NVIDIA's dcgm-exporter (``etc/default-counters.csv``): ``DCGM_FI_DEV_*``, memory in MiB, clocks in MHz;
  labels ``gpu``, ``UUID``, ``Hostname`` (``hostname`` in newer releases), ``modelName``, ``pci_bus_id``.
- AMD's device-metrics-exporter (``docs/configuration/metricslist.md``): lowercase ``gpu_*`` names, with or
  without a configured prefix (``MetricsFieldPrefix``, e.g. ``amd_``), VRAM in MB (amd-smi's MB: MiB), clocks
  in MHz; labels ``gpu_id``, ``gpu_uuid``, ``hostname``, ``card_model`` / ``card_series``.
- rocmtui's own ``rocmtui export``: ``rocmtui_gpu_*`` in base units (ratios, bytes, hertz); labels ``gpu``,
  ``uuid``, ``hostname``, ``name``, ``pci_bus_id``.

Where two rows fill the same field (an MI300's ``gpu_package_power``, an MI200's ``gpu_average_package_power``),
the row listed first wins. A value the exporter marks as blank (DCGM's blank sentinels, near 2**63) is None.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from math import copysign
from typing import Any

from rocmtui.gpu.cluster.exposition import Sample
from rocmtui.gpu.sample import GpuSample, HostSample

MIB = 1 << 20
MHZ = 1e6
BLANK = 9.0e18
"""DCGM writes a field it cannot read as a sentinel near 2**63 (``DCGM_INT64_BLANK`` and its neighbours)."""


@dataclass(frozen=True)
class Exporter:
    """An exporter's name and the labels that say which GPU and which host a sample is about."""

    name: str
    index: tuple[str, ...]
    uuid: tuple[str, ...]
    hostname: tuple[str, ...]
    model: tuple[str, ...]
    pci: tuple[str, ...] = ()
    prefixable: bool = False
    """Its metric names may carry a prefix the user configured (AMD's ``MetricsFieldPrefix``)."""


DCGM = Exporter("dcgm-exporter", ("gpu",), ("UUID", "uuid"), ("Hostname", "hostname"), ("modelName",), ("pci_bus_id",))
AMD = Exporter(
    "amd-device-metrics-exporter",
    ("gpu_id",),
    ("gpu_uuid",),
    ("hostname",),
    ("card_series", "card_model"),
    prefixable=True,
)
ROCMTUI = Exporter("rocmtui-export", ("gpu",), ("uuid",), ("hostname",), ("name",), ("pci_bus_id",))


@dataclass(frozen=True)
class Row:
    """One metric of one exporter: which GpuSample field it fills, times what to reach the field's unit."""

    exporter: Exporter
    metric: str
    target: str
    """A GpuSample field; ``memory_free_bytes`` (dcgm: total = used + free + reserved), ``memory_reserved_bytes``,
    ``temperature:<sensor>``, ``up`` (rocmtui: 0 = not read), or ``host:<HostSample field>``."""
    scale: float = 1.0
    unit: str = ""
    """The unit the exporter serves, for the documentation."""
    where: tuple[tuple[str, str], ...] = ()
    """Labels the sample must carry with these values (AMD's ``gpu_clock{clock_type="system"}``)."""


TABLE: tuple[Row, ...] = (
    # NVIDIA dcgm-exporter
    Row(DCGM, "DCGM_FI_DEV_GPU_UTIL", "utilization_pct", unit="%"),
    Row(DCGM, "DCGM_FI_DEV_MEM_COPY_UTIL", "memory_busy_pct", unit="%"),
    Row(DCGM, "DCGM_FI_DEV_FB_USED", "memory_used_bytes", MIB, "MiB"),
    Row(DCGM, "DCGM_FI_DEV_FB_FREE", "memory_free_bytes", MIB, "MiB"),
    Row(DCGM, "DCGM_FI_DEV_FB_RESERVED", "memory_reserved_bytes", MIB, "MiB"),
    Row(DCGM, "DCGM_FI_DEV_GPU_TEMP", "temperature:gpu", unit="°C"),
    Row(DCGM, "DCGM_FI_DEV_POWER_USAGE", "power_w", unit="W"),
    Row(DCGM, "DCGM_FI_DEV_SM_CLOCK", "sclk_mhz", unit="MHz"),
    Row(DCGM, "DCGM_FI_DEV_MEM_CLOCK", "mclk_mhz", unit="MHz"),
    Row(DCGM, "DCGM_FI_DEV_ENC_UTIL", "encoder_pct", unit="%"),
    Row(DCGM, "DCGM_FI_DEV_DEC_UTIL", "decoder_pct", unit="%"),
    # AMD device-metrics-exporter (names as printed: lowercase; a configured prefix is allowed)
    Row(AMD, "gpu_gfx_activity", "utilization_pct", unit="%"),
    Row(AMD, "gpu_umc_activity", "memory_busy_pct", unit="%"),
    Row(AMD, "gpu_used_vram", "memory_used_bytes", MIB, "MB (MiB)"),
    Row(AMD, "gpu_total_vram", "memory_total_bytes", MIB, "MB (MiB)"),
    Row(AMD, "gpu_used_gtt", "gtt_used_bytes", MIB, "MB (MiB)"),
    Row(AMD, "gpu_total_gtt", "gtt_total_bytes", MIB, "MB (MiB)"),
    Row(AMD, "gpu_junction_temperature", "temperature:junction", unit="°C"),
    Row(AMD, "gpu_edge_temperature", "temperature:edge", unit="°C"),
    Row(AMD, "gpu_memory_temperature", "temperature:mem", unit="°C"),
    Row(AMD, "gpu_package_power", "power_w", unit="W"),
    Row(AMD, "gpu_average_package_power", "power_w", unit="W"),
    Row(AMD, "gpu_clock", "sclk_mhz", unit="MHz", where=(("clock_type", "system"),)),
    Row(AMD, "gpu_clock", "mclk_mhz", unit="MHz", where=(("clock_type", "memory"),)),
    # rocmtui export
    Row(ROCMTUI, "rocmtui_gpu_up", "up"),
    Row(ROCMTUI, "rocmtui_gpu_utilization_ratio", "utilization_pct", 100.0, "ratio"),
    Row(ROCMTUI, "rocmtui_gpu_memory_busy_ratio", "memory_busy_pct", 100.0, "ratio"),
    Row(ROCMTUI, "rocmtui_gpu_memory_used_bytes", "memory_used_bytes", unit="bytes"),
    Row(ROCMTUI, "rocmtui_gpu_memory_total_bytes", "memory_total_bytes", unit="bytes"),
    Row(ROCMTUI, "rocmtui_gpu_gtt_used_bytes", "gtt_used_bytes", unit="bytes"),
    Row(ROCMTUI, "rocmtui_gpu_gtt_total_bytes", "gtt_total_bytes", unit="bytes"),
    Row(ROCMTUI, "rocmtui_gpu_power_watts", "power_w", unit="W"),
    Row(ROCMTUI, "rocmtui_gpu_power_limit_watts", "power_cap_w", unit="W"),
    Row(ROCMTUI, "rocmtui_gpu_graphics_clock_hertz", "sclk_mhz", 1 / MHZ, "Hz"),
    Row(ROCMTUI, "rocmtui_gpu_memory_clock_hertz", "mclk_mhz", 1 / MHZ, "Hz"),
    Row(ROCMTUI, "rocmtui_gpu_fan_speed_ratio", "fan_pct", 100.0, "ratio"),
    Row(ROCMTUI, "rocmtui_gpu_fan_speed_rpm", "fan_rpm", unit="rpm"),
    Row(ROCMTUI, "rocmtui_gpu_temperature_celsius", "temperature:{sensor}", unit="°C"),
    Row(ROCMTUI, "rocmtui_gpu_temperature_slowdown_celsius", "temp_crit_c", unit="°C"),
    Row(ROCMTUI, "rocmtui_gpu_temperature_shutdown_celsius", "temp_emergency_c", unit="°C"),
    Row(ROCMTUI, "rocmtui_host_cpu_utilization_ratio", "host:cpu_pct", 100.0, "ratio"),
    Row(ROCMTUI, "rocmtui_host_cpus", "host:cpu_count"),
    Row(ROCMTUI, "rocmtui_host_memory_used_bytes", "host:ram_used_bytes", unit="bytes"),
    Row(ROCMTUI, "rocmtui_host_memory_total_bytes", "host:ram_total_bytes", unit="bytes"),
)
"""Every exporter metric the cluster view reads, first row first where two fill one field."""

_BY_NAME: dict[str, tuple[tuple[int, Row], ...]] = {}
for _order, _row in enumerate(TABLE):
    _BY_NAME[_row.metric] = (*_BY_NAME.get(_row.metric, ()), (_order, _row))
_PREFIXABLE = {row.metric for row in TABLE if row.exporter.prefixable}
_INT_FIELDS = {"memory_used_bytes", "memory_total_bytes", "gtt_used_bytes", "gtt_total_bytes"}
_HOST_INT_FIELDS = {"cpu_count", "ram_used_bytes", "ram_total_bytes"}
MAX_NAME_CACHE = 4096
MAX_STEPS = 100_000
"""Samples' steps kept by a Names (256 hosts of 8 GPUs read about 23,000 heads); past it, it starts again empty."""


class Names:
    """Which table rows a metric name stands for, a configured prefix allowed where the exporter has one."""

    def __init__(self, *, labels_reused: bool = True) -> None:
        self._cache: dict[str, tuple[tuple[int, Row], ...]] = {}
        self._labels_reused = labels_reused
        self._steps: dict[tuple[str, int], tuple[Mapping[str, str], tuple[_Step, ...]]] = {}
        """(name, id of its labels) -> (those labels, their steps): the labels are held, so their id is not reused."""

    def steps(self, name: str, labels: Mapping[str, str]) -> tuple[_Step, ...]:
        """What a sample of ``name`` with ``labels`` fills; kept for the same labels object when ``labels_reused``
        (a page's heads come from a LabelCache, one dict per ``name{labels}`` at every scrape: working this out
        again for every sample of 256 hosts was most of a round's reading)."""
        if not self._labels_reused:
            return _steps(self.rows(name), labels)
        held = self._steps.get((name, id(labels)))
        if held is not None and held[0] is labels:
            return held[1]
        found = _steps(self.rows(name), labels)
        if len(self._steps) >= MAX_STEPS:
            self._steps.clear()
        self._steps[(name, id(labels))] = (labels, found)
        return found

    def rows(self, name: str) -> tuple[tuple[int, Row], ...]:
        found = self._cache.get(name)
        if found is not None:
            return found
        found = _BY_NAME.get(name, ())
        if not found:
            found = next((_BY_NAME[name[at:]] for at in _cuts(name) if name[at:] in _PREFIXABLE), ())
        if len(self._cache) < MAX_NAME_CACHE:
            self._cache[name] = found
        return found

    def wanted(self, name: str) -> bool:
        """True for a name some row reads (the exposition reader parses only those lines)."""
        return bool(self.rows(name))


def _cuts(name: str) -> Iterable[int]:
    """Where a prefix ending in ``_`` may end in ``name``."""
    at = name.find("_")
    while at != -1:
        yield at + 1
        at = name.find("_", at + 1)


@dataclass
class _Gpu:
    exporter: Exporter
    index: int
    uuid: str | None
    name: str
    pci: str | None
    host: str | None
    values: dict[str, tuple[int, float]] = field(default_factory=dict)
    temps: dict[str, tuple[int, float]] = field(default_factory=dict)


@dataclass(frozen=True)
class HostGpus:
    """The GPUs one source (a page, or the samples of one Prometheus instance) told of, and its host's readings."""

    gpus: tuple[GpuSample, ...]
    host: HostSample | None
    exporter: str | None
    """Which exporter it was (the first one met); None when no GPU metric was found."""
    hostname: str | None
    """The host's name as its exporter labels it (untrusted text)."""


def _first(labels: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    for name in names:
        value = labels.get(name)
        if value:
            return value
    return None


def _index(text: str | None) -> int | None:
    if text is None or not text.isdigit() or len(text) > 6:
        return None
    return int(text)


@dataclass(frozen=True, slots=True)
class _Step:
    """One row a sample fills, worked out from its name and labels alone (not its value)."""

    order: int
    scale: float
    field: str
    """The HostSample field (host rows), the sensor (temperatures) or the GpuSample field."""
    temperature: bool
    hostname: str | None
    gpu: tuple[tuple[str, int, str | None], Exporter, int, str | None, str, str | None, str | None] | None = None
    """(key, exporter, index, uuid, name, pci, host) of the GPU it is about; None for a host row."""


def _steps(rows: tuple[tuple[int, Row], ...], labels: Mapping[str, str]) -> tuple[_Step, ...]:
    steps = []
    for order, row in rows:
        if any(labels.get(k) != v for k, v in row.where):
            continue
        if row.target.startswith("host:"):
            steps.append(_Step(order, row.scale, row.target[5:], False, _first(labels, row.exporter.hostname)))
            continue
        gpu = _gpu_identity(row.exporter, labels)
        if gpu is None:
            continue
        if row.target.startswith("temperature:"):
            sensor = row.target[12:].format(sensor=labels.get("sensor", "gpu"))
            steps.append(_Step(order, row.scale, sensor, True, gpu[6], gpu))
        else:
            steps.append(_Step(order, row.scale, row.target, False, gpu[6], gpu))
    return tuple(steps)


def fold(samples: Iterable[Sample], timestamp: float, names: Names | None = None) -> HostGpus:
    """The GPUs (ordered by exporter, then index) and host readings that ``samples`` describe."""
    return fold_again(tuple(samples), timestamp, names, None)[0]


Slot = tuple[tuple[str, int, str | None] | None, bool, str]
"""A field one sample can fill: (the GPU's key, None for the host; a temperature?; the field or sensor)."""


@dataclass
class Folded:
    """What a fold of one source's samples kept for folding its next samples (``fold_again``)."""

    samples: tuple[Sample, ...]
    found: HostGpus
    gpus: dict[tuple[str, int, str | None], _Gpu]
    host: dict[str, tuple[int, float]]
    slots: list[tuple[tuple[Slot, float], ...]]
    """For each sample, the slots it won (so holds) and the scale of each."""


def fold_again(
    samples: tuple[Sample, ...],
    timestamp: float,
    names: Names | None,
    last: Folded | None,
    changed: Iterable[int] | None = None,
) -> tuple[HostGpus, Folded]:
    """``fold``, given the same source's last ``Folded``: when the samples are the last ones but for new values of
    the same metrics and labels (an exporter's next page, most often), only the fields those values win are set
    again and only the GPUs they belong to are made again; the others are the last GpuSamples. The result is the
    one ``fold`` gives, but for the timestamp of a GPU none of whose values changed (its last one). ``changed``:
    the positions where ``samples`` may differ from the last ones (the others are the very same objects), if
    known (``exposition.read_page``)."""
    if last is not None and len(samples) == len(last.samples):
        again = _fold_values(samples, timestamp, last, range(len(samples)) if changed is None else changed)
        if again is not None:
            return again.found, again
    return _fold(samples, timestamp, names or Names())


def _fold(samples: tuple[Sample, ...], timestamp: float, names: Names) -> tuple[HostGpus, Folded]:
    gpus: dict[tuple[str, int, str | None], _Gpu] = {}
    host: dict[str, tuple[int, float]] = {}
    hostname: str | None = None
    holder: dict[Slot, tuple[int, float]] = {}
    """Which sample holds each slot, and that sample's scale for it."""
    steps_of = names.steps
    for position, sample in enumerate(samples):
        read = sample.value
        if abs(read) >= BLANK:
            continue
        for step in steps_of(sample.name, sample.labels):
            value = read * step.scale
            hostname = hostname or step.hostname
            if step.gpu is None:
                into = host
            else:
                gpu = gpus.get(step.gpu[0])
                if gpu is None:
                    gpu = gpus[step.gpu[0]] = _Gpu(*step.gpu[1:])
                into = gpu.temps if step.temperature else gpu.values
            held = into.get(step.field)
            if held is None or step.order < held[0]:  # the row listed first wins
                into[step.field] = (step.order, value)
                holder[(None if step.gpu is None else step.gpu[0], step.temperature, step.field)] = (
                    position,
                    step.scale,
                )
    slots: list[list[tuple[Slot, float]]] = [[] for _ in samples]
    for slot, (position, scale) in holder.items():
        slots[position].append((slot, scale))
    ordered = sorted(gpus.items(), key=lambda kg: (kg[1].exporter.name, kg[1].index, kg[1].uuid or ""))
    exporter = ordered[0][1].exporter.name if ordered else ("rocmtui-export" if host else None)
    found = HostGpus(
        tuple(_sample(g, timestamp) for _, g in ordered), _host(host, timestamp) if host else None, exporter, hostname
    )
    return found, Folded(samples, found, dict(ordered), host, [tuple(s) for s in slots])


def _fold_values(
    samples: tuple[Sample, ...], timestamp: float, last: Folded, positions: Iterable[int]
) -> Folded | None:
    """``last`` with the new values of ``samples`` at ``positions`` set (elsewhere they are the last ones); None when
    they are not the same metrics and labels in the same order, or a value became blank or stopped being one (a
    field's holder may then change: fold again)."""
    changed = []
    before = last.samples
    for position in positions:
        now, was = samples[position], before[position]
        if now is was:
            continue
        if (
            now.name != was.name
            or now.labels is not was.labels
            or (abs(now.value) >= BLANK) != (abs(was.value) >= BLANK)
        ):
            return None  # labels: the same object for the same text (a LabelCache's), so ``is`` holds for a kept line
        if now.value == was.value and (now.value or copysign(1.0, now.value) == copysign(1.0, was.value)):
            continue  # the same value in a new sample (a Prometheus answer's are all new): nothing to set again
        changed.append(position)
    touched: dict[tuple[str, int, str | None] | None, set[str | None]] = {}
    """GPU (None: the host) -> the fields set again (None: a temperature)."""
    for position in changed:
        read = samples[position].value
        for (key, temperature, name), scale in last.slots[position]:
            if key is None:
                into = last.host
            else:
                gpu = last.gpus[key]
                into = gpu.temps if temperature else gpu.values
            into[name] = (into[name][0], read * scale)
            touched.setdefault(key, set()).add(None if temperature else name)
    if not touched:
        return Folded(samples, last.found, last.gpus, last.host, last.slots)
    gpus = tuple(
        made if key not in touched else _sample_again(made, gpu, touched[key], timestamp)
        for (key, gpu), made in zip(last.gpus.items(), last.found.gpus, strict=True)
    )
    host = _host(last.host, timestamp) if None in touched else last.found.host
    found = HostGpus(gpus, host, last.found.exporter, last.found.hostname)
    return Folded(samples, found, last.gpus, last.host, last.slots)


_DERIVED = frozenset({None, "up", "memory_used_bytes", "memory_free_bytes", "memory_reserved_bytes"})
"""Fields another GpuSample field is worked out from (None: the temperatures, sorted into one tuple)."""


def _sample_again(made: GpuSample, gpu: _Gpu, fields: set[str | None], timestamp: float) -> GpuSample:
    """``_sample(gpu, timestamp)`` where only ``fields`` changed since ``made``: ``made`` with those fields set (a
    copy: about 0.4 µs, against 9 µs for the whole sample made again), unless one of them is worked into another."""
    if not fields.isdisjoint(_DERIVED):
        return _sample(gpu, timestamp)
    values = made.__dict__.copy()  # a copy of the fields' dict, given to a new object before anyone sees it:
    values["timestamp"] = timestamp  # copy.copy went through __reduce_ex__ (5 µs), __dict__.update took 1 µs
    for name in fields:
        assert name is not None
        value = gpu.values[name][1]
        values[name] = int(value) if name in _INT_FIELDS else value
    again = object.__new__(GpuSample)
    object.__setattr__(again, "__dict__", values)
    return again


def _gpu_identity(
    exporter: Exporter, labels: Mapping[str, str]
) -> tuple[tuple[str, int, str | None], Exporter, int, str | None, str, str | None, str | None] | None:
    """(key, exporter, index, uuid, name, pci, host) of the GPU ``labels`` speak of; None without an index."""
    index = _index(_first(labels, exporter.index))
    if index is None:
        return None
    uuid = _first(labels, exporter.uuid)
    name = _first(labels, exporter.model) or f"GPU {index}"
    pci, host = _first(labels, exporter.pci), _first(labels, exporter.hostname)
    return (exporter.name, index, uuid), exporter, index, uuid, name, pci, host


def _sample(gpu: _Gpu, timestamp: float) -> GpuSample:
    values = {key: value for key, (_, value) in gpu.values.items()}
    fields: dict[str, Any] = {}
    for key, value in values.items():
        if key in {"up", "memory_free_bytes", "memory_reserved_bytes"}:
            continue
        fields[key] = int(value) if key in _INT_FIELDS else value
    used, free = values.get("memory_used_bytes"), values.get("memory_free_bytes")
    if "memory_total_bytes" not in fields and used is not None and free is not None:
        fields["memory_total_bytes"] = int(used + free + values.get("memory_reserved_bytes", 0.0))
    temps = tuple(sorted((sensor, value) for sensor, (_, value) in gpu.temps.items()))
    return GpuSample(
        index=gpu.index,
        name=gpu.name,
        timestamp=timestamp,
        uuid=gpu.uuid,
        pci_bus_id=gpu.pci,
        temperatures_c=temps,
        error="not read by its exporter at its last sample" if values.get("up") == 0.0 else None,
        **fields,
    )


def _host(values: dict[str, tuple[int, float]], timestamp: float) -> HostSample:
    fields: dict[str, Any] = {
        key: int(value) if key in _HOST_INT_FIELDS else value for key, (_, value) in values.items()
    }
    return HostSample(timestamp=timestamp, **fields)
