"""The bounded series against a naive list of every point: buckets, envelope, TensorBoard's EMA, cuts."""

from __future__ import annotations

import math
from itertools import cycle, islice
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocmtui.base import series as series_module
from rocmtui.base.series import BULK_FROM, Series, SeriesView

WEIGHTS = (0.0, 0.6, 0.9, 0.99)
VALUES = st.floats(min_value=-100.0, max_value=100.0, allow_nan=False)
CAPACITIES = st.sampled_from([2, 4, 6, 16])


def tensorboard_smoothed(values: list[float], weight: float) -> float:
    """TensorBoard's smoothed value at the last of ``values``, from its closed form (not the recurrence):
    the weighted sum of (1 - w) w^(n-i) v_i over the weights' sum, 1 - w^n."""
    n = len(values)
    terms = [(1.0 - weight) * weight ** (n - i) * v for i, v in enumerate(values, start=1)]
    return math.fsum(terms) / (1.0 - weight**n)


def check_against(series: Series, points: list[tuple[float, float]]) -> None:
    """Every bucket's figures equal those of the naive points it covers; the EMA is TensorBoard's."""
    assert len(series) == len(points)
    assert series.buckets <= series.capacity
    for weight in WEIGHTS:
        view = series.view(weight=weight)
        assert len(view.x) == series.buckets
        start = 0
        for x, low, high, last, mean, count, smoothed in zip(
            view.x, view.low, view.high, view.last, view.mean, view.count, view.smoothed, strict=True
        ):
            end = next(i for i, (px, _) in enumerate(points) if px == x) + 1
            covered = [v for _, v in points[start:end]]
            assert count == len(covered)
            assert (low, high, last) == (min(covered), max(covered), covered[-1])
            assert mean == pytest.approx(math.fsum(covered) / len(covered), abs=1e-9)
            assert abs(smoothed - tensorboard_smoothed([v for _, v in points[:end]], weight)) < 1e-9
            start = end
        assert start == len(points)


@settings(max_examples=150, deadline=None)
@given(values=st.lists(VALUES, max_size=120), capacity=CAPACITIES)
def test_buckets_keep_the_envelope_and_the_ema_of_every_point(values: list[float], capacity: int) -> None:
    series = Series(WEIGHTS, capacity=capacity)
    points = []
    for step, value in enumerate(values):
        assert series.add(float(step), value)
        points.append((float(step), value))
        assert series.buckets <= capacity
    check_against(series, points)
    if points:
        assert series.last_x == points[-1][0] and series.last_value == points[-1][1]
        assert series.smoothed_last(0.9) == series.view(weight=0.9).smoothed[-1]


@settings(max_examples=150, deadline=None)
@given(
    ops=st.lists(st.one_of(VALUES, st.tuples(st.just("cut"), st.floats(0.0, 1.0))), max_size=150),
    capacity=CAPACITIES,
)
def test_a_cut_forgets_at_most_the_bucket_it_falls_in_and_the_ema_goes_on_exactly(
    ops: list[float | tuple[str, float]], capacity: int
) -> None:
    series = Series(WEIGHTS, capacity=capacity)
    points: list[tuple[float, float]] = []
    step = 0.0
    for op in ops:
        if isinstance(op, tuple):  # back to a fraction of the steps so far
            cut = step * op[1]
            before = [p for p in points if p[0] < cut]
            largest_bucket = max(series.view().count, default=0)
            series.cut_from(cut)
            kept = len(series)
            assert kept <= len(before) and len(before) - kept < max(largest_bucket, 1)
            if largest_bucket <= 1:
                assert kept == len(before)  # buckets of one point: exact
            points = before[:kept]
            step = cut
        else:
            step += 1.0
            series.add(step, op)
            points.append((step, op))
    check_against(series, points)


@settings(max_examples=100, deadline=None)
@given(values=st.lists(VALUES, min_size=1, max_size=300), limit=st.integers(1, 40), start=st.floats(0.0, 1.0))
def test_a_view_gathers_buckets_into_at_most_limit_groups_ending_at_the_newest(
    values: list[float], limit: int, start: float
) -> None:
    series = Series((0.9,), capacity=8)
    for step, value in enumerate(values):
        series.add(float(step), value)
    low_x = start * (len(values) - 1)
    view = series.view(low_x, limit, 0.9)
    everything = series.view(weight=0.9)
    shown = [i for i, x in enumerate(everything.x) if x >= low_x]
    assert 1 <= len(view.x) <= limit
    assert view.x[-1] == everything.x[-1] and view.smoothed[-1] == everything.smoothed[-1]
    assert min(view.low) == min(everything.low[i] for i in shown)
    assert max(view.high) == max(everything.high[i] for i in shown)
    assert set(view.x) <= {everything.x[i] for i in shown}


