"""Unit tests of the UI's plain parts: run state, formatting, history bars, relay, signals, plot thinning."""

from __future__ import annotations

import dataclasses
import os
import signal

import msgspec
from textual.color import Color
from ui_helpers import recorded_events, synthetic_gpu_sets

from rocmtui.base.series import SeriesView
from rocmtui.events import EpochCompleted, RunFailed, RunFinished, RunStarted, StepsCompleted
from rocmtui.gpu.sample import BackendStatus, HostSample, SampleSet
from rocmtui.ui.look.meters import bar, fmt_duration, fmt_span, fmt_used_total, meter
from rocmtui.ui.look.series_line import envelope
from rocmtui.ui.messages import SampleRelay
from rocmtui.ui.screens.finished import summary_lines
from rocmtui.ui.signals import stop_on_signals
from rocmtui.ui.state.peaks import Peaks
from rocmtui.ui.state.run_state import EMA_BETA, SMOOTHING_WEIGHTS, RunState, new_series
from rocmtui.ui.widgets import accuracy_plot, loss_plot
from rocmtui.ui.widgets.gpu_card import compact_line, full_lines
from rocmtui.ui.widgets.gpu_panel import no_gpu_text, util_history
from rocmtui.ui.widgets.history_bars import HistoryBars, bar_rows
from rocmtui.ui.widgets.run_progress import progress_lines
from rocmtui.ui.widgets.throttled_plot import LEGEND_COLOR


def test_run_state_folds_the_recorded_run() -> None:
    state = RunState()
    for event in recorded_events():
        state.apply(event)
    assert state.phase == "finished" and not state.running
    assert len(state.epochs) == 3 and len(state.loss) == 90
    assert state.loss.last_x == 3.0  # step 90 of 30 per epoch
    assert state.scalars.steps["loss"] is state.loss  # the loss is kept once
    best = state.best_epoch
    assert best is not None and best.test_acc == max(e.test_acc for e in state.epochs)
    assert state.finished is not None
    assert state.elapsed_s == state.finished.total_s  # from the events, not the wall clock


def test_ema_is_bias_corrected_and_skips_nan() -> None:
    state = RunState()
    step = StepsCompleted(
        epoch=0,
        step=3,
        epoch_step=3,
        steps_per_epoch=10,
        losses=(2.0, float("nan"), 2.0),
        images_per_s=100.0,
        lr=0.1,
        elapsed_s=1.0,
    )
    state.apply(step)
    view = state.loss.view(weight=0.98)
    assert view.last == [2.0, 2.0] and view.x == [0.1, 0.3]
    assert abs(view.smoothed[0] - 2.0) < 1e-9 and abs(view.smoothed[1] - 2.0) < 1e-9


def test_eta_from_the_step_rate() -> None:
    events = recorded_events()
    state = RunState()
    for event in events[:10]:
        state.apply(event)
    steps = state.last_steps
    assert steps is not None and state.started is not None
    remaining = 3 * 30 - steps.epoch_step
    expected = remaining * state.started.config.batch_size / steps.images_per_s
    assert state.eta_s is not None
    assert abs(state.eta_s - expected) < 1e-9


def test_formatters() -> None:
    assert fmt_duration(3723) == "1:02:03" and fmt_duration(63) == "1:03" and fmt_duration(None) == "--:--"
    assert fmt_span(0.412) == "0.41s" and fmt_span(9.996) == "10.0s" and fmt_span(59.94) == "59.9s"
    assert fmt_span(59.96) == "1:00" and fmt_span(125) == "2:05" and fmt_span(None) == "--:--"
    assert fmt_used_total(12 * 1024**3, 192 * 1024**3, sep="/") == "12.0/192.0 GiB"
    assert bar(0.5, 4) == "██░░" and bar(None, 3) == "   " and bar(1.5, 2) == "██"
    line = meter("util", 0.25, "25%", 20)
    assert line.startswith("util  ") and line.endswith(" 25%") and len(line) == 20 - 1


