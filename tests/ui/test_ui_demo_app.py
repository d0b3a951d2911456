"""The demo app over the shipped H200 recording: curves, GPU samples, the closing card, --loop."""

from __future__ import annotations

import asyncio
import time

from rocmtui.ui.demo_app import DemoTrainScreen, build_demo_app
from rocmtui.ui.screens.finished import SummaryCard

SIZE = (160, 48)


async def until(predicate, pilot, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await pilot.pause(0.05)


async def test_a_pass_ends_on_a_card_beside_the_curves_not_a_dialog_over_them() -> None:
    app = build_demo_app(speed=100.0, loop=False)
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: app.card is not None, pilot)
        await pilot.pause()
        assert not app.train_screen.query(SummaryCard)  # the demo's own card, not the summary
        assert isinstance(app.screen, DemoTrainScreen)
        assert app.state.epochs_done == 10
        assert app.theme == "rocmtui-demo"
        shared = app.shared or ""
        assert "cifar10 fastnet on NVIDIA H200: 93.57% test accuracy" in shared
        assert "10 epochs in 3.44s" in shared
        assert app.card is not None
        card, plot = app.card.region, app.train_screen.loss_plot.region
        assert card.height > 0 and not card.overlaps(plot)
        assert app.sampler.history()[-1].gpus[0].name == "NVIDIA H200"  # the real NVML samples, paced
        await pilot.press("q")
    assert app.return_value == 0
    assert app.final_lines() == [shared]


async def test_loop_starts_the_recording_over_on_a_fresh_screen() -> None:
    app = build_demo_app(speed=100.0, loop=True)
    app.hold_s = 0.2
    async with app.run_test(size=SIZE) as pilot:
        first = app.train_screen
        await until(lambda: app.pace.passes == 1 and app.train_screen is not first, pilot)
        await until(lambda: app.card is not None, pilot)
        assert app.state.epochs_done == 10
        assert app.screen is app.train_screen
        stamps = [s.timestamp for s in app.sampler.history()]
        assert stamps == sorted(stamps)  # a later pass moves forward in time
        await pilot.press("q")
    await asyncio.sleep(0)
