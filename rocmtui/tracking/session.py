"""A RunSession that also folds the events of tracked scripts into the run's status."""

from __future__ import annotations

from dataclasses import replace

from rocmtui.events import EpochMetrics, MetricsLogged, TrackStarted, TrainEvent
from rocmtui.run.session import RunSession


class TrackSession(RunSession):
    """``status.json`` says running once a script started, and carries its elapsed time and epochs.

    TrackStarted and EpochMetrics are made durable (fsynced), as RunStarted and EpochCompleted are.
    """

    def emit(self, event: TrainEvent) -> None:
        super().emit(event)
        if isinstance(event, TrackStarted | EpochMetrics):
            self.events.sync()

    def _update(self, event: TrainEvent, durable: bool) -> None:
        with self._status_lock:
            s = self.status
            if isinstance(event, TrackStarted):
                s = replace(s, state="running", name=event.name or s.name)
            elif isinstance(event, MetricsLogged):
                s = replace(s, elapsed_s=event.elapsed_s)
            elif isinstance(event, EpochMetrics):
                s = replace(s, epoch=s.epoch + 1, elapsed_s=event.elapsed_s)
            self.status = s
        super()._update(event, durable or isinstance(event, TrackStarted | EpochMetrics))