def test_memory_stays_bounded_and_the_resolution_halves() -> None:
    series = Series((0.9,), capacity=16)
    for step in range(10_000):
        series.add(float(step), float(step % 7))
        assert series.buckets <= 16
    assert series.span == 1024 and len(series) == 10_000
    view = series.view()
    assert (min(view.low), max(view.high)) == (0.0, 6.0) and view.x[-1] == 9999.0


def test_values_that_are_not_finite_are_not_kept_nor_counted_in_the_ema() -> None:
    series = Series((0.9,))
    assert series.add(0.0, 2.0) and not series.add(1.0, math.nan) and not series.add(2.0, math.inf)
    assert series.add(3.0, 2.0)
    assert len(series) == 2 and series.view(weight=0.9).smoothed == pytest.approx([2.0, 2.0], abs=1e-12)


def test_a_point_before_the_last_forgets_those_after_it() -> None:
    series = Series()
    for step in range(10):
        series.add(float(step), float(step))
    series.add(4.0, 40.0)
    assert len(series) == 5 and series.view().last == [0.0, 1.0, 2.0, 3.0, 40.0]


def test_a_cut_to_the_start_gives_back_the_finest_resolution() -> None:
    series = Series((0.9,), capacity=4)
    for step in range(100):
        series.add(float(step), 1.0)
    assert series.span > 1
    series.cut_from(0.0)
    assert len(series) == 0 and series.buckets == 0 and series.span == 1
    assert series.view() == SeriesView() and series.smoothed_last(0.9) is None
    series.add(0.0, 5.0)
    assert series.view(weight=0.9).smoothed == [5.0]


def test_bad_settings_and_unknown_weights_are_refused() -> None:
    with pytest.raises(ValueError, match="even number"):
        Series(capacity=3)
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        Series((1.0,))
    with pytest.raises(ValueError, match=r"no EMA kept at weight 0\.5"):
        Series((0.9,)).view(weight=0.5)


@given(st.lists(VALUES, min_size=1, max_size=60), st.floats(min_value=-5.0, max_value=70.0), CAPACITIES)
def test_at_gives_the_point_at_or_before_x_and_the_ema_there(values: list[float], x: float, capacity: int) -> None:
    """Within capacity, ``at`` is exact: the last point at or before ``x`` (the first one before them all)."""
    series = Series(WEIGHTS, capacity=max(capacity, 64))
    for i, value in enumerate(values):
        series.add(float(i), value)
    point = series.at(x, 0.9)
    assert point is not None
    index = min(len(values) - 1, max(0, math.floor(x)))
    assert point.x == float(index) and point.value == values[index]
    assert point.smoothed is not None
    assert math.isclose(point.smoothed, tensorboard_smoothed(values[: index + 1], 0.9), rel_tol=1e-9, abs_tol=1e-9)
    assert series.at(x) is not None and series.at(x).smoothed is None  # type: ignore[union-attr]


@given(st.lists(VALUES, min_size=1, max_size=200), st.floats(min_value=0.0, max_value=200.0), CAPACITIES)
def test_at_past_capacity_is_the_bucket_holding_x(values: list[float], x: float, capacity: int) -> None:
    """Past capacity, ``at`` is the last point of the bucket holding ``x`` (or of the one before a gap)."""
    series = Series(WEIGHTS, capacity=capacity)
    for i, value in enumerate(values):
        series.add(float(i), value)
    point = series.at(x)
    assert point is not None
    assert point.value == values[int(point.x)]
    if x <= len(values) - 1:  # the bucket holding x ends at most a bucket after it; one before ends < 1 before it
        assert point.x - series.span * 2 < x < point.x + 1
    else:
        assert point.x == len(values) - 1


def test_at_on_an_empty_series_is_none() -> None:
    assert Series(WEIGHTS).at(3.0, 0.9) is None


def _same_buckets(bulk: Series, one_by_one: Series) -> None:
    assert (len(bulk), bulk.span, bulk.buckets) == (len(one_by_one), one_by_one.span, one_by_one.buckets)
    for weight in bulk.weights:
        a, b = bulk.view(weight=weight), one_by_one.view(weight=weight)
        assert (a.x, a.low, a.high, a.last, a.count) == (b.x, b.low, b.high, b.last, b.count)
        assert a.mean == pytest.approx(b.mean, abs=1e-9)
        assert all(abs(p - q) < 1e-9 for p, q in zip(a.smoothed, b.smoothed, strict=True))
        if len(bulk):
            assert abs(bulk.smoothed_last(weight) - one_by_one.smoothed_last(weight)) < 1e-9  # type: ignore[operator]


