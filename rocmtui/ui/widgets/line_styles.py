"""The styles a widget that draws its own lines paints them in, worked out once between two refreshes.

A widget's ``rich_style`` walks its ancestors on every call, and Textual forgets its component styles at every
refresh; a line drawn with both costs more than the line. Kept here from one refresh (or style update) to the
next, the lifetime of Textual's own component-style cache, they are worked out once for all the lines a frame
draws.
"""

from __future__ import annotations

from rich.style import Style
from textual.geometry import Region
from textual.widget import Widget


class StyledLines(Widget):
    """Base of a widget with a ``render_line`` of its own: ``line_style(component)`` is the style of a run in
    the component class ``component`` (None: the widget's own), on the widget's background."""

    _line_styles: dict[str | None, Style] | None = None

    def refresh(
        self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False
    ) -> StyledLines:
        self._line_styles = None
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def notify_style_update(self) -> None:
        self._line_styles = None
        super().notify_style_update()

    def line_style(self, component: str | None = None) -> Style:
        styles = self._line_styles
        if styles is None:
            styles = self._line_styles = {None: self.rich_style}
        style = styles.get(component)
        if style is None and component is not None:
            style = styles[component] = styles[None] + self.get_component_rich_style(component, partial=True)
        return styles[None] if style is None else style
