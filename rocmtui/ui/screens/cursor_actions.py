"""The cursor and x-axis keys of a screen of plots: the bindings and the actions, handed to ``CursorKeys``.

A screen that mixes this in sets ``cursor`` and adds ``CURSOR_BINDINGS`` to its own (last: Textual reads the
bindings of its widget classes only, and the key bar shows them in order).
"""

from __future__ import annotations

from textual.binding import Binding

from rocmtui.ui.widgets.plot_cursor import CursorKeys
from rocmtui.ui.widgets.throttled_plot import CursorPlaced

CURSOR_BINDINGS = [
    Binding("c", "toggle_cursor", "Cursor"),
    Binding("x", "x_axis", "X axis"),
    Binding("left", "cursor(-1)", "Cursor left", show=False),
    Binding("right", "cursor(1)", "Cursor right", show=False),
    Binding("shift+left,pageup", "cursor(-10, True)", "Cursor far left", show=False, priority=True),
    Binding("shift+right,pagedown", "cursor(10, True)", "Cursor far right", show=False, priority=True),
    Binding("home", "cursor_end(False)", "Cursor first", show=False, priority=True),
    Binding("end", "cursor_end(True)", "Cursor last", show=False, priority=True),
    Binding("escape", "hide_cursor", "Hide cursor", show=False),
]


class CursorActions:
    """The actions of ``CURSOR_BINDINGS`` and a click on a plot, on the screen's ``cursor``."""

    cursor: CursorKeys

    def action_cursor(self, columns: int, only_shown: bool = False) -> None:
        self.cursor.move(columns, only_shown=only_shown)

    def action_cursor_end(self, last: bool) -> None:
        self.cursor.jump(last)

    def action_toggle_cursor(self) -> None:
        self.cursor.toggle()

    def action_hide_cursor(self) -> None:
        self.cursor.hide()

    def action_x_axis(self) -> None:
        self.cursor.next_axis()

    def on_cursor_placed(self, message: CursorPlaced) -> None:
        self.cursor.place(message.axis_x)