def test_bar_rows_right_align_the_newest_on_a_fixed_scale() -> None:
    rows = bar_rows([0.0, 50.0, 100.0, None], width=6, rows=2, max_value=100.0)
    assert rows[0] == "    █ " and rows[1] == "   ██ "


def test_relay_keeps_one_message_in_flight_and_hands_the_newest() -> None:
    posted: list[object] = []
    relay = SampleRelay(posted.append)
    sets = synthetic_gpu_sets(1, count=3)
    for sample_set in sets:
        relay.offer(sample_set)
    assert len(posted) == 1
    assert relay.take() is sets[-1]
    relay.offer(sets[0])
    assert len(posted) == 2


def test_gpu_text_and_no_gpu_note() -> None:
    sample = synthetic_gpu_sets(2, count=1)[0]
    lines = full_lines(sample.gpus[1], 40)
    assert len(lines) == 5 and "310 / 750 W" in lines[2] and "junc 51°C" in lines[3]
    assert compact_line(sample.gpus[0]).startswith("0 AMD Instinct M")
    assert util_history(synthetic_gpu_sets(2, count=4), 1) == [13.0, 20.0, 27.0, 34.0]
    empty = SampleSet(
        timestamp=0.0,
        backend="host",
        gpus=(),
        host=HostSample(timestamp=0.0),
        statuses=(BackendStatus("rocm", False, "libamd_smi.so not found"), BackendStatus("host", True)),
    )
    note = no_gpu_text(empty)
    assert note.startswith("No GPU found") and "rocm: libamd_smi.so not found" in note and "host:" not in note


def test_peaks_over_history() -> None:
    peaks = Peaks()
    peaks.update_all(synthetic_gpu_sets(3, count=2))
    assert peaks.vram_bytes == 40 * 1024**3 and peaks.temperature_c == 52.0


def test_a_drawn_line_keeps_the_spikes_and_the_newest_point() -> None:
    series = new_series()
    for step in range(20_000):
        series.add(float(step), 9.0 if step == 12_345 else 1.0 + (step % 3))
    xs, ys = envelope(series.view(limit=100))
    assert len(set(xs)) <= 100 and xs[-1] == 19_999.0 and max(ys) == 9.0 and min(ys) == 1.0
    assert envelope(SeriesView([1.0, 2.0], [3.0, 1.0], [3.0, 4.0], [3.0, 1.5], [3.0, 2.5], [1, 2])) == (
        [1.0, 2.0, 2.0],
        [3.0, 4.0, 1.0],  # the group ends near its min: the line leaves from there
    )


def test_signals_are_routed_then_restored() -> None:
    got: list[int] = []
    before = signal.getsignal(signal.SIGTERM)
    with stop_on_signals(got.append):
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGHUP)
    assert got == [signal.SIGTERM, signal.SIGHUP]
    assert signal.getsignal(signal.SIGTERM) == before


def test_plot_legends_use_colours_textual_can_draw() -> None:
    """Border titles are Textual markup: every legend colour must parse there, or the legend is drawn plain."""
    used = {*loss_plot.COLORS.values(), *accuracy_plot.COLORS.values()}
    assert used <= LEGEND_COLOR.keys()
    for name in used:
        assert Color.parse(LEGEND_COLOR[name]).ansi is not None  # the ANSI colour plotext draws, not an approximation


def test_summary_and_progress_count_the_epochs_before_a_resume() -> None:
    events = recorded_events()
    first = events[0]
    assert isinstance(first, RunStarted)
    resumed = msgspec.structs.replace(first, start_epoch=2, config=dataclasses.replace(first.config, epochs=5))
    state = RunState()
    for event in [resumed, *events[1:]]:
        # a run resumed at epoch 2 numbers its epochs from 2
        shifted = msgspec.structs.replace(event, epoch=event.epoch + 2) if isinstance(event, EpochCompleted) else event
        state.apply(shifted)
    assert state.epochs_done == 5
    assert "epochs              5/5" in summary_lines(state, Peaks())  # 2 before the resume, 3 after


