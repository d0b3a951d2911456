"""The cluster screen's list: a line per host and per GPU, drawn a visible line at a time, with a cursor.

A ``ScrollView`` that renders only the lines on screen: 256 hosts of 8 GPUs are 2,304 lines, and a
``DataTable`` would lay out every one of them each round. A new round of the same lines repaints only the cells
that changed on screen (a GPU's utilisation, its history's newest point), not every line.
"""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from rich.text import Span, Text
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from rocmtui.ui.state.cluster_rows import Line
from rocmtui.ui.widgets.changed_cells import changed_runs, run_regions

Drawn = tuple[tuple[object, ...], str, tuple[Span, ...]]
"""What a row was drawn from: its state (``ClusterList._row_state``), its line's text and the text's colours."""


class ClusterList(ScrollView, can_focus=True):
    """``set_lines`` replaces what is shown; the cursor stays on the line with the same key."""

    DEFAULT_CSS = """
    ClusterList { height: 1fr; overflow-x: hidden; }
    ClusterList > .cluster-list--cursor { background: $accent 40%; }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {"cluster-list--cursor"}
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "move(-1000000)", "First", show=False),
        Binding("end", "move(1000000)", "Last", show=False),
        Binding("enter", "open", "Open host"),
    ]

    class Opened(Message):
        """Enter on a host's line (or one of its GPUs): show that host."""

        def __init__(self, target: str) -> None:
            super().__init__()
            self.target = target

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: list[Line] = []
        self.cursor = 0
        self._drawn: dict[int, Drawn] = {}
        """What each row on screen was last drawn from."""
        self._texts: dict[int, Text] = {}
        """The texts of the lines on screen made for the last round (by line), drawn from here."""

    def set_lines(self, lines: list[Line]) -> None:
        """Show ``lines``; the very list shown already (its hosts' new readings) repaints the cells that changed."""
        self._texts = {}
        if lines is self.lines:
            self._repaint_changes()
            return
        key = self.lines[self.cursor].key if self.cursor < len(self.lines) else None
        self.lines = lines
        keys = [line.key for line in lines]
        self.cursor = keys.index(key) if key in keys else min(self.cursor, max(0, len(lines) - 1))
        self.virtual_size = Size(0, len(lines))  # lines are cut at the width shown: a line's text is made when drawn
        self.refresh()

    @property
    def selected(self) -> Line | None:
        return self.lines[self.cursor] if self.cursor < len(self.lines) else None

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        base = self.rich_style
        if index >= len(self.lines):
            self._drawn.pop(y, None)
            return Strip([Segment(" " * width, base)], width)
        if index == self.cursor:
            cursor = self.get_component_rich_style("cluster-list--cursor") if self.has_focus else Style(underline=True)
            base = base + cursor
        text = self._texts.get(index) or self.lines[index].text
        self._drawn[y] = (self._row_state(index), text.plain, tuple(text.spans))
        segments = [Segment(s.text, base + s.style if s.style else base) for s in text.render(self.app.console)]
        return Strip(segments).crop_extend(scroll_x, scroll_x + width, base)

    def _row_state(self, index: int) -> tuple[object, ...]:
        """What a row's look depends on besides its text: which line, the cursor on it, the focus, the width."""
        return index, index == self.cursor, self.has_focus, self.scrollable_content_region.width

    def _repaint_changes(self) -> None:
        """The lines on screen made anew; of each, only the runs of cells that changed are marked to repaint. A line
        whose colours moved, or with a character wider or narrower than a cell, is repainted whole."""
        width = self.scrollable_content_region.width
        top = self.scroll_offset.y
        for y in range(min(self.size.height, len(self.lines) - top)):
            index = top + y
            text = self._texts[index] = self.lines[index].text
            drawn, plain = self._drawn.get(y), text.plain
            if (
                drawn is None
                or drawn[0] != self._row_state(index)
                or drawn[2] != tuple(text.spans)
                or cell_len(plain) != len(plain)
                or cell_len(drawn[1]) != len(drawn[1])
            ):
                self.refresh(Region(0, y, width, 1))
                continue
            for region in run_regions(changed_runs(drawn[1], plain), y, width):
                self.refresh(region)

    def action_move(self, step: int) -> None:
        if self.lines:
            self.cursor = max(0, min(len(self.lines) - 1, self.cursor + step))
            self._follow()

    def action_page(self, step: int) -> None:
        self.action_move(step * max(1, self.size.height - 1))

    def action_open(self) -> None:
        line = self.selected
        if line is not None:
            self.post_message(self.Opened(line.target))

    def _follow(self) -> None:
        top = self.scroll_offset.y
        height = max(1, self.size.height)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False)
        self.refresh()

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()
