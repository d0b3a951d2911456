"""The plots' shared view: which x axis they draw against and where the cursor stands; no widgets.

The training screen owns one ``PlotView`` and hands it to both plots (attributes down): the same x on
each. The cursor's place is kept on the axis shown (an x, a time since the start or a wall time), so that
the run growing under it does not move it; changing the axis carries it over through the main run's
``Timeline``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from rocmtui.ui.state.timeline import Clock, Timeline

XMode = Literal["step", "time", "wall"]
X_MODES: tuple[XMode, ...] = ("step", "time", "wall")
"""The x key's cycle: the run's own x (epochs or steps), the time since the start, the wall clock."""
CLOCKS: dict[XMode, Clock] = {"time": "elapsed", "wall": "wall"}


@dataclass
class PlotView:
    """The x axis shown and the cursor on it (None: hidden; the plots follow the run)."""

    mode: XMode = "step"
    cursor: float | None = None

    def native(self, axis_x: float, timeline: Timeline) -> float | None:
        """A run's own x at ``axis_x`` of the axis shown (None: the run has no time for it yet)."""
        clock = CLOCKS.get(self.mode)
        return axis_x if clock is None else timeline.x_at(axis_x, clock)

    def on_axis(self, x: float, timeline: Timeline) -> float | None:
        """A run's own x on the axis shown."""
        clock = CLOCKS.get(self.mode)
        return x if clock is None else timeline.at(x, clock)

    def wall_at(self, axis_x: float, timeline: Timeline) -> float | None:
        """The wall time at ``axis_x`` of the axis shown (None: the run has not said when it started)."""
        if not timeline.knows_wall:
            return None
        if self.mode == "wall":
            return axis_x
        native = self.native(axis_x, timeline)
        return timeline.at(native, "wall") if native is not None else None

    def next_mode(self, timeline: Timeline) -> XMode:
        """The next axis of the cycle (the wall clock only for a run that reported its start); the cursor
        stays at the same point of the run."""
        modes = [m for m in X_MODES if m != "wall" or timeline.knows_wall]
        mode = modes[(modes.index(self.mode) + 1) % len(modes)] if self.mode in modes else modes[0]
        native = self.native(self.cursor, timeline) if self.cursor is not None else None
        self.mode = mode
        if native is not None:
            self.cursor = self.on_axis(native, timeline)
        return mode