def test_a_run_that_never_started_shows_no_epoch_counts() -> None:
    state = RunState()
    state.apply(RunFailed(message="checkpoint has already trained 2 of 2 epochs", kind="data"))
    assert "epochs              -" in summary_lines(state, Peaks())
    assert progress_lines(state, 80)[0].startswith("Epoch -/- ")


def test_a_stopped_run_s_progress_line_never_says_finished() -> None:
    events = [e for e in recorded_events() if not isinstance(e, RunFinished)]
    for reason, says in (("stopped", "■ stopped"), ("interrupted", "■ interrupted"), ("completed", "✔ finished")):
        state = RunState()
        for event in events:
            state.apply(event)
        state.apply(RunFinished(reason, 2, 0.5, 0.5, 4.0, 100.0, None, "x"))  # type: ignore[arg-type]
        line = progress_lines(state, 100)[0]
        assert says in line and (reason == "completed") == ("finished" in line), line


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _steps(epoch: int, epoch_step: int, elapsed: float, spe: int = 10) -> StepsCompleted:
    return StepsCompleted(epoch, epoch * spe + epoch_step, epoch_step, spe, (1.0,), 640.0, 1e-3, elapsed)


def _epoch_done(epoch: int, seconds: float, eval_s: float = 0.0, elapsed_s: float = 0.0) -> EpochCompleted:
    return EpochCompleted(epoch, 5, 1.0, 0.5, 1.0, 0.5, 1e-3, seconds, 640.0, False, eval_s, elapsed_s)


def test_the_elapsed_clock_holds_through_a_test_pass_and_while_paused() -> None:
    """The run's clock leaves test passes out (they are timed apart): the screen's clock does the same."""
    clock = FakeClock()
    state = RunState(clock=clock)
    started = recorded_events()[0]
    assert isinstance(started, RunStarted)
    state.apply(started)
    state.apply(_steps(0, 10, elapsed=4.0))  # the epoch's last step: its test pass runs now
    assert state.testing
    assert "testing" in progress_lines(state, 80)[0]
    clock.now += 6.0  # a 6 s test pass sends no event...
    assert state.elapsed_s == 4.0  # ...and the clock holds
    state.apply(_epoch_done(0, seconds=4.0, eval_s=6.0, elapsed_s=4.1))  # 0.1 s of saving after the steps
    assert not state.testing and state.elapsed_s == 4.1
    clock.now += 1.0
    assert state.elapsed_s == 5.1
    state.pause()
    clock.now += 60.0
    assert state.elapsed_s == 5.1  # held while paused
    state.resume()
    clock.now += 2.0
    assert state.elapsed_s == 7.1


def test_the_eta_counts_test_passes_and_does_not_jump() -> None:
    clock = FakeClock()
    state = RunState(clock=clock)
    started = recorded_events()[0]
    assert isinstance(started, RunStarted)
    state.apply(msgspec.structs.replace(started, config=dataclasses.replace(started.config, epochs=5)))
    etas = []
    for epoch in range(3):
        for step in (5, 10):
            state.apply(_steps(epoch, step, elapsed=10.0 * epoch + 0.4 * step))
            etas.append(state.eta_s)
        state.apply(_epoch_done(epoch, seconds=4.0, eval_s=6.0))  # 4 s of training, 6 s of testing
        etas.append(state.eta_s)
    assert etas[2] == 40.0  # 4 epochs left at 10 s each, test passes included
    assert etas[3:] == [35.0, 30.0, 30.0, 25.0, 20.0, 20.0]  # steady, never a jump back up


