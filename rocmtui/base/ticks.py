"""Round axis ticks: values 1, 2, 2.5 or 5 times a power of ten apart (the card's axes, the UI's step axes)."""

from __future__ import annotations

import math
from collections.abc import Sequence

ROUND_MULTIPLES = (1.0, 2.0, 2.5, 5.0)
WHOLE_MULTIPLES = (1.0, 2.0, 5.0)
"""Multiples of a step under ten that keep it whole (no tick at step 2.5; 25 is whole)."""


def round_step(raw: float, multiples: Sequence[float] = ROUND_MULTIPLES) -> float:
    """The smallest of ``multiples`` times a power of ten that is at least ``raw`` (a positive, finite span)."""
    power = 10.0 ** math.floor(math.log10(raw))
    return next((m * power for m in multiples if m * power >= raw * (1 - 1e-9)), 10 * power)


def nice_ticks(low: float, high: float, count: int = 5, whole: bool = False) -> list[float]:
    """About ``count`` round values from ``low`` to ``high``; ``whole``: whole numbers only (steps, epochs)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return []
    span = high - low
    if not span > 0:
        return [low]
    if not math.isfinite(span):  # two finite ends further apart than a float reaches: ticked in halves
        return [2 * tick for tick in nice_ticks(low / 2, high / 2, count, whole)]
    raw = max(span / count, 1.0) if whole else span / count
    step = round_step(raw, WHOLE_MULTIPLES if whole and raw < 10 else ROUND_MULTIPLES)
    digits = 3 - math.floor(math.log10(step))  # a step's own precision: 0.1 * 3 is 0.3, 2e-300 * 3 is 6e-300
    first = math.ceil(low / step - 1e-9)
    return [round(k * step, digits) for k in range(first, math.floor(high / step + 1e-9) + 1)]
