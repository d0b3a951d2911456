"""The loss plot's zoom windows, and the x ticks of a zoomed window and of a script's steps."""

from __future__ import annotations

import pytest

from rocmtui.ui.state.zoom import WINDOWS, Zoom
from rocmtui.ui.widgets.scalar_plot import step_ticks
from rocmtui.ui.widgets.throttled_plot import tick_step


def test_the_zoom_cycle_ends_on_the_newest_steps() -> None:
    assert [zoom.name for zoom in WINDOWS] == ["all", "last 5 ep", "last 1 ep", "last 100 steps"]


@pytest.mark.parametrize(
    ("zoom", "steps_per_epoch", "span"),
    [
        (Zoom(), 782, None),
        (Zoom(epochs=5.0), None, 5.0),
        (Zoom(steps=100), 782, 100 / 782),  # full CIFAR-10 at batch 64: an eighth of an epoch
        (Zoom(steps=100), 30, 100 / 30),
        (Zoom(steps=100), None, None),  # no steps reported yet: the whole run
    ],
)
def test_a_zoom_spans_epochs_or_steps(zoom: Zoom, steps_per_epoch: int | None, span: float | None) -> None:
    assert zoom.span(steps_per_epoch) == span


@pytest.mark.parametrize(
    ("span", "step"), [(5.0, 1.0), (20.0, 3.0), (1.0, 0.25), (0.5, 0.1), (100 / 782, 0.02), (0.02, 0.01)]
)
def test_a_zoomed_window_gets_ticks_that_fit_it(span: float, step: float) -> None:
    assert tick_step(span) == step


@pytest.mark.parametrize(
    ("end", "ticks"), [(1, [0, 1]), (7, [0, 2, 4, 6]), (300, [0, 100, 200, 300]), (12345, [0, 5000, 10000])]
)
def test_a_scripts_step_axis_is_ticked_at_round_whole_steps(end: int, ticks: list[int]) -> None:
    assert step_ticks(end) == ticks
