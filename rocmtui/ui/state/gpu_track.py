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
        """The readings of the newest sample at or before ``when`` (within ``HOLD_S``), else the next one
        within ``HOLD_S``; None when no sample is that near."""
        index = bisect.bisect_right(self.t, when) - 1
        if index < 0 or when - self.t[index] > HOLD_S:
            index += 1
            if index >= len(self.t) or self.t[index] - when > HOLD_S:
                return None
        return GpuMoment(
            _known(self.util[index]), _known(self.memory_pct[index]), _known(self.memory_bytes[index]), self.gpus
        )

    def columns(self, edges: Sequence[float]) -> tuple[list[float | None], list[float | None]]:
        """Utilisation and memory (%) of each column between consecutive ``edges`` (ascending times)."""
        utils: list[float | None] = []
        memory: list[float | None] = []
        for start, end in itertools.pairwise(edges):
            low = bisect.bisect_left(self.t, start)
            high = bisect.bisect_left(self.t, end)
            if high > low:
                utils.append(_mean(self.util[low:high]))
                memory.append(_mean(self.memory_pct[low:high]))
            elif low > 0 and start - self.t[low - 1] <= HOLD_S:
                utils.append(_known(self.util[low - 1]))
                memory.append(_known(self.memory_pct[low - 1]))
            else:
                utils.append(None)
                memory.append(None)
        return utils, memory


def _known(value: float) -> float | None:
    return None if math.isnan(value) else value


def _mean(values: array[float]) -> float | None:
    finite = [v for v in values if not math.isnan(v)]
    return math.fsum(finite) / len(finite) if finite else None
