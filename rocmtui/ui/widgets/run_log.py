"""The last messages of the run: checkpoints, pause and resume, warnings and errors."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import RichLog

from rocmtui.ui.format import fmt_duration

LEVEL_STYLE = {"info": "", "warning": "bold yellow", "error": "bold red"}


class RunLog(RichLog):
    """A bounded log; each line carries the training time it happened at (not the wall clock)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, max_lines=300, min_width=10, wrap=True, markup=False, highlight=False, auto_scroll=True)

    def add(self, message: str, level: str = "info", at_s: float | None = None) -> None:
        stamp = f"[{fmt_duration(at_s)}] " if at_s is not None else ""
        self.write(Text(f"{stamp}{message}", style=LEVEL_STYLE.get(level, "")))
