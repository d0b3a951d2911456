"""A PlotextPlot that redraws only when asked, and only when its data changed.

Data arrives (``mark_dirty``) as often as it likes; the screen's frame clock calls ``redraw_if_dirty``
at most once per ``PLOT_PERIOD_S``. A scrolling plot repaints every cell it covers, so this is what
keeps the screen cheap to draw.
"""

from __future__ import annotations

import math

from rich.text import Text
from textual.app import RenderResult
from textual.markup import escape
from textual_plotext import PlotextPlot

from rocmtui.base.text import plain
from rocmtui.ui.state.run_state import EMA_BETA

PLOT_PERIOD_S = 2.0
LABEL_MIN_HEIGHT = 14
"""A plot at least this many rows high names its x axis on a row of its own; a lower one keeps that row
for the data (the ticks and the title say what x is)."""
"""Seconds between redraws of a plot whose data changed. A redraw of the loss plot costs 15-40 ms of
the UI process (plotext build and parse, measured on a 2-core EPYC) and repaints every cell of the
plot: 0.5 Hz keeps both small."""

LEGEND_COLOR = {
    "gray": "ansi_bright_black",
    "cyan+": "ansi_bright_cyan",
    "orange": "ansi_yellow",
    "magenta+": "ansi_bright_magenta",
    "green+": "ansi_bright_green",
}
"""Textual names of the ANSI colours that plotext draws for the names used (256-colour codes 8, 14, 3,
13, 10), for legends drawn outside the plot in the same colours. The border title is Textual markup:
a name it does not know is not drawn in colour, and costs a failed parse at every repaint."""


def tick_step(span: float) -> float:
    """Epochs between x ticks in a window of ``span`` epochs: whole epochs (at most about eight ticks), or for a
    window of about one epoch or less the largest of 0.25, 0.1, 0.05 and 0.02 that gives three ticks (else 0.01)."""
    if span > 1.5:
        return float(max(1, math.ceil(span / 8)))
    return next((step for step in (0.25, 0.1, 0.05, 0.02) if step <= span / 3), 0.01)


class ThrottledPlot(PlotextPlot):
    """Subclasses implement ``draw`` with ``self.plt``; nobody calls ``replot`` per message."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.dirty = True
        self.replots = 0
        """Redraws done so far (the cost report and tests read it)."""
        self.smoothing = EMA_BETA
        """Weight of the EMA drawn over a per-step line: one of ``SMOOTHING_WEIGHTS``, at each of which every
        series keeps its EMA."""

    def mark_dirty(self) -> None:
        """The data changed; the next due frame redraws."""
        self.dirty = True

    def redraw_if_dirty(self) -> None:
        # Hidden (monitor view) or under a dialog: keep the data, draw when shown again.
        if self.dirty and self.screen.is_current:
            self.replot()

    def replot(self) -> None:
        """Repaint now with the current data (``render`` draws it)."""
        self.dirty = False
        self.replots += 1
        self.refresh()

    def render(self) -> RenderResult:
        """Draw the data afresh at every render, and show a failure instead of raising it.

        Textual renders again on resize and when a dialog closes, and plotext's build is not repeatable
        on one figure: in log scale it takes the log of values it already took the log of. A plot that
        cannot be drawn must not end the app while a run trains.
        """
        try:
            self.plt.clear_figure()
            self.plt.xaxes(True, False)  # the widget's border frames the plot: no top line, no right line,
            self.plt.yaxes(True, False)  # one more row and column for the data
            self.draw()
            return super().render()
        except Exception as err:  # plotext raises plain ValueError/ZeroDivisionError on odd data
            return Text(plain(f"cannot draw this plot: {type(err).__name__}: {err}"), style="bold red")

    def set_legend(self, title: str, colors: dict[str, str]) -> None:
        """Title and legend (line name -> plotext colour) in the border title, off the plot area."""
        legend = " ".join(f"[{LEGEND_COLOR.get(c, c)}]━ {escape(name)}[/]" for name, c in colors.items())
        self.border_title = f"{escape(title)} {legend}" if legend else escape(title)

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
        self.x_label("epoch")

    def window_axis(self, low: float, high: float) -> None:
        """x over the zoomed part of the run only, ticked every ``tick_step(span)`` epochs."""
        span = max(high - low, 1e-9)
        step = tick_step(span)
        ticks = [i * step for i in range(math.ceil(low / step - 1e-9), math.floor(high / step + 1e-9) + 1)]
        self.plt.xlim(low, low + span * 1.02)
        self.plt.xticks(ticks, [f"{t:g}" for t in ticks])
        self.x_label("epoch")

    def x_label(self, label: str) -> None:
        """Name the x axis when the plot is tall enough to spare the row (``LABEL_MIN_HEIGHT``)."""
        if self.size.height >= LABEL_MIN_HEIGHT:
            self.plt.xlabel(label)

    def draw(self) -> None:
        """Plot the current data with ``self.plt``; each plot overrides this (the base draws empty axes)."""
