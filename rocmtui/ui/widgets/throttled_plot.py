"""A PlotextPlot that redraws only when asked, and only when its data changed.

Data arrives (``mark_dirty``) as often as it likes; the screen's frame clock calls ``redraw_if_dirty``
at most once per ``PLOT_PERIOD_S``. A scrolling plot repaints every cell it covers, so this is what
keeps the screen cheap to draw.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace

from rich.text import Text
from textual import events
from textual.app import RenderResult
from textual.markup import escape
from textual.message import Message
from textual_plotext import PlotextPlot

from rocmtui.base.series import Series
from rocmtui.base.text import plain
from rocmtui.ui.look.axis_ticks import nice_step
from rocmtui.ui.state.compare import ComparedRun, run_color
from rocmtui.ui.state.cursor import PlotView
from rocmtui.ui.state.run_state import EMA_BETA, SMOOTHING_WEIGHTS, RunState
from rocmtui.ui.state.timeline import Timeline
from rocmtui.ui.state.zoom import WINDOWS
from rocmtui.ui.widgets.cursor_readout import Reading, title_markup
from rocmtui.ui.widgets.plot_canvas import PlotCanvas

PLOT_PERIOD_S = 2.0
LABEL_MIN_HEIGHT = 14
"""A plot at least this many rows high names its x axis on a row of its own; a lower one keeps that row
for the data (the ticks and the title say what x is)."""
"""Seconds between redraws of a plot whose data changed. A redraw of the loss plot costs 15-40 ms of
the UI process (plotext build and parse, measured on a 2-core EPYC) and repaints every cell of the
plot: 0.5 Hz keeps both small."""

LEGEND_ROW_MIN_HEIGHT = 5
"""A plot at least this high gives a legend that does not fit its title a row of its own (``set_legend``)."""

CURSOR_COLOR = "red+"
"""The cursor's line: a colour no series of the plots uses."""

