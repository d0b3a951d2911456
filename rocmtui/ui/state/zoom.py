"""What part of x every plot shows: the zoom key's cycle, and whether an epoch axis spans what was trained or the
whole run planned.

One zoom for all plots (``z``): on an epoch axis the newest epochs or steps, on a step axis (a script's) the
newest share of its steps or its newest 100 steps.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Zoom:
    """What a plot shows: the whole run, the newest ``epochs``, or the newest ``steps``; on a step axis
    (a script's run, which may have no epochs) ``share`` of its steps stands for ``epochs``."""

    epochs: float | None = None
    steps: int | None = None
    share: float | None = None

    @property
    def whole(self) -> bool:
        return self.epochs is None and self.steps is None

    def span(self, steps_per_epoch: int | None) -> float | None:
        """Epochs shown (the x axis counts epochs); None: the whole run, or steps of a run not yet reporting."""
        if self.steps is not None:
            return self.steps / steps_per_epoch if steps_per_epoch else None
        return self.epochs

    def step_span(self, end: float) -> float | None:
        """Steps shown on a step axis that ends at step ``end``; None: all of them."""
        if self.steps is not None:
            return float(self.steps)
        return end * self.share if self.share is not None else None

    @property
    def name(self) -> str:
        """Short: it shares the plot's title with the legend (at 80 columns, about 40 columns)."""
        if self.steps is not None:
            return f"last {self.steps} steps"
        return "all" if self.epochs is None else f"last {self.epochs:g} ep"

    @property
    def step_name(self) -> str:
        """The name on a step axis."""
        if self.share is not None and self.steps is None:
            return f"last {self.share:.0%}"
        return self.name


WINDOWS: tuple[Zoom, ...] = (
    Zoom(),
    Zoom(epochs=5.0, share=0.5),
    Zoom(epochs=1.0, share=0.1),
    Zoom(steps=100),
)
"""The zoom key's cycle, newest last: the whole run, 5 epochs, 1 epoch, 100 steps (the loss now, in a run of
long epochs); on a step axis: all, the newest half, the newest tenth, 100 steps."""
