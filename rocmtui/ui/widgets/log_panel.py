"""The last messages of the run: checkpoints, pause and resume, warnings and errors.

Plain text showing the newest lines that fit (wrapped), not a RichLog: a RichLog write grows its
virtual size and re-lays out the screen; this widget repaints only itself.
"""

from __future__ import annotations

import textwrap
from collections import deque

from rich.text import Text
from textual.widget import Widget

from rocmtui.ui.format import fmt_duration

MAX_LINES = 300
LEVEL_STYLE = {"info": "", "warning": "bold yellow", "error": "bold red"}


class LogPanel(Widget):
    """A bounded log; each line carries the training time it happened at (not the wall clock).

    ``add`` queues a line; ``flush`` (the screen's panel timer) shows what is queued in one repaint.
    """

    DEFAULT_CSS = """
    LogPanel { width: 1fr; height: 1fr; padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.messages: deque[str] = deque(maxlen=MAX_LINES)
        """The lines as added, before wrapping."""
        self.entries: deque[tuple[str, str]] = deque(maxlen=MAX_LINES)
        self.pending: list[tuple[str, str]] = []

    def add(self, message: str, level: str = "info", at_s: float | None = None) -> None:
        stamp = f"[{fmt_duration(at_s)}] " if at_s is not None else ""
        self.messages.append(f"{stamp}{message}")
        self.pending.append((self.messages[-1], LEVEL_STYLE.get(level, "")))

    def flush(self) -> None:
        """Show the lines added since the last flush."""
        if self.pending:
            self.entries.extend(self.pending)
            self.pending.clear()
            self.refresh()

    def render(self) -> Text:
        width, height = max(10, self.size.width), max(1, self.size.height)
        lines: list[tuple[str, str]] = []
        for message, style in reversed(self.entries):  # newest last on screen, so fill from the end
            wrapped = textwrap.wrap(message, width) or [""]
            lines[:0] = [(part, style) for part in wrapped]
            if len(lines) >= height:
                break
        text = Text(no_wrap=True, overflow="crop")
        for index, (part, style) in enumerate(lines[-height:]):
            text.append(("\n" if index else "") + part, style=style)
        return text
