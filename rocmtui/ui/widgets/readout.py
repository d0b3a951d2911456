"""A telemetry reading as cheap text, repainted only when the reading changes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Generic, Protocol, TypeVar

from rich.text import Text
from textual.widget import Widget

from rocmtui.ui.format import dim_tracks


class Timestamped(Protocol):
    """A frozen dataclass with a ``timestamp`` (GpuSample, HostSample)."""

    @property
    def timestamp(self) -> float: ...


R = TypeVar("R", bound=Timestamped)
LineFormatter = Callable[[R, int, bool], list[str]]
"""(reading, width, compact) -> the lines to show."""


class Readout(Widget, Generic[R]):
    """Lines of text for one reading; an idle device repeats itself, so repeats do not repaint."""

    def __init__(self, format_lines: LineFormatter[R]) -> None:
        super().__init__()
        self.format_lines = format_lines
        self.reading: R | None = None

    def set_reading(self, reading: R) -> None:
        """Repaint only when a value changed (the timestamp does not count)."""
        old = self.reading
        self.reading = reading
        if old is None or replace(old, timestamp=reading.timestamp) != reading:  # type: ignore[type-var]  # R is a frozen dataclass; Protocols cannot say so
            self.refresh()

    def render(self) -> Text:
        if self.reading is None:
            return Text("waiting for the first sample…")
        lines = self.format_lines(self.reading, self.size.width, self.has_class("-compact"))
        return dim_tracks(Text("\n".join(lines), no_wrap=True, overflow="crop"))
