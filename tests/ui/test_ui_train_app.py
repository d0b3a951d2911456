"""Pilot tests of the training screen: every key, quit that waits for the checkpoint, failures, signals."""

from __future__ import annotations

import asyncio

import pytest
from rich.text import Text
from ui_helpers import ReplayTrainer, recorded_config

from rocmtui.base.errors import UsageError
from rocmtui.events import LogMessage, RunFailed, RunFinished, RunStarted, StepsCompleted, TrackStarted
from rocmtui.gpu.replay import ManualReplay
from rocmtui.ui.screens.finished import SummaryCard
from rocmtui.ui.screens.help import HelpScreen
from rocmtui.ui.screens.monitor import MonitorScreen
from rocmtui.ui.screens.quit_confirm import QuitConfirm
from rocmtui.ui.screens.train import TrainScreen
from rocmtui.ui.train_app import TrainApp

SIZE = (120, 40)
NEVER = 3600.0
"""Plot period for tests that count redraws: the timer never fires, so only explicit ticks draw."""


async def wait_for(event, timeout: float = 10.0) -> None:
    """Wait on a threading.Event without blocking the app's loop."""
    assert await asyncio.to_thread(event.wait, timeout), "the trainer never got there"


def steps(trainer: ReplayTrainer) -> int:
    return sum(isinstance(e, StepsCompleted) for e in trainer.emitted)


async def test_full_replay_fills_the_screen_and_shows_the_summary(events, host_source) -> None:
    trainer = ReplayTrainer(events)
    app = TrainApp(recorded_config(), trainer, host_source)
    async with app.run_test(size=SIZE) as pilot:
        host_source.step()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.state.phase == "finished"
        assert app.train_screen is not None
        assert app.train_screen.table.row_count == 3
        assert len(app.state.loss) == 90  # every step of 3 x 30, none dropped
        assert isinstance(app.screen, TrainScreen)  # no dialog over the curves: a card in the table's place
        card = app.train_screen.query_one(SummaryCard)
        assert "best test accuracy" in "\n".join(card.lines)
        epoch_rates = sorted(e.images_per_s for e in app.state.epochs)
        speed = next(line for line in card.lines if line.startswith("training speed"))
        assert f"{epoch_rates[1]:,.0f} img/s" in speed  # the median of the three epochs, not the whole run's rate
        assert not app.train_screen.table.display and card.region.height > 0
        plot = app.train_screen.loss_plot.region
        assert plot.height > 0 and not plot.overlaps(card.region)
        await pilot.press("q")  # finished: no question asked
    assert app.return_value == 0


async def test_pause_stops_steps_until_resumed(held_trainer, host_source) -> None:
    app = TrainApp(recorded_config(), held_trainer, host_source)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(held_trainer.holding)
        await pilot.press("p")
        assert app.control.paused
        assert app.state.phase == "paused"
        before = steps(held_trainer)
        held_trainer.release.set()
        await wait_for(held_trainer.waiting_paused)  # blocked at the next step boundary
        await pilot.pause()
        assert steps(held_trainer) == before  # no step completed while paused
        assert "paused" in app.train_screen.progress.render().plain
        await pilot.press("p")
        assert not app.control.paused
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert steps(held_trainer) > before
        assert app.state.phase == "finished"


async def test_quit_asks_then_stops_and_waits_for_the_checkpoint(events, host_source) -> None:
    trainer = ReplayTrainer(events, hold_at=36, stop_while_held=False)
    app = TrainApp(recorded_config(), trainer, host_source)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(trainer.holding)
        await pilot.press("q")
        assert isinstance(app.screen, QuitConfirm)
        await pilot.press("y")
        assert app.control.stop.is_set()
        assert app.state.phase == "stopping"
        assert app.is_running  # still up: the trainer has not reported its checkpoint yet
        trainer.release.set()
        await wait_for(app.trainer_done)
        await pilot.pause()
    final = trainer.emitted[-1]
    assert isinstance(final, RunFinished) and final.reason == "stopped" and final.checkpoint
    assert app.state.finished == final  # the app handled RunFinished before it exited
    assert app.return_value == 0


async def test_quit_can_be_cancelled(held_trainer, host_source) -> None:
    app = TrainApp(recorded_config(), held_trainer, host_source)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(held_trainer.holding)
        await pilot.press("q")
        await pilot.press("n")
        assert isinstance(app.screen, TrainScreen)
        assert not app.control.stop.is_set()
        assert app.state.running


