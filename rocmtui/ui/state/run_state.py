"""What the training screen knows about the run, folded from events; plain Python, no widgets.

The app feeds every event to ``RunState.apply``; widgets read the state when they redraw. Keeping
it apart from the widgets lets the plots redraw at their own rate from one shared source.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from rocmtui.base.series import Series
from rocmtui.events import (
    EpochCompleted,
    EpochMetrics,
    MetricsLogged,
    RunStarted,
    StepsCompleted,
    TrainEvent,
)
from rocmtui.run.fold import Phase, RunFold
from rocmtui.ui.state.scalars import SMOOTHING_WEIGHTS, Scalars, new_series
from rocmtui.ui.state.timeline import Timeline

__all__ = ["SMOOTHING_WEIGHTS", "Phase", "RunState", "new_series"]
EMA_BETA = 0.98
"""Default smoothing of the per-step loss line (about the last 50 steps); the view may choose another."""
ACC_VIEW = "Acc %"
"""A train run's first view in the second plot: train and test accuracy per epoch, in percent."""


@dataclass
class RunState(RunFold):
    """The run as the screen shows it: the run's fold (``rocmtui.run.fold``) and the series it plots."""

    loss: Series = field(default_factory=new_series)
    """Every step's loss against fractional epochs; also the scalars' ``loss`` (one series, kept once)."""
    scalars: Scalars = field(default_factory=Scalars)
    """The series a tracked script logs (``rocmtui.ui.state.scalars``)."""
    timeline: Timeline = field(default_factory=Timeline)
    """When each point happened: x against the run's clock and the wall clock (the plots' time axes)."""
    clock: Callable[[], float] = time.monotonic
    """Where the running clock reads the time (tests give a fake one)."""
    script: str | None = None
    """The script's run name when the viewer knows, before any event, that the run is a script's (``rocmtui run``,
    or a folder without a ``config.json``): no training's titles, epochs or checkpoints are shown meanwhile."""
    _clocked_at: float | None = None
    """``clock()`` when ``_anchor_s`` was taken: the elapsed clock runs on from there."""
    _anchor_s: float = 0.0

    def apply(self, event: TrainEvent) -> None:
        """Fold one event into the state, then into the series."""
        super().apply(event)
        self.timeline.apply(event)
        if isinstance(event, RunStarted):
            self.scalars.x_name = "epoch"
            self.scalars.groups = {ACC_VIEW: (("train", "train_acc"), ("test", "test_acc"))}
        elif isinstance(event, StepsCompleted):
            self._add_steps(event)
        elif isinstance(event, EpochCompleted):
            self._add_epoch_scalars(event)
            if event.elapsed_s > 0:  # the run's clock after the epoch's bookkeeping (its test pass left out)
                self._anchor_s, self._clocked_at = event.elapsed_s, self.clock()
        elif isinstance(event, MetricsLogged):
            self.scalars.add_metrics(event)
        elif isinstance(event, EpochMetrics):
            self.scalars.add_epoch(event)

    def _add_steps(self, event: StepsCompleted) -> None:
        self._anchor_s, self._clocked_at = event.elapsed_s, self.clock()
        spe = max(1, event.steps_per_epoch)
        first = event.step - len(event.losses) + 1
        self.loss.cut_from(first / spe)  # order by step: steps trained again after a resume replace the old ones
        for offset, loss in enumerate(event.losses):
            self.loss.add((first + offset) / spe, loss)  # a NaN step is not kept: RunFailed reports it
        if len(self.loss):
            self.scalars.steps.setdefault("loss", self.loss)  # the loss plot's: kept out of the cycle
        self.scalars.add_points(event.step / spe, {"lr": event.lr, "images_per_s": event.images_per_s})

    def _add_epoch_scalars(self, event: EpochCompleted) -> None:
        """The epoch's readings as series against the epoch (``n`` cycles them in the second plot)."""
        values = {
            "train_acc": 100.0 * event.train_acc,
            "test_acc": 100.0 * event.test_acc,
            "train_loss": event.train_loss,
            "test_loss": event.test_loss,
            "images_per_s": event.images_per_s,
            "epoch_s": event.seconds,
        }
        self.scalars.add_points(float(event.epoch + 1), values, per_epoch=True)

    @property
    def is_script(self) -> bool:
        """A script's run (``rocmtui.track()``, or known to be one before its first event), not a training's."""
        if self.started is not None:
            return False
        return self.tracked is not None or self.script is not None or self.scalars.any

    @property
    def current_epoch(self) -> int:
        """0-based epoch in progress (or the last one, once done)."""
        if self.last_steps is not None:
            return self.last_steps.epoch
        return self.started.start_epoch if self.started else 0

    @property
    def testing(self) -> bool:
        """True between an epoch's last step and its EpochCompleted: the test pass runs."""
        steps = self.last_steps
        if self.phase != "training" or steps is None or steps.epoch_step < steps.steps_per_epoch:
            return False
        return not self.epochs or self.epochs[-1].epoch < steps.epoch

    @property
    def elapsed_s(self) -> float | None:
        """Training time, pauses and test passes excluded: the run's own figure, running on between its
        reports. It holds while paused and through an epoch's test pass (the run times those apart), and
        ends at the run's total.
        """
        if self.finished is not None:
            return self.finished.total_s
        if self.last_steps is None and self.scalars.last is not None:  # a tracked script
            return self.scalars.last.elapsed_s
        if self.last_steps is None:
            return None
        if self._clocked_at is None or self.phase not in ("training", "stopping") or self.testing:
            return self._anchor_s
        return self._anchor_s + max(0.0, self.clock() - self._clocked_at)

    def pause(self) -> None:
        """The viewer paused the run: the clock holds where it is."""
        if self.last_steps is not None:
            self._anchor_s = self.elapsed_s or 0.0
        self.phase = "paused"

    def resume(self) -> None:
        self.phase = "training"
        self._clocked_at = self.clock()

    @property
    def eta_s(self) -> float | None:
        """Remaining time, test passes included: whole epochs as the recent ones took (training and test),
        less the part of this epoch already trained; before the first epoch ends, the step rate's guess."""
        steps, started = self.last_steps, self.started
        if steps is None or started is None or not self.running:
            return None
        done_now = steps.epoch_step / max(1, steps.steps_per_epoch) if steps.epoch >= self.epochs_done else 0.0
        left = max(0.0, self.total_epochs - self.epochs_done - done_now)
        recent = [e.seconds + e.eval_s for e in self.epochs[-3:] if e.seconds > 0]
        if recent:
            return left * statistics.median(recent)
        if steps.images_per_s <= 0:
            return None
        return left * steps.steps_per_epoch * started.config.batch_size / steps.images_per_s
