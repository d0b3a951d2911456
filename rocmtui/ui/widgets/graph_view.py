"""What the monitor's history graphs show, kept apart from the widgets that draw them.

The monitor's first frame needs the view (its status line names the timebase) but no graph: the card and
graph modules are loaded with the first GPU sample (BENCHMARKS.md, the monitor's first frame).
"""

from __future__ import annotations

from dataclasses import dataclass

GRAPHS = (("util", "vram"), ("power", "temp"))
"""What the graph shows, in the order the ``g`` key steps through."""


@dataclass(frozen=True)
class GraphView:
    """What the graphs show: which readings, over which timebase, sampled how often (for holding gaps)."""

    metrics: tuple[str, ...] = GRAPHS[0]
    span_s: float = 600.0
    interval_s: float = 1.0
