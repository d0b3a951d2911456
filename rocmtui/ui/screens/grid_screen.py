"""Every series of the run in a grid of small plots, a page at a time; filtered by typing, one enlarged on a key.

Only the page's cells exist: a run of hundreds of series costs the few cells on screen. Each frame (once per
``plot_period_s``) redraws the cells whose series changed; keys redraw at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container
from textual.events import Resize
from textual.screen import Screen
from textual.widgets import Input, Static

from rocmtui.ui.look.safe_text import safe_text
from rocmtui.ui.state.compare import ComparedRun
from rocmtui.ui.state.grid import FILTER_LIMIT, GridState, compared_keys
from rocmtui.ui.state.run_state import SMOOTHING_WEIGHTS, RunState
from rocmtui.ui.state.zoom import WINDOWS
from rocmtui.ui.widgets.key_bar import KeyBar
from rocmtui.ui.widgets.series_cell import SeriesCell
from rocmtui.ui.widgets.throttled_plot import PLOT_PERIOD_S

GRID_KEYS = (
    ("← → ↑ ↓", "select a plot (past the page's edge: the next page)"),
    ("PgUp PgDn", "the previous / next page"),
    ("enter", "the selected series enlarged (enter or escape: the grid again)"),
    ("l", "the selected plot: log or linear scale (values at or below zero left out)"),
    ("z", "every plot: zoom to all, the last 5 epochs, the last epoch, the last 100 steps"),
    ("[ ]", "every plot: less or more smoothing"),
    ("/", "filter the names: a regular expression or text, any case (enter keeps it, escape clears)"),
    ("escape", "one step back: the grid from an enlarged series, no filter, then the training screen"),
    ("g", "back to the training screen"),
    ("q", "quit"),
    ("?", "this help"),
)
STATUS_ROWS = 1


class GridScreen(Screen[None]):
    """The grid of every series of ``state``: a view of the training screen's run, on top of it."""

    DEFAULT_CSS = """
    GridScreen #grid-status { height: 1; padding: 0 1; background: $boost; text-wrap: nowrap; text-overflow: ellipsis; }
    GridScreen #grid-filter { height: 1; border: none; padding: 0 1; display: none; }
    GridScreen #grid-cells { layout: grid; height: 1fr; }
    GridScreen .series-cell {
        border: round $primary;
        border-title-align: left;
        border-title-color: $foreground;
        border-title-style: bold;
    }
    GridScreen .series-cell.-selected { border: heavy $accent; }
    """
    AUTO_FOCUS = ""
    """Keys go to the grid until ``/`` asks for the filter."""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back"),
        Binding("enter", "enlarge", "Enlarge"),
        Binding("slash", "filter", "Filter", key_display="/"),
        Binding("l", "toggle_log", "Log scale"),
        Binding("z", "zoom", "Zoom"),
        Binding("right_square_bracket", "smoothing(1)", "Smooth", key_display="]"),
        Binding("left_square_bracket", "smoothing(-1)", "Less smooth", key_display="[", show=False),
        Binding("pagedown", "turn_page(1)", "Page", key_display="PgDn"),
        Binding("pageup", "turn_page(-1)", "Page back", show=False),
        Binding("left", "move(-1, 0)", show=False),
        Binding("right", "move(1, 0)", show=False),
        Binding("up", "move(0, -1)", show=False),
        Binding("down", "move(0, 1)", show=False),
        Binding("g", "dismiss", show=False),
        Binding("question_mark", "help", show=False),
    ]

    def __init__(
        self,
        state: RunState,
        grid: GridState,
        *,
        plot_period_s: float = PLOT_PERIOD_S,
        runs: Sequence[ComparedRun] = (),
    ) -> None:
        """``grid``: the filter, selection and log axes, kept by the training screen from one visit to the next;
        ``runs``: the runs compared (``state``'s first), each cell overlays them."""
        super().__init__(id="grid")
        self.state = state
        self.runs = list(runs)
        self.grid = grid
        self.plot_period_s = plot_period_s
        self.status = Static(id="grid-status")
        self.filter_input = Input(
            grid.name_filter.text, placeholder="filter: a regular expression or text", id="grid-filter"
        )
        self.filter_input.max_length = FILTER_LIMIT
        self.filter_input.display = False
        self.cells_box = Container(id="grid-cells")
        self.cells: list[SeriesCell] = []

    def compose(self) -> ComposeResult:
        yield self.status
        yield self.filter_input
        yield self.cells_box
        yield KeyBar()

    def on_mount(self) -> None:
        self.set_interval(self.plot_period_s, self.frame)

    def on_resize(self, _: Resize) -> None:
        self.refit()

    def refit(self) -> None:
        """As many cells a page as the screen holds under the status line (and the filter, when shown)."""
        filter_rows = 1 if self.filter_input.display else 0
        self.grid.fit(self.size.width, self.size.height - STATUS_ROWS - filter_rows - 1)  # and the key bar
        self.update_cells()

    def every_key(self) -> list[str]:
        """Every series of the run, or of the runs compared."""
        return compared_keys([run.state.scalars for run in self.runs] or [self.state.scalars])

    def shown(self) -> list[str]:
        return self.grid.shown(self.every_key())

    def update_cells(self, *, redraw: bool = True) -> None:
        """Give each cell its series of the page (a pool of one per place), then redraw the stale ones."""
        columns, rows = (1, 1) if self.grid.enlarged else self.grid.shape
        self.cells_box.styles.grid_size_columns, self.cells_box.styles.grid_size_rows = columns, rows
        added = [SeriesCell(self.state, self.runs) for _ in range(self.grid.per_page - len(self.cells))]
        if added:
            self.cells += added
            self.cells_box.mount_all(added)
            self.call_after_refresh(self.redraw)  # drawn once laid out, not at the next frame
        for extra in self.cells[self.grid.per_page :]:
            extra.remove()
        del self.cells[self.grid.per_page :]
        shown = self.shown()
        page = self.grid.page(shown)
        selected = shown[self.grid.position(shown)] if shown else None
        for index, cell in enumerate(self.cells):
            key = page[index] if index < len(page) else None
            cell.assign(key, key in self.grid.log_keys, key == selected)
            if (cell.zoom, cell.smoothing) != (self.grid.zoom, self.grid.smoothing):
                cell.zoom, cell.smoothing = self.grid.zoom, self.grid.smoothing
                cell.mark_dirty()
        self.status.update(self.status_line(shown))
        if redraw:
            self.redraw()

    def redraw(self) -> None:
        """Redraw the cells on screen whose series changed (a cell not laid out yet draws when it is)."""
        with self.app.batch_update():
            for cell in self.cells:
                if cell.stale and cell.is_mounted:
                    cell.replot()

    def frame(self) -> None:
        """New series and new points since the last frame (the run goes on under the grid)."""
        if self.is_current:
            self.update_cells()

    def status_line(self, shown: list[str]) -> Text:
        every = self.every_key()
        if not every:
            return Text("no series logged yet")
        page, pages = self.grid.page_number(shown)
        name_filter = self.grid.name_filter
        parts = [f"{len(shown)} of {len(every)} series" if name_filter.text else f"{len(every)} series"]
        parts.append(f"series {page}/{pages} enlarged" if self.grid.enlarged else f"page {page}/{pages}")
        if name_filter.text:
            parts.append(f"filter: {name_filter.text}")
        line = safe_text(" · ".join(parts))
        if name_filter.error is not None:
            line.append(" · ")
            line.append(safe_text(name_filter.error, "bold red"))
        return line

    def action_move(self, dx: int, dy: int) -> None:
        self.grid.move(self.shown(), dx, dy)
        self.update_cells()

    def action_turn_page(self, pages: int) -> None:
        self.grid.turn_page(self.shown(), pages)
        self.update_cells()

    def action_enlarge(self) -> None:
        shown = self.shown()
        if shown or self.grid.enlarged:
            self.grid.selected = shown[self.grid.position(shown)] if shown else None
            self.grid.enlarged = not self.grid.enlarged
            self.update_cells()

    def action_zoom(self) -> None:
        """Every cell: all, the last 5 epochs, the last one, the last 100 steps, and round again."""
        self.grid.zoom = WINDOWS[(WINDOWS.index(self.grid.zoom) + 1) % len(WINDOWS)]
        self.update_cells()

    def action_smoothing(self, steps: int) -> None:
        """``]`` smooths more, ``[`` less: every cell's per-step series at the next EMA weight."""
        index = min(range(len(SMOOTHING_WEIGHTS)), key=lambda i: abs(SMOOTHING_WEIGHTS[i] - self.grid.smoothing))
        self.grid.smoothing = SMOOTHING_WEIGHTS[max(0, min(len(SMOOTHING_WEIGHTS) - 1, index + steps))]
        self.update_cells()

    def action_toggle_log(self) -> None:
        self.grid.toggle_log(self.shown())
        self.update_cells()

    def action_filter(self) -> None:
        self.filter_input.display = True
        self.set_focus(self.filter_input)  # now: the keys typed right after / are the filter's
        self.refit()

    def on_input_changed(self, event: Input.Changed) -> None:
        self.grid.set_filter(event.value)
        self.update_cells()

    def on_input_submitted(self, _: Input.Submitted) -> None:
        """The filter kept (the status line shows it; ``/`` edits it again), its row given back to the cells."""
        self.filter_input.display = False
        self.set_focus(None)
        self.refit()

    def action_back(self) -> None:
        """Escape undoes the last thing first: the enlarged cell, then the filter, then leaves the grid."""
        if self.grid.enlarged:
            self.action_enlarge()
        elif self.filter_input.has_focus or self.grid.name_filter.text:
            self.filter_input.value = ""  # Input.Changed clears the filter
            self.filter_input.display = False
            self.set_focus(None)
            self.refit()
        else:
            self.dismiss()

    def action_help(self) -> None:
        from rocmtui.ui.screens.help import HelpScreen

        self.app.push_screen(HelpScreen("rocmtui train: the grid of every series", GRID_KEYS))

    def replot_now(self) -> None:
        """Every cell of the page drawn now (tests and screenshots; the frame does it otherwise)."""
        self.update_cells(redraw=False)
        for cell in self.cells:
            if cell.key is not None:
                cell.replot()
