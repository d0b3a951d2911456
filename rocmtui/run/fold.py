"""A run's state folded from its events: the one fold that every viewer and the writer's status use.

``RunFold.apply`` takes each event in stream order (a resumed run's steps and epochs trained again replace
the earlier ones). The training screen adds its series on top (``rocmtui.ui.state.run_state``); the session
writes ``status.json`` from it, the exporter its gauges, the headless printer its lines. Plain Python:
no torch, no Textual, and O(1) per event apart from an epoch trained again after a resume.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

from rocmtui.events import (
    EpochCompleted,
    EpochMetrics,
    MetricsLogged,
    RunFailed,
    RunFinished,
    RunStarted,
    StepsCompleted,
    TrackStarted,
    TrainEvent,
    WriterStalled,
)

Phase = Literal["starting", "training", "paused", "stopping", "finished", "failed"]


@dataclass
class RunFold:
    """What the events of one run have said so far. ``version`` grows at each event, so views can skip
    redraws when nothing changed."""

    started: RunStarted | None = None
    tracked: TrackStarted | None = None
    """A script reporting through ``rocmtui.track()`` (no RunStarted, no TrainConfig)."""
    last_steps: StepsCompleted | None = None
    last_metrics: MetricsLogged | None = None
    epochs: list[EpochCompleted] = field(default_factory=list)
    tracked_epochs: int = 0
    """``run.log_epoch`` calls of a tracked script."""
    finished: RunFinished | None = None
    failed: RunFailed | None = None
    phase: Phase = "starting"
    best_acc: float | None = None
    """The best test accuracy of every epoch, those before a resume included (``RunStarted.best_acc``)."""
    resumed_best: float | None = None
    """The best test accuracy before the newest start, as its checkpoint had it."""
    last_loss: float | None = None
    """The newest finite training loss a step reported."""
    stalled: bool = False
    """The writer holds the run but its heartbeat is stale (a viewer's ``WriterStalled``): not training."""
    version: int = 0

    def apply(self, event: TrainEvent) -> None:
        """Fold one event in."""
        self.version += 1
        if isinstance(event, RunStarted):
            self.started = event
            self.finished = self.failed = None  # a resume in the same folder: the earlier end is history
            self.resumed_best = event.best_acc
            self.best_acc = _best(self.best_acc, event.best_acc)
            self.phase = "training"
        elif isinstance(event, TrackStarted):
            self.tracked = event
            self.phase = "training" if self.phase == "starting" else self.phase
        elif isinstance(event, StepsCompleted):
            self.last_steps = event
            finite = [loss for loss in event.losses if math.isfinite(loss)]
            if finite:
                self.last_loss = finite[-1]
        elif isinstance(event, MetricsLogged):
            self.last_metrics = event
        elif isinstance(event, EpochCompleted):
            self._add_epoch(event)
        elif isinstance(event, EpochMetrics):
            self.tracked_epochs += 1
        elif isinstance(event, RunFinished):
            self.finished, self.phase = event, "finished"
        elif isinstance(event, RunFailed):
            self.failed, self.phase = event, "failed"
        elif isinstance(event, WriterStalled):
            self.stalled = event.stalled

    def _add_epoch(self, event: EpochCompleted) -> None:
        if self.epochs and self.epochs[-1].epoch >= event.epoch:  # trained again after a resume
            self.epochs = [e for e in self.epochs if e.epoch < event.epoch]
            self.best_acc = max((e.test_acc for e in self.epochs), default=self.resumed_best)
            self.best_acc = _best(self.best_acc, self.resumed_best)
        self.epochs.append(event)
        self.best_acc = _best(self.best_acc, event.test_acc)

    @property
    def running(self) -> bool:
        """True until the writer reports that the run ended."""
        return self.phase in ("starting", "training", "paused", "stopping")

    @property
    def begun(self) -> bool:
        """Whether the run's start was seen: a training's ``RunStarted`` or a tracked script's ``TrackStarted``."""
        return self.started is not None or self.tracked is not None

    @property
    def name(self) -> str:
        if self.tracked is not None:
            return self.tracked.name
        if self.started is not None:
            return f"{self.started.dataset} {self.started.config.model}"
        return ""

    @property
    def total_epochs(self) -> int:
        if self.started is not None:
            return self.started.config.epochs
        return self.epochs[-1].epochs if self.epochs else 0

    @property
    def epochs_done(self) -> int:
        """Epochs completed, those before a resume included (a branched run has no rows for them)."""
        if self.epochs:
            return self.epochs[-1].epoch + 1
        if self.tracked_epochs:
            return self.tracked_epochs
        if self.finished is not None:
            return self.finished.epochs_completed
        return self.started.start_epoch if self.started is not None else 0

    @property
    def step(self) -> int | None:
        """The newest step reported."""
        if self.last_steps is not None:
            return self.last_steps.step
        return self.last_metrics.step if self.last_metrics is not None else None

    @property
    def images_per_s(self) -> float | None:
        return self.last_steps.images_per_s if self.last_steps is not None else None

    @property
    def test_acc(self) -> float | None:
        """The newest epoch's test accuracy."""
        return self.epochs[-1].test_acc if self.epochs else None

    @property
    def reported_s(self) -> float:
        """The run's own clock at its newest report: training time, pauses and test passes left out."""
        if self.finished is not None:
            return self.finished.total_s
        clocks = [e.elapsed_s for e in (self.last_steps, self.last_metrics) if e is not None]
        if self.epochs and self.epochs[-1].elapsed_s > 0:
            clocks.append(self.epochs[-1].elapsed_s)
        return max(clocks, default=0.0)

    @property
    def headline(self) -> tuple[str, float] | None:
        """A tracked script's headline series and its newest value: its first loss, else its first series."""
        if self.last_metrics is None or not self.last_metrics.values:
            return None
        values = self.last_metrics.values
        name = next((n for n in values if "loss" in n.lower()), next(iter(values)))
        return name, values[name]

    @property
    def best_epoch(self) -> EpochCompleted | None:
        """The epoch with the highest test accuracy (first one on ties)."""
        return max(self.epochs, key=lambda e: e.test_acc, default=None)


def _best(a: float | None, b: float | None) -> float | None:
    """The higher of two accuracies, either of which may be unknown."""
    if a is None or b is None:
        return b if a is None else a
    return max(a, b)
