"""The key reference, shown over the current screen."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.events import Resize
from textual.screen import ModalScreen
from textual.widgets import Static

TRAIN_KEYS = (
    ("p", "pause or resume training (while it runs)"),
    ("s", "save a checkpoint now (while it runs)"),
    ("l", "both plots: log or linear scale (values at or below zero left out)"),
    ("[ ]", "both plots: less or more smoothing (EMA 0, 0.6 ... 0.98 ... 0.995)"),
    (
        "z",
        "both plots: zoom to all, the last 5 epochs, the last epoch, the last 100 steps (a script: all, the "
        "last half, the last tenth, the last 100 steps)",
    ),
    ("a", "both plots: x over every epoch planned, or over what has been trained"),
    ("n", "a script's run (rocmtui run): the next series in the second plot"),
    ("g", "every series in a grid of small plots: arrows select, enter enlarges, / filters, l log scale"),
    ("← →", "cursor: move (shift, PgUp/PgDn: 10 columns; Home/End; mouse)"),
    ("c esc", "show or hide the cursor and its readout"),
    ("x", "x axis: step, time since the start, wall clock"),
    ("↑ ↓", "epoch table: scroll back (PgUp/PgDn, Home); End follows the newest epoch again"),
    ("r", "watch RUN1 RUN2 ...: the epoch table shows the next run (then the summary again)"),
    ("d", "watch RUN1 RUN2 ...: the settings that differ between the runs"),
    ("m", "switch to the GPU monitor and back"),
    ("S", "save the screen as an SVG picture (in the run folder's screens/)"),
    ("q", "quit (asks first while training; stops and saves a checkpoint)"),
    ("?", "this help"),
)
MONITOR_KEYS = (  # interval, timebase, graphs, sort and theme are kept for the next session
    ("+ / -", "sample less / more often (0.1 s at least)"),
    ("t", "history: auto (grows with it), or 1 min, 10 min, 1 h, 24 h"),
    ("g", "graphs: utilisation and VRAM, or power and temperature"),
    ("s / r", "processes: sort by the next column / reverse (or click one)"),
    ("/", "processes: filter by PID, user or command (escape clears)"),
    ("] / [", "select the next / previous GPU (or click it)"),
    ("w", "no GPU found: why each backend is unavailable"),
    ("k / K", "SIGTERM / SIGKILL the selected process (yours; asks first)"),
    ("c", "colours: the next theme"),
    ("m", "back to the training screen (when opened from training)"),
    ("S", "save the screen as an SVG picture (in the current folder)"),
    ("q", "quit"),
    ("?", "this help"),
)


CLUSTER_KEYS = (
    ("↑ ↓ PgUp PgDn", "move through the hosts and GPUs (Home, End)"),
    ("enter", "open the host under the cursor in the GPU panel (m or escape comes back)"),
    ("s / r", "sort by the next column (hosts as given, util, memory, power, temp) / reverse"),
    ("i", "only the idle GPUs that hold memory (0% busy, 256 MiB or more in use), and back"),
    ("/", "find hosts and GPUs by name or address (escape clears)"),
    ("+ / -", "read the cluster less / more often"),
    ("c", "colours: the next theme"),
    ("q", "quit"),
    ("?", "this help"),
)


def help_text(keys: tuple[tuple[str, str], ...]) -> str:
    """The keys as plain lines (the width of the widest key, right-aligned)."""
    width = max((len(key) for key, _ in keys), default=0)
    return "\n".join(f"{key:>{width}}   {what}" for key, what in keys)


def help_grid(keys: tuple[tuple[str, str], ...]) -> Table:
    """The keys as two columns: a description too long for the dialog wraps under itself, not under the keys."""
    grid = Table.grid(padding=(0, 3))
    grid.add_column(justify="right", no_wrap=True)
    grid.add_column(ratio=1)
    for key, what in keys:
        grid.add_row(Text(key), Text(what))  # Text, not str: a str cell would be read as markup
    return grid


FRAME_ROWS = 4
"""Rows of the dialog around the keys: its two borders, the title and the row under it."""
CLOSE_HINT = "escape closes"
SCROLL_HINT = "↑ ↓ PgUp PgDn: more · escape closes"


class HelpScreen(ModalScreen[None]):
    """Keys and what they do; any of escape, ? or q closes it. The keys scroll (arrows, PgUp/PgDn, the wheel)
    where the terminal is too low for all of them; the hint, on the bottom border, says so."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q,enter", "dismiss", "Close"),
    ]

    def __init__(self, title: str, keys: tuple[tuple[str, str], ...]) -> None:
        super().__init__()
        self.title_text = title
        self.keys = keys

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog") as dialog:
            dialog.border_subtitle = CLOSE_HINT
            yield Static(self.title_text, classes="dialog-title")
            with VerticalScroll(id="help-scroll"):
                yield Static(help_grid(self.keys), classes="help-keys")

    def on_resize(self, event: Resize) -> None:
        """The keys get the rows the dialog's frame leaves (the dialog is at most the screen's height)."""
        self.query_one("#help-scroll").styles.max_height = max(1, event.size.height - FRAME_ROWS)
        self.call_after_refresh(self.show_hint)

    def show_hint(self) -> None:
        scroll = self.query_one("#help-scroll", VerticalScroll)
        self.query_one(".dialog").border_subtitle = SCROLL_HINT if scroll.max_scroll_y > 0 else CLOSE_HINT

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss(result)
