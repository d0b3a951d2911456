"""When each point of a run happened: x (epochs or steps) against the run's clock and the wall clock.

The plots draw against x, the run's clock (training time since the start, as the run counts it) or the wall
clock, and line the GPU samples up under the curves; the cursor's readout gives the times at its x. Each
report of the run (``StepsCompleted``, ``EpochCompleted``, ``MetricsLogged``, ``EpochMetrics``) adds one knot;
between knots, times are interpolated. Memory is bounded: past ``capacity`` knots every other one is dropped
(the newest kept), so a knot costs O(1) amortised and a long run keeps an even spread over its length.

The wall clock of a knot is its report's ``wall`` (the time it was made, pauses and test passes included). A
stream older than that field gives none: there it is the run's start (``started_at``) plus its clock plus the
test passes before it (``EpochCompleted.eval_s``, which the run's clock leaves out), and after a pause, which
neither clock holds, such wall times drift early by its length.
"""

from __future__ import annotations

import bisect
from array import array
from typing import Literal

from rocmtui.events import (
    EpochCompleted,
    EpochMetrics,
    MetricsLogged,
    RunStarted,
    StepsCompleted,
    TrackStarted,
    TrainEvent,
)

Clock = Literal["elapsed", "wall"]
CAPACITY = 4096
"""Knots kept at most (two arrays of doubles each: 96 KiB a run)."""


class Timeline:
    """Knots (x, seconds on the run's clock, wall time) in x order; ``at`` and ``x_at`` interpolate."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = max(4, capacity)
        self.x = array("d")
        self.elapsed = array("d")
        self.wall = array("d")
        self.started_at: float | None = None
        """Wall time of the run's start (None: not reported, the wall clock is unknown)."""
        self._eval_s = 0.0
        """Seconds of test passes so far: on the wall clock, not on the run's."""

    def __len__(self) -> int:
        return len(self.x)

    def apply(self, event: TrainEvent) -> None:
        """A knot for each report of the run (its x as the run's plots count it)."""
        if isinstance(event, RunStarted):
            self._start(event.started_at, float(event.start_epoch))
        elif isinstance(event, TrackStarted):
            self._start(event.started_at, 0.0)
        elif isinstance(event, StepsCompleted):
            self.add(event.step / max(1, event.steps_per_epoch), event.elapsed_s, event.wall)
        elif isinstance(event, EpochCompleted):
            if event.elapsed_s > 0:
                self.add(float(event.epoch + 1), event.elapsed_s, event.wall)
            self._eval_s += event.eval_s
        elif isinstance(event, MetricsLogged | EpochMetrics) and event.step is not None:
            self.add(float(event.step), event.elapsed_s, event.wall)

    def _start(self, started_at: float, x: float) -> None:
        self.started_at = started_at if started_at > 0 else None
        self._eval_s = 0.0
        self.cut_from(x)
        self.add(x, 0.0)

    def cut_from(self, x: float) -> None:
        """Forget the knots at or after ``x`` (a run resumed from an earlier checkpoint)."""
        keep = bisect.bisect_left(self.x, x)
        for values in (self.x, self.elapsed, self.wall):
            del values[keep:]

    def add(self, x: float, elapsed_s: float, wall: float = 0.0) -> None:
        """A knot; one at an x already passed forgets those after it first; the clocks never go back.
        ``wall``: when it happened (0: not known, reckoned from the run's start and clock)."""
        if self.x and x < self.x[-1]:
            self.cut_from(x)
        if self.elapsed:
            elapsed_s = max(elapsed_s, self.elapsed[-1])
        if wall <= 0:
            wall = (self.started_at or 0.0) + elapsed_s + self._eval_s
        if self.wall:
            wall = max(wall, self.wall[-1])
        if self.x and self.x[-1] == x:
            self.elapsed[-1], self.wall[-1] = elapsed_s, wall
            return
        self.x.append(x)
        self.elapsed.append(elapsed_s)
        self.wall.append(wall)
        if len(self.x) > self.capacity:
            for name in ("x", "elapsed", "wall"):
                values: array[float] = getattr(self, name)
                setattr(self, name, values[-1::-2][::-1])  # every other knot, the newest kept

    def column(self, clock: Clock) -> array[float]:
        return self.elapsed if clock == "elapsed" else self.wall

    @property
    def knows_wall(self) -> bool:
        return self.started_at is not None

    def at(self, x: float, clock: Clock) -> float | None:
        """The time on ``clock`` at ``x`` (held at the ends); None before the first knot is known."""
        return _interpolate(self.x, self.column(clock), x)

    def x_at(self, seconds: float, clock: Clock) -> float | None:
        """The x at a time on ``clock``: the inverse of ``at`` (the first x of a stretch without time)."""
        return _interpolate(self.column(clock), self.x, seconds)

    def span(self, clock: Clock) -> tuple[float, float] | None:
        """The first and last time known on ``clock``."""
        values = self.column(clock)
        return (values[0], values[-1]) if values else None


def _interpolate(keys: array[float], values: array[float], key: float) -> float | None:
    """``values`` at ``key`` along ascending ``keys``, linear between neighbours, held at the ends."""
    if not keys:
        return None
    index = bisect.bisect_left(keys, key)
    if index == 0:
        return values[0]
    if index >= len(keys):
        return values[-1]
    k0, k1 = keys[index - 1], keys[index]
    v0, v1 = values[index - 1], values[index]
    return v0 if k1 <= k0 else v0 + (v1 - v0) * (key - k0) / (k1 - k0)
