"""Asks before sending SIGTERM or SIGKILL to a process picked in the monitor's table."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from rocmtui.gpu.sample import GpuProcess
from rocmtui.ui.look.safe_text import safe_text


class SignalConfirm(ModalScreen[bool]):
    """Dismisses with True (send it) or False."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Send"),
        Binding("n,escape,q", "answer(False)", "Cancel"),
    ]

    def __init__(self, proc: GpuProcess, signal_name: str) -> None:
        super().__init__()
        self.proc = proc
        self.signal_name = signal_name

    def compose(self) -> ComposeResult:
        what = "ask it to stop" if self.signal_name == "TERM" else "end it at once, without cleaning up"
        with Vertical(classes="dialog"):
            yield Static(f"Send SIG{self.signal_name} to PID {self.proc.pid}?", classes="dialog-title")
            yield Static(safe_text(self.proc.command or "(command unknown)", limit=200))
            yield Static(f"SIG{self.signal_name} will {what}.")
            yield Static("y: send          n / escape: cancel", classes="dialog-hint")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)