async def test_ctrl_c_asks_like_q_while_training(held_trainer, host_source) -> None:
    app = TrainApp(recorded_config(), held_trainer, host_source)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(held_trainer.holding)
        await pilot.press("ctrl+c")
        assert isinstance(app.screen, QuitConfirm)
        await pilot.press("n")
        assert not app.control.stop.is_set()


async def test_save_requests_a_checkpoint_that_the_trainer_takes(held_trainer, host_source) -> None:
    app = TrainApp(recorded_config(), held_trainer, host_source)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(held_trainer.holding)
        await pilot.press("s")
        held_trainer.release.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
    assert held_trainer.saves == 1


async def test_log_scale_monitor_and_help_keys(held_trainer, host_source) -> None:
    app = TrainApp(recorded_config(), held_trainer, host_source, plot_period_s=NEVER)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(held_trainer.holding)
        await pilot.pause()
        screen = app.train_screen
        assert screen is not None
        drawn = screen.loss_plot.replots
        await pilot.press("l")
        assert screen.loss_plot.log_scale and screen.loss_plot.replots == drawn + 1
        await pilot.press("m")
        assert isinstance(app.screen, MonitorScreen)
        host_source.step()
        await pilot.pause()
        assert "No GPU found" in str(app.monitor_screen.panel.note.render())
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.press("m")
        assert app.screen is screen


async def test_smoothing_and_zoom_keys_redraw_the_loss_plot_at_once(held_trainer, host_source) -> None:
    app = TrainApp(recorded_config(), held_trainer, host_source, plot_period_s=NEVER)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(held_trainer.holding)
        await pilot.pause()
        plot = app.train_screen.loss_plot
        drawn = plot.replots
        assert plot.smoothing == 0.98 and "EMA 0.98" in str(plot.border_title)
        await pilot.press("right_square_bracket")
        assert plot.smoothing == 0.99 and "EMA 0.99" in str(plot.border_title) and plot.replots == drawn + 1
        await pilot.press(*["left_square_bracket"] * 9)  # stops at 0: no smoothing
        assert plot.smoothing == 0.0 and "EMA off" in str(plot.border_title) and plot.replots == drawn + 7
        await pilot.press("right_square_bracket")
        assert plot.smoothing == 0.6
        await pilot.press("z")
        assert plot.window == 5.0 and "Loss (last 5 ep) ━ EMA 0.6" in Text.from_markup(str(plot.border_title)).plain
        await pilot.press("z", "l")
        assert plot.window == 1.0 and "Loss (last 1 ep, log)" in str(plot.border_title)
        text = plot.render()
        assert isinstance(text, Text) and "cannot draw" not in text.plain
        await pilot.press("z")
        assert app.train_screen.state.last_steps is not None
        spe = app.train_screen.state.last_steps.steps_per_epoch
        assert plot.window == 100 / spe and "Loss (last 100 steps, log)" in str(plot.border_title)
        text = plot.render()
        assert isinstance(text, Text) and "cannot draw" not in text.plain
        await pilot.press("z")
        assert plot.window is None and "Loss (log)" in str(plot.border_title)


async def test_the_summary_leaves_the_curves_and_drops_pause_and_save_from_the_footer(
    held_trainer, host_source
) -> None:
    app = TrainApp(recorded_config(), held_trainer, host_source)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(held_trainer.holding)
        await pilot.pause()
        keys = {b.binding.key for b in app.screen.active_bindings.values()}
        assert {"p", "s"} <= keys  # offered while the run goes on
        held_trainer.release.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        card = app.train_screen.query_one(SummaryCard)
        keys = {b.binding.key for b in app.screen.active_bindings.values()}
        assert not {"p", "s"} & keys and {"l", "z", "m"} <= keys
        for plot in (app.train_screen.loss_plot, app.train_screen.accuracy_plot):
            assert plot.region.height > 0 and not plot.region.overlaps(card.region)
        assert card.region.height >= 6  # compact: the table's and the log's rows
        await pilot.press("z", "right_square_bracket")  # the curves still answer their keys
        assert app.train_screen.loss_plot.window == 5.0


