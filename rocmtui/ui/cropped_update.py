"""Partial screen updates that start where a line changed, not at the left edge of the widget it is in.

Textual writes a dirty span of a line as the pieces ("chops") of the widgets the span crosses, each cropped at
the span's end but not at its start (``ChopsUpdate.render_segments``; textual#5625): when the tip of a bar moves
at cell 60 of a readout, the 58 unchanged cells before it go to the terminal again. A widget that marks only its
changed cells dirty gains nothing from it (DESIGN.md, "The cost of drawing": bytes per second is what a user
on a slow SSH link feels). ``CroppingCompositor`` crops each chop at the span's start too, so a screen that uses
it writes what its widgets marked dirty, and only that. It is a subclass of two of Textual's private classes,
kept to this module and held to Textual's behaviour by tests/ui/test_ui_cropped_update.py.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console
from rich.control import Control
from textual._compositor import ChopsUpdate, Compositor
from textual.screen import Screen
from textual.strip import Strip


def char_start(strip: Strip, offset: int) -> int:
    """The cell where the character covering cell ``offset`` of ``strip`` starts: a crop there leaves no half of
    a wide character (Rich would write a space in its place, and the terminal would drop the other half)."""
    position = 0
    for segment in strip:
        text = segment.text
        if segment.control or position + cell_len(text) <= offset:
            position += 0 if segment.control else cell_len(text)
            continue
        for char in text:
            width = cell_len(char)
            if position + width > offset:
                return position
            position += width
    return offset


class CroppedChopsUpdate(ChopsUpdate):
    """A ``ChopsUpdate`` that writes each chop from the dirty span's start (or the chop's, if later)."""

    def render_segments(self, console: Console) -> str:
        """The update as terminal text: for each span, the cells from its start to its end, no more (and no
        new line between spans, as every piece starts with a move of the cursor to where it goes)."""
        sequences: list[str] = []
        append = sequences.append
        move_to = Control.move_to
        chops = self.chops
        chop_ends = self.chop_ends
        for y, x1, x2 in self.spans:
            for end, (x, strip) in zip(chop_ends[y], chops[y].items(), strict=False):
                if strip is None or x > x2 or end <= x1:
                    continue
                start = char_start(strip, x1 - x) if x < x1 else 0
                append(move_to(x + start, y).segment.text)
                append(strip.crop(start, min(end, x2) - x).render(console))
        return "".join(sequences)


class CroppingCompositor(Compositor):
    """A compositor whose partial updates are ``CroppedChopsUpdate``."""

    def render_partial_update(self) -> ChopsUpdate | None:
        update = super().render_partial_update()
        if update is None:
            return None
        return CroppedChopsUpdate(update.chops, update.spans, update.chop_ends)


def crop_updates(screen: Screen[object]) -> None:
    """Have ``screen`` write only the cells its widgets mark dirty; call it in the screen's ``__init__``."""
    screen._compositor = CroppingCompositor()  # the one place a screen's compositor is chosen
