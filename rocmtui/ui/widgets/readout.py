"""A telemetry reading as cheap text, repainted only when it changes, and the card that frames it."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Generic, Protocol, TypeVar

from rich.segment import Segment
from rich.style import Style
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.markup import escape
from textual.strip import Strip

from rocmtui.ui.look.meters import BAR_EMPTY
from rocmtui.ui.widgets.changed_cells import changed_runs, run_regions
from rocmtui.ui.widgets.history_bars import HistoryBars
from rocmtui.ui.widgets.line_styles import StyledLines


class Timestamped(Protocol):
    """A frozen dataclass with a ``timestamp`` (GpuSample, HostSample)."""

    @property
    def timestamp(self) -> float: ...


R = TypeVar("R", bound=Timestamped)
LineFormatter = Callable[[R, int, bool], list[str]]
"""(reading, width, compact) -> the lines to show."""


Piece = tuple[str, str | None]
"""A run of a line's text and the level it is coloured by (None: the widget's own colour)."""
WAITING = "waiting for the first sample…"
DIM = Style(dim=True)


class Readout(StyledLines, Generic[R]):
    """Lines of text for one reading; an idle device repeats itself, so repeats do not repaint.

    A new reading marks dirty only the lines that changed, and in each only the cells from its first change to
    its last, so a bar that did not move and a total that did not change are not written to the terminal again
    (on a screen that crops its updates: ``rocmtui.ui.cropped_update``). A line
    is drawn straight into a strip from its pieces (no Rich text laid out for the whole readout), with each
    level's colour from the component class ``{LEVEL_CLASS}--{level}``.
    """

    LEVEL_CLASS = "readout"

    def __init__(self, format_lines: LineFormatter[R]) -> None:
        super().__init__()
        self.format_lines = format_lines
        self.reading: R | None = None
        self.shown: list[tuple[str, object]] | None = None
        self.drawn: tuple[int, Sequence[Sequence[Piece]]] | None = None
        """The width the pieces were laid out for, and the pieces of each line."""

    def line_pieces(self, reading: R) -> Sequence[Sequence[Piece]]:
        """Each line as runs of text with their colour levels (here: the lines, uncoloured)."""
        return [[(line, None)] for line in self.format_lines(reading, self.size.width, self.has_class("-compact"))]

    def line_keys(self, pieces: Sequence[Sequence[Piece]]) -> list[tuple[str, object]]:
        """Each line's text and its colour levels: a change of either repaints the line."""
        return [("".join(text for text, _ in line), tuple(level for _, level in line)) for line in pieces]

    def set_reading(self, reading: R) -> None:
        """Repaint only what changed (the timestamp does not count)."""
        old = self.reading
        self.reading = reading
        if old is not None and replace(old, timestamp=reading.timestamp) == reading:  # type: ignore[type-var]  # R is a frozen dataclass; Protocols cannot say so
            return
        pieces = self.line_pieces(reading)
        self.drawn = (self.size.width, pieces)
        lines = self.line_keys(pieces)
        shown, self.shown = self.shown, lines
        if shown is None or len(shown) != len(lines):
            self.repaint_cells()
            return
        width = self.size.width
        changed = []
        for y, (before, after) in enumerate(zip(shown, lines, strict=True)):
            if before != after:
                runs = [(0, width)] if before[1] != after[1] else changed_runs(before[0], after[0])
                changed.extend(run_regions(runs, y, width))
        if changed:
            self.repaint_cells(*changed)

    def on_resize(self) -> None:
        self.shown = None
        self.drawn = None

    def _pieces(self) -> Sequence[Sequence[Piece]]:
        if self.reading is None:
            return [[(WAITING, None)]]
        width = self.size.width
        if self.drawn is None or self.drawn[0] != width:
            self.drawn = (width, self.line_pieces(self.reading))
        return self.drawn[1]

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self.line_style()
        lines = self._pieces()
        if not 0 <= y < len(lines):
            return Strip.blank(width, base)
        segments: list[Segment] = []
        for text, level in lines[y]:
            style = base if level is None else self.line_style(f"{self.LEVEL_CLASS}--{level}")
            segments.extend(track_segments(text, style))
        return Strip(segments).crop_extend(0, width, base)


TRACK_RUNS = re.compile(f"({BAR_EMPTY}+)")


def track_segments(text: str, style: Style) -> list[Segment]:
    """``text`` in ``style``, with the empty part of each bar (its run of ``BAR_EMPTY``) dimmed."""
    if BAR_EMPTY not in text:
        return [Segment(text, style)]
    dimmed = style + DIM
    return [Segment(run, dimmed if run[0] == BAR_EMPTY else style) for run in TRACK_RUNS.split(text) if run]


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
