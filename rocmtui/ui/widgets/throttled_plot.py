"""A PlotextPlot that redraws at its own rate, and only when its data changed.

Data arrives (``mark_dirty``) as often as it likes; a timer replots at most once per ``period_s``.
A scrolling plot repaints every cell it covers, so this is what keeps the screen cheap to draw.
"""

from __future__ import annotations

from textual_plotext import PlotextPlot


class ThrottledPlot(PlotextPlot):
    """Subclasses implement ``draw`` with ``self.plt``; nobody calls ``replot`` per message."""

    def __init__(self, *, period_s: float = 1.0, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.period_s = period_s
        self.dirty = True
        self.replots = 0
        """Redraws done so far (the cost report and tests read it)."""

    def on_mount(self) -> None:
        super().on_mount()
        self.set_interval(self.period_s, self._tick)

    def mark_dirty(self) -> None:
        """The data changed; the next tick redraws."""
        self.dirty = True

    def _tick(self) -> None:
        if self.dirty:
            self.replot()

    def replot(self) -> None:
        """Clear, draw, refresh: the textual-plotext idiom."""
        self.dirty = False
        self.replots += 1
        self.plt.clear_figure()
        self.draw()
        self.refresh()

    def draw(self) -> None:
        """Plot the current data with ``self.plt``."""
        raise NotImplementedError
