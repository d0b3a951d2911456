"""A bounded series of (x, value) points: fixed-size buckets that merge in pairs as it grows, with its EMAs.

Points arrive in x order (a training's steps). They fill buckets of ``span`` points each; when
``capacity`` buckets are full, neighbours merge in pairs and ``span`` doubles, so memory stays within
``capacity`` buckets and a point costs O(1) amortised (a merge costs O(capacity), once each time the
series doubles). Each bucket keeps its first and last x, min, max, last value, sum and count, so a line
drawn from the buckets (their min/max envelope) keeps every spike.

The debiased EMA that TensorBoard draws (the EMA started from zero over every point in x order, divided
by ``1 - w**n``) is computed as points arrive, for each weight given, and its state at each bucket's last
point is kept: a change of weight costs nothing and the line is exact at those points (the EMA of the
points, not of the buckets). A cut (``cut_from``) forgets whole buckets from the end, in O(log buckets +
buckets forgotten), and goes on from the EMA state kept at the new last bucket's end.
"""

from __future__ import annotations

import bisect
import functools
import math
import operator
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Floats = npt.NDArray[np.float64]

DEFAULT_CAPACITY = 8192
"""Buckets kept at most: a series of up to this many points keeps each one."""
BULK_FROM = 512
"""Points in one ``extend`` from which it goes through numpy: below, ``add`` each costs less."""


@dataclass(frozen=True)
class SeriesView:
    """Consecutive buckets gathered into groups, oldest first; parallel lists, one entry per group."""

    x: list[float] = field(default_factory=list)
    """The x of each group's last point."""
    low: list[float] = field(default_factory=list)
    high: list[float] = field(default_factory=list)
    last: list[float] = field(default_factory=list)
    """The value of each group's last point."""
    mean: list[float] = field(default_factory=list)
    count: list[int] = field(default_factory=list)
    """Points in each group."""
    smoothed: list[float] = field(default_factory=list)
    """The debiased EMA at each group's last point (empty when no weight was asked for)."""


@dataclass(frozen=True)
class SeriesPoint:
    """What a series says at one x (``Series.at``): the point found, its value, and the EMA there."""

    x: float
    value: float
    smoothed: float | None


@dataclass
class _Bucket:
    """The newest bucket, still filling."""

    count: int = 0
    first_x: float = 0.0
    last_x: float = 0.0
    low: float = 0.0
    high: float = 0.0
    last: float = 0.0
    total: float = 0.0


