"""When each point happened (``Timeline``) and the GPU over the run (``GpuTrack``), from real recordings."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocmtui.events import EpochCompleted, StepsCompleted, TrackStarted
from rocmtui.gpu.sample_codec import loads
from rocmtui.run.format import decode_event_line
from rocmtui.ui.state.cursor import PlotView
from rocmtui.ui.state.gpu_track import HOLD_S, GpuTrack
from rocmtui.ui.state.run_state import RunState
from rocmtui.ui.state.timeline import Timeline

H200_RUN = Path(__file__).resolve().parents[1] / "data" / "h200-fastnet-run"
"""A real 10-epoch fastnet run on an H200 (3.4 s) with the GPU samples its trainer recorded (1 Hz)."""


def h200_state() -> RunState:
    state = RunState()
    for line in (H200_RUN / "metrics.jsonl").read_bytes().splitlines():
        event = decode_event_line(line).event
        if event is not None:
            state.apply(event)
    return state


def h200_track() -> GpuTrack:
    track = GpuTrack()
    track.record([loads(line.decode()) for line in (H200_RUN / "gpu.jsonl").read_bytes().splitlines()])
    return track


def test_a_train_run_maps_epochs_to_its_clock_and_the_wall_clock() -> None:
    state = h200_state()
    timeline, started, steps = state.timeline, state.started, state.last_steps
    assert started is not None and steps is not None and state.finished is not None
    assert timeline.at(0.0, "elapsed") == 0.0
    assert timeline.at(0.0, "wall") == pytest.approx(started.started_at)
    assert timeline.at(10.0, "elapsed") == pytest.approx(steps.elapsed_s)
    assert timeline.at(10.0, "wall") == pytest.approx(started.started_at + steps.elapsed_s)
    assert timeline.x_at(timeline.at(4.5, "elapsed") or 0.0, "elapsed") == pytest.approx(4.5)


def test_test_passes_are_on_the_wall_clock_not_on_the_runs() -> None:
    """The recording predates ``eval_s``: its epochs are given a test pass of 0.5 s each here."""
    timeline = Timeline()
    for line in (H200_RUN / "metrics.jsonl").read_bytes().splitlines():
        event = decode_event_line(line).event
        if isinstance(event, EpochCompleted):
            event = msgspec.structs.replace(event, eval_s=0.5)
        if event is not None:
            timeline.apply(event)
    start = timeline.at(0.0, "wall") or 0.0
    assert (timeline.at(5.0, "wall") or 0.0) - start == pytest.approx((timeline.at(5.0, "elapsed") or 0.0) + 4 * 0.5)


@given(st.lists(st.tuples(st.floats(0, 1e6), st.floats(0, 1e5)), min_size=1, max_size=300))
def test_knots_stay_in_order_and_bounded(points: list[tuple[float, float]]) -> None:
    timeline = Timeline(capacity=16)
    for x, elapsed in points:
        timeline.add(x, elapsed)
    assert 1 <= len(timeline) <= 16
    assert list(timeline.x) == sorted(set(timeline.x))
    assert list(timeline.elapsed) == sorted(timeline.elapsed)
    assert timeline.x[-1] == points[-1][0]  # the newest is kept


def test_a_resumed_run_forgets_the_knots_it_trains_again() -> None:
    timeline = Timeline()
    for x in range(10):
        timeline.add(float(x), float(x) * 2)
    timeline.add(4.0, 100.0)
    assert list(timeline.x) == [0.0, 1.0, 2.0, 3.0, 4.0] and timeline.elapsed[-1] == 100.0


def test_the_gpu_strip_columns_hold_the_samples_of_their_time() -> None:
    state, track = h200_state(), h200_track()
    timeline = state.timeline
    start, end = timeline.span("wall") or (0.0, 0.0)
    inside = [t for t in track.t if start <= t <= end]
    assert len(inside) == 4  # four samples at 1 Hz in a run of 3.4 s: the strip spreads them over its width
    edges = [start + (end - start) * i / 40 for i in range(41)]
    utils, memory = track.columns(edges)
    assert all(u is not None for u in utils) and all(m is not None for m in memory)
    sample = next(t for t in track.t if t > start)
    moment = track.at(sample)
    assert moment is not None and utils[int((sample - start) / (end - start) * 40)] == moment.util_pct
    assert track.at(start - HOLD_S - 60) is None


def test_the_wall_time_of_an_axis_position_in_each_mode() -> None:
    state = h200_state()
    timeline, view = state.timeline, PlotView()
    wall = timeline.at(5.0, "wall")
    assert view.wall_at(5.0, timeline) == wall
    view.cursor = 5.0
    assert view.next_mode(timeline) == "time"
    assert view.cursor == pytest.approx(timeline.at(5.0, "elapsed"))
    assert view.wall_at(view.cursor or 0.0, timeline) == pytest.approx(wall)
    assert view.next_mode(timeline) == "wall" and view.cursor == pytest.approx(wall)
    assert view.next_mode(timeline) == "step" and view.cursor == pytest.approx(5.0)


def test_a_run_without_its_start_time_has_no_wall_clock_mode() -> None:
    timeline, view = Timeline(), PlotView()
    timeline.add(1.0, 2.0)
    assert view.next_mode(timeline) == "time" and view.next_mode(timeline) == "step"
    assert view.wall_at(1.0, timeline) is None


def test_a_track_keeps_each_sample_once_and_stays_bounded() -> None:
    sets = [loads(line.decode()) for line in (H200_RUN / "gpu.jsonl").read_bytes().splitlines()]
    track = GpuTrack(capacity=4)
    assert track.record(sets) == len(sets)
    assert track.record(sets) == 0  # the same history again adds nothing
    assert len(track) <= 4 and track.t[-1] == sets[-1].timestamp


def test_a_pause_is_on_the_wall_clock_from_the_reports_own_wall_time() -> None:
    """A run paused for 30 s between steps 10 and 20: its clock does not move, its reports' wall times do, so
    the wall-clock axis (and the GPU strip under it) places step 20 after the pause; a stream without ``wall``
    is reckoned from the start and the clock, as before."""

    def steps(step: int, elapsed: float, wall: float) -> StepsCompleted:
        return StepsCompleted(0, step, step, 100, (1.0,), 1000.0, 0.1, elapsed, wall=wall)

    start = 1_000.0
    timeline = Timeline()
    timeline.apply(TrackStarted(name="s", run_dir="r", started_at=start))
    timeline.apply(steps(10, 1.0, start + 1.0))
    timeline.apply(steps(20, 2.0, start + 32.0))
    assert timeline.at(0.2, "wall") == pytest.approx(start + 32.0)
    assert timeline.at(0.2, "elapsed") == pytest.approx(2.0)
    assert timeline.x_at(start + 16.5, "wall") == pytest.approx(0.15)
    older = Timeline()
    older.apply(TrackStarted(name="s", run_dir="r", started_at=start))
    older.apply(steps(20, 2.0, 0.0))
    assert older.at(0.2, "wall") == pytest.approx(start + 2.0)
