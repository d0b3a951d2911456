"""The last messages of the run: checkpoints, pause and resume, warnings and errors.

Plain text showing the newest lines that fit (wrapped), not a RichLog: a RichLog write grows its
virtual size and re-lays out the screen; this widget repaints only itself.
"""

from __future__ import annotations

import textwrap
from collections import deque

from rich.text import Text
from textual.widget import Widget

from rocmtui.ui.look.meters import fmt_duration

MAX_LINES = 300
LEVEL_STYLE = {"info": "", "warning": "bold yellow", "error": "bold red"}


def wrap(message: str, width: int) -> list[str]:
    """``message`` in lines of ``width``: at spaces, a path after a ``/`` (or a ``-``) rather than anywhere; the
    lines after the first indented under the text that follows the ``[0:42]`` stamp."""
    stamp = message.index("] ") + 2 if message.startswith("[") and "] " in message else 0
    indent = " " * stamp if stamp < width // 2 else ""
    wrapper = textwrap.TextWrapper(width, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)
    out: list[str] = []
    for line in wrapper.wrap(message) or [""]:
        rest = line
        while len(rest) > width:  # a word longer than the line (a path): cut after a slash, else a dash
            cut = next((i + 1 for mark in "/-_" if (i := rest.rfind(mark, len(indent) + 1, width)) >= 0), width)
            out.append(rest[:cut])
            rest = indent + rest[cut:]
        out.append(rest)
    return out


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
            wrapped = wrap(message, width)
            lines[:0] = [(part, style) for part in wrapped]
            if len(lines) >= height:
                break
        text = Text(no_wrap=True, overflow="crop")
        for index, (part, style) in enumerate(lines[-height:]):
            text.append(("\n" if index else "") + part, style=style)
        return text
