"""The last messages of the run: checkpoints, pause and resume, warnings and errors."""

from __future__ import annotations

from collections import deque

from rich.text import Text
from textual.widgets import RichLog

from rocmtui.ui.format import fmt_duration

MAX_LINES = 300
LEVEL_STYLE = {"info": "", "warning": "bold yellow", "error": "bold red"}


class RunLog(RichLog):
    """A bounded log; each line carries the training time it happened at (not the wall clock)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(
            id=id, max_lines=MAX_LINES, min_width=10, wrap=True, markup=False, highlight=False, auto_scroll=True
        )
        self.messages: deque[str] = deque(maxlen=MAX_LINES)
        """The lines as written, before wrapping."""

    def add(self, message: str, level: str = "info", at_s: float | None = None) -> None:
        stamp = f"[{fmt_duration(at_s)}] " if at_s is not None else ""
        self.messages.append(f"{stamp}{message}")
        self.write(Text(self.messages[-1], style=LEVEL_STYLE.get(level, "")))
