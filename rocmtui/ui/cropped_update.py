"""Partial screen updates that start where a line changed, not at the left edge of the widget it is in.

Textual writes a dirty span of a line as the pieces ("chops") of the widgets the span crosses, each cropped at
the span's end but not at its start (``ChopsUpdate.render_segments``; textual#5625): when the tip of a bar moves
at cell 60 of a readout, the 58 unchanged cells before it go to the terminal again. A widget that marks only its
changed cells dirty gains nothing from it (DESIGN.md, "The cost of drawing": bytes per second is what a user
on a slow SSH link feels). ``CroppingCompositor`` crops each chop at the span's start too, so a screen that uses
it writes what its widgets marked dirty, and only that.

Once only changed cells are written, most of the bytes left are colours: Rich writes every segment as a full
SGR sequence and a reset (``\x1b[1;38;5;174;48;5;233m▊\x1b[0m``), though the next segment often differs only
in its foreground (a bar's tip, then its dimmer track). ``SgrWriter`` writes each segment's colours as a change
from the last ones written, and resets once, at the end of the update.

Both are subclasses of or stand-ins for Textual's private classes, kept to this module and held to what Textual
would show by tests/ui/test_ui_cropped_update.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.cells import cell_len
from rich.color import ColorSystem
from rich.console import COLOR_SYSTEMS, Console
from rich.control import Control
from rich.style import Style
from textual._compositor import ChopsUpdate, Compositor
from textual.geometry import Region
from textual.screen import Screen
from textual.strip import Strip


def char_start(strip: Strip, offset: int) -> int:
    """The cell where the character covering cell ``offset`` of ``strip`` starts: a crop there leaves no half of
    a wide character (Rich would write a space in its place, and the terminal would drop the other half)."""
    position = 0
    for text, _, control in strip:
        if control:
            continue
        cells = cell_len(text)
        if position + cells <= offset:
            position += cells
            continue
        if cells == len(text):  # no wide character in this segment
            return offset
        for char in text:
            width = cell_len(char)
            if position + width > offset:
                return position
            position += width
    return offset


Sgr = tuple[str, str, str]
"""A style's SGR parameters in three parts: attributes (bold...), foreground, background; ``""`` for none."""
RESET = "\x1b[0m"


class SgrWriter:
    """Text in styles, each style written as a change from the one before it (one writer per update)."""

    def __init__(self, console: Console) -> None:
        self.color_system = COLOR_SYSTEMS.get(console.color_system or "", ColorSystem.TRUECOLOR)
        self.parts: list[str] = []
        self.state: Sgr = ("", "", "")
        """What the terminal has now: Textual's updates end in a reset, so nothing at first."""
        self.known: dict[Style, Sgr] = {}

    def sgr(self, style: Style) -> Sgr:
        sgr = self.known.get(style)
        if sgr is None:
            system = self.color_system
            fg = ";".join(style.color.downgrade(system).get_ansi_codes()) if style.color else ""
            bg = ";".join(style.bgcolor.downgrade(system).get_ansi_codes(False)) if style.bgcolor else ""
            sgr = self.known[style] = (Strip.render_ansi(style.without_color, system), fg, bg)
        return sgr

    def reset(self) -> None:
        if self.state != ("", "", ""):
            self.parts.append(RESET)
            self.state = ("", "", "")

    def write(self, text: str, style: Style | None) -> None:
        """``text`` in ``style`` (None: the terminal's own colours)."""
        if not text:
            return
        if style is None or style.link:  # a link: as Rich writes it, from no colours back to none
            self.reset()
            self.parts.append(text if style is None else Strip.render_style(style, text, self.color_system))
            return
        new, old = self.sgr(style), self.state
        if new != old:
            if new == ("", "", ""):
                codes = "0"
            elif old == ("", "", ""):
                codes = ";".join(part for part in new if part)
            elif new[0] == old[0]:  # the same attributes: only the colours that changed
                fg = (new[1] or "39") if new[1] != old[1] else ""
                bg = (new[2] or "49") if new[2] != old[2] else ""
                codes = ";".join(part for part in (fg, bg) if part)
            else:
                codes = ";".join(part for part in ("0", *new) if part)
            self.parts.append(f"\x1b[{codes}m")
            self.state = new
        self.parts.append(text)

    def text(self) -> str:
        """All that was written, ending with the terminal's colours as they were."""
        self.reset()
        return "".join(self.parts)


class CroppedChopsUpdate(ChopsUpdate):
    """A ``ChopsUpdate`` that writes each chop from the dirty span's start (or the chop's, if later), its
    colours as changes (``SgrWriter``)."""

    def render_segments(self, console: Console) -> str:
        """The update as terminal text: for each span, the cells from its start to its end, no more (and no
        new line between spans, as every piece starts with a move of the cursor to where it goes)."""
        out = SgrWriter(console)
        move_to = Control.move_to
        chops = self.chops
        chop_ends = self.chop_ends
        for y, x1, x2 in self.spans:
            for end, (x, strip) in zip(chop_ends[y], chops[y].items(), strict=False):
                if strip is None or x > x2 or end <= x1:
                    continue
                start = char_start(strip, x1 - x) if x < x1 else 0
                out.parts.append(move_to(x + start, y).segment.text)
                for text, style, _ in strip.crop(start, min(end, x2) - x):
                    out.write(text, style)
        return out.text()


class CroppingCompositor(Compositor):
    """A compositor whose partial updates are ``CroppedChopsUpdate``, rendered from the widgets under the dirty
    regions alone.

    Textual renders a partial update from every widget that overlaps the rectangle around all the dirty regions,
    each over its whole height: a readout line at the top and a graph cell further down had every widget of the
    monitor screen rendered (the screen and its containers over all their lines, the key bar, the process table).
    Here only a widget that some dirty region crosses is rendered, over the rows those regions cross in it (its
    full visible width: the pieces a line is cut into start at widgets' edges); every cell of a dirty region is
    still drawn from every widget under it, front to back, as Textual draws it."""

    def __init__(self) -> None:
        super().__init__()
        self._drawing: list[Region] | None = None
        """The dirty regions of the partial update being rendered; None outside one."""

    def render_partial_update(self) -> ChopsUpdate | None:
        self._drawing = list(self._dirty_regions)
        try:
            update = super().render_partial_update()
        finally:
            self._drawing = None
        if update is None:
            return None
        return CroppedChopsUpdate(update.chops, update.spans, update.chop_ends)

    def _get_renders(self, crop: Region | None = None) -> Iterable[tuple[Region, Region, list[Strip]]]:
        dirty = self._drawing
        if dirty is None or crop is None:
            yield from super()._get_renders(crop)
            return
        for widget, (region, clip) in self.visible_widgets.items():
            visible = region.intersection(clip)
            top, bottom = visible.bottom, visible.y
            for area in dirty:
                crossed = visible.intersection(area)
                if crossed.area:
                    top, bottom = min(top, crossed.y), max(bottom, crossed.bottom)
            if top < bottom:
                rows = Region(visible.x, top, visible.width, bottom - top)
                yield region, rows, widget.render_lines(rows.translate(-region.offset))


def crop_updates(screen: Screen[Any]) -> None:
    """Have ``screen`` write only the cells its widgets mark dirty; call it in the screen's ``__init__``."""
    screen._compositor = CroppingCompositor()  # the one place a screen's compositor is chosen