def test_smoothed_line_is_the_debiased_ema_at_any_weight_and_grows_with_the_points() -> None:
    losses = [3.0, 1.0, 2.5, 0.5, 2.0, 1.5, 0.25]
    series = new_series()
    for i, loss in enumerate(losses[:4]):
        series.add(float(i), loss)
    assert series.view(weight=0.0).smoothed == losses[:4]  # no smoothing: the raw points
    first = series.view(weight=0.9).smoothed
    for i, loss in enumerate(losses[4:], start=4):
        series.add(float(i), loss)
    grown = series.view(weight=0.9).smoothed
    assert grown[:4] == first
    for n, value in enumerate(grown, start=1):  # sum of w^(n-i) (1-w) v_i over 1 - w^n
        weights = [0.9 ** (n - i) * 0.1 for i in range(1, n + 1)]
        expected = sum(w * v for w, v in zip(weights, losses[:n], strict=True)) / sum(weights)
        assert abs(value - expected) < 1e-12
    series.cut_from(3.0)
    assert series.view(weight=0.9).smoothed == first[:3]
    series.add(3.0, losses[3])
    assert series.view(weight=0.9).smoothed == first  # on from the state kept at the cut


def test_every_series_keeps_the_ema_at_the_default_weight_and_each_the_keys_reach() -> None:
    assert EMA_BETA in SMOOTHING_WEIGHTS and new_series().weights == SMOOTHING_WEIGHTS


def test_smoothed_line_lags_a_falling_loss_by_the_weights_span_and_no_more() -> None:
    """Bias correction: no pull towards zero at the start, and the steady lag of an EMA, w / (1 - w) steps."""
    for weight in SMOOTHING_WEIGHTS[1:]:
        series = new_series()
        for i in range(5000):
            series.add(float(i), 10.0 - 0.001 * i)
        view = series.view(weight=weight)
        assert view.smoothed[0] == 10.0
        lag_steps = (view.smoothed[-1] - view.last[-1]) / 0.001
        assert abs(lag_steps - weight / (1 - weight)) < 0.01 * weight / (1 - weight) + 1e-6
        assert all(s >= r for s, r in zip(view.smoothed, view.last, strict=True))  # above a falling line


def test_time_to_accuracy_names_when_each_top_percent_was_first_reached() -> None:
    from rocmtui.run.milestones import time_to_accuracy

    epochs = [
        EpochCompleted(0, 4, 1.0, 0.5, 1.0, 0.905, 1e-3, 0.5, 1000.0, True),
        EpochCompleted(1, 4, 1.0, 0.5, 1.0, 0.93, 1e-3, 0.4, 1000.0, True),
        EpochCompleted(2, 4, 1.0, 0.5, 1.0, 0.925, 1e-3, 0.4, 1000.0, False),
        EpochCompleted(3, 4, 1.0, 0.5, 1.0, 0.9412, 1e-3, 0.4, 1000.0, True),
    ]
    assert time_to_accuracy(epochs) == "93% at 0.90s, 94% at 1.70s"  # 92% came with 93%: said once
    assert time_to_accuracy([]) == "N/A"


def test_time_to_accuracy_counts_the_final_test_time_augmented_pass_at_the_runs_end() -> None:
    from rocmtui.run.milestones import time_to_accuracy

    epochs = [
        EpochCompleted(0, 2, 1.0, 0.5, 1.0, 0.925, 1e-3, 0.9, 1000.0, True, eval_s=0.1, elapsed_s=0.95),
        EpochCompleted(1, 2, 1.0, 0.5, 1.0, 0.935, 1e-3, 0.9, 1000.0, True, eval_s=0.1, elapsed_s=1.9),
    ]  # elapsed_s, the run's own clock, includes what happened between epochs (saves), test passes excluded
    done = RunFinished("completed", 2, 0.935, 0.935, 1.92, 1.0, None, "r", tta_test_acc=0.9412)
    assert time_to_accuracy(epochs, done) == "92% at 0.95s, 93% at 1.90s, 94% at 1.92s"
    at_the_end = msgspec.structs.replace(done, total_s=1.9004)  # the final pass ends the clock where the last epoch did
    assert time_to_accuracy(epochs, at_the_end) == "92% at 0.95s, 94% at 1.90s"


def test_history_bars_set_before_their_first_layout_keep_the_whole_history() -> None:
    """A card mounted with its first sample gets its history before it has a width: none of it is dropped."""
    bars = HistoryBars()
    bars.set_values([10.0, 20.0, 30.0, 40.0])
    assert bars.values == (10.0, 20.0, 30.0, 40.0)
