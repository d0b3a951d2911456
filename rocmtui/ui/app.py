"""The Textual application: composes the screens and routes messages between threads and screens.

One factory (``create_train_app`` / ``create_monitor_app``) serves the CLI, the tests and the
screenshot script. Threading invariant: the trainer (a thread worker) and the sampler (its own
thread) only post messages; the handlers here own every piece of state and every widget.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from typing import ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.theme import BUILTIN_THEMES

from rocmtui.config import MonitorConfig, TrainConfig
from rocmtui.errors import DataError, UsageError
from rocmtui.events import Emit, FailureKind, RunControl, RunFailed, RunFinished, TrainEvent
from rocmtui.gpu.sample import SampleSet
from rocmtui.gpu.source import TelemetrySource
from rocmtui.ui.messages import GpuSampled, SampleRelay, TrainEventMessage
from rocmtui.ui.peaks import Peaks
from rocmtui.ui.run_state import RunState
from rocmtui.ui.screens.finished import FinishedScreen, summary_lines
from rocmtui.ui.screens.help import MONITOR_KEYS, TRAIN_KEYS, HelpScreen
from rocmtui.ui.screens.monitor import MonitorScreen, next_interval
from rocmtui.ui.screens.quit_confirm import QuitConfirm
from rocmtui.ui.screens.train import TrainScreen
from rocmtui.ui.signals import HANGUP, detach_from_terminal, exit_watchdog, stop_on_signals
from rocmtui.ui.widgets.throttled_plot import PLOT_PERIOD_S

Trainer = Callable[[TrainConfig, Emit, RunControl], object]


class TrainerExited(Message):
    """The trainer's thread returned (after its last event, which is always handled first)."""


class RocmtuiApp(App[int]):
    """Either the training screen (with the monitor one key away) or the monitor alone."""

    CSS_PATH = "app.tcss"
    TITLE = "rocmtui"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "request_quit", "Quit"),
        # Ctrl-C by reflex over SSH: the same confirmed, checkpointed quit as q (not Textual's "press ctrl+q" hint)
        Binding("ctrl+c", "request_quit", "Quit", show=False, priority=True),
        Binding("question_mark", "help", "Help", key_display="?"),
    ]

    def __init__(
        self,
        sampler: TelemetrySource,
        *,
        train: tuple[TrainConfig, Trainer] | None = None,
        control: RunControl | None = None,
        exit_on_finish: bool = False,
        theme: str = MonitorConfig.theme,
        plot_period_s: float = PLOT_PERIOD_S,
    ) -> None:
        super().__init__()
        self.theme = theme
        self.sampler = sampler
        self.train_job = train
        self.control = control or RunControl()
        self.exit_on_finish = exit_on_finish
        self.state = RunState()
        self.peaks = Peaks()
        self.relay = SampleRelay(self.post_message)
        self.quitting = False
        self.signal_code: int | None = None
        self.trainer_done = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.train_screen = TrainScreen(train[0], self.state, plot_period_s=plot_period_s) if train else None
        self.monitor_screen = MonitorScreen(in_train=train is not None)

    # -- start and stop -------------------------------------------------------------------
    def on_mount(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.install_screen(self.monitor_screen, "monitor")
        if self.train_screen is not None:
            self.install_screen(self.train_screen, "train")
        self.push_screen("train" if self.train_screen is not None else "monitor")
        self.monitor_screen.interval_s = self.sampler.interval_s
        self.sampler.subscribe(self.relay.offer)
        self.sampler.start()
        history = self.sampler.history()
        if history:
            self.relay.offer(history[-1])
        if self.train_job is not None:
            self.run_worker(self._train, thread=True, name="trainer", exit_on_error=False)

    def on_unmount(self) -> None:
        self.control.request_stop()  # the executor joins the trainer's thread at exit: never leave it running
        self.sampler.stop()

    def _train(self) -> None:
        """Runs on the worker thread: only emit (post_message), never touch widgets."""
        assert self.train_job is not None
        config, trainer = self.train_job
        try:
            trainer(config, self.emit, self.control)
        except Exception as err:  # the engine reports its own failures; this catches bugs and shows them
            kind: FailureKind = "data" if isinstance(err, DataError) else "error"
            self.emit(RunFailed(message=f"{type(err).__name__}: {err}", kind=kind))
        finally:
            self.trainer_done.set()
            self.post_message(TrainerExited())

    def emit(self, event: TrainEvent) -> None:
        """The ``emit`` handed to ``train()``: thread-safe, never blocks the trainer."""
        self.post_message(TrainEventMessage(event))

    def on_signal(self, signum: int) -> None:
        """SIGTERM/SIGHUP: stop at the next step (checkpoint), then exit with 128 + signum.

        A second signal while stopping ends the process at once: a wedged trainer must not make it unkillable.
        """
        if self.signal_code is not None:
            os._exit(128 + signum)
        self.signal_code = 128 + signum
        self.control.request_stop()
        if signum == HANGUP:
            detach_from_terminal()
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self.stop_then_exit)

    @property
    def exit_code(self) -> int:
        if self.signal_code is not None:
            return self.signal_code
        return 1 if self.state.failed is not None else 0

    # -- messages from the threads --------------------------------------------------------
    def on_train_event_message(self, message: TrainEventMessage) -> None:
        if self.train_screen is None:
            return
        self.train_screen.apply(message.event)
        if isinstance(message.event, RunFinished | RunFailed):
            self._run_ended()

    def on_trainer_exited(self, _: TrainerExited) -> None:
        if self.state.running and self.train_screen is not None:
            self.train_screen.apply(RunFailed(message="the trainer returned without a final report", kind="error"))
            self._run_ended()

    def _run_ended(self) -> None:
        self.peaks.update_all(self.sampler.history())
        if self.quitting or self.exit_on_finish or self.signal_code is not None:
            self.exit_now()
            return
        lines = summary_lines(self.state, self.peaks)
        dialog = FinishedScreen(lines, failed=self.state.failed is not None)
        if self.train_screen is not None:
            self.train_screen.replot_now()  # the final curves, painted before the dialog covers them
        self.call_after_refresh(self.push_screen, dialog)

    def on_gpu_sampled(self, _: GpuSampled) -> None:
        sample_set = self.relay.take()
        if sample_set is not None:
            self.peaks.update(sample_set)
            self._show(sample_set)

    def _show(self, sample_set: SampleSet) -> None:
        """Only the visible data screen draws; the other catches up when shown."""
        for screen in reversed(self.screen_stack):
            if isinstance(screen, TrainScreen | MonitorScreen):
                screen.show_samples(sample_set, self.sampler.history())
                return

    def show_latest(self) -> None:
        if self.relay.latest is not None:
            self._show(self.relay.latest)

    # -- keys -----------------------------------------------------------------------------
    def action_request_quit(self) -> None:
        if self.quitting:
            return
        if self.train_screen is not None and self.state.running:
            self.push_screen(QuitConfirm(), self._confirmed_quit)
        else:
            self.exit_now()

    def _confirmed_quit(self, yes: bool | None) -> None:
        if yes:
            self.stop_then_exit()

    def exit_now(self) -> None:
        """Leave with the run's exit code (the run itself has ended)."""
        if self.signal_code == 128 + HANGUP:
            exit_watchdog(self.exit_code)  # the run is saved; never hang on a terminal that is gone
        self.exit(self.exit_code)

    def stop_then_exit(self) -> None:
        """Ask the trainer to stop (it saves a checkpoint) and exit when it reports back."""
        if self.train_screen is None or self.trainer_done.is_set() or not self.state.running:
            self.exit_now()
            return
        self.quitting = True
        self.control.request_stop()
        self.state.phase = "stopping"
        self.train_screen.set_phase_note("stopping at the next step; saving a checkpoint…")

    def action_toggle_pause(self) -> None:
        """The engine logs "Paused"/"Resumed" when it acts on this; the progress line shows it now."""
        if self.train_screen is None or not self.state.running or self.quitting:
            return
        if self.control.paused:
            self.control.resume()
            self.state.phase = "training"
        else:
            self.control.pause()
            self.state.phase = "paused"
        self.train_screen.progress.refresh()

    def action_save_now(self) -> None:
        if self.train_screen is not None and self.state.running:
            self.control.request_save()
            self.train_screen.set_phase_note("checkpoint requested: saved at the next step")

    def action_toggle_monitor(self) -> None:
        if self.train_screen is None:
            return
        if self.screen is self.monitor_screen:
            self.pop_screen()
        elif self.screen is self.train_screen:
            self.push_screen("monitor")
        self.call_after_refresh(self.show_latest)

    def action_change_interval(self, faster: bool) -> None:
        value = next_interval(self.sampler.interval_s, faster)
        self.sampler.interval_s = value
        self.monitor_screen.interval_s = value
        self.monitor_screen.show_status()

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        on_train = self.screen is self.train_screen
        title = "rocmtui train: keys" if on_train else "rocmtui monitor: keys"
        self.push_screen(HelpScreen(title, TRAIN_KEYS if on_train else MONITOR_KEYS))


