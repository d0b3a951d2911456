"""Long histories in bounded memory: min/mean/max buckets per timebase (1 min, 10 min, 1 h, 24 h).

A ``TimebaseSeries`` keeps, for every timebase, at most ``BUCKETS`` buckets of ``span / BUCKETS`` seconds each, so a
day at 1 Hz costs the same memory as a minute: 600 buckets of 144 s for the 24 h timebase. ``columns`` folds
a timebase's buckets into the columns a graph has room for. ``GpuHistory`` holds one GPU's series; no
Textual here, so the store is tested on its own with a fast clock.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rocmtui.gpu.sample import GpuSample, SampleSet

TIMEBASES_S = (60.0, 600.0, 3600.0, 86400.0)
"""The spans a graph can show, shortest first."""
BUCKETS = 600
"""Buckets kept per timebase: 0.1 s for 1 min (the shortest interval), 144 s for 24 h."""


def timebase_label(span_s: float) -> str:
    """``1m``, ``10m``, ``1h``, ``24h``."""
    return f"{span_s / 3600:g}h" if span_s >= 3600 else f"{span_s / 60:g}m"


def auto_span(age_s: float) -> float:
    """The shortest timebase that still has room for ``age_s`` seconds of history (the longest when none)."""
    return next((span for span in TIMEBASES_S if age_s < span), TIMEBASES_S[-1])


def age_label(age_s: float) -> str:
    """``42s``, ``7m``, ``3h``: how far back a young history reaches, to the unit that changes slowly."""
    if age_s < 60:
        return f"{max(0, int(age_s))}s"
    if age_s < 3600:
        return f"{int(age_s // 60)}m"
    return f"{int(age_s // 3600)}h"


class Bucket:
    """min, sum, count and max of the values that fell in one time slot."""

    __slots__ = ("count", "high", "low", "slot", "total")

    def __init__(self, slot: int, value: float) -> None:
        self.slot = slot
        self.low = value
        self.high = value
        self.total = value
        self.count = 1

    def add(self, value: float) -> None:
        self.low = min(self.low, value)
        self.high = max(self.high, value)
        self.total += value
        self.count += 1


@dataclass(frozen=True)
class Point:
    """One column of a graph: the min, mean and max of the samples it covers."""

    low: float
    mean: float
    high: float


class Ring:
    """The buckets of one timebase, oldest first; never more than ``BUCKETS``."""

    def __init__(self, span_s: float, buckets: int = BUCKETS) -> None:
        self.span_s = span_s
        self.bucket_s = span_s / buckets
        self.buckets: deque[Bucket] = deque(maxlen=buckets)

    def add(self, t: float, value: float) -> None:
        slot = math.floor(t / self.bucket_s)
        if self.buckets and slot <= self.buckets[-1].slot:
            self.buckets[-1].add(value)  # same slot, or a clock that stepped back: no reordering
        else:
            self.buckets.append(Bucket(slot, value))

    def columns(self, end_t: float, count: int, start_t: float | None = None) -> list[Point | None]:
        """``count`` columns covering ``span_s`` up to ``end_t`` (columns aligned to absolute time, so the
        picture shifts only when a column boundary passes); None where no sample fell.

        With ``start_t`` the first column is the one holding ``start_t`` instead: a history younger than the
        span fills from the left edge, a column at a time, rather than appearing at the right edge.
        """
        if count <= 0:
            return []
        column_s = self.span_s / count
        if start_t is None:
            first = math.floor(end_t / column_s) - count + 1
        else:  # the column its bucket falls in (a bucket may start a little before start_t)
            first = math.floor(math.floor(start_t / self.bucket_s) * self.bucket_s / column_s + 1e-9)
        columns: list[Point | None] = [None] * count
        bucket_s = self.bucket_s
        column: int | None = None  # the column being folded (buckets come oldest first: columns only grow)
        low = high = total = 0.0
        samples = 0
        for bucket in self.buckets:
            col = math.floor(bucket.slot * bucket_s / column_s + 1e-9) - first
            if col != column:
                if samples and column is not None and 0 <= column < count:
                    columns[column] = Point(low, total / samples, high)
                column, low, high, total, samples = col, bucket.low, bucket.high, bucket.total, bucket.count
                continue
            if bucket.low < low:  # noqa: PLR1730 - a comparison here, min() a call: this loop runs a bucket at a time
                low = bucket.low
            if bucket.high > high:  # noqa: PLR1730 - as above
                high = bucket.high
            total += bucket.total
            samples += bucket.count
        if samples and column is not None and 0 <= column < count:
            columns[column] = Point(low, total / samples, high)
        return columns


def fill_gaps(points: Sequence[Point | None], max_gap: int) -> list[Point | None]:
    """Hold a value across up to ``max_gap`` empty columns between two filled ones (samples sparser than
    columns); longer gaps (the GPU unreadable, the monitor suspended) stay empty."""
    out = list(points)
    last = -1
    for i, point in enumerate(out):
        if point is None:
            continue
        if last >= 0 and 1 < i - last <= max_gap + 1:
            for j in range(last + 1, i):
                out[j] = out[last]
        last = i
    return out


class TimebaseSeries:
    """One value over wall-clock time at every timebase (a GPU reading for the monitor's 1m to 24h graphs). Not
    ``rocmtui.base.series.Series``, which keeps a run's points by step with their exact EMA: this one keeps rings
    of fixed-width time buckets, so that a graph of the last minute and one of the last day cost the same."""

    def __init__(self, timebases: Iterable[float] = TIMEBASES_S, buckets: int = BUCKETS) -> None:
        self.rings = {span: Ring(span, buckets) for span in timebases}
        self.latest_t: float | None = None

    def add(self, t: float, value: float | None) -> None:
        """Record ``value`` at time ``t`` (seconds); None (not available) leaves a gap."""
        if value is None or math.isnan(value):
            return
        self.latest_t = t
        for ring in self.rings.values():
            ring.add(t, value)

    def columns(
        self, span_s: float, end_t: float, count: int, max_gap: int = 0, start_t: float | None = None
    ) -> list[Point | None]:
        """The timebase ``span_s`` as ``count`` columns ending at ``end_t`` (or from ``start_t``: see
        ``Ring.columns``), short gaps held."""
        return fill_gaps(self.rings[span_s].columns(end_t, count, start_t), max_gap)

    def bucket_count(self) -> int:
        """Buckets held over every timebase (bounded by ``len(timebases) * buckets``)."""
        return sum(len(ring.buckets) for ring in self.rings.values())


METRICS = ("util", "vram", "power", "temp")
"""The series kept per GPU: utilisation %, VRAM used (bytes), power (W), headline temperature (°C)."""


def metric_value(gpu: GpuSample, metric: str) -> float | None:
    """The reading ``metric`` of one GPU sample."""
    if metric == "util":
        return gpu.utilization_pct
    if metric == "vram":
        return None if gpu.memory_used_bytes is None else float(gpu.memory_used_bytes)
    if metric == "power":
        return gpu.power_w
    return gpu.temperature_c


class GpuHistory:
    """Every GPU's series, fed one SampleSet at a time."""

    def __init__(self, timebases: Iterable[float] = TIMEBASES_S, buckets: int = BUCKETS) -> None:
        self.timebases = tuple(timebases)
        self.buckets = buckets
        self.series: dict[tuple[int, str], TimebaseSeries] = {}
        self.latest_t: float | None = None
        self.first_t: float | None = None
        """The time of the first sample recorded (its earliest reading's)."""

    def add(self, sample_set: SampleSet) -> None:
        """Record every GPU's readings of ``sample_set``."""
        self.latest_t = sample_set.timestamp
        if self.first_t is None:
            self.first_t = min((sample_set.timestamp, *(gpu.timestamp for gpu in sample_set.gpus)))
        for gpu in sample_set.gpus:
            for metric in METRICS:
                key = (gpu.index, metric)
                series = self.series.get(key)
                if series is None:
                    series = self.series[key] = TimebaseSeries(self.timebases, self.buckets)
                series.add(gpu.timestamp, metric_value(gpu, metric))

    def get(self, gpu_index: int, metric: str) -> TimebaseSeries | None:
        return self.series.get((gpu_index, metric))

    def age(self) -> float:
        """Seconds between the first and the latest sample (0 before any)."""
        if self.first_t is None or self.latest_t is None:
            return 0.0
        return max(0.0, self.latest_t - self.first_t)

    def filling(self, span_s: float) -> bool:
        """True while the history is younger than ``span_s``: its graph fills from the left edge."""
        return self.first_t is not None and self.age() < span_s
