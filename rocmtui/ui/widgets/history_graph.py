"""A history graph drawn into strips: two series in braille, labelled axes, repainting only cells that change.

The picture is kept as rows of (text, owner) cells. A new sample usually changes only the newest column (a
column spans several samples at the longer timebases), so only the changed part of each row is marked dirty
and Textual writes a few cells instead of the whole graph (DESIGN.md, "The cost of drawing").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region
from textual.strip import Strip

from rocmtui.gpu.history import Point
from rocmtui.ui.look.braille import BLANK, FIRST, SECOND, dot_level, picture
from rocmtui.ui.widgets.line_styles import StyledLines

AXIS = 3
"""Owner of the axis labels' cells."""
LABEL_W = 5
"""Cells of an axis label (``100%``, ``141G``, ``700W``, ``90°C``), a blank beside the plot."""


@dataclass(frozen=True)
class Track:
    """One series to draw: its name (the key), its points, the top of its axis and how to label a value."""

    label: str
    points: Sequence[Point | None]
    scale: float
    fmt: Callable[[float], str]
    unit: float = 1.0
    """What a round axis value is a multiple of (a GiB for memory)."""


TrackSource = Callable[[int], Sequence[Track]]
"""Given the number of points that fit (two per cell), the tracks to draw."""
Row = tuple[str, tuple[int, ...]]


def round_tick(scale: float, unit: float = 1.0) -> float:
    """A round value near the middle of 0..scale, in multiples of ``unit``: the roundest multiple of 1, 2 or 5
    times a power of ten within 15% of the scale of the middle (50 of 100%, 400 of 700 W, 50 of 141 GiB)."""
    if scale <= 0 or unit <= 0:
        return 0.0
    half = scale / unit / 2
    top = math.ceil(math.log10(half))
    for exponent in range(top, top - 4, -1):
        for mantissa in (5, 2, 1):
            step = mantissa * 10.0**exponent
            value = round(half / step) * step
            if value > 0 and abs(value - half) <= 0.15 * scale / unit:
                return value * unit
    return half * unit


def axis_labels(track: Track | None, rows: int) -> list[str]:
    """The labels beside ``rows`` plot rows: the top of the scale, 0, and on taller graphs a round value in
    between, on the row its dots are drawn in."""
    labels = [""] * rows
    if track is None or rows <= 0:
        return labels
    labels[0] = track.fmt(track.scale)
    if rows >= 2:
        labels[-1] = track.fmt(0.0)
    if rows >= 4:
        tick = round_tick(track.scale, track.unit)
        row = rows - 1 - dot_level(tick, track.scale, 4 * rows) // 4
        if 0 < row < rows - 1:
            labels[row] = track.fmt(tick)
    return labels


TimeLabels = tuple[str, str]
"""The time axis's left and right ends (``-10m`` and ``now``)."""


