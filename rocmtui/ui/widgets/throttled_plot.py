"""A PlotextPlot that redraws at its own rate, and only when its data changed.

Data arrives (``mark_dirty``) as often as it likes; a timer replots at most once per ``period_s``.
A scrolling plot repaints every cell it covers, so this is what keeps the screen cheap to draw.
"""

from __future__ import annotations

import math

from textual_plotext import PlotextPlot

PLOT_PERIOD_S = 2.0
"""Seconds between redraws of a plot whose data changed. A redraw of the loss plot costs 15-40 ms of
the UI thread (plotext build and parse, measured on a 2-core EPYC), time the trainer's Python loop
shares through the GIL, and repaints every cell of the plot: 0.5 Hz keeps both small."""

RICH_COLOR = {
    "gray": "grey62",
    "cyan+": "bright_cyan",
    "orange": "dark_orange",
    "magenta+": "bright_magenta",
    "green+": "bright_green",
}
"""Rich names for the plotext colours used, for legends drawn outside the plot."""


class ThrottledPlot(PlotextPlot):
    """Subclasses implement ``draw`` with ``self.plt``; nobody calls ``replot`` per message."""

    def __init__(self, *, period_s: float = PLOT_PERIOD_S, id: str | None = None, classes: str | None = None) -> None:
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
        # Hidden (monitor view) or under a dialog: keep the data, draw when shown again.
        if self.dirty and self.screen.is_current:
            self.replot()

    def replot(self) -> None:
        """Clear, draw, refresh: the textual-plotext idiom."""
        self.dirty = False
        self.replots += 1
        self.plt.clear_figure()
        self.draw()
        self.refresh()

    def set_legend(self, title: str, colors: dict[str, str]) -> None:
        """Title and legend (line name -> plotext colour) in the border title, off the plot area."""
        legend = " ".join(f"[{RICH_COLOR.get(c, c)}]━ {name}[/]" for name, c in colors.items())
        self.border_title = f"{title} {legend}" if legend else title

    def epoch_line(self, xs: list[float], ys: list[float], color: str) -> None:
        """A per-epoch series: a thin line through a marked point at each epoch."""
        self.plt.plot(xs, ys, color=color, marker="braille")
        self.plt.scatter(xs, ys, color=color, marker="●")

    def epoch_axis(self, total_epochs: int, last_x: float) -> None:
        """x from 0 to the run's epochs, with whole-epoch ticks (at most about eight)."""
        end = max(float(total_epochs), last_x, 1.0)
        step = max(1, math.ceil(end / 8))
        self.plt.xlim(0, end * 1.02)  # a little room so points at the last epoch stay inside the frame
        self.plt.xticks(list(range(0, math.ceil(end) + 1, step)))
        self.plt.xlabel("epoch")

    def draw(self) -> None:
        """Plot the current data with ``self.plt``; each plot overrides this (the base draws empty axes)."""