LEGEND_COLOR = {
    "gray": "ansi_bright_black",
    "cyan+": "ansi_bright_cyan",
    "orange": "ansi_yellow",
    "magenta+": "ansi_bright_magenta",
    "green+": "ansi_bright_green",
    "red+": "ansi_bright_red",
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


class CursorPlaced(Message):
    """A click on a plot (or the mouse moved over it while the cursor is shown): the cursor goes to
    ``axis_x``, on the axis shown."""

    def __init__(self, axis_x: float) -> None:
        super().__init__()
        self.axis_x = axis_x


class ThrottledPlot(PlotextPlot):
    """Subclasses implement ``draw`` with ``self.canvas``; nobody calls ``replot`` per message.

    Every plot has the same view controls, set by the screen's keys for all plots at once: ``log_scale``,
    ``smoothing`` (the EMA's weight over a per-step line), ``zoom`` (the newest part of x) and ``full_range``
    (an epoch axis over the epochs planned, not only those trained). Each change redraws at once.
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None, timeline: Timeline | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.dirty = True
        self.replots = 0
        """Redraws done so far (the cost report and tests read it)."""
        self.smoothing = EMA_BETA
        """Weight of the EMA drawn over a per-step line: one of ``SMOOTHING_WEIGHTS``, at each of which every
        series keeps its EMA."""
        self.canvas = PlotCanvas(self._plot)
        self.timeline = timeline if timeline is not None else Timeline()
        """The main run's: its x on the time axes."""
        self.plot_view = PlotView()
        """The x axis and the cursor, shared with the other plot (the screen hands both the same one)."""
        self.legend_markup = ""
        """The title and legend (``set_legend``), shown while the cursor is hidden."""
        self.legend_title = ""
        self.legend_colors: dict[str, str] = {}
        self.legend_own_row = False
        """The legend gets rows of its own, under the title, when it does not fit beside it (runs compared:
        every run must be named)."""
        self.legend_rows = 0
        """Rows the legend took over the plot, as last drawn."""
        self.plot_left = 0
        """The first column of the plot's area (right of the y axis), as last drawn."""
        self.log_scale = False
        """y on a log axis (values at or below zero left out)."""
        self.zoom = WINDOWS[0]
        """What part of x is shown, newest last (``WINDOWS``)."""
        self.full_range = False
        """An epoch axis spans the epochs planned (``--epochs``), not only what has been trained."""
        self.shown_from: float | None = None
        """The first x the zoom shows in the picture being drawn (``zoom_from``); None: all of it."""

    def toggle_log(self) -> None:
        self.log_scale = not self.log_scale
        self.view_changed()

    def step_smoothing(self, steps: int) -> None:
        """The next weight up (``steps`` 1) or down (-1) of ``SMOOTHING_WEIGHTS``, as a slider."""
        index = min(range(len(SMOOTHING_WEIGHTS)), key=lambda i: abs(SMOOTHING_WEIGHTS[i] - self.smoothing))
        index = max(0, min(len(SMOOTHING_WEIGHTS) - 1, index + steps))
        if SMOOTHING_WEIGHTS[index] != self.smoothing:
            self.smoothing = SMOOTHING_WEIGHTS[index]
            self.view_changed()

    def next_window(self) -> None:
        """Zoom: all, the last 5 epochs, the last one, the last 100 steps, and round again."""
        self.zoom = WINDOWS[(WINDOWS.index(self.zoom) + 1) % len(WINDOWS)]
        self.view_changed()

    def toggle_full_range(self) -> None:
        self.full_range = not self.full_range
        self.view_changed()

    def view_changed(self) -> None:
        """A view control changed: redraw now (plots with a legend that names them override this)."""
        self.replot()

    def zoom_from(self, last_x: float, *, steps_per_epoch: int | None = None, step_axis: bool = False) -> float:
        """Start of the part of x the zoom shows, for a picture whose x ends at ``last_x``; points before it are
        left out (the y axis fits what is shown). 0 when the whole run is shown."""
        span = self.zoom.step_span(last_x) if step_axis else self.zoom.span(steps_per_epoch)
        low = max(0.0, last_x - span) if span is not None else 0.0
        self.shown_from = low if span is not None else None
        self.canvas.clip_from = low if span is not None else -math.inf
        return low

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
        self.show_title()
        self.refresh()

    def show_title(self) -> None:
        """The legend, or while the cursor is shown each series' value at the cursor (with the legend on its own
        row, each value in its run's colour without the name: the row names them)."""
        apart = self.legend_apart(self.size.width)
        markup = escape(self.legend_title) if apart else self.legend_markup
        if self.plot_view.cursor is not None:
            readings = self.cursor_readings()
            readings = [replace(reading, name="") for reading in readings] if apart else readings
            markup = title_markup(readings, self.size.width - 2) or markup
        if markup != self.border_title:
            self.border_title = markup

    def cursor_readings(self) -> list[Reading]:
        """The series drawn, each with its value at the cursor (each plot says which)."""
        return []

    def compared_readings(
        self, runs: Sequence[ComparedRun], series: Callable[[RunState], Series | None], weight: float | None = None
    ) -> list[Reading]:
        """Each compared run's ``series`` at the cursor, named and coloured as in the legend."""
        return [
            Reading(run.label, LEGEND_COLOR.get(run_color(i), ""), series(run.state), self.native_x(run.state), weight)
            for i, run in enumerate(runs)
        ]

    def native_x(self, state: RunState) -> float | None:
        """A run's own x at the cursor (None: hidden, or the run has no time there)."""
        cursor = self.plot_view.cursor
        return None if cursor is None else self.plot_view.native(cursor, state.timeline)

    def render(self) -> RenderResult:
        """Draw the data afresh at every render, and show a failure instead of raising it.

        Textual renders again on resize and when a dialog closes, and plotext's build is not repeatable
        on one figure: in log scale it takes the log of values it already took the log of. A plot that
        cannot be drawn must not end the app while a run trains.
        """
        try:
            return self._render_plot()
        except Exception as err:  # plotext raises plain ValueError/ZeroDivisionError on odd data
            return Text(plain(f"cannot draw this plot: {type(err).__name__}: {err}"), style="bold red")

    def _render_plot(self) -> Text:
        plt, canvas = self._plot, self.canvas
        width, height = self.size.width, self.size.height
        legend = self.legend_lines(width) if self.legend_apart(width) else []
        self.legend_rows = len(legend)
        height -= len(legend)
        under = self.rows_under(height)
        plt.clear_figure()
        plt.xaxes(True, False)  # the widget's border frames the plot: no top line, no right line,
        plt.yaxes(True, False)  # one more row and column for the data
        canvas.reset()
        self.shown_from = None
        if self.log_scale:
            canvas.yscale("log")  # before any line: values at or below zero are left out
        canvas.mode = self.plot_view.mode
        canvas.use(self.timeline)
        self.draw()
        canvas.finish(height - under)
        cursor = self.plot_view.cursor
        if cursor is not None and canvas.x_range is not None and canvas.x_range[0] <= cursor <= canvas.x_range[1]:
            canvas.vline(cursor, CURSOR_COLOR)
        plt.plotsize(width, height - under)
        plt._set_size(width, height - under)  # as PlotextPlot.render does (textual-plotext issue 5)
        plt.theme(self._get_plotext_theme_name(self.app.theme))
        text = Text.from_ansi(plt.build().removesuffix("\n"))
        self.plot_left = plot_area_left(text.plain)
        if under:
            text.append("\n")
            text.append(Text("\n").join(self.lines_under(width, under)))
        return Text("\n").join([*legend, text]) if legend else text

    def on_resize(self) -> None:
        self.show_title()  # a legend that fitted the title may need its own row now, or the other way round

    def legend_apart(self, width: int) -> bool:
        """The legend on rows of its own: asked for, too wide for the title, and the plot high enough."""
        if not self.legend_own_row or not self.legend_colors or self.size.height < LEGEND_ROW_MIN_HEIGHT:
            return False
        return len(Text.from_markup(self.legend_markup).plain) > width - 2  # the border's title: 2 columns less

    def legend_lines(self, width: int) -> list[Text]:
        """Each legend entry (``━ name`` in its colour) whole, as many on a line as fit ``width``."""
        lines: list[Text] = []
        line = Text()
        for name, color in self.legend_colors.items():
            entry = Text("━ ", style=LEGEND_COLOR.get(color, color).removeprefix("ansi_")) + Text(plain(name))
            entry.truncate(width, overflow="ellipsis")
            if line and line.cell_len + 2 + entry.cell_len > width:
                lines.append(line)
                line = Text()
            line += Text("  ") + entry if line else entry
        return [*lines, line] if line else lines

    def measure(self) -> None:
        """Draw off screen, for the ranges and the plot's area of the axis shown now (``canvas``)."""
        self.render()

    def rows_under(self, height: int) -> int:
        """Rows kept under the plot for ``lines_under`` (none by default)."""
        return 0

    def lines_under(self, width: int, rows: int) -> list[Text]:
        """``rows`` lines drawn under the plot, its area starting at column ``plot_left``."""
        return []

    def axis_x_at(self, column: int) -> float | None:
        """The x on the axis shown under ``column`` of the widget (None: outside the plot's area)."""
        x_range = self.canvas.x_range
        cells = self.size.width - self.plot_left
        if x_range is None or cells <= 0 or not self.plot_left <= column < self.size.width:
            return None
        low, high = x_range
        return low + (column - self.plot_left + 0.5) / cells * (high - low)

    @property
    def column_span(self) -> float:
        """How much of the axis shown one column covers."""
        x_range = self.canvas.x_range
        cells = max(1, self.size.width - self.plot_left)
        return (x_range[1] - x_range[0]) / cells if x_range is not None else 1.0

    def on_click(self, event: events.Click) -> None:
        self._place(event.x)

    def on_mouse_move(self, event: events.MouseMove) -> None:
        if self.plot_view.cursor is not None:
            self._place(event.x)

    def _place(self, column: int) -> None:
        axis_x = self.axis_x_at(column)
        if axis_x is not None:
            self.post_message(CursorPlaced(axis_x))

    def set_legend(self, title: str, colors: dict[str, str], *, own_row: bool = False) -> None:
        """Title and legend (line name -> plotext colour) in the border title, off the plot area; ``own_row``:
        a legend too wide for the title gets rows of its own under it (none is cut)."""
        legend = " ".join(f"[{LEGEND_COLOR.get(c, c)}]━ {escape(name)}[/]" for name, c in colors.items())
        self.legend_markup = f"{escape(title)} {legend}" if legend else escape(title)
        self.legend_title, self.legend_colors, self.legend_own_row = title, dict(colors), own_row
        self.show_title()

    def epoch_line(self, xs: list[float], ys: list[float], color: str) -> None:
        """A per-epoch series: a thin line through a marked point at each epoch."""
        self.canvas.plot(xs, ys, color=color, marker="braille")
        self.canvas.scatter(xs, ys, color=color, marker="●")

    @property
    def view_start(self) -> float:
        """Where a series' view starts in the picture being drawn: the zoom's first x, else the beginning."""
        return self.shown_from if self.shown_from is not None else -math.inf

    def epoch_axis(self, total_epochs: int, last_x: float) -> None:
        """x from 0 to what has been trained (``full_range``: to the run's epochs), ticked at whole epochs of a
        round step (at most about eight); zoomed (``zoom_from``), the newest part only."""
        if self.shown_from is not None:
            self.window_axis(self.shown_from, last_x if last_x > self.shown_from else self.shown_from + 1.0)
            return
        trained = max(last_x, 1.0)
        end = max(float(total_epochs), trained) if self.full_range or last_x <= 0 else trained
        step = max(1, round(nice_step(end, 8)))
        ticks = list(range(0, math.ceil(end) + 1, step))
        self.canvas.xlim(0, end * 1.02)  # a little room so points at the last epoch stay inside the frame
        self.canvas.xticks([float(t) for t in ticks], [str(t) for t in ticks])
        self.x_label("epoch")

    def window_axis(self, low: float, high: float) -> None:
        """x over the zoomed part of the run only, ticked every ``tick_step(span)`` epochs."""
        span = max(high - low, 1e-9)
        step = tick_step(span)
        ticks = [i * step for i in range(math.ceil(low / step - 1e-9), math.floor(high / step + 1e-9) + 1)]
        self.canvas.xlim(low, low + span * 1.02)
        self.canvas.xticks(ticks, [f"{t:g}" for t in ticks])
        self.x_label("epoch")

    def x_label(self, label: str) -> None:
        """Name the x axis when the plot is tall enough to spare the row (``LABEL_MIN_HEIGHT``)."""
        if self.size.height >= LABEL_MIN_HEIGHT:
            self.canvas.xlabel(label)

    def draw(self) -> None:
        """Plot the current data with ``self.canvas``; each plot overrides this (the base draws empty axes)."""


def plot_area_left(picture: str) -> int:
    """The first column right of the y axis in plotext's picture: the one after its lower-left corner."""
    for line in reversed(picture.split("\n")):
        corner = line.find("└")
        if corner >= 0:
            return corner + 1
    return 0
