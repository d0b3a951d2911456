"""Time to accuracy: when a run's test accuracy first reached each of its top whole percents."""

from __future__ import annotations

from collections.abc import Sequence

from rocmtui.base.units import NA, fmt_span
from rocmtui.events import EpochCompleted, RunFinished


def accuracy_times(epochs: Sequence[EpochCompleted], finished: RunFinished | None = None) -> list[tuple[float, float]]:
    """(test accuracy, run clock) at each epoch's end, then the final model's with test-time augmentation.

    The clock is the run's own: training time, test passes and pauses left out. Recordings older than
    ``EpochCompleted.elapsed_s`` add up the epochs' ``seconds`` instead.
    """
    points: list[tuple[float, float]] = []
    summed = 0.0
    for epoch in epochs:
        summed += epoch.seconds
        points.append((epoch.test_acc, epoch.elapsed_s or summed))
    if finished is not None and finished.tta_test_acc is not None:
        points.append((finished.tta_test_acc, finished.total_s))
    return points


def first_reached(points: Sequence[tuple[float, float]], fraction: float) -> float | None:
    """The clock when the accuracy first reached ``fraction`` (0.94 for 94%), or None."""
    return next((at for acc, at in points if acc + 1e-9 >= fraction), None)


def time_to_accuracy(epochs: Sequence[EpochCompleted], finished: RunFinished | None = None, milestones: int = 3) -> str:
    """``93% at 1.52s, 94% at 1.90s``: when the test accuracy first reached each of the top ``milestones``
    whole percents (one entry per moment: the highest percent reached then)."""
    points = accuracy_times(epochs, finished)
    if not points:
        return NA
    top = max(int(100 * acc + 1e-9) for acc, _ in points)
    firsts: dict[str, int] = {}  # one entry per moment as shown: the last epoch and the final pass are one
    for pct in range(max(0, top - milestones + 1), top + 1):
        at = first_reached(points, pct / 100)
        if at is not None:
            firsts[fmt_span(at)] = pct
    return ", ".join(f"{pct}% at {at}" for at, pct in firsts.items())
