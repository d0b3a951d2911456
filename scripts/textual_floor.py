"""The least a Textual app does before its first frame: Textual imported, one line of text, one key on the bottom row.

``scripts/monitor_cost.py --tool textual`` launches it as a reference beside ``rocmtui monitor``: its launch to
first frame is the floor that any app built on this Textual pays on the same machine (Python's start, Textual's
import, its driver, stylesheet and first compositor pass), with the collector paused as ``rocmtui`` pauses it.
"""

import gc

gc.disable()

from typing import ClassVar  # noqa: E402 (after the collector is paused, as in rocmtui.entry)

from textual.app import App, ComposeResult  # noqa: E402
from textual.binding import BindingType  # noqa: E402
from textual.widgets import Static  # noqa: E402


class Floor(App[None]):
    """A status line and a bottom row with the key that the measurement waits for."""

    BINDINGS: ClassVar[list[BindingType]] = [("q", "quit", "Quit")]
    CSS = "#keys { dock: bottom; height: 1; }"

    def compose(self) -> ComposeResult:
        yield Static("waiting for the first sample…")
        yield Static(" q Quit ", id="keys")


if __name__ == "__main__":
    Floor().run()
