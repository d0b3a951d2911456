"""The part of a TelemetrySource that does not depend on where samples come from.

Bounded history, listeners, a run-time settable interval and a daemon thread that calls
``_tick()`` every interval until stopped. ``Sampler`` (live hardware) and ``ReplaySource``
(recordings) both build on it as a ``Feed`` (of SampleSets); the cluster source builds on the same
``PacedFeed`` with rounds of many hosts as its items.
"""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

from rocmtui.config import MonitorConfig
from rocmtui.gpu.sample import SampleSet

log = logging.getLogger(__name__)


def clamp_interval(value: float) -> float:
    """``value`` limited to MonitorConfig's 0.1 .. 60 s range."""
    return min(max(float(value), MonitorConfig.MIN_INTERVAL_S), MonitorConfig.MAX_INTERVAL_S)


T = TypeVar("T")


class PacedFeed(ABC, Generic[T]):
    """History, listeners and the timing thread over items of type ``T``; subclasses implement ``_tick()``."""

    thread_name = "rocmtui-feed"

    def __init__(self, interval_s: float, history_len: int) -> None:
        self._interval_s = clamp_interval(interval_s)
        self._history: deque[T] = deque(maxlen=max(1, history_len))
        self._lock = threading.Lock()
        self._listeners: list[Callable[[T], None]] = []
        self._stop_event = threading.Event()
        self._wake = threading.Event()
        """Set to cut the wait between ticks short (stop, or a new interval)."""
        self._thread: threading.Thread | None = None

    @property
    def interval_s(self) -> float:
        """Seconds between samples; setting it clamps to 0.1 .. 60 and takes effect at once."""
        return self._interval_s

    @interval_s.setter
    def interval_s(self, value: float) -> None:
        self._interval_s = clamp_interval(value)
        self._wake.set()

    @property
    def latest(self) -> T | None:
        """The newest item, or None before the first."""
        with self._lock:
            return self._history[-1] if self._history else None

    def history(self) -> tuple[T, ...]:
        """The retained items, oldest first (a snapshot)."""
        with self._lock:
            return tuple(self._history)

    def subscribe(self, listener: Callable[[T], None]) -> None:
        """Call ``listener(item)`` from the feed's thread for each new item."""
        with self._lock:
            self._listeners.append(listener)

    def start(self) -> None:
        """Start the daemon thread (idempotent; a stopped feed stays stopped)."""
        if self._thread is not None or self._stop_event.is_set():
            return
        self._thread = threading.Thread(target=self._run, name=self.thread_name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread and wait for it; the wait between ticks is cut short at once."""
        self._stop_event.set()
        self._wake.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    @property
    def stopped(self) -> bool:
        """True once ``stop()`` was called (or a recording played to its end)."""
        return self._stop_event.is_set()

    @property
    def running(self) -> bool:
        """True while the thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def _publish(self, sample_set: T) -> None:
        """Append to the history and hand to every listener; a failing listener is logged, not fatal."""
        with self._lock:
            self._history.append(sample_set)
            listeners = list(self._listeners)
        for listener in listeners:
            try:
                listener(sample_set)
            except Exception:
                # A listener bug must not stop telemetry for everyone: it is logged with its
                # traceback and the next sample is delivered as usual.
                log.exception("telemetry listener %r failed", listener)

    @abstractmethod
    def _tick(self) -> None:
        """Produce the next item (through ``_publish``); called every interval on the feed's thread."""

    def _run(self) -> None:
        next_due = time.monotonic()
        while not self._stop_event.is_set():
            now = time.monotonic()
            if now >= next_due:
                try:
                    self._tick()
                except Exception:
                    # A bug in a tick must not silently end telemetry for the session: it is logged
                    # with its traceback and the next tick runs as usual.
                    log.exception("telemetry tick failed")
                next_due += self._interval_s
                if next_due < time.monotonic():  # fell behind (a slow tick): skip, do not burst
                    next_due = time.monotonic() + self._interval_s
                continue
            self._wake.wait(next_due - now)
            if self._wake.is_set():
                self._wake.clear()
                # A new interval counts from the last tick, so "+" feels immediate.
                next_due = min(next_due, time.monotonic() + self._interval_s)


class Feed(PacedFeed[SampleSet]):
    """A PacedFeed of SampleSets: what every TelemetrySource here builds on."""

    def __init__(self, interval_s: float, history_len: int) -> None:
        super().__init__(interval_s, history_len)
        self._first_at: float | None = None

    def _publish(self, sample_set: SampleSet) -> None:
        if self._first_at is None:
            self._first_at = sample_set.timestamp
        super()._publish(sample_set)

    def span(self) -> tuple[float, float] | None:
        """The times of the first and the newest sample published (the first kept even when the bounded
        history has let it go); None before any. What a recording says it covers."""
        latest = self.latest
        return None if self._first_at is None or latest is None else (self._first_at, latest.timestamp)
