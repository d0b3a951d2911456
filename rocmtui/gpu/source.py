"""What the UI needs from telemetry: a source of SampleSets. The sampler implements it; tests replay one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from rocmtui.gpu.sample import SampleSet

SampleListener = Callable[[SampleSet], None]


class TelemetrySource(Protocol):
    """A running feed of SampleSets with a bounded history.

    Listeners are called from the source's own thread: they must only hand the sample on
    (``app.post_message``), never draw or block.
    """

    @property
    def interval_s(self) -> float:
        """Seconds between samples."""
        ...

    @interval_s.setter
    def interval_s(self, value: float) -> None: ...

    def start(self) -> None:
        """Begin sampling (idempotent)."""

    def stop(self) -> None:
        """Stop sampling and release the backend; returns promptly."""

    def subscribe(self, listener: SampleListener) -> None:
        """Call ``listener`` with each new SampleSet."""

    def history(self) -> tuple[SampleSet, ...]:
        """The retained SampleSets, oldest first (bounded: memory stays flat)."""
        ...
