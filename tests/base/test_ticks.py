"""Round axis ticks, shared by the run card's axes and the UI's step axes."""

from __future__ import annotations

import math

from rocmtui.base.ticks import nice_ticks, round_step


def test_nice_ticks_are_round() -> None:
    assert nice_ticks(0.93, 4.41) == [1.0, 2.0, 3.0, 4.0]
    assert nice_ticks(0.0, 1.0) == [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert nice_ticks(0.3, 0.9) == [0.4, 0.6, 0.8]
    assert nice_ticks(12.0, 490.0) == [100.0, 200.0, 300.0, 400.0]
    assert nice_ticks(0.0, 10.0) == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    assert nice_ticks(3.0, 3.0) == [3.0]


def test_whole_ticks_never_fall_between_two_steps() -> None:
    assert nice_ticks(1.0, 2.0) == [1.0, 1.2, 1.4, 1.6, 1.8, 2.0]
    assert nice_ticks(1.0, 2.0, whole=True) == [1.0, 2.0]
    assert nice_ticks(0.0, 12.0, whole=True) == [0.0, 5.0, 10.0]  # 2.5 is no whole step
    assert nice_ticks(0.0, 120.0, whole=True) == [0.0, 25.0, 50.0, 75.0, 100.0]


def test_a_range_without_a_finite_span_gets_no_invented_ticks() -> None:
    assert nice_ticks(math.nan, 1.0) == []
    assert nice_ticks(0.0, math.inf) == []


def test_ends_further_apart_than_a_float_reaches_are_ticked_in_halves() -> None:
    assert nice_ticks(-1.5e308, 1.5e308) == [-1e308, 0.0, 1e308]


def test_tiny_values_keep_their_ticks() -> None:
    assert nice_ticks(1e-300, 9e-300) == [2e-300, 4e-300, 6e-300, 8e-300]


def test_a_round_step_is_at_least_the_raw_step() -> None:
    assert round_step(0.3) == 0.5
    assert round_step(2.1) == 2.5
    assert round_step(2.1, (1.0, 2.0, 5.0)) == 5.0
    assert round_step(7.0) == 10.0