class Series:
    """Points (x ascending, finite value) in at most ``capacity`` buckets, with a debiased EMA per weight."""

    def __init__(self, weights: Sequence[float] = (), capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity < 2 or capacity % 2:
            raise ValueError(f"capacity must be an even number of at least 2, not {capacity}")
        if not all(0.0 <= w < 1.0 for w in weights):
            raise ValueError(f"EMA weights must be in [0, 1), not {tuple(weights)}")
        self.weights = tuple(weights)
        self.capacity = capacity
        self.span = 1
        """Points per bucket filled from now on (it doubles at each merge)."""
        self._pairs = [(w, 1.0 - w) for w in self.weights]
        # Closed buckets, oldest first, as parallel arrays (8 bytes a value).
        self._first_x = array("d")
        self._last_x = array("d")
        self._low = array("d")
        self._high = array("d")
        self._last = array("d")
        self._total = array("d")
        self._n_end = array("q")
        """Points up to and including each bucket (a bucket's count is the difference)."""
        self._ema_end = [array("d") for _ in self.weights]
        """Per weight, the uncorrected EMA state at each bucket's last point."""
        self._open = _Bucket()
        self._n = 0
        self._ema = [0.0] * len(self.weights)

    def __len__(self) -> int:
        """Points kept (each point given and not cut, whatever its bucket)."""
        return self._n

    @property
    def buckets(self) -> int:
        return len(self._last_x) + (1 if self._open.count else 0)

    @property
    def last_x(self) -> float | None:
        if self._open.count:
            return self._open.last_x
        return self._last_x[-1] if self._last_x else None

    @property
    def last_value(self) -> float | None:
        if self._open.count:
            return self._open.last
        return self._last[-1] if self._last else None

    def add(self, x: float, value: float) -> bool:
        """Append a point; False (nothing kept) when ``value`` or ``x`` is not finite. An ``x`` below the last
        one forgets the points at or after it first: the series stays in x order (a run that went back)."""
        if not (math.isfinite(value) and math.isfinite(x)):
            return False
        last_x = self.last_x
        if last_x is not None and x < last_x:
            self.cut_from(x)
        self._n += 1
        self._ema = [w * state + rest * value for (w, rest), state in zip(self._pairs, self._ema, strict=True)]
        bucket = self._open
        if bucket.count == 0:
            bucket.first_x, bucket.low, bucket.high, bucket.total = x, value, value, 0.0
        elif value < bucket.low:
            bucket.low = value
        elif value > bucket.high:
            bucket.high = value
        bucket.count += 1
        bucket.last_x, bucket.last = x, value
        bucket.total += value
        if bucket.count >= self.span:
            self._close()
        return True

    def extend(self, xs: Sequence[float], values: Sequence[float]) -> int:
        """Append points in order, as ``add`` each would; returns how many were kept. A long run's
        history comes in blocks of thousands: those go through numpy (``_bulk_extend``), a few at a time
        (a live run's window) through ``add``."""
        if len(xs) < BULK_FROM:
            return sum(self.add(float(x), float(v)) for x, v in zip(xs, values, strict=True))
        return _bulk_extend(self, xs, values)

    def _close(self) -> None:
        bucket = self._open
        self._first_x.append(bucket.first_x)
        self._last_x.append(bucket.last_x)
        self._low.append(bucket.low)
        self._high.append(bucket.high)
        self._last.append(bucket.last)
        self._total.append(bucket.total)
        self._n_end.append(self._n)
        for ends, state in zip(self._ema_end, self._ema, strict=True):
            ends.append(state)
        self._open = _Bucket()
        if len(self._last_x) >= self.capacity:
            self._merge()

    def _merge(self) -> None:
        """Each pair of neighbours becomes one bucket: half the buckets, twice the points in each."""
        self._first_x = self._first_x[0::2]
        self._last_x = self._last_x[1::2]
        self._low = array("d", map(min, self._low[0::2], self._low[1::2]))
        self._high = array("d", map(max, self._high[0::2], self._high[1::2]))
        self._last = self._last[1::2]
        self._total = array("d", map(operator.add, self._total[0::2], self._total[1::2]))
        self._n_end = self._n_end[1::2]
        self._ema_end = [ends[1::2] for ends in self._ema_end]
        self.span *= 2

    def cut_from(self, x: float) -> None:
        """Forget the points at or after ``x`` (a run resumed from an earlier checkpoint trains them again).

        A bucket holding points on both sides of ``x`` goes whole, its points before ``x`` with it (at most
        one bucket's worth); the EMA goes on from the state at the last point kept."""
        last_x = self.last_x
        if last_x is None or x > last_x:
            return
        if self._open.count and self._open.first_x < x:
            keep = len(self._last_x)  # only the newest bucket straddles x
        else:
            keep = bisect.bisect_left(self._first_x, x)
            if keep and self._last_x[keep - 1] >= x:
                keep -= 1
        for values in (self._first_x, self._last_x, self._low, self._high, self._last, self._total, self._n_end):
            del values[keep:]
        for ends in self._ema_end:
            del ends[keep:]
        self._open = _Bucket()
        self._n = self._n_end[-1] if keep else 0
        self._ema = [ends[-1] for ends in self._ema_end] if keep else [0.0] * len(self.weights)
        self.span = 1
        while self._n >= self.capacity * self.span:  # the span a series of this many points grew to
            self.span *= 2

    def smoothed_last(self, weight: float) -> float | None:
        """The debiased EMA at the newest point (``weight`` one of ``weights``)."""
        if not self._n:
            return None
        return self._ema[self._weight_index(weight)] / (1.0 - weight**self._n)

    def _weight_index(self, weight: float) -> int:
        try:
            return self.weights.index(weight)
        except ValueError:
            raise ValueError(f"no EMA kept at weight {weight}; kept: {self.weights}") from None

    def at(self, x: float, weight: float | None = None) -> SeriesPoint | None:
        """The bucket holding ``x``, else the last one before it (the first one when ``x`` is before them all):
        its last point and the EMA at ``weight`` there. Exact for a series of up to ``capacity`` points."""
        if not self._n:
            return None
        index = bisect.bisect_left(self._last_x, x)
        closed = len(self._last_x)
        if index < closed:
            if index and self._first_x[index] > x:
                index -= 1
        elif self._open.count and (self._open.first_x <= x or not closed):
            index = closed
        else:
            index = closed - 1
        w = self._weight_index(weight) if weight is not None else None
        if index == closed:
            smoothed = self._ema[w] / (1.0 - weight**self._n) if w is not None and weight is not None else None
            return SeriesPoint(self._open.last_x, self._open.last, smoothed)
        smoothed = None
        if w is not None and weight is not None:
            smoothed = self._ema_end[w][index] / (1.0 - weight ** self._n_end[index])
        return SeriesPoint(self._last_x[index], self._last[index], smoothed)

    def view(self, start: float = -math.inf, limit: int | None = None, weight: float | None = None) -> SeriesView:
        """The buckets whose last x is at or after ``start``, gathered into at most ``limit`` groups of
        consecutive buckets (the newest group ends at the newest point), with the EMA at ``weight``."""
        first = bisect.bisect_left(self._last_x, start)
        lows, highs, lasts = self._low[first:], self._high[first:], self._last[first:]
        xs, totals, n_end = self._last_x[first:], self._total[first:], self._n_end[first:]
        before = self._n_end[first - 1] if first else 0
        index = self._weight_index(weight) if weight is not None else None
        states = self._ema_end[index][first:] if index is not None else array("d")
        bucket = self._open
        if bucket.count and bucket.last_x >= start:
            lows.append(bucket.low)
            highs.append(bucket.high)
            lasts.append(bucket.last)
            xs.append(bucket.last_x)
            totals.append(bucket.total)
            n_end.append(self._n)
            if index is not None:
                states.append(self._ema[index])
        count = len(xs)
        if not count:
            return SeriesView()
        per_group = -(-count // limit) if limit is not None and count > limit else 1
        groups = -(-count // per_group)
        bounds = [0, *range(count - (groups - 1) * per_group, count + 1, per_group)]
        view = SeriesView()
        for low_at, end in pairwise(bounds):
            view.x.append(xs[end - 1])
            view.last.append(lasts[end - 1])
            view.low.append(min(lows[low_at:end]) if end - low_at > 1 else lows[low_at])
            view.high.append(max(highs[low_at:end]) if end - low_at > 1 else highs[low_at])
            points = n_end[end - 1] - (n_end[low_at - 1] if low_at else before)
            view.count.append(points)
            view.mean.append(math.fsum(totals[low_at:end]) / points)
            if weight is not None:
                view.smoothed.append(states[end - 1] / (1.0 - weight ** n_end[end - 1]))
        return view


# Many points appended to a ``Series`` at once, in numpy: what ``Series.add`` would do to each, in bulk.
#
# A viewer that opens a long run applies its whole history (millions of points) before the first frame; one
# ``add`` a point costs about a microsecond there (the EMA at every weight, in Python). Here a block of points
# that fills whole buckets is one reshape: its buckets' min, max, last and sum along one axis, and each
# weight's EMA at every bucket end from one product with the weight's powers (the EMA is linear:
# ``s_end = w**span * s_start + (1 - w) * sum(w**(span - 1 - j) * v_j)``), then one step a bucket (not a
# point) to chain the buckets. The result equals ``add`` point by point up to float rounding (the test
# compares them), and ``add`` stays the O(1) path of a live point.
#
# numpy is imported by these functions only, and only a bulk append loads it (monitor and watch start without it).


def _bulk_extend(series: Series, xs: Sequence[float] | Floats, values: Sequence[float] | Floats) -> int:
    """Append the points (``xs[i]``, ``values[i]``) in order; returns how many were kept (finite ones).

    As with ``add``, an x below the last one forgets the points at or after it first."""
    import numpy as np  # loaded by the first long block only: numpy stays off the start path

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
    import numpy as np  # loaded by the first long block only: numpy stays off the start path

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
    import numpy as np  # loaded by the first long block only: numpy stays off the start path

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
    import numpy as np  # loaded by the first long block only: numpy stays off the start path

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
    import numpy as np  # loaded by the first long block only: numpy stays off the start path

    w = np.asarray(weights, dtype=np.float64)[:, None]
    gains = (1.0 - w) * w ** np.arange(span - 1, -1, -1, dtype=np.float64)
    gains.setflags(write=False)
    return gains
