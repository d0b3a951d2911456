"""Round axis ticks: values 1, 2, 2.5 or 5 times a power of ten apart (the card's axes, the UI's step axes)."""

from __future__ import annotations

import math
from collections.abc import Sequence

ROUND_MULTIPLES = (1.0, 2.0, 2.5, 5.0)
ONE_TWO_FIVE = (1.0, 2.0, 5.0)
"""The UI's steps, and those under ten that keep a step whole (no tick at step 2.5; 25 is whole)."""
TINY_SPAN = 1e-300
"""Below this a span is one value: its steps, a few times finer, would fall under the smallest normal float (a
power of ten of 1e-324 is 0)."""


def round_step(raw: float, multiples: Sequence[float] = ROUND_MULTIPLES) -> float:
    """The smallest of ``multiples`` times a power of ten that is at least ``raw`` (a positive, finite span)."""
    power = 10.0 ** math.floor(math.log10(raw))
    return next((m * power for m in multiples if m * power >= raw * (1 - 1e-9)), 10 * power)


def nice_ticks(
    low: float, high: float, count: int = 5, whole: bool = False, multiples: Sequence[float] = ROUND_MULTIPLES
) -> list[float]:
    """Round values from ``low`` to ``high`` (both inside), at most ``count + 1`` of them, a step of ``multiples``
    times a power of ten apart (the UI's axes take 1-2-5, ``ONE_TWO_FIVE``); ``whole``: whole numbers only
    (steps, epochs). A step that misses a narrow range falls to the next finer 1-2-5 one."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return []
    low, high = min(low, high), max(low, high)
    span = high - low
    if not math.isfinite(span):  # two finite ends further apart than a float reaches: ticked in halves
        return [2 * tick for tick in nice_ticks(low / 2, high / 2, count, whole, multiples)]
    if not span > max(1e-12 * max(abs(low), abs(high)), TINY_SPAN):
        return [low]
    raw = max(span / count, 1.0) if whole else span / max(1, count)
    step = round_step(raw, ONE_TWO_FIVE if whole and raw < 10 else multiples)
    slack = 1e-9 * span
    ticks: list[float] = []
    for _ in range(8):
        digits = 3 - math.floor(math.log10(step))  # a step's own precision: 0.1 * 3 is 0.3, 2e-300 * 3 is 6e-300
        first, last = math.ceil((low - slack) / step), math.floor((high + slack) / step)
        ticks = [round(k * step, digits) for k in range(first, last + 1)]
        if ticks or (whole and step <= 1):
            break
        step = _finer(step)
    return ticks


def _finer(step: float) -> float:
    """The 1-2-5 step below ``step`` (10 -> 5 -> 2 -> 1)."""
    power = 10.0 ** math.floor(math.log10(step) + 1e-9)
    mantissa = round(step / power)
    return power / 2 if mantissa == 1 else power if mantissa == 2 else 2 * power
