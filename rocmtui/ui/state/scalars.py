"""Every scalar series of a run, folded from its events; no widgets.

Any names a tracked script (``rocmtui.track()``) logs become series against the step; a ``train`` run's
readings (loss, lr and images/s at each report; losses, accuracies, images/s and time per epoch) become
series against the epoch. Which ones the two plots show is decided here: a loss first, the others in the
order they appeared (accuracies first), cycled from the keyboard.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rocmtui.base.series import Series
from rocmtui.events import EpochMetrics, MetricsLogged

SMOOTHING_WEIGHTS = (0.0, 0.6, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995)
"""The EMA weights the smoothing keys step through, as TensorBoard's slider (0: no smoothing)."""
SERIES_BUCKETS = 8192
"""Buckets each series of a run keeps (``rocmtui.base.series``): every point of a run of up to this many
steps, then neighbours merge in pairs, so memory stays flat over days and a step costs O(1)."""


def new_series() -> Series:
    """A series of the run, with the EMA at each weight the smoothing keys step through."""
    return Series(SMOOTHING_WEIGHTS, SERIES_BUCKETS)


def _named(kept: dict[str, Series], name: str) -> Series:
    """``kept[name]``, a new series the first time."""
    series = kept.get(name)
    if series is None:
        series = kept[name] = new_series()
    return series


def is_loss(name: str) -> bool:
    return "loss" in name.lower()


GROUP = "group:"
"""Prefix of a view that draws several per-epoch series together (``Scalars.groups``)."""
EPOCH = "epoch:"
"""Prefix of the key of a per-epoch series (``Scalars.epochs``); a per-step one's key is its name."""


@dataclass
class Scalars:
    """Every series of a tracked run: per step (``steps``) and per epoch (``epochs``, x = step logged at)."""

    steps: dict[str, Series] = field(default_factory=dict)
    epochs: dict[str, Series] = field(default_factory=dict)
    last: MetricsLogged | None = None
    previous: MetricsLogged | None = None
    epoch_events: list[EpochMetrics] = field(default_factory=list)
    """Each ``run.log_epoch`` of a tracked script, in order (the epoch table's rows)."""
    x_name: str = "step"
    """What x counts: ``step`` (a tracked script) or ``epoch`` (a train run; fractional within an epoch)."""
    groups: dict[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    """Views that draw several per-epoch series in one plot, by title: (legend name, series name) each."""

    def add_points(self, x: float, values: dict[str, float], *, per_epoch: bool = False) -> None:
        """One point of each series at ``x``; points at or after ``x`` are forgotten first (a run resumed
        from an earlier checkpoint trains them again)."""
        kept = self.epochs if per_epoch else self.steps
        for name, value in values.items():
            series = _named(kept, name)
            series.cut_from(x)
            series.add(x, value)

    def add_metrics(self, event: MetricsLogged) -> None:
        """Every value of the window at its step (one mean per window in streams before format 4)."""
        points = event.points()
        first = min((steps[0] for steps, _ in points.values() if steps), default=event.step)
        if self.last is not None and first <= self.last.step:  # the script started over: its steps again
            for series in self.steps.values():
                series.cut_from(float(first))
        self.previous, self.last = self.last, event
        for name, (steps, values) in points.items():
            _named(self.steps, name).extend(steps, values)

    def add_epoch(self, event: EpochMetrics) -> None:
        self.epoch_events.append(event)
        x = float(event.step if event.step is not None else (self.last.step if self.last else event.epoch))
        for name, value in event.values.items():
            _named(self.epochs, name).add(x, value)

    @property
    def last_epoch(self) -> EpochMetrics | None:
        return self.epoch_events[-1] if self.epoch_events else None

    @property
    def any(self) -> bool:
        return bool(self.steps or self.epochs)

    @property
    def loss_name(self) -> str | None:
        """The step series the loss plot shows: ``loss`` itself, else the first loss-like name, else the first."""
        names = list(self.steps)
        if "loss" in self.steps:
            return "loss"
        return next((n for n in names if is_loss(n)), names[0] if names else None)

    def epoch_losses(self) -> list[str]:
        """Per-epoch series drawn on the loss plot (``val_loss``...)."""
        return [name for name in self.epochs if is_loss(name)]

    def others(self) -> list[str]:
        """What the second plot cycles through: every series but the loss plot's, epoch accuracies first."""
        loss, on_loss = self.loss_name, set(self.epoch_losses())
        grouped = {name for members in self.groups.values() for _, name in members}
        names = [GROUP + title for title in self.groups]  # shown from the start, empty until their first epoch
        names += [EPOCH + n for n in self.epochs if n not in on_loss and n not in grouped]
        names += [n for n in self.steps if n != loss]
        names += [EPOCH + n for n in self.epoch_losses()]  # in the order seen
        return sorted(names, key=lambda n: 0 if "acc" in n.lower() else 1)  # stable: otherwise first seen first

    def members(self, key: str) -> list[tuple[str, Series]]:
        """The series a view draws, with their legend names (one, unnamed, unless ``key`` is a group)."""
        if key.startswith(GROUP):
            pairs = self.groups.get(key.removeprefix(GROUP), ())
            return [(legend, self.epochs[name]) for legend, name in pairs if name in self.epochs]
        series = self.series(key)
        return [("", series)] if series is not None else []

    def series(self, key: str) -> Series | None:
        if key.startswith(EPOCH):
            return self.epochs.get(key.removeprefix(EPOCH))
        return self.steps.get(key)

    @property
    def steps_per_s(self) -> float | None:
        last, prev = self.last, self.previous
        if last is None or prev is None or last.elapsed_s <= prev.elapsed_s or last.step <= prev.step:
            return None
        return (last.step - prev.step) / (last.elapsed_s - prev.elapsed_s)
