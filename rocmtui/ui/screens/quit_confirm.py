"""Asks before stopping a run that is still training."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static


class QuitConfirm(ModalScreen[bool]):
    """Dismisses with True (stop, save a checkpoint, quit) or False (keep training)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "answer(True)", "Stop and quit"),
        Binding("n,escape,q", "answer(False)", "Keep training"),
    ]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("Quit while training?", classes="dialog-title")
            yield Static("The run stops at the next step and saves a checkpoint first.")
            yield Static("y / enter: stop and quit     n / escape: keep training", classes="dialog-hint")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
