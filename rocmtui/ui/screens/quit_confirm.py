"""Asks before quitting while a run is still training: stop it, leave it training, or go back."""

from __future__ import annotations

from typing import ClassVar, Literal

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

QuitChoice = Literal["stop", "detach", "cancel"]


class QuitConfirm(ModalScreen[QuitChoice]):
    """Dismisses with "stop" (stop at the next step, checkpoint, quit), "detach" or "cancel".

    ``detachable``: the run lives in its own process, so quitting can leave it training. ``script``: the run is a
    script's (``rocmtui.track()``): a stop is a request it acts on at its own pace, and it saves only if it does
    so itself, so no checkpoint is promised.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y,enter", "answer('stop')", "Stop and quit"),
        Binding("d", "answer('detach')", "Detach"),
        Binding("n,escape,q", "answer('cancel')", "Keep watching"),
    ]

    def __init__(self, *, detachable: bool, script: bool = False) -> None:
        super().__init__()
        self.detachable = detachable
        self.script = script

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static("Quit while training?", classes="dialog-title")
            if self.script:
                yield Static("y: ask the script to stop (its should_stop), then quit.")
            else:
                yield Static("y: stop the run at the next step, save a checkpoint, then quit.")
            if self.detachable:
                yield Static("d: quit and leave it training; come back with 'rocmtui watch'.")
            yield Static("n / escape: keep watching          ctrl+c again: stop and quit", classes="dialog-hint")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.detachable or parameters != ("detach",)

    def action_answer(self, answer: QuitChoice) -> None:
        self.dismiss(answer)
