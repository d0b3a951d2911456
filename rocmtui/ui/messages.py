"""Messages that cross from worker threads to the UI, and the coalescing relay for samples.

Threading invariant: workers (the trainer, the sampler) only ``post_message``; handlers on the UI
thread own all state and widgets.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from textual.message import Message

from rocmtui.events import TrainEvent
from rocmtui.gpu.sample import SampleSet


class TrainEventMessage(Message):
    """One event from ``train()``; never dropped (the engine throttles at the source)."""

    def __init__(self, event: TrainEvent) -> None:
        super().__init__()
        self.event = event


class GpuSampled(Message):
    """New telemetry is waiting; the handler reads the newest SampleSet from the relay."""


class SampleRelay:
    """Hands the newest SampleSet to the UI thread with at most one message in flight.

    ``offer`` runs on the sampler's thread: it stores the sample and posts ``GpuSampled`` only if
    the previous one was taken, so a busy UI never builds a queue of stale samples.
    """

    def __init__(self, post: Callable[[Message], object]) -> None:
        self._post = post
        self._lock = threading.Lock()
        self._latest: SampleSet | None = None
        self._pending = False
        self.posted = 0
        """Messages posted so far (for tests and the cost report)."""

    def offer(self, sample_set: SampleSet) -> None:
        """Called by the sampler's listener thread."""
        with self._lock:
            self._latest = sample_set
            if self._pending:
                return
            self._pending = True
            self.posted += 1
        self._post(GpuSampled())

    def take(self) -> SampleSet | None:
        """Called on the UI thread: the newest SampleSet, re-arming the next message."""
        with self._lock:
            self._pending = False
            return self._latest

    @property
    def latest(self) -> SampleSet | None:
        return self._latest
