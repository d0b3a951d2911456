"""Axis ticks at round values: 1, 2 or 5 times a power of ten, decades on a log axis, clock-round times.

plotext places its own ticks at evenly spaced, unrounded values (3.70, 3.26, ...); the plots hand it these
instead, with their labels, so that a value can be read off an axis.
"""

from __future__ import annotations

import itertools
import math
import time

from rocmtui.base.ticks import ONE_TWO_FIVE, nice_ticks, round_step

TIME_STEPS_S = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)
"""Steps of a time axis: seconds, minutes and hours that a clock shows round."""


def nice_step(span: float, count: int = 5) -> float:
    """The smallest of 1, 2 or 5 times a power of ten that cuts ``span`` into at most ``count`` intervals."""
    return round_step(max(span, 1e-300) / max(1, count), ONE_TWO_FIVE)


def _clean(value: float) -> float:
    """``0.30000000000000004`` as ``0.3``: a tick is a multiple of a step, kept to 12 significant digits."""
    return 0.0 if value == 0 else float(f"{value:.12g}")


def tick_label(value: float, step: float) -> str:
    """A tick's label with as many decimals as the step needs; large and small values in short forms."""
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 1e3 and step >= 1000:
        for size, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
            if magnitude >= size:
                return f"{value / size:g}{suffix}"
    if magnitude < 1e-3:
        return f"{value:.0e}"
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0
    return f"{value:.{decimals}f}"


def labelled(ticks: list[float]) -> list[str]:
    """Each tick's label, in one format for the whole axis and each one different: fixed decimals as the step
    between them needs (k, M, G for large round steps), or, when every tick is below 1e-3, the same number of
    significant digits in scientific form; ticks that are not evenly spaced (a log axis's decades) in their
    shortest form, scientific for all when one needs it. Digits are added until no two labels are the same."""
    if not ticks:
        return []
    step = ticks[1] - ticks[0] if len(ticks) > 1 else abs(ticks[0])
    step = step or 1.0
    even = all(math.isclose(b - a, step, rel_tol=1e-6, abs_tol=1e-12) for a, b in itertools.pairwise(ticks))
    largest = max(abs(t) for t in ticks)
    if 0 < largest < 1e-3 or (not even and any(0 < abs(t) < 1e-3 for t in ticks)):
        return _first_unique([[_scientific(t, digits) for t in ticks] for digits in range(7)])
    if not even:
        return _first_unique([[f"{t:.{digits}g}" for t in ticks] for digits in range(1, 13)])
    if largest >= 1e3 and step >= 1000:  # 5k, 10k, 15k
        labels = [tick_label(tick, step) for tick in ticks]
        if len(set(labels)) == len(labels):
            return labels
    decimals = max(0, -math.floor(math.log10(abs(step)) + 1e-9))
    return _first_unique([["0" if t == 0 else f"{t:.{d}f}" for t in ticks] for d in range(decimals, decimals + 7)])


def _scientific(value: float, digits: int) -> str:
    return "0" if value == 0 else f"{value:.{digits}e}"


def _first_unique(candidates: list[list[str]]) -> list[str]:
    """The first of ``candidates`` whose labels are all different, else the last (the most digits)."""
    return next((labels for labels in candidates if len(set(labels)) == len(labels)), candidates[-1])


def log_ticks(low: float, high: float) -> list[float]:
    """Decades from ``low`` to ``high`` (positive); within one decade, its 1-2-5 values (at least two ticks)."""
    if not (low > 0 and high > 0 and math.isfinite(low) and math.isfinite(high)):
        return []
    low, high = min(low, high), max(low, high)
    decades = [10.0**e for e in range(math.ceil(math.log10(low) - 1e-9), math.floor(math.log10(high) + 1e-9) + 1)]
    if len(decades) >= 2:
        every = max(1, math.ceil(len(decades) / 6))
        return decades[::every]
    ticks = [
        m * 10.0**e
        for e in range(math.floor(math.log10(low)), math.floor(math.log10(high)) + 1)
        for m in (1.0, 2.0, 5.0)
    ]
    inside = [_clean(t) for t in ticks if low * (1 - 1e-9) <= t <= high * (1 + 1e-9)]
    return inside if len(inside) >= 2 else nice_ticks(low, high, 3, multiples=ONE_TWO_FIVE)


def time_step(span_s: float, count: int = 5) -> float:
    """The smallest clock-round step (``TIME_STEPS_S``) that cuts ``span_s`` into at most ``count`` intervals."""
    raw = span_s / max(1, count)
    if raw > TIME_STEPS_S[-1]:
        return TIME_STEPS_S[-1] * nice_step(raw / TIME_STEPS_S[-1], 1)
    return float(next(step for step in TIME_STEPS_S if step >= raw * (1 - 1e-9)))


def time_ticks(low_s: float, high_s: float, count: int = 5, offset_s: float = 0.0) -> list[float]:
    """Times from ``low_s`` to ``high_s`` at a clock-round step; ``offset_s`` shifts what counts as round
    (a wall clock's local midnight)."""
    if not (math.isfinite(low_s) and math.isfinite(high_s)) or high_s < low_s:
        return []
    if high_s - low_s < 1.0:
        return nice_ticks(low_s, high_s, count, multiples=ONE_TWO_FIVE)
    step = time_step(high_s - low_s, count)
    first = math.ceil((low_s + offset_s) / step - 1e-9)
    last = math.floor((high_s + offset_s) / step + 1e-9)
    return [i * step - offset_s for i in range(first, last + 1)]


def elapsed_label(seconds: float) -> str:
    """``45s``, ``2m``, ``2m30``, ``1h``, ``1h05``: a time since the start, as short as it can be."""
    whole = round(seconds)
    if abs(seconds - whole) > 1e-6 and abs(seconds) < 60:
        return f"{seconds:g}s"
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}" if minutes else f"{hours}h"
    if minutes:
        return f"{minutes}m{secs:02d}" if secs else f"{minutes}m"
    return f"{secs}s"


def local_offset_s(at: float) -> float:
    """Seconds to add to a Unix time to read it on the local clock (so that round times are local ones)."""
    return float(time.localtime(at).tm_gmtoff)


def clock_label(at: float, step_s: float) -> str:
    """A wall-clock tick: ``14:05`` at a step of a minute or more, ``14:05:30`` below."""
    return time.strftime("%H:%M" if step_s >= 60 else "%H:%M:%S", time.localtime(at))
