"""The paced replay: recorded time to wall time, pause, restart, and the events of a real run folder in order."""

from __future__ import annotations

import pytest

from rocmtui.events import RunControl, RunFinished, RunStarted, StepsCompleted, TrainEvent
from rocmtui.run.replay_pace import Pace, paced_follow, recorded_events
from rocmtui.ui.demo_app import DEMO_RUN


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_pace_maps_wall_seconds_to_recorded_seconds_at_its_speed() -> None:
    clock = FakeClock()
    pace = Pace(origin=1000.0, speed=0.1, clock=clock)
    assert pace.now() == 1000.0
    clock.now += 10.0
    assert pace.now() == pytest.approx(1001.0)
    assert pace.wait_s(1002.0) == pytest.approx(10.0)
    assert pace.wait_s(1000.5) == 0.0


def test_a_paused_pace_stands_still_and_resumes_where_it_stood() -> None:
    clock = FakeClock()
    pace = Pace(origin=0.0, speed=2.0, clock=clock)
    clock.now += 1.0
    pace.set_paused(True)
    clock.now += 50.0
    assert pace.now() == pytest.approx(2.0)
    pace.set_paused(False)
    clock.now += 1.0
    assert pace.now() == pytest.approx(4.0)


def test_restart_starts_the_recording_over_and_counts_passes() -> None:
    clock = FakeClock()
    pace = Pace(origin=5.0, speed=1.0, clock=clock)
    clock.now += 30.0
    pace.restart()
    assert (pace.now(), pace.passes) == (5.0, 1)


def test_speed_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        Pace(0.0, 0.0)


def test_the_shipped_recording_is_the_real_h200_run_in_time_order() -> None:
    events = recorded_events(DEMO_RUN)
    times = [t for t, _ in events]
    assert times == sorted(times)
    assert isinstance(events[0][1], RunStarted) and events[0][1].device_name == "NVIDIA H200"
    final = events[-1][1]
    assert isinstance(final, RunFinished) and final.best_test_acc == pytest.approx(0.9357)


def test_paced_follow_emits_everything_in_order_and_returns_the_final_event() -> None:
    events = recorded_events(DEMO_RUN)
    emitted: list[TrainEvent] = []
    pace = Pace(events[0][0], 1e6)
    final = paced_follow(events, emitted.append, RunControl(), pace)
    assert emitted == [event for _, event in events]
    assert final is events[-1][1]


def test_paced_follow_returns_none_when_the_viewer_leaves() -> None:
    events = recorded_events(DEMO_RUN)
    control = RunControl()
    emitted: list[TrainEvent] = []
    pace = Pace(events[0][0], 1e-6)  # the second event would come after days

    def emit(event):
        emitted.append(event)
        control.leave.set()

    assert paced_follow(events, emit, control, pace) is None
    assert len(emitted) == 1
    assert not any(isinstance(event, StepsCompleted) for event in emitted)
