"""A telemetry reading as cheap text, repainted only when it changes, and the card that frames it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Generic, Protocol, TypeVar

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.geometry import Region
from textual.markup import escape
from textual.widget import Widget

from rocmtui.ui.look.meters import dim_tracks
from rocmtui.ui.widgets.history_bars import HistoryBars


class Timestamped(Protocol):
    """A frozen dataclass with a ``timestamp`` (GpuSample, HostSample)."""

    @property
    def timestamp(self) -> float: ...


R = TypeVar("R", bound=Timestamped)
LineFormatter = Callable[[R, int, bool], list[str]]
"""(reading, width, compact) -> the lines to show."""


class Readout(Widget, Generic[R]):
    """Lines of text for one reading; an idle device repeats itself, so repeats do not repaint.

    A new reading marks dirty only the lines that changed, and in each only the cells up to its last change,
    so a bar that did not move and a total that did not change are not written to the terminal again.
    """

    def __init__(self, format_lines: LineFormatter[R]) -> None:
        super().__init__()
        self.format_lines = format_lines
        self.reading: R | None = None
        self.shown: list[tuple[str, object]] | None = None

    def line_keys(self, reading: R) -> list[tuple[str, object]]:
        """Each line's text and whatever else decides how it looks (its colour level)."""
        return [(line, None) for line in self.format_lines(reading, self.size.width, self.has_class("-compact"))]

    def set_reading(self, reading: R) -> None:
        """Repaint only what changed (the timestamp does not count)."""
        old = self.reading
        self.reading = reading
        if old is not None and replace(old, timestamp=reading.timestamp) == reading:  # type: ignore[type-var]  # R is a frozen dataclass; Protocols cannot say so
            return
        lines = self.line_keys(reading)
        shown, self.shown = self.shown, lines
        if shown is None or len(shown) != len(lines):
            self.refresh()
            return
        width = self.size.width
        for y, (before, after) in enumerate(zip(shown, lines, strict=True)):
            if before == after:
                continue
            end = width if before[1] != after[1] else last_change(before[0], after[0])
            self.refresh(Region(0, y, max(1, min(width, end)), 1))

    def on_resize(self) -> None:
        self.shown = None

    def render(self) -> Text:
        if self.reading is None:
            return Text("waiting for the first sample…")
        lines = self.format_lines(self.reading, self.size.width, self.has_class("-compact"))
        return dim_tracks(Text("\n".join(lines), no_wrap=True, overflow="crop"))


def last_change(before: str, after: str) -> int:
    """One past the last cell where two lines differ (Textual writes a widget's line from its start)."""
    if len(before) != len(after):
        return max(len(before), len(after))
    for i in range(len(after) - 1, -1, -1):
        if before[i] != after[i]:
            return i + 1
    return 0


class ReadingCard(Vertical, Generic[R]):
    """A bordered card: a titled readout with a history strip under it (hidden when compact)."""

    def __init__(self, readout: Readout[R], *, classes: str, history_classes: str) -> None:
        super().__init__(classes=classes)
        self.readout = readout
        self.history = HistoryBars(classes=history_classes)

    def compose(self) -> ComposeResult:
        yield self.readout
        yield self.history

    def set_compact(self, compact: bool) -> None:
        """One line (no border, no history) for small terminals."""
        self.set_class(compact, "-compact")
        self.readout.set_class(compact, "-compact")
        self.readout.refresh(layout=True)

    def show_reading(self, title: str, reading: R, history: Sequence[float | None]) -> None:
        """Attributes down: the panel hands the card its title, newest reading and history."""
        if escape(title) != self.border_title:  # setting a title repaints the whole card
            self.border_title = escape(title)
        self.readout.set_reading(reading)
        if not self.has_class("-compact"):
            self.history.set_values(history)