async def test_plots_redraw_at_their_own_rate_not_per_message(events, host_source) -> None:
    trainer = ReplayTrainer(events, hold_at=44)
    app = TrainApp(recorded_config(), trainer, host_source, plot_period_s=NEVER)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(trainer.holding)
        await pilot.pause()
        plot = app.train_screen.loss_plot
        drawn = plot.replots
        assert app.state.version > 40 and drawn <= 1  # 40+ events; at most the first, empty frame
        assert plot.dirty
        plot.redraw_if_dirty()
        plot.redraw_if_dirty()
        assert plot.replots == drawn + 1  # drawn once; the second frame had nothing new


async def test_sample_messages_are_coalesced(held_trainer, host_source) -> None:
    app = TrainApp(recorded_config(), held_trainer, host_source)
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(5):
            host_source.step()  # five samples before the UI gets a turn
        await pilot.pause()
        assert app.relay.posted == 1
        assert app.relay.latest == host_source.history()[-1]
        host_source.step()
        await pilot.pause()
        assert app.relay.posted == 2


async def test_q_on_the_summary_quits(events, host_source) -> None:
    app = TrainApp(recorded_config(), ReplayTrainer(events), host_source)
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.train_screen.query(SummaryCard)
        await pilot.press("q")
        await pilot.pause()
    assert app.return_value == 0


async def test_run_failure_is_shown_and_quit_returns_1(events, host_source) -> None:
    failing = [*events[:5], RunFailed(message="loss became NaN at step 7", kind="nan", step=7, epoch=0, run_dir="/x")]
    app = TrainApp(recorded_config(), ReplayTrainer(failing), host_source)
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.state.phase == "failed"
        card = app.train_screen.query_one(SummaryCard)
        assert card.failed and card.has_class("-failed") and "NaN" in card.lines[0]
        assert any("nan: loss became NaN" in line for line in app.train_screen.log_view.messages)
        await pilot.press("q")
    assert app.return_value == 1


async def test_trainer_exception_becomes_a_failure(host_source) -> None:
    def broken(config, emit, control) -> None:
        emit(LogMessage("about to break"))
        raise RuntimeError("boom")

    app = TrainApp(recorded_config(), broken, host_source)
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.state.failed is not None and "RuntimeError: boom" in app.state.failed.message
        await pilot.press("q")
    assert app.return_value == 1


async def test_a_run_refused_before_it_starts_leaves_at_once_with_its_line(host_source) -> None:
    """Bad settings the trainer finds (it alone imports torch): no empty dashboard to quit, the one line and
    exit 2, as without a screen."""

    def refused(config, emit, control) -> None:
        emit(RunFailed(message="--crop-sizes crops as part of --augment; give --augment too", kind="data"))

    app = TrainApp(recorded_config(), refused, host_source)
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert not app.is_running  # no key pressed
    assert app.return_value == 2
    assert app.final_lines() == ["rocmtui: failed (data): --crop-sizes crops as part of --augment; give --augment too"]


async def test_a_tracked_script_that_fails_keeps_its_screen(host_source) -> None:
    """A script's failure once it has begun (``TrackStarted``, no ``RunStarted``) is shown, not left at once."""

    def failing_script(config, emit, control) -> None:
        emit(TrackStarted(name="sweep", run_dir="runs/sweep"))
        emit(RunFailed(message="the script exited with code 3", kind="error"))

    app = TrainApp(recorded_config(), failing_script, host_source)
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert app.is_running and app.state.phase == "failed"
        assert app.train_screen.query_one(SummaryCard).failed
        await pilot.press("q")
    assert app.return_value == 1