def time_axis(width: int, ends: TimeLabels, keys: Sequence[str]) -> Row:
    """``-10m   ⣀ util ⣀ VRAM   now``: the left end, the key in the middle, the right end."""
    left, right = ends
    text = list(f"{left}{' ' * max(0, width - len(left) - len(right))}{right}"[:width])
    owners = [AXIS] * len(text)
    key = "   ".join(f"⣀ {name}" for name in keys)
    start = max(len(left) + 1, (width - len(key)) // 2)
    if start + len(key) <= width - len(right) - 1:
        position = start
        for number, name in enumerate(keys, start=FIRST):
            part = f"⣀ {name}"
            text[position : position + len(part)] = part
            owners[position : position + 2] = [number, number]
            position += len(part) + 3
    return "".join(text), tuple(owners)


def graph_rows(tracks: Sequence[Track], width: int, height: int, ends: TimeLabels) -> list[Row]:
    """The whole graph as rows of (text, owners): left axis, plot, right axis, then the time axis."""
    if width <= 0 or height <= 0:
        return []
    plot_rows = height - 1 if height >= 3 else height
    first = tracks[0] if tracks else None
    second = tracks[1] if len(tracks) > 1 else None
    left = axis_labels(first, plot_rows)
    right = axis_labels(second, plot_rows)
    left_w = LABEL_W + 1
    right_w = LABEL_W + 1 if second else 0
    plot_w = max(0, width - left_w - right_w)
    cells = picture([(t.points, t.scale) for t in tracks], plot_w, plot_rows)
    rows: list[Row] = []
    for y, (text, owners) in enumerate(cells):
        left_text = left[y][:LABEL_W].rjust(LABEL_W) + " "
        right_text = (" " + right[y][:LABEL_W]).ljust(right_w) if second else ""
        rows.append(
            (
                (left_text + text + right_text)[:width],
                ((AXIS,) * left_w + owners + (AXIS,) * right_w)[:width],
            )
        )
    if plot_rows < height:
        rows.append(time_axis(width, ends, [t.label for t in tracks]))
    return rows


def plot_points(width: int, tracks: int) -> int:
    """Points that fit in a graph ``width`` cells wide (two per cell), an axis per track set aside."""
    return 2 * max(0, width - (LABEL_W + 1) * min(2, tracks))


def changed_span(old: Row | None, new: Row) -> tuple[int, int] | None:
    """(first, end) of the cells that differ between two rows; None when they are the same."""
    if old == new:
        return None
    if old is None or len(old[0]) != len(new[0]):
        return 0, len(new[0])
    diffs = [i for i in range(len(new[0])) if old[0][i] != new[0][i] or old[1][i] != new[1][i]]
    return (diffs[0], diffs[-1] + 1) if diffs else None


class HistoryGraph(StyledLines):
    """Braille history of up to two series with axes; ``show`` redraws what changed."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"history-graph--first", "history-graph--second", "history-graph--axis"}
    DEFAULT_CSS = """
    HistoryGraph { width: 1fr; height: 1fr; min-height: 2; }
    HistoryGraph > .history-graph--first { color: $accent; }
    HistoryGraph > .history-graph--second { color: $success; }
    HistoryGraph > .history-graph--axis { color: $text-muted; }
    """

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.source: TrackSource | None = None
        self.ends: TimeLabels = ("", "")
        self.rows: list[Row] = []

    def show(self, source: TrackSource, ends: TimeLabels) -> None:
        """New data (or timebase): rebuild the picture and mark only the changed cells dirty."""
        self.source = source
        self.ends = ends
        self.redraw()

    def on_resize(self) -> None:
        self.rows = []
        self.redraw()

    def redraw(self) -> None:
        width, height = self.size
        if self.source is None or width <= 0 or height <= 0:
            return
        plot_rows = height - 1 if height >= 3 else height
        tracks = self.source(plot_points(width, 2) if plot_rows else 0)
        new = graph_rows(tracks, width, height, self.ends)
        old = self.rows
        self.rows = new
        if len(old) != len(new):
            self.repaint_cells()
            return
        spans = ((y, changed_span(old[y], row)) for y, row in enumerate(new))
        changed = [Region(span[0], y, span[1] - span[0], 1) for y, span in spans if span is not None]
        if changed:
            self.repaint_cells(*changed)

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if not 0 <= y < len(self.rows):
            return Strip.blank(width, self.line_style())
        text, owners = self.rows[y]
        base = self.line_style()
        styles = {
            BLANK: base,
            FIRST: self.line_style("history-graph--first"),
            SECOND: self.line_style("history-graph--second"),
            AXIS: self.line_style("history-graph--axis"),
        }
        return Strip(_segments(text, owners, styles), width).extend_cell_length(width, base)


def _segments(text: str, owners: Sequence[int], styles: dict[int, Style]) -> list[Segment]:
    """One segment per run of cells with the same owner."""
    segments: list[Segment] = []
    start = 0
    for i in range(1, len(text) + 1):
        if i == len(text) or owners[i] != owners[start]:
            segments.append(Segment(text[start:i], styles[owners[start]]))
            start = i
    return segments
