"""Replaying a recorded run folder at a chosen pace: ``rocmtui demo``.

``Pace`` maps the recording's clock (the writer's ``t``, in seconds) to now: recorded second ``t`` is
due ``(t - origin) / speed`` seconds after the pass started; pausing stops that clock. ``paced_follow``
is a run source like ``follow``: it emits a folder's events as their time comes, and returns the final
one (None when the viewer leaves first). The GPU samples of the folder use the same ``Pace``, so curves
and readings stay in step.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from rocmtui.base.files import open_regular
from rocmtui.codec import CodecError
from rocmtui.events import Emit, RunControl, RunFailed, RunFinished, TrainEvent
from rocmtui.run.format import EVENTS, MAX_LINE_BYTES, check_header, decode_event_line

POLL_S = 0.1
"""The longest a paced follower waits before it looks at pause and leave again."""


class Pace:
    """The recording's clock, ``speed`` times as fast as recorded; thread-safe, pausable, restartable."""

    def __init__(self, origin: float, speed: float, clock: Callable[[], float] = time.monotonic) -> None:
        if speed <= 0:
            raise ValueError(f"speed must be positive, not {speed}")
        self.origin = origin
        self.speed = speed
        self._clock = clock
        self._lock = threading.Lock()
        self._started = clock()
        self._paused_at: float | None = None
        self.passes = 0
        """How many times the recording started over (``restart``)."""

    def now(self) -> float:
        """The recorded time reached so far in this pass."""
        with self._lock:
            wall = (self._paused_at if self._paused_at is not None else self._clock()) - self._started
        return self.origin + wall * self.speed

    def wait_s(self, t: float) -> float:
        """Wall seconds until recorded time ``t`` is due (0 when it is)."""
        return max(0.0, (t - self.now()) / self.speed)

    @property
    def paused(self) -> bool:
        return self._paused_at is not None

    def set_paused(self, paused: bool) -> None:
        with self._lock:
            if paused and self._paused_at is None:
                self._paused_at = self._clock()
            elif not paused and self._paused_at is not None:
                self._started += self._clock() - self._paused_at
                self._paused_at = None

    def restart(self) -> None:
        """Start the recording over from ``origin`` (``--loop``)."""
        with self._lock:
            self._started = self._clock()
            self._paused_at = None
            self.passes += 1


def recorded_events(run_dir: Path) -> list[tuple[float, TrainEvent]]:
    """A run folder's readable events with the writer's time ``t``, in stream order.

    Lines without a time (a version 1 stream) take the previous line's. OSError when there is no stream;
    UnsafeFileError when it is not a regular file; FormatError for a newer format.
    """
    out: list[tuple[float, TrainEvent]] = []
    t = 0.0
    path = run_dir / EVENTS
    with open(open_regular(path), "rb") as stream:
        for raw in stream:
            if len(raw) > MAX_LINE_BYTES or not raw.strip():
                continue
            try:
                line = decode_event_line(raw)
            except CodecError:
                continue
            if line.header is not None:
                check_header(line.header, str(path))
            if line.event is None:
                continue
            t = line.t if line.t is not None else t
            out.append((t, line.event))
    return out


def paced_follow(
    events: list[tuple[float, TrainEvent]], emit: Emit, control: RunControl, pace: Pace
) -> TrainEvent | None:
    """Emit ``events`` when ``pace`` reaches their time; returns the final event, or None when the viewer
    left (``control.leave``) or asked to stop (``control.stop``) first. The viewer's pause pauses the pace."""
    for t, event in events:
        while True:
            if control.leave.is_set() or control.stop.is_set():
                return None
            pace.set_paused(control.paused)
            wait = pace.wait_s(t)
            if wait <= 0 and not pace.paused:
                break
            control.leave.wait(min(wait, POLL_S) if not pace.paused else POLL_S)
        emit(event)
        if isinstance(event, RunFinished | RunFailed):
            return event
    return None