async def test_exit_on_finish(events, host_source) -> None:
    app = TrainApp(recorded_config(), ReplayTrainer(events), host_source, exit_on_finish=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(app.trainer_done)
        await pilot.pause()
    assert app.return_value == 0
    assert isinstance(app.state.finished, RunFinished)


async def test_sigterm_stops_with_a_checkpoint_and_exits_143(held_trainer, host_source) -> None:
    app = TrainApp(recorded_config(), held_trainer, host_source)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(held_trainer.holding)
        app.on_signal(15)  # what the SIGTERM handler installed by run_train_app calls
        await wait_for(app.trainer_done)
        await pilot.pause()
    assert app.return_value == 143
    assert isinstance(held_trainer.emitted[-1], RunFinished) and held_trainer.emitted[-1].reason == "stopped"
    assert host_source.stopped  # the sampler is stopped on the way out


def test_a_second_sigterm_while_stopping_exits_at_once(events, host_source, monkeypatch) -> None:
    app = TrainApp(recorded_config(), ReplayTrainer(events), host_source)
    exits: list[int] = []
    monkeypatch.setattr("rocmtui.ui.train_app.os._exit", exits.append)
    app.on_signal(15)
    assert exits == []  # the first one asks the trainer to stop and save
    app.on_signal(15)
    assert exits == [143]


def test_unknown_theme_is_a_usage_error(events) -> None:
    with pytest.raises(UsageError, match="unknown theme 'nope'"):
        TrainApp(recorded_config(), ReplayTrainer(events), ManualReplay([]), theme="nope")


def test_recorded_run_starts_with_run_started(events) -> None:
    assert isinstance(events[0], RunStarted) and isinstance(events[-1], RunFinished)


async def test_log_scale_plot_is_the_same_after_resizes(events, host_source) -> None:
    """Textual renders a plot again on every resize; each render must draw the same data, not its log."""
    app = TrainApp(recorded_config(), ReplayTrainer(events), host_source)
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("l")
        await pilot.pause()
        plot = app.train_screen.loss_plot
        first = plot.render()
        for size in ((200, 50), (80, 24), SIZE):
            await pilot.resize_terminal(*size)
            await pilot.pause()
        again = plot.render()
        assert isinstance(first, Text) and isinstance(again, Text)
        assert again.plain == first.plain and "cannot draw" not in again.plain


async def test_a_second_ctrl_c_behind_the_question_stops_with_a_checkpoint(events, host_source) -> None:
    trainer = ReplayTrainer(events, hold_at=36, stop_while_held=True)
    app = TrainApp(recorded_config(), trainer, host_source)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(trainer.holding)
        await pilot.press("ctrl+c")
        assert isinstance(app.screen, QuitConfirm)
        await pilot.press("ctrl+c")
        assert app.control.stop.is_set()
        await wait_for(app.trainer_done)
        await pilot.pause()
    final = trainer.emitted[-1]
    assert isinstance(final, RunFinished) and final.reason == "stopped"
    assert app.return_value == 0
    assert app.final_lines()[0].startswith("rocmtui: stopped:")


async def test_detach_is_offered_only_when_the_run_lives_in_its_own_process(held_trainer, host_source) -> None:
    app = TrainApp(recorded_config(), held_trainer, host_source)  # an in-process source
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(held_trainer.holding)
        await pilot.press("q", "d")
        assert isinstance(app.screen, QuitConfirm)  # d does nothing here
        assert not app.detached and not app.control.leave.is_set()
        await pilot.press("n")


def test_a_detached_script_run_names_its_folder_before_it_has_said_where_it_is(tmp_path, host_source) -> None:
    """``rocmtui run`` makes the folder itself: a script that has not called track() yet still has one."""
    folder = tmp_path / "runs" / "20261202-230000-train"
    app = TrainApp(recorded_config(), ReplayTrainer([]), host_source, detachable=True, run_dir=folder)
    assert app.state.running and app.train_screen.run_dir is None  # no RunStarted yet
    app.detached = True
    assert app.final_lines() == [
        f"rocmtui: the run trains on in the background: {folder}",
        f"  watch it: rocmtui watch {folder}",
        f"  stop it:  rocmtui stop {folder}",
    ]


async def test_a_source_that_emits_faster_than_the_ui_applies_waits_a_few_events_ahead(events, host_source) -> None:
    """A long history read at once is never all queued: emit waits while EMIT_AHEAD events are unapplied."""
    from rocmtui.ui.train_app import EMIT_AHEAD

    applied: list[int] = []
    ahead: list[int] = []

    def source(config, emit, control) -> object:
        for n, event in enumerate(events, start=1):
            emit(event)
            ahead.append(n - len(applied))
        return events[-1]

    app = TrainApp(recorded_config(), source, host_source, detachable=True)
    original = app.train_screen.apply

    def counting(event) -> None:
        original(event)
        applied.append(1)

    app.train_screen.apply = counting  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert len(applied) == len(events) and app.state.phase == "finished"
        await pilot.press("q")
    assert len(ahead) == len(events) and max(ahead) <= EMIT_AHEAD
