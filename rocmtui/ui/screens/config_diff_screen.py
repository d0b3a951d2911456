"""``d`` while comparing runs: a table of the settings that differ between them, a column a run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from rocmtui.ui.look.safe_text import safe_text
from rocmtui.ui.state.compare import ComparedRun, run_color
from rocmtui.ui.state.config_diff import differences
from rocmtui.ui.widgets.throttled_plot import LEGEND_COLOR


def differences_table(runs: Sequence[ComparedRun]) -> Table | Text:
    """The differing settings, a row each, a column a run headed by its legend name; a line when none differ."""
    rows = differences([run.state for run in runs])
    if not rows:
        return Text("The compared runs have the same settings.")
    table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
    table.add_column("setting", no_wrap=True)
    for index, run in enumerate(runs):
        table.add_column(
            safe_text(run.label), style=LEGEND_COLOR.get(run_color(index), "").removeprefix("ansi_"), overflow="fold"
        )
    for row in rows:
        table.add_row(safe_text(row.name), *(safe_text(value) for value in row.values))
    return table


class ConfigDiffScreen(ModalScreen[None]):
    """What differs between the compared runs' settings; escape, ``d`` or ``q`` closes it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,d,q", "close", "Close")]

    def __init__(self, runs: Sequence[ComparedRun]) -> None:
        super().__init__()
        self.runs = runs

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(f"Settings that differ between the {len(self.runs)} runs", classes="dialog-title")
            with VerticalScroll():
                yield Static(differences_table(self.runs))
            yield Static("escape closes; ↑ ↓ scroll", classes="dialog-hint")

    def action_close(self) -> None:
        self.dismiss(None)