STEPS_BACK = st.integers(0, 40)
PATTERN = st.lists(st.tuples(st.one_of(VALUES, st.just(math.nan)), st.sampled_from([0, 0, 0, 0, 1])), min_size=1)
BLOCK = st.tuples(PATTERN, st.integers(BULK_FROM, BULK_FROM + 1000)).map(lambda p: list(islice(cycle(p[0]), p[1])))
"""A block long enough for the bulk path: a drawn pattern of values, NaNs and steps back, repeated to length."""


@settings(max_examples=60, deadline=None)
@given(blocks=st.lists(st.tuples(BLOCK, STEPS_BACK), max_size=6), capacity=CAPACITIES)
def test_a_bulk_extend_is_add_point_by_point(blocks: list[tuple[list[tuple[float, int]], int]], capacity: int) -> None:
    """Blocks long enough to go through numpy, with NaNs and steps that go back (a restart inside a block)."""
    bulk, one_by_one = Series(WEIGHTS, capacity), Series(WEIGHTS, capacity)
    points: list[tuple[float, float]] = []
    step = added = 0
    with mock.patch.object(series_module, "_bulk_extend", wraps=series_module._bulk_extend) as through_numpy:
        for block, back in blocks:
            step = max(0, step - back)
            xs, values = [], []
            for value, goes_back in block:
                step = max(0, step - 7 * goes_back) + 1
                xs.append(step)
                values.append(value)
                one_by_one.add(float(step), value)
                if math.isfinite(value):
                    if points and step < points[-1][0]:
                        points = [p for p in points if p[0] < step]
                    points.append((float(step), value))
                    added += 1
            assert bulk.extend(xs, values) == sum(map(math.isfinite, values))
            _same_buckets(bulk, one_by_one)
    assert through_numpy.call_count == len(blocks)  # every block went the bulk way
    if added < capacity and len({x for x, _ in points}) == len(points):  # a bucket a point (check_against's x)
        check_against(bulk, points)


def test_a_bulk_block_with_nans_and_infinities_keeps_and_counts_the_finite_points_only() -> None:
    values = [math.nan if i % 3 == 0 else math.inf if i % 7 == 0 else float(i % 5) for i in range(2 * BULK_FROM)]
    bulk, one_by_one = Series(WEIGHTS, capacity=16), Series(WEIGHTS, capacity=16)
    finite = [v for v in values if math.isfinite(v)]
    assert bulk.extend(range(len(values)), values) == len(finite) == len(bulk)
    for x, value in enumerate(values):
        one_by_one.add(float(x), value)
    _same_buckets(bulk, one_by_one)
    assert math.fsum(n * m for n, m in zip(bulk.view().count, bulk.view().mean, strict=True)) == pytest.approx(
        math.fsum(finite)
    )


def test_a_long_bulk_history_keeps_tensorboards_ema_and_its_spikes() -> None:
    values = [1.0 / (1 + i) ** 0.5 for i in range(20_000)]
    values[12_345] = 50.0  # a spike inside a bucket of many points
    bulk, one_by_one = Series(WEIGHTS, capacity=64), Series(WEIGHTS, capacity=64)
    for start in range(0, len(values), 4096):
        bulk.extend(range(start, start + len(values[start : start + 4096])), values[start : start + 4096])
    for x, value in enumerate(values):
        one_by_one.add(float(x), value)
    _same_buckets(bulk, one_by_one)
    assert max(bulk.view(limit=10).high) == 50.0
    for weight in WEIGHTS:
        assert abs(bulk.smoothed_last(weight) - tensorboard_smoothed(values, weight)) < 1e-6  # type: ignore[operator]


def test_a_bulk_block_of_nans_only_keeps_nothing() -> None:
    series = Series(WEIGHTS)
    series.add(0.0, 1.0)
    assert series.extend(range(1, BULK_FROM + 1), [math.nan] * BULK_FROM) == 0 and len(series) == 1


def test_a_bulk_extend_refuses_sequences_of_two_lengths() -> None:
    with pytest.raises(ValueError, match="one length"):
        Series(WEIGHTS).extend([1.0] * 600, [1.0] * 599)
