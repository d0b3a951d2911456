"""Axis ticks at round values (``rocmtui.ui.look.axis_ticks``): 1-2-5 steps, decades in log scale, clock times."""

from __future__ import annotations

import itertools
import math

from hypothesis import assume, given
from hypothesis import strategies as st

from rocmtui.base.ticks import ONE_TWO_FIVE, nice_ticks
from rocmtui.ui.look.axis_ticks import (
    clock_label,
    elapsed_label,
    labelled,
    log_ticks,
    nice_step,
    time_ticks,
)

finite = st.floats(min_value=-1e9, max_value=1e9, allow_nan=False)


def is_round(step: float) -> bool:
    """1, 2 or 5 times a power of ten."""
    mantissa = step / 10 ** math.floor(math.log10(step))
    return any(math.isclose(mantissa, m, rel_tol=1e-9) for m in (1, 2, 5, 10))


@given(finite, finite, st.integers(min_value=1, max_value=10))
def test_ticks_are_round_multiples_inside_the_range_and_few(a: float, b: float, count: int) -> None:
    low, high = min(a, b), max(a, b)
    ticks = nice_ticks(low, high, count, multiples=ONE_TWO_FIVE)
    assert 1 <= len(ticks) <= count + 1
    slack = 1e-9 * (high - low) + 1e-12 * max(1.0, abs(low), abs(high))  # a billionth of the axis
    assert all(low - slack <= t <= high + slack for t in ticks)
    if len(ticks) > 1 and high - low > 1e-6 * max(1.0, abs(high)):
        step = ticks[1] - ticks[0]
        assert is_round(step)
        assert all(math.isclose(b - a, step, rel_tol=1e-6, abs_tol=1e-9) for a, b in itertools.pairwise(ticks))
        assert all(math.isclose(t / step, round(t / step), abs_tol=1e-6) for t in ticks)
        assert (high - low) / step > count / 2.5 - 1  # not needlessly coarse: a finer 1-2-5 step gives too many


def test_the_unrounded_plotext_range_gets_round_labels() -> None:
    ticks = nice_ticks(0.3712, 3.7048, 4, multiples=ONE_TWO_FIVE)
    assert labelled(ticks) == ["1", "2", "3"]
    assert labelled(nice_ticks(0.41, 2.31, 4, multiples=ONE_TWO_FIVE)) == ["0.5", "1.0", "1.5", "2.0"]
    assert labelled(nice_ticks(0, 25000, 5, multiples=ONE_TWO_FIVE)) == ["0", "5k", "10k", "15k", "20k", "25k"]


@given(st.integers(min_value=1, max_value=10**7))
def test_a_step_divides_a_span_into_at_most_count_intervals(span: int) -> None:
    step = nice_step(float(span), 5)
    assert is_round(step) and span / step <= 5 + 1e-9 and span / step > 1


def test_log_scale_gets_decades() -> None:
    assert log_ticks(0.03, 2.4) == [0.1, 1.0]
    assert log_ticks(0.002, 30) == [0.01, 0.1, 1.0, 10.0]
    assert log_ticks(1.1, 4.5) == [2.0, 4.0]  # one 1-2-5 value inside a decade: a plain round axis
    assert log_ticks(0.15, 0.9) == [0.2, 0.5]
    assert log_ticks(-1, 3) == []


def test_time_axes_tick_at_clock_round_times() -> None:
    assert time_ticks(0, 200, 4) == [0, 60, 120, 180]
    assert [elapsed_label(t) for t in time_ticks(0, 3.4, 4)] == ["0s", "1s", "2s", "3s"]
    assert [elapsed_label(t) for t in time_ticks(0, 5400, 4)] == ["0s", "30m", "1h", "1h30"]
    # local midnight is round: with a clock 1 h ahead of UTC, ticks fall on the local hour
    assert time_ticks(3600 * 5 + 10, 3600 * 9, 4, offset_s=1800) == [
        3600 * 6 - 1800,
        3600 * 7 - 1800,
        3600 * 8 - 1800,
        3600 * 9 - 1800,
    ]
    assert len(clock_label(0.0, 60)) == 5 and len(clock_label(0.0, 30)) == 8


def test_a_short_axis_gets_two_ticks_at_least_one_every_other_row() -> None:
    from rocmtui.ui.widgets.plot_canvas import y_ticks

    assert y_ticks(1.6, 2.45, 7) == [1.6, 2.0, 2.4]  # 0.5 would give one tick, 0.2 five on three free rows
    assert y_ticks(0.0, 100.0, 9) == [0.0, 50.0, 100.0]
    assert y_ticks(0.41, 2.31, 11) == [0.5, 1.0, 1.5, 2.0]
    for rows in range(3, 40):
        assert len(y_ticks(0.37, 3.7, rows)) <= max(2, (rows - 1) // 2)


def test_an_axis_of_small_values_has_unique_labels_in_one_format() -> None:
    lr = [0.0011, 0.00105, 0.001, 0.00095, 0.0009]  # the enlarged lr plot's y axis
    assert labelled(lr) == ["0.00110", "0.00105", "0.00100", "0.00095", "0.00090"]
    tiny = [2e-5, 4e-5, 6e-5]
    assert labelled(tiny) == ["2e-05", "4e-05", "6e-05"]
    assert labelled([1.0e-4, 1.5e-4, 2.0e-4]) == ["1.0e-04", "1.5e-04", "2.0e-04"]
    assert labelled([0.0, 0.0005, 0.001]) == ["0", "0.0005", "0.0010"]
    assert labelled([1e-4, 1e-3, 1e-2, 1e-1]) == ["1e-04", "1e-03", "1e-02", "1e-01"]  # a log axis's decades


@given(
    st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_subnormal=False),
    st.floats(min_value=1e-9, max_value=1e6, allow_nan=False, allow_subnormal=False),
    st.integers(min_value=2, max_value=8),
)
def test_tick_labels_are_never_repeated(low: float, span: float, count: int) -> None:
    ticks = nice_ticks(low, low + span, count, multiples=ONE_TWO_FIVE)
    assume(len(ticks) >= 2)
    labels = labelled(ticks)
    assert len(set(labels)) == len(labels), (ticks, labels)
