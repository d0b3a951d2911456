"""The training screen sized by what the run has: the two plots as wide as each other, no second frame for a
script with nothing beside its loss, and a run that ended without a GPU sample saying so."""

from __future__ import annotations

from pathlib import Path

import pytest
from ui_helpers import held, mid_run_events, recorded_config, recorded_events, script_events

from rocmtui.gpu.replay import ManualReplay
from rocmtui.gpu.tail_source import TailSource
from rocmtui.run.follow import follow
from rocmtui.run.samples import SampleTail
from rocmtui.run.stream import EventWriter
from rocmtui.ui.train_app import TrainApp
from rocmtui.ui.widgets.gpu_strip import NO_SAMPLES

SIZES = [(80, 24), (120, 40), (200, 50)]


@pytest.mark.parametrize("size", SIZES)
async def test_the_accuracy_plot_is_as_wide_as_the_loss_plot(host_source: ManualReplay, size) -> None:
    async with held(mid_run_events(), host_source, size) as (app, _pilot):
        loss, accuracy = app.train_screen.loss_plot.region, app.train_screen.accuracy_plot.region
        assert app.train_screen.accuracy_plot.display
        assert abs(loss.width - accuracy.width) <= 1 and loss.y == accuracy.y and accuracy.x == loss.right


@pytest.mark.parametrize("size", SIZES)
async def test_a_script_with_only_a_loss_gets_no_empty_second_frame(host_source: ManualReplay, size) -> None:
    async with held(script_events(["loss"]), host_source, size) as (app, _pilot):
        screen = app.train_screen
        assert not screen.accuracy_plot.display and screen.accuracy_plot.region.width == 0
        top = screen.query_one("#train-top").region
        gpu = screen.gpu_panel.region
        loss = screen.loss_plot.region
        if screen.has_class("-compact"):
            assert loss.width == top.width and gpu.y >= loss.bottom  # the whole width, the GPU lines under it
        else:
            assert loss.width == top.width - gpu.width and gpu.x == loss.right


async def test_a_script_with_more_than_a_loss_keeps_the_second_plot(host_source: ManualReplay) -> None:
    async with held(script_events(["loss", "lr"]), host_source, (120, 40)) as (app, _pilot):
        screen = app.train_screen
        assert screen.accuracy_plot.display and screen.accuracy_plot.region.width == screen.loss_plot.region.width


async def test_a_finished_run_without_gpu_samples_says_so(tmp_path: Path) -> None:
    writer = EventWriter(tmp_path)
    for event in recorded_events():
        writer.write(event)
    writer.close()
    samples = TailSource(SampleTail(tmp_path).poll, history_len=3600)
    samples.catch_up()

    def source(config, emit, control) -> object:
        return follow(tmp_path, emit, control, poll_s=0.01)

    app = TrainApp(recorded_config(), source, samples, detachable=True)
    async with app.run_test(size=(80, 24)) as pilot:
        note = app.train_screen.gpu_panel.note
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.state.phase == "finished"
        assert str(note.render()) == NO_SAMPLES and note.display and note.region.height >= 1


async def test_a_run_still_going_without_samples_still_waits_for_them(host_source: ManualReplay) -> None:
    async with held(mid_run_events(), host_source) as (app, _pilot):
        assert app.state.running and "waiting for the first sample" in str(app.train_screen.gpu_panel.note.render())
