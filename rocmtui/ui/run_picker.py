"""``rocmtui watch`` with no run named, over a folder of several: a list of the runs to open one from.

The runs come newest first, as ``rocmtui runs`` lists them, one line each (live ones marked); the keyboard
picks: arrows, Page Up/Down, Home/End, Enter opens, Escape or ``q`` leaves. Every cell was read from a run
folder, so it is drawn as ``Text`` (``safe_text``), never parsed as markup.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from rocmtui.base.text import plain
from rocmtui.run.listing import RunListing, listing_cells
from rocmtui.ui.look.safe_text import safe_text
from rocmtui.ui.quiet_input import QuietApp

CELL_LIMIT = 40
"""Characters of one cell of a run's line (the folder's name may be longer: it is last)."""
LIVE_MARK = "●"
NAME_WIDTH = 32
"""Columns of a run folder's name in its line (a longer one ends in an ellipsis)."""


def run_line(info: RunListing) -> Text:
    """One run in 78 columns: live mark, folder name (its start time and name), state, progress, result."""
    state, _started, _what, progress, result, _span, _device, _folder = listing_cells(info, CELL_LIMIT)
    name = plain(Path(info.folder).name, limit=NAME_WIDTH)
    line = Text(f"{LIVE_MARK} " if info.live else "  ", style="bold green" if info.live else "")
    line.append(safe_text(f"{name:<{NAME_WIDTH}} ", style="bold" if info.live else ""))
    line.append(safe_text(f"{state:<9.9} {progress:<16.16} {result:.16}"))
    line.no_wrap, line.overflow = True, "ellipsis"
    return line


class RunPickerApp(QuietApp[Path | None]):
    """Returns the chosen run's folder, or None when the user left without one."""

    CSS = """
    Screen { layout: vertical; }
    #title { height: 1; padding: 0 1; background: $primary-background; }
    OptionList { height: 1fr; border: none; }
    #keys { height: 1; padding: 0 1; color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "leave", "Leave", show=False),
        Binding("q", "leave", "Leave", show=False),
        Binding("ctrl+c", "leave", "Leave", show=False, priority=True),
    ]

    def __init__(self, runs: list[RunListing], runs_dir: Path) -> None:
        super().__init__()
        self.runs = runs
        self.runs_dir = runs_dir

    def compose(self) -> ComposeResult:
        live = sum(info.live for info in self.runs)
        which = f"{live} live, marked {LIVE_MARK}" if live else "none live"
        yield Static(safe_text(f"{len(self.runs)} runs under {self.runs_dir}  ({which})", style="bold"), id="title")
        yield OptionList(*(Option(run_line(info), id=str(n)) for n, info in enumerate(self.runs)))
        yield Static(Text("↑↓ choose   Enter watch   Esc/q leave"), id="keys")

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        self.exit(Path(self.runs[message.option_index].folder))

    def action_leave(self) -> None:
        self.exit(None)


def pick_run(runs: list[RunListing], runs_dir: Path) -> Path | None:
    """Show the picker in the terminal; the folder chosen, or None."""
    return RunPickerApp(runs, runs_dir).run()
