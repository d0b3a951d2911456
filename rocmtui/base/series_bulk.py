"""Many points appended to a ``Series`` at once, in numpy: what ``Series.add`` would do to each, in bulk.

A viewer that opens a long run applies its whole history (millions of points) before the first frame; one
``add`` a point costs about a microsecond there (the EMA at every weight, in Python). Here a block of points
that fills whole buckets is one reshape: its buckets' min, max, last and sum along one axis, and each
weight's EMA at every bucket end from one product with the weight's powers (the EMA is linear:
``s_end = w**span * s_start + (1 - w) * sum(w**(span - 1 - j) * v_j)``), then one step a bucket (not a
point) to chain the buckets. The result equals ``add`` point by point up to float rounding (the test
compares them), and ``add`` stays the O(1) path of a live point.

numpy is imported by this module only, and only a bulk append loads it.
"""

from __future__ import annotations

import functools
from array import array
from collections.abc import Sequence
from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from rocmtui.base.series import Series

Floats = npt.NDArray[np.float64]


def extend(series: Series, xs: Sequence[float] | Floats, values: Sequence[float] | Floats) -> int:
    """Append the points (``xs[i]``, ``values[i]``) in order; returns how many were kept (finite ones).

    As with ``add``, an x below the last one forgets the points at or after it first."""
    x, v = _floats(xs), _floats(values)
    if x.shape != v.shape or x.ndim != 1:
        raise ValueError(f"xs and values must be two sequences of one length, not {x.shape} and {v.shape}")
    finite = np.isfinite(x) & np.isfinite(v)
    if not finite.all():
        x, v = x[finite], v[finite]
    if not len(x):  # a block of NaNs only: nothing to keep
        return 0
    backs = (np.flatnonzero(x[1:] < x[:-1]) + 1).tolist()
    for start, end in pairwise([0, *backs, len(x)]):
        last_x = series.last_x
        if last_x is not None and x[start] < last_x:
            series.cut_from(float(x[start]))
        _append_ordered(series, x[start:end], v[start:end])
    return len(x)


def _floats(values: Sequence[float] | Floats) -> Floats:
    """A float64 array of ``values``; a tuple of Python ints or floats goes through ``array`` (C loops), three
    times faster than ``np.asarray`` for the ints of a tracked run's steps."""
    if isinstance(values, np.ndarray):
        return np.asarray(values, dtype=np.float64)
    if isinstance(values, array) and values.typecode == "d":  # a packed window's values: no copy
        return np.frombuffer(values, dtype=np.float64)
    if isinstance(values, range):  # a packed window's steps
        return np.arange(values.start, values.stop, values.step, dtype=np.float64)
    try:
        return np.frombuffer(array("q", values), dtype=np.int64).astype(np.float64)
    except (TypeError, OverflowError):  # floats, or ints beyond 64 bits
        pass
    try:
        return np.frombuffer(array("d", values), dtype=np.float64)
    except TypeError:
        return np.asarray(values, dtype=np.float64)


def _append_ordered(series: Series, x: Floats, v: Floats) -> None:
    """Points in ascending x, none before the series' last: into the open bucket, then whole buckets."""
    done, n = 0, len(x)
    while done < n:
        span = series.span
        whole = min(series.capacity - len(series._last_x), (n - done) // span)
        if series._open.count or not whole:
            take = min(span - series._open.count, n - done)
            _into_open(series, x[done : done + take], v[done : done + take])
        else:
            take = whole * span
            _close_many(series, x[done : done + take].reshape(whole, span), v[done : done + take].reshape(whole, span))
        done += take


def _into_open(series: Series, x: Floats, v: Floats) -> None:
    """Up to the open bucket's room: its figures and the EMA move on; it closes when full."""
    bucket = series._open
    low, high = float(v.min()), float(v.max())
    if bucket.count == 0:
        bucket.first_x, bucket.low, bucket.high, bucket.total = float(x[0]), low, high, 0.0
    else:
        bucket.low, bucket.high = min(bucket.low, low), max(bucket.high, high)
    bucket.count += len(v)
    bucket.last_x, bucket.last = float(x[-1]), float(v[-1])
    bucket.total += float(v.sum())
    series._n += len(v)
    gains = _ema_gains(series.weights, series.span)[:, series.span - len(v) :]
    decays = np.asarray(series.weights, dtype=np.float64) ** len(v)
    series._ema = (decays * np.asarray(series._ema, dtype=np.float64) + gains @ v).tolist()
    if bucket.count >= series.span:
        series._close()


def _close_many(series: Series, x: Floats, v: Floats) -> None:
    """Whole buckets (one row of ``span`` points each, no more than fit before a merge) closed at once."""
    rows, span = v.shape
    series._first_x.frombytes(x[:, 0].tobytes())
    series._last_x.frombytes(x[:, -1].tobytes())
    series._low.frombytes(v.min(axis=1).tobytes())
    series._high.frombytes(v.max(axis=1).tobytes())
    series._last.frombytes(v[:, -1].tobytes())
    series._total.frombytes(v.sum(axis=1).tobytes())
    ends = series._n + span * np.arange(1, rows + 1, dtype=np.int64)
    series._n_end.frombytes(ends.tobytes())
    series._n += rows * span
    gained = (v @ _ema_gains(series.weights, span).T).T.tolist()  # per weight, per bucket
    states = []
    for weight, start, kept, row in zip(series.weights, series._ema, series._ema_end, gained, strict=True):
        decay, state = weight**span, start
        for gain in row:  # one step a bucket, not a point
            state = decay * state + gain
            kept.append(state)
        states.append(state)
    series._ema = states
    if len(series._last_x) >= series.capacity:
        series._merge()


@functools.lru_cache(maxsize=64)
def _ema_gains(weights: tuple[float, ...], span: int) -> Floats:
    """Row per weight: what each of ``span`` points adds to the EMA state at the last of them,
    ``(1 - w) * w**(span - 1 - j)``. The last ``k`` columns are the same for a block of ``k`` points."""
    w = np.asarray(weights, dtype=np.float64)[:, None]
    gains = (1.0 - w) * w ** np.arange(span - 1, -1, -1, dtype=np.float64)
    gains.setflags(write=False)
    return gains
