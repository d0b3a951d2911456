"""The bucket store behind the history graphs: min/mean/max per column, bounded memory over a day."""

from __future__ import annotations

import math
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rocmtui.gpu.history import (
    BUCKETS,
    TIMEBASES_S,
    GpuHistory,
    Point,
    Ring,
    TimebaseSeries,
    age_label,
    auto_span,
    fill_gaps,
    timebase_label,
)
from rocmtui.gpu.sample import GpuSample, HostSample, SampleSet


def test_a_column_holds_min_mean_and_max_of_its_samples() -> None:
    ring = Ring(60.0)
    for t, value in ((0.0, 10.0), (1.0, 30.0), (2.0, 20.0)):
        ring.add(t, value)
    # 20 columns of 3 s: all three samples fall in the column [0, 3)
    columns = ring.columns(end_t=2.0, count=20)
    assert columns[-1] == Point(10.0, 20.0, 30.0)
    assert columns[:-1] == [None] * 19


def test_columns_are_aligned_to_absolute_time_so_the_picture_shifts_only_at_a_boundary() -> None:
    ring = Ring(60.0)
    ring.add(0.5, 50.0)
    before = ring.columns(end_t=1.0, count=10)  # columns of 6 s
    assert before == ring.columns(end_t=5.9, count=10)
    assert ring.columns(end_t=6.0, count=10)[-2] == before[-1]


def test_samples_older_than_the_span_are_not_drawn() -> None:
    series = TimebaseSeries()
    series.add(0.0, 99.0)
    series.add(120.0, 1.0)
    one_minute = series.columns(60.0, end_t=120.0, count=60)
    assert [p for p in one_minute if p is not None] == [Point(1.0, 1.0, 1.0)]
    ten_minutes = series.columns(600.0, end_t=120.0, count=60)
    assert [p.mean for p in ten_minutes if p is not None] == [99.0, 1.0]


def test_short_gaps_are_held_and_long_ones_stay_empty() -> None:
    a, b = Point(1, 1, 1), Point(2, 2, 2)
    assert fill_gaps([a, None, b], max_gap=1) == [a, a, b]
    assert fill_gaps([a, None, None, b], max_gap=1) == [a, None, None, b]
    assert fill_gaps([None, a, None], max_gap=3) == [None, a, None]  # nothing is invented at the ends


def test_unknown_readings_leave_gaps() -> None:
    series = TimebaseSeries()
    series.add(0.0, None)
    series.add(1.0, float("nan"))
    assert series.bucket_count() == 0 and series.latest_t is None


def test_a_clock_that_steps_back_is_merged_into_the_newest_bucket() -> None:
    ring = Ring(60.0)
    ring.add(10.0, 1.0)
    ring.add(5.0, 3.0)
    assert len(ring.buckets) == 1 and ring.buckets[0].high == 3.0


@pytest.mark.parametrize("span", TIMEBASES_S)
def test_the_newest_column_shows_the_newest_sample_at_every_timebase(span: float) -> None:
    series = TimebaseSeries()
    for t in range(200):
        series.add(1000.0 + t, float(t))
    columns = series.columns(span, end_t=1199.0, count=70)
    newest = columns[-1]
    assert newest is not None and newest.high == 199.0


def test_labels() -> None:
    assert [timebase_label(s) for s in TIMEBASES_S] == ["1m", "10m", "1h", "24h"]


def test_memory_stays_flat_over_a_day_at_1_hz_with_the_24_hour_timebase() -> None:
    """Three simulated days at 1 Hz (a fast clock: no waiting). Tracing starts after the first day; by the end
    of the second every bucket was replaced by a traced one, and the third day adds nothing more."""
    series = TimebaseSeries()
    day = 86_400
    values = [float(t % 101) for t in range(day)]

    def play(first_t: int) -> None:
        for offset, value in enumerate(values):
            series.add(float(first_t + offset), value)

    play(0)
    full = series.bucket_count()
    assert full == len(TIMEBASES_S) * BUCKETS
    tracemalloc.start()
    try:
        play(day)
        second, _ = tracemalloc.get_traced_memory()
        play(2 * day)
        third, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert series.bucket_count() == full
    assert abs(third - second) < 4096, (second, third)
    day_columns = series.columns(86_400.0, end_t=3 * day - 1, count=76)
    assert all(p is not None for p in day_columns)  # the whole day is drawn, 76 columns of about 19 minutes
    assert all(p is not None and p.low == 0.0 and p.high == 100.0 for p in day_columns[1:-1])


