"""Messages that cross from worker threads to the UI, and the coalescing relay for samples.

Threading invariant: workers (the trainer, the sampler) only ``post_message``; handlers on the UI
thread own all state and widgets.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

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


class ClusterRead(Message):
    """A new round over the cluster is waiting; the handler reads the newest from the relay."""


T = TypeVar("T")


class Relay(Generic[T]):
    """Hands the newest item to the UI thread with at most one message in flight.

    ``offer`` runs on the source's thread: it stores the item and posts ``message()`` only if the previous
    one was taken, so a busy UI never builds a queue of stale items.
    """

    def __init__(self, post: Callable[[Message], object], message: Callable[[], Message]) -> None:
        self._post = post
        self._message = message
        self._lock = threading.Lock()
        self._latest: T | None = None
        self._pending = False
        self.posted = 0
        """Messages posted so far (for tests and the cost report)."""

    def offer(self, item: T) -> None:
        """Called by the source's listener thread."""
        with self._lock:
            self._latest = item
            if self._pending:
                return
            self._pending = True
            self.posted += 1
        self._post(self._message())

    def take(self) -> T | None:
        """Called on the UI thread: the newest item, re-arming the next message."""
        with self._lock:
            self._pending = False
            return self._latest

    @property
    def latest(self) -> T | None:
        return self._latest


class SampleRelay(Relay[SampleSet]):
    """The relay of the telemetry samples (``GpuSampled``)."""

    def __init__(self, post: Callable[[Message], object]) -> None:
        super().__init__(post, GpuSampled)
