"""A series' view as the points of one plotted line: how many x positions a plot draws, and the raw line with
its spikes kept."""

from __future__ import annotations

from rocmtui.base.series import SeriesView

MAX_DRAWN_XS = 500
"""Most x positions drawn per line (plotext's cost grows with points); past it, a series' buckets are
gathered into groups, each drawn at its last x."""


def drawn_xs(width: int) -> int:
    """x positions drawn per line in a plot ``width`` cells wide: braille shows two per cell."""
    return min(MAX_DRAWN_XS, max(50, 2 * width))


def envelope(view: SeriesView) -> tuple[list[float], list[float]]:
    """The raw line of a series' view, spikes kept: a group of one value is one point; a group of several
    is two at its x, its min and max, the one nearer its last value second (the line leaves from there)."""
    xs: list[float] = []
    ys: list[float] = []
    for x, low, high, last in zip(view.x, view.low, view.high, view.last, strict=True):
        if low == high:
            xs.append(x)
            ys.append(low)
        else:
            xs += (x, x)
            ys += (high, low) if last - low < high - last else (low, high)
    return xs, ys
