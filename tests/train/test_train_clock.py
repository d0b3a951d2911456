"""The run clock: pauses and set-aside work are left out of a run's seconds."""

from __future__ import annotations

from rocmtui.base.clock import RunClock


class Ticks:
    """A timer the test moves by hand."""

    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_a_resumed_clock_starts_at_its_earlier_seconds() -> None:
    ticks = Ticks()
    clock = RunClock(before_s=7.5, timer=ticks)
    assert clock.now() == 7.5
    ticks.t += 2.0
    assert clock.now() == 9.5


def test_a_hold_waits_while_paused_and_its_seconds_are_left_out() -> None:
    ticks = Ticks()
    clock = RunClock(timer=ticks)
    ticks.t += 1.0
    checks = iter([True, True, False])

    def wait() -> None:
        ticks.t += 3.0

    assert clock.hold(lambda: next(checks), wait) == 6.0
    assert clock.paused_s == 6.0 and clock.now() == 1.0


def test_a_hold_that_is_not_paused_waits_not_at_all() -> None:
    clock = RunClock(timer=Ticks())
    waited: list[None] = []
    assert clock.hold(lambda: False, lambda: waited.append(None)) == 0.0
    assert not waited


def test_set_aside_work_returns_its_result_and_seconds_and_is_left_out() -> None:
    ticks = Ticks()
    clock = RunClock(timer=ticks)
    ticks.t += 4.0

    def work() -> str:
        ticks.t += 0.5
        return "done"

    assert clock.set_aside(work) == ("done", 0.5)
    ticks.t += 1.0
    assert clock.set_aside_s == 0.5 and clock.now() == 5.0
