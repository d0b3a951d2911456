"""A few rows of vertical bars: the recent history of one value on a fixed 0..max scale.

Cheaper than a plot for the GPU panel (a few cells per sample, no axes to rebuild), and honest
about scale, unlike a sparkline that stretches min..max to the full height.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widget import Widget

EIGHTHS = " ▁▂▃▄▅▆▇█"


def bar_rows(values: Sequence[float | None], width: int, rows: int, max_value: float) -> list[str]:
    """The newest ``width`` values as ``rows`` lines of block characters, newest on the right."""
    recent = list(values)[-width:] if width > 0 else []
    pad = width - len(recent)
    lines: list[str] = []
    for row in range(rows - 1, -1, -1):  # top row first
        cells = [" "] * pad
        for value in recent:
            if value is None or max_value <= 0:
                cells.append(" ")
                continue
            level = round(max(0.0, min(1.0, value / max_value)) * rows * 8) - row * 8
            cells.append(EIGHTHS[max(0, min(8, level))])
        lines.append("".join(cells))
    return lines


class HistoryBars(Widget):
    """Vertical bars of a value's history; ``set_values`` redraws."""

    DEFAULT_CSS = """
    HistoryBars {
        width: 1fr;
        height: 2;
        color: $accent;
    }
    """

    def __init__(self, *, max_value: float = 100.0, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.values: tuple[float | None, ...] = ()
        self.max_value = max_value

    def set_values(self, values: Sequence[float | None]) -> None:
        """New history: redraw only if the visible part changed (all of it before the first layout, when the
        width is not known yet)."""
        new = tuple(values)[-(self.size.width or len(values) or 1) :]
        if new != self.values:
            self.values = new
            self.refresh()

    def render_line(self, y: int) -> Strip:
        """One row of bars (the line API: no layout, no wrapping, leading blanks kept)."""
        width, height = self.size
        rows = bar_rows(self.values, width, max(1, height), self.max_value)
        text = rows[y] if 0 <= y < len(rows) else " " * width
        bars = text.lstrip(" ")
        pad = len(text) - len(bars)
        # Blank and bars as separate segments: exporters (SVG) then place the bars at their column.
        style = self.rich_style
        blank = Style(bgcolor=style.bgcolor)  # a style of its own, so the two segments stay apart
        return Strip([Segment(" " * pad, blank), Segment(bars, style)], width)
