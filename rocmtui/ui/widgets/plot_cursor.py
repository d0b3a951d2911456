"""The cursor and x-axis keys over the training screen's plots: one cursor, the same x on each plot.

Left and right move it a column of the loss plot (shift, PageUp and PageDown ten), Home and End to the
first and last point, a click or the mouse over a plot puts it there, ``c`` shows or hides it and escape
hides it; ``x`` cycles the axis (step, time since the start, wall clock). PageUp, PageDown, Home, End and
escape act only while the cursor is shown (``SkipAction``): otherwise they are the epoch table's.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.actions import SkipAction

from rocmtui.ui.state.cursor import PlotView
from rocmtui.ui.widgets.throttled_plot import ThrottledPlot


class CursorKeys:
    """Moves ``view``'s cursor over the x range ``lead`` drew last, and redraws ``plots`` at once."""

    def __init__(self, view: PlotView, lead: ThrottledPlot, plots: Sequence[ThrottledPlot]) -> None:
        self.view = view
        self.lead = lead
        self.plots = tuple(plots)
        for plot in self.plots:
            plot.plot_view = view

    @property
    def shown(self) -> bool:
        return self.view.cursor is not None

    def drawn(self) -> tuple[float, float] | None:
        """The first and last x drawn on the lead plot, on the axis shown."""
        canvas = self.lead.canvas
        return (canvas.x_low, canvas.x_high) if canvas.x_low <= canvas.x_high else None

    def move(self, columns: int, *, only_shown: bool = False) -> None:
        """``columns`` columns right (left when negative); a hidden cursor first shows at the newest point."""
        if only_shown and not self.shown:
            raise SkipAction
        span = self.drawn()
        if span is None:
            return
        cursor = self.view.cursor
        self.place(span[1] if cursor is None else cursor + columns * self.lead.column_span)

    def jump(self, last: bool) -> None:
        """To the last point drawn (or the first)."""
        span = self.drawn()
        if not self.shown or span is None:
            raise SkipAction
        self.place(span[1] if last else span[0])

    def place(self, axis_x: float) -> None:
        """The cursor at ``axis_x`` (kept within what is drawn), both plots redrawn."""
        span = self.drawn()
        if span is not None:
            axis_x = min(max(axis_x, span[0]), span[1])
        self.view.cursor = axis_x
        self.redraw()

    def toggle(self) -> None:
        if self.shown:
            self.hide()
        else:
            self.move(0)

    def hide(self) -> None:
        """Hide the cursor: the plots follow the run again."""
        if not self.shown:
            raise SkipAction
        self.view.cursor = None
        self.redraw()

    def next_axis(self) -> None:
        """The next x axis; the cursor stays on the same point of the run."""
        self.view.next_mode(self.lead.timeline)
        if self.lead.is_mounted:
            self.lead.measure()  # the keys that follow move over the new axis' range, before the next paint
        self.redraw()

    def redraw(self) -> None:
        for plot in self.plots:
            if plot.is_mounted:
                plot.replot()
