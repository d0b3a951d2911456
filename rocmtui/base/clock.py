"""A run's own clock: wall time since it started, less its pauses and the work it sets aside (test passes).

A viewer's pause holds a run between two steps; the seconds it sat there are not training time, and neither
are the test passes between epochs. ``RunClock`` keeps both apart, so that elapsed times and rates count
only the training itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


class RunClock:
    """Seconds of running: ``now()`` excludes the time spent in ``hold`` and in ``set_aside``."""

    def __init__(self, before_s: float = 0.0, timer: Callable[[], float] = time.perf_counter) -> None:
        """``before_s``: seconds already run (a resumed run's); ``timer``: a monotonic clock in seconds."""
        self._timer = timer
        self._start = timer() - before_s
        self.paused_s = 0.0
        """Seconds spent held by pauses."""
        self.set_aside_s = 0.0
        """Seconds of the work run through ``set_aside``."""

    def now(self) -> float:
        return self._timer() - self._start - self.paused_s - self.set_aside_s

    def hold(self, still_paused: Callable[[], bool], wait: Callable[[], object]) -> float:
        """Call ``wait`` for as long as ``still_paused()`` says so (checked first); the seconds it took are
        left out of ``now()`` and returned."""
        began = self._timer()
        while still_paused():
            wait()
        held = self._timer() - began
        self.paused_s += held
        return held

    def set_aside(self, work: Callable[[], T]) -> tuple[T, float]:
        """``work()``'s result and its seconds, which are left out of ``now()``."""
        began = self._timer()
        result = work()
        seconds = self._timer() - began
        self.set_aside_s += seconds
        return result, seconds