def check_theme(theme: str) -> None:
    """A one-line UsageError for an unknown theme, before any terminal setup."""
    if theme not in BUILTIN_THEMES:
        raise UsageError(f"unknown theme {theme!r}; choose from {', '.join(sorted(BUILTIN_THEMES))}")


def create_train_app(
    config: TrainConfig,
    trainer: Trainer,
    sampler: TelemetrySource,
    *,
    exit_on_finish: bool = False,
    theme: str = MonitorConfig.theme,
    control: RunControl | None = None,
    plot_period_s: float = PLOT_PERIOD_S,
) -> RocmtuiApp:
    """The training app, as the CLI, the tests and the screenshot script build it."""
    check_theme(theme)
    return RocmtuiApp(
        sampler,
        train=(config, trainer),
        control=control,
        exit_on_finish=exit_on_finish,
        theme=theme,
        plot_period_s=plot_period_s,
    )


def create_monitor_app(config: MonitorConfig, sampler: TelemetrySource) -> RocmtuiApp:
    """The monitor app (also the screenshot script's)."""
    check_theme(config.theme)
    return RocmtuiApp(sampler, theme=config.theme)


def _result(app: RocmtuiApp, result: int | None) -> int:
    return result if isinstance(result, int) else (app.return_code or 0)


def run_train_app(
    config: TrainConfig, trainer: Trainer, sampler: TelemetrySource, *, exit_on_finish: bool, theme: str
) -> int:
    """``rocmtui train`` with the UI; returns the exit code (1 after a failed run, 128+N on a signal)."""
    app = create_train_app(config, trainer, sampler, exit_on_finish=exit_on_finish, theme=theme)
    with stop_on_signals(app.on_signal):
        result = app.run()
    return _result(app, result)


def run_monitor_app(config: MonitorConfig, sampler: TelemetrySource) -> int:
    """``rocmtui monitor``; returns the exit code."""
    app = create_monitor_app(config, sampler)
    return _result(app, app.run())
