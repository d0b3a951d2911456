"""The GPU's utilisation and memory over a run, for the strip under the curves and the cursor's readout.

One point per sample set: the busiest GPU's utilisation and the fullest GPU's memory (a run of several ranks
shows its slowest-to-idle GPU). Bounded as the timeline is: past ``capacity`` points every other one is
dropped, the newest kept. Columns of the strip cover time ranges: a column holds the mean of the samples in
it, or, when none fell in it, the sample before it for up to ``HOLD_S`` (samples once a second are sparser
than the columns of a short run).
"""

from __future__ import annotations

import bisect
import itertools
import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

from rocmtui.gpu.sample import SampleSet

CAPACITY = 8192
HOLD_S = 5.0
"""How long a sample stands for the columns after it."""


@dataclass(frozen=True)
class GpuMoment:
    """The GPU readings at one time (None: not reported)."""

    util_pct: float | None
    memory_pct: float | None
    memory_bytes: float | None
    gpus: int


class GpuTrack:
    """Sample times with the busiest GPU's utilisation and the fullest GPU's memory."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = max(4, capacity)
        self.t = array("d")
        self.util = array("d")
        self.memory_pct = array("d")
        self.memory_bytes = array("d")
        self.gpus = 0
        """GPUs in the newest sample set."""

    def __len__(self) -> int:
        return len(self.t)

    def record(self, sample_sets: Sequence[SampleSet]) -> int:
        """Add every sample set newer than the newest kept (a screen catches up from its source's history,
        read from its newest end); returns how many were added."""
        newest = self.t[-1] if self.t else -math.inf
        fresh: list[SampleSet] = []
        for sample_set in reversed(sample_sets):
            if sample_set.timestamp <= newest:
                break
            fresh.append(sample_set)
        added = 0
        for sample_set in reversed(fresh):
            if sample_set.gpus and (not self.t or sample_set.timestamp > self.t[-1]):
                self._add(sample_set)
                added += 1
        return added

    def _add(self, sample_set: SampleSet) -> None:
        gpus = sample_set.gpus
        self.gpus = len(gpus)
        utils = [g.utilization_pct for g in gpus if g.utilization_pct is not None]
        pcts = [p for p in (g.memory_pct for g in gpus) if p is not None]
        used = [float(g.memory_used_bytes) for g in gpus if g.memory_used_bytes is not None]
        self.t.append(sample_set.timestamp)
        self.util.append(max(utils) if utils else math.nan)
        self.memory_pct.append(max(pcts) if pcts else math.nan)
        self.memory_bytes.append(max(used) if used else math.nan)
        if len(self.t) > self.capacity:
            for name in ("t", "util", "memory_pct", "memory_bytes"):
                values: array[float] = getattr(self, name)
                setattr(self, name, values[-1::-2][::-1])

    def covers(self, start: float, end: float) -> bool:
        """True when a sample falls between ``start`` and ``end`` (or holds into it)."""
        first = bisect.bisect_left(self.t, start - HOLD_S)
        return first < len(self.t) and self.t[first] <= end

    def at(self, when: float) -> GpuMoment | None:
        """The readings at ``when``: of a sample at that time, else of the one before it (within ``HOLD_S``)."""
        return self.moment(when, math.nextafter(when, math.inf))

    def moment(self, start: float, end: float) -> GpuMoment | None:
        """The mean readings of the samples from ``start`` to before ``end``; when none fell there, the sample
        before ``start`` (within ``HOLD_S``); None when there is none."""
        span = self._span(start, end)
        if span is None:
            return None
        low, high = span
        return GpuMoment(
            _mean(self.util[low:high]), _mean(self.memory_pct[low:high]), _mean(self.memory_bytes[low:high]), self.gpus
        )

    def _span(self, start: float, end: float) -> tuple[int, int] | None:
        low = bisect.bisect_left(self.t, start)
        high = bisect.bisect_left(self.t, end)
        if high > low:
            return low, high
        if low > 0 and start - self.t[low - 1] <= HOLD_S:
            return low - 1, low
        return None

    def columns(self, edges: Sequence[float]) -> tuple[list[float | None], list[float | None]]:
        """Utilisation and memory (%) of each column between consecutive ``edges`` (ascending times)."""
        moments = [self.moment(start, end) for start, end in itertools.pairwise(edges)]
        return [m.util_pct if m else None for m in moments], [m.memory_pct if m else None for m in moments]


def _mean(values: array[float]) -> float | None:
    finite = [v for v in values if not math.isnan(v)]
    return math.fsum(finite) / len(finite) if finite else None