def test_gpu_history_keeps_one_series_per_gpu_and_reading() -> None:
    history = GpuHistory()
    for t in range(5):
        gpus = tuple(
            GpuSample(index=i, name="test card", timestamp=float(t), utilization_pct=50.0, power_w=None)
            for i in range(2)
        )
        history.add(SampleSet(timestamp=float(t), backend="test", gpus=gpus, host=HostSample(timestamp=float(t))))
    util = history.get(1, "util")
    assert util is not None and util.latest_t == 4.0
    power = history.get(1, "power")
    assert power is not None and power.bucket_count() == 0  # not available: nothing drawn
    assert history.get(2, "util") is None


def test_a_young_history_fills_from_the_left_edge_a_column_at_a_time() -> None:
    ring = Ring(60.0)
    for t in range(1000, 1010):
        ring.add(float(t), float(t - 1000))
    columns = ring.columns(end_t=1009.0, count=60, start_t=1000.0)  # columns of 1 s from the first sample
    assert [p.mean if p else None for p in columns[:10]] == [float(v) for v in range(10)]
    assert columns[10:] == [None] * 50
    scrolling = ring.columns(end_t=1009.0, count=60)
    assert scrolling[-1] == Point(9.0, 9.0, 9.0) and scrolling[:50] == [None] * 50  # at the right edge


def test_the_automatic_timebase_is_the_shortest_that_holds_the_history() -> None:
    assert auto_span(0.0) == 60.0 and auto_span(59.0) == 60.0 and auto_span(60.0) == 600.0
    assert auto_span(3599.0) == 3600.0 and auto_span(2 * 86400.0) == 86400.0
    assert [age_label(s) for s in (0.4, 42.0, 150.0, 7300.0)] == ["0s", "42s", "2m", "2h"]


def _columns_bucket_by_bucket(ring: Ring, end_t: float, count: int, start_t: float | None) -> list[Point | None]:
    """The columns worked out the plain way, each bucket added to its column's min, max, sum and count."""
    column_s = ring.span_s / count
    if start_t is None:
        first = math.floor(end_t / column_s) - count + 1
    else:
        first = math.floor(math.floor(start_t / ring.bucket_s) * ring.bucket_s / column_s + 1e-9)
    lows, highs, totals, counts = [math.inf] * count, [-math.inf] * count, [0.0] * count, [0] * count
    for bucket in ring.buckets:
        col = math.floor(bucket.slot * ring.bucket_s / column_s + 1e-9) - first
        if 0 <= col < count:
            lows[col] = min(lows[col], bucket.low)
            highs[col] = max(highs[col], bucket.high)
            totals[col] += bucket.total
            counts[col] += bucket.count
    return [Point(lows[i], totals[i] / counts[i], highs[i]) if counts[i] else None for i in range(count)]


@settings(max_examples=300, deadline=None)
@given(
    span=st.sampled_from(TIMEBASES_S),
    steps=st.lists(st.tuples(st.floats(0.01, 30.0), st.floats(-1e3, 1e3)), min_size=1, max_size=120),
    start=st.floats(1.0, 1e6),
    count=st.integers(1, 300),
    from_start=st.booleans(),
    end_extra=st.floats(0.0, 100.0),
)
def test_folding_the_buckets_column_by_column_gives_the_plain_sums(
    *, span: float, steps: list[tuple[float, float]], start: float, count: int, from_start: bool, end_extra: float
) -> None:
    ring = Ring(span, buckets=60)
    t = start
    for gap, value in steps:
        t += gap
        ring.add(t, value)
    end_t = t + end_extra
    start_t = start if from_start else None
    assert ring.columns(end_t, count, start_t) == _columns_bucket_by_bucket(ring, end_t, count, start_t)
