"""Every plot a full citizen: the x axis fitted to what has been trained (the whole run planned a key away), and
zoom, smoothing and log scale on both plots; scripts compared on the second plot too."""

from __future__ import annotations

import dataclasses

import msgspec
from ui_helpers import held, mid_run_events, recorded_events

from rocmtui.events import MetricsLogged, RunStarted, TrackStarted, TrainEvent
from rocmtui.gpu.replay import ManualReplay
from rocmtui.ui.state.compare import ComparedRun
from rocmtui.ui.state.run_state import RunState


def planned(epochs: int) -> list[TrainEvent]:
    """The recorded run mid-epoch 3, as if started with ``--epochs epochs``."""
    events = mid_run_events()
    started = events[0]
    assert isinstance(started, RunStarted)
    config = dataclasses.replace(started.config, epochs=epochs)
    return [msgspec.structs.replace(started, config=config), *events[1:]]


async def test_the_x_axis_fits_what_has_been_trained_and_a_shows_the_whole_run(host_source: ManualReplay) -> None:
    async with held(planned(100), host_source, size=(120, 40)) as (app, pilot):
        screen = app.train_screen
        for plot in screen.plots:
            assert plot.canvas.x_range is not None
            assert plot.canvas.x_range[1] < 10, plot.canvas.x_range  # about 2.5 epochs trained, not 100
        await pilot.press("a")
        await pilot.pause()
        for plot in screen.plots:
            assert plot.canvas.x_range is not None and plot.canvas.x_range[1] >= 100
        await pilot.press("a")
        await pilot.pause()
        assert all(plot.canvas.x_range is not None and plot.canvas.x_range[1] < 10 for plot in screen.plots)


async def test_zoom_log_scale_and_smoothing_act_on_both_plots(host_source: ManualReplay) -> None:
    async with held(mid_run_events(), host_source, size=(120, 40)) as (app, pilot):
        screen = app.train_screen
        whole = [plot.canvas.x_range for plot in screen.plots]
        await pilot.press("z")
        await pilot.pause()
        for plot, before in zip(screen.plots, whole, strict=True):
            assert plot.zoom.epochs == 5.0
            assert plot.canvas.x_range is not None and before is not None
        await pilot.press("z")  # the last epoch
        await pilot.pause()
        for plot, before in zip(screen.plots, whole, strict=True):
            assert plot.canvas.x_range is not None and before is not None
            assert plot.canvas.x_range[0] > before[0]  # the newest part only
        assert "last 1 ep" in str(screen.accuracy_plot.border_title)
        await pilot.press("l")
        await pilot.pause()
        assert all(plot.log_scale and plot.canvas.log for plot in screen.plots)
        assert "log" in str(screen.accuracy_plot.border_title)
        before_smoothing = [plot.smoothing for plot in screen.plots]
        await pilot.press("left_square_bracket")
        await pilot.pause()
        assert all(plot.smoothing < weight for plot, weight in zip(screen.plots, before_smoothing, strict=True))


def script_events(name: str, series: dict[str, float]) -> list[TrainEvent]:
    return [TrackStarted(name, f"/runs/{name}"), MetricsLogged(10, {"loss": 1.0, **series}, 1.0)]


async def test_scripts_compared_each_have_their_series_on_the_second_plot_or_a_word_why(
    host_source: ManualReplay,
) -> None:
    events = [*script_events("mlp", {"acc": 0.5}), *recorded_events()[-1:]]
    async with held(events, host_source, size=(120, 40)) as (app, pilot):
        screen = app.train_screen
        plot = screen.accuracy_plot
        others = [RunState(), RunState()]
        for other, series in zip(others, ({"acc": 0.7}, {"other": 1.0}), strict=True):
            for event in script_events("wide", series):
                other.apply(event)
        screen.runs[0] = ComparedRun("mlp", screen.state)
        screen.runs += [ComparedRun("wide", others[0]), ComparedRun("deep", others[1])]
        plot.runs = screen.runs
        plot.replot()
        await pilot.pause()
        assert plot.scripts_compared
        assert set(plot.legend_colors) == {"mlp", "wide"}  # both runs that logged acc, in their colours
        assert "not logged by deep" in plot.legend_title
