"""The styles a widget that draws its own lines paints them in, worked out once and kept until they may change.

A widget's ``rich_style`` walks its ancestors on every call, and Textual forgets its component styles at every
refresh; a line drawn with both costs more than the line. They are kept here until the widget's styles may have
changed: a style update of its own (``notify_style_update``), or a refresh that Textual asks for, which it does
for every descendant when a node's colour, background, tint, text style or opacity changes. A widget that repaints
cells because its content changed says so (``repaint_cells``) and keeps them: rendering the monitor's GPU readout
took 0.67 ms a sample with them worked out at each sample, 0.36 ms with them kept; its graph, 0.32 and 0.13 ms
(Textual's test driver, 2-core CPU box).
"""

from __future__ import annotations

from rich.style import Style
from textual.geometry import Region
from textual.widget import Widget


class StyledLines(Widget):
    """Base of a widget with a ``render_line`` of its own: ``line_style(component)`` is the style of a run in
    the component class ``component`` (None: the widget's own), on the widget's background."""

    _line_styles: dict[str | None, Style] | None = None

    def refresh(  # Textual's, for whatever reason: the styles may have changed
        self, *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False
    ) -> StyledLines:
        self._line_styles = None
        return super().refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

    def repaint_cells(self, *regions: Region) -> None:
        """Repaint ``regions`` (all of the widget when none are given), whose content changed: the styles are kept."""
        super().refresh(*regions)

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
