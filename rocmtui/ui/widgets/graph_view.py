"""What the monitor's history graphs show, kept apart from the widgets that draw them.

The monitor's first frame needs the view (its status line names the timebase) but no graph: the card and
graph modules are loaded with the first GPU sample (BENCHMARKS.md, the monitor's first frame).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rocmtui.gpu.history import auto_span

GRAPHS = (("util", "vram"), ("power", "temp"))
"""What the graph shows, in the order the ``g`` key steps through."""


@dataclass(frozen=True)
class GraphView:
    """What the graphs show: which readings, over which timebase, sampled how often (for holding gaps).

    Unless ``fixed`` (the user chose a timebase with ``t``), ``span_s`` follows the history's age: the
    shortest timebase it still fits in (``shown``).
    """

    metrics: tuple[str, ...] = GRAPHS[0]
    span_s: float = 60.0
    interval_s: float = 1.0
    fixed: bool = False

    def shown(self, age_s: float) -> GraphView:
        """This view with the timebase it shows for a history ``age_s`` seconds old."""
        span = self.span_s if self.fixed else auto_span(age_s)
        return self if span == self.span_s else replace(self, span_s=span)
