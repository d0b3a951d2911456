"""A plot's y range fitted to its data: a margin each side, never past the values a series can take."""

from __future__ import annotations

import math

MARGIN = 0.05
"""Part of the data's span left free above and below it."""
PERCENT = (0.0, 100.0)
FRACTION = (0.0, 1.0)


def fitted_range(low: float, high: float, bounds: tuple[float, float] | None = None) -> tuple[float, float]:
    """``low``..``high`` with ``MARGIN`` of the span each side, not across zero unless the data crosses it, and
    clamped to ``bounds``; a constant gets a readable span around it (10% of its size, or 1 above zero)."""
    span = high - low
    pad = span * MARGIN if span > 1e-9 * max(1.0, abs(high)) else (abs(high) * 0.1 or 1.0)
    bottom, top = low - pad, high + pad
    if low >= 0 or high <= 0:  # the margin never crosses zero when the data does not (a loss, a rate)
        bottom, top = (max(0.0, bottom), top) if low >= 0 else (bottom, min(0.0, top))
    if bounds is not None:  # data inside the bounds: the range stays a span around it
        bottom, top = max(bounds[0], bottom), min(bounds[1], top)
    return bottom, top


def log_range(low: float, high: float) -> tuple[float, float]:
    """The fitted range of positive values, in decades (plotext takes a log axis's limits as log10)."""
    bottom, top = math.log10(low), math.log10(high)
    return fitted_range(bottom, top) if top - bottom > 1e-9 else (bottom - 0.5, top + 0.5)


def accuracy_bounds(name: str, low: float, high: float) -> tuple[float, float] | None:
    """The values an accuracy can take, judged by its name and its data: a fraction (0..1) or a percentage
    (0..100); None for any other series, or for an "acc" series outside both."""
    if "acc" not in name.lower():
        return None
    for bounds in (FRACTION, PERCENT):
        if bounds[0] <= low and high <= bounds[1]:
            return bounds
    return None
