"""The training app: a viewer over a run source, with the monitor one key away.

The run source is a callable ``(config, emit, control) -> final event`` run on a thread worker: the
launcher of a new trainer process, a follower of a run folder (``rocmtui watch``), or a replay in
the tests. It only emits (``post_message``); the training screen owns the run's state. The app
routes: events down to the screen, dialogs on top, and the way out (stop, detach, signals).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message

from rocmtui.base.errors import DataError, UsageError
from rocmtui.config import MonitorConfig, TrainConfig
from rocmtui.events import Emit, FailureKind, RunControl, RunFailed, RunFinished, TrainEvent
from rocmtui.gpu.feed import Feed
from rocmtui.gpu.source import TelemetrySource
from rocmtui.run.outcome import exit_code, result_lines
from rocmtui.ui.app import MonitorApp
from rocmtui.ui.backlog import Backlog
from rocmtui.ui.look.safe_text import cleaned
from rocmtui.ui.look.themes import check_theme
from rocmtui.ui.messages import TrainEventMessage
from rocmtui.ui.notify import notice_text, terminal_bytes
from rocmtui.ui.screens.finished import SummaryCard, summary_lines
from rocmtui.ui.screens.help import TRAIN_KEYS, HelpScreen
from rocmtui.ui.screens.quit_confirm import QuitChoice, QuitConfirm
from rocmtui.ui.screens.train import TrainScreen
from rocmtui.ui.signals import HANGUP, detach_from_terminal, exit_watchdog, stop_on_signals
from rocmtui.ui.state.compare import OtherRunEvent, OtherSource
from rocmtui.ui.state.run_state import RunState
from rocmtui.ui.widgets.throttled_plot import PLOT_PERIOD_S

RunSource = Callable[[TrainConfig, Emit, RunControl], object]
EMIT_AHEAD = 64
"""Events a source may have posted that the UI has not applied yet before its ``emit`` waits (for all of them
to be applied: ``rocmtui.ui.backlog``)."""


class TrainerExited(Message):
    """The run source's thread returned (after its last event, which is always handled first)."""


class TrainApp(MonitorApp):
    """Training curves and the GPU panel over one run; ``m`` shows the monitor."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("m", "toggle_monitor", "Monitor", show=False)]

    def __init__(
        self,
        config: TrainConfig,
        source: RunSource,
        sampler: TelemetrySource,
        *,
        control: RunControl | None = None,
        exit_on_finish: bool = False,
        detachable: bool = False,
        stop_on_hangup: bool = False,
        theme: str = MonitorConfig.theme,
        plot_period_s: float = PLOT_PERIOD_S,
        clock: Callable[[], float] = time.monotonic,
        compare: Sequence[tuple[str, OtherSource]] = (),
        label: str = "",
        run_dir: Path | None = None,
        notify: bool = False,
        script: str | None = None,
    ) -> None:
        """The training app, as the CLI, serve, the tests and the screenshot scripts build it. ``clock``: the
        running elapsed clock's time source (snapshot tests stop it); ``compare``: other runs to overlay, as
        (legend name, source), ``label`` naming the main run; ``run_dir``: the folder followed, where it is
        now, when known; ``notify``: a bell and a desktop notification when the run ends or fails; ``script``: the
        run's name when it is known to be a script's (``rocmtui run``, a folder without a ``config.json``), so
        that no training's titles show before its first event. A theme that does not exist is a UsageError (one
        line)."""
        check_theme(theme)
        super().__init__(sampler, theme=theme)
        self.notify_end = notify
        """Ring the terminal and send a desktop notification when the run ends or fails."""
        self.config = config
        self.source = source
        self.control = control or RunControl()
        self.exit_on_finish = exit_on_finish
        self.detachable = detachable
        """The run lives in its own process: leaving the app leaves it running."""
        self.stop_on_hangup = stop_on_hangup
        self.others = list(compare)
        """Runs compared with the main one: (legend name, source), each followed on its own worker."""
        self.others_control = RunControl()
        """The other runs' sources only ever see ``leave``: nothing is sent to those runs."""
        labels = [label, *(name for name, _ in self.others)] if self.others else []
        self.train_screen = TrainScreen(config, self.control, plot_period_s=plot_period_s, clock=clock, labels=labels)
        self.train_screen.folder = run_dir
        if script is not None:
            self.train_screen.expect_script(script)
        self.quitting = False
        self.detached = False
        self.signal_code: int | None = None
        self.final: RunFinished | RunFailed | None = None
        self.trainer_done = threading.Event()
        self._backlog = Backlog(EMIT_AHEAD)
        self._other_backlogs = [Backlog(EMIT_AHEAD) for _ in self.others]
        """The same bound for each compared run's source: its history is read as fast as the main run's."""
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def has_run(self) -> bool:
        return True

    @property
    def state(self) -> RunState:
        return self.train_screen.state

    # -- start and stop -------------------------------------------------------------------
    def on_mount(self) -> None:
        """Runs before MonitorApp's own on_mount (Textual calls each class's handler, subclass first)."""
        self._loop = asyncio.get_running_loop()
        self.install_screen(self.train_screen, "train")
        self.run_worker(self._follow, thread=True, name="run-source", exit_on_error=False)
        for index, (_, other) in enumerate(self.others, start=1):
            self.run_worker(
                lambda index=index, other=other: self._follow_other(index, other),
                thread=True,
                name=f"compare-{index}",
                exit_on_error=False,
            )

    def first_screen(self) -> str:
        return "train"

    def on_unmount(self) -> None:
        self.others_control.leave.set()
        if self.detachable:
            self.control.leave.set()  # a viewer going away leaves the run going (a stop asked for is sent first)
        else:
            self.control.request_stop()  # an in-process run must not outlive the app

    def _follow(self) -> None:
        """Runs on the worker thread: only emit (post_message), never touch widgets."""
        try:
            self.source(self.config, self.emit, self.control)
        except UsageError as err:  # bad input (a run folder that cannot be read): its own one line
            self.emit(RunFailed(message=str(err), kind="data"))
        except Exception as err:  # sources report their own failures; this catches bugs and shows them
            kind: FailureKind = "data" if isinstance(err, DataError) else "error"
            self.emit(RunFailed(message=f"{type(err).__name__}: {err}", kind=kind))
        finally:
            self.trainer_done.set()
            self.post_message(TrainerExited())

    def _follow_other(self, index: int, source: OtherSource) -> None:
        """Runs on a worker thread: one compared run's events, posted as ``OtherRunEvent``."""

        backlog = self._other_backlogs[index - 1]

        def emit(event: TrainEvent) -> None:
            backlog.add(self._others_going_away)
            self.post_message(OtherRunEvent(index, event))

        try:
            source(emit, self.others_control)
        except Exception as err:  # shown in that run's state; the main run goes on
            emit(RunFailed(message=f"{type(err).__name__}: {err}", kind="error"))

    def on_other_run_event(self, message: OtherRunEvent) -> None:
        self._other_backlogs[message.index - 1].applied()
        self.train_screen.apply_other(message.index, cleaned(message.event))

    def _others_going_away(self) -> bool:
        return self.others_control.leave.is_set() or not self.is_running

    def emit(self, event: TrainEvent) -> None:
        """The ``emit`` handed to the source: thread-safe. From the source's thread it waits while
        ``EMIT_AHEAD`` events are still to be applied (a long history read at once; ``rocmtui.ui.backlog``),
        and gives up waiting once the app is going away."""
        if threading.current_thread() is not threading.main_thread():
            self._backlog.add(self._going_away)
        self.post_message(TrainEventMessage(event))

    def _going_away(self) -> bool:
        return self.control.leave.is_set() or self.control.stop.is_set() or not self.is_running

    def on_signal(self, signum: int) -> None:
        """SIGHUP or SIGTERM detaches a viewer of a run in its own process (the run trains on) unless
        ``stop_on_hangup``; otherwise (an in-process run, or ``--stop-on-hangup``) it stops with a checkpoint.

        Either way the app then exits with 128 + signum. A second signal while stopping ends the process
        at once: a wedged trainer must not make it unkillable.
        """
        if self.signal_code is not None:
            os._exit(128 + signum)
        self.signal_code = 128 + signum
        if signum == HANGUP:
            detach_from_terminal()
        leave = self.signals_detach
        if not leave:
            self.control.request_stop()
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self.detach_now if leave else self.stop_then_exit)

    @property
    def signals_detach(self) -> bool:
        """A lost terminal (SSH gone, tmux killed) or a SIGTERM of the viewer leaves a run of its own process
        training: only an explicit stop stops it, unless the user asked for that (``--stop-on-hangup``)."""
        return self.detachable and not self.stop_on_hangup

    @property
    def exit_code(self) -> int:
        if self.signal_code is not None:
            return self.signal_code
        if self.detached:
            return 0
        return exit_code(self.final) if self.final is not None or self.state.failed else 0

    # -- events from the source -----------------------------------------------------------
    def on_train_event_message(self, message: TrainEventMessage) -> None:
        self._backlog.applied()
        event = cleaned(message.event)  # names, paths and messages from outside: plain text from here on
        self.train_screen.apply(event)
        if isinstance(event, RunFinished | RunFailed):
            self.final = event
            self._run_ended()

    def on_trainer_exited(self, _: TrainerExited) -> None:
        if self.state.running and not self.control.leave.is_set():
            failed = RunFailed(message="the run source returned without a final report", kind="error")
            self.train_screen.apply(failed)
            self.final = failed
            self._run_ended()

    def _run_ended(self) -> None:
        self.peaks.update_all(self.sampler.history())
        if isinstance(self.sampler, Feed):  # the run's GPU samples end with it: the monitor shows a recording now
            self.monitor_screen.recorded_span = self.sampler.span
            self.monitor_screen.show_status()
        if isinstance(self.final, RunFailed) and not self.state.begun:
            self.exit_now()  # refused before it started (bad settings, no data): its one line, as without a screen
            return
        if self.notify_end and not self.quitting and self.signal_code is None:  # a run the user did not end
            self.announce_end()
        if self.quitting or self.exit_on_finish or self.signal_code is not None:
            self.exit_now()
            return
        self.show_finished()

    def announce_end(self) -> None:
        """The bell and the desktop notifications, through Textual's driver (as ``App.bell`` writes the bell);
        under serve the bell alone, with the app's own toast."""
        text = notice_text(self.final, self.state.name)
        if self.is_web:
            self.notify(text, severity="error" if self.state.failed else "information", markup=False)
        self.write_to_terminal(terminal_bytes(text, web=self.is_web))

    def write_to_terminal(self, data: str) -> None:
        """Bytes for the terminal itself, through Textual's driver as ``App.bell`` writes (none when headless)."""
        if not self.is_headless and self._driver is not None:
            self._driver.write(data)

    def show_finished(self) -> None:
        """The run's summary in a card in place of the epoch table, beside the curves (``rocmtui demo``
        shows its closing line the same way)."""
        lines = summary_lines(self.state, self.peaks)
        self.train_screen.replot_now()  # the final curves
        self.train_screen.show_card(SummaryCard(lines, failed=self.state.failed is not None))

    # -- the way out ----------------------------------------------------------------------
    def action_request_quit(self) -> None:
        if isinstance(self.screen, QuitConfirm):  # a second Ctrl-C (or q) behind the question: stop now
            self.screen.dismiss("stop")
            return
        if self.quitting:
            return
        if self.state.running:
            self.push_screen(QuitConfirm(detachable=self.detachable, script=self.state.is_script), self._quit_chosen)
        else:
            self.exit_now()

    def _quit_chosen(self, choice: QuitChoice | None) -> None:
        if choice == "stop":
            self.stop_then_exit()
        elif choice == "detach":
            self.detach_now()

    def exit_now(self) -> None:
        """Leave with the run's exit code (the run itself has ended)."""
        if self.signal_code == 128 + HANGUP:
            exit_watchdog(self.exit_code)  # the run is saved; never hang on a terminal that is gone
        self.exit(self.exit_code)

    def detach_now(self) -> None:
        """Leave the run training in its own process; the terminal keeps how to come back."""
        self.detached = True
        self.control.leave.set()
        if self.signal_code == 128 + HANGUP:
            exit_watchdog(self.exit_code)
        self.exit(self.exit_code)

    def stop_then_exit(self) -> None:
        """Ask the run to stop (it saves a checkpoint) and exit when it reports back."""
        if self.trainer_done.is_set() or not self.state.running:
            self.exit_now()
            return
        self.quitting = True
        self.control.request_stop()
        self.train_screen.set_stopping()

    def final_lines(self) -> list[str]:
        """What the terminal keeps after the app closes: the result or the error, and the run folder."""
        run_dir = self.train_screen.run_dir
        if self.detached and self.state.running:
            folder = self.train_screen.folder  # known from the start when the CLI made the folder (run)
            where = run_dir or (str(folder) if folder is not None else "its run folder")
            return [
                f"rocmtui: the run trains on in the background: {where}",
                f"  watch it: rocmtui watch {where}",
                f"  stop it:  rocmtui stop {where}",
            ]
        script_step = (self.state.step or 0) if self.state.is_script else None
        return result_lines(self.final, run_dir, script_step=script_step)

    # -- keys -----------------------------------------------------------------------------
    def action_toggle_monitor(self) -> None:
        if self.screen is self.monitor_screen:
            self.pop_screen()
        elif self.screen is self.train_screen:
            self.push_screen("monitor")
        self.call_after_refresh(self.show_latest)

    def picture_places(self) -> list[Path]:
        """The run's folder first (``screens/``), once known."""
        from rocmtui.ui.screenshot import run_places

        run_dir = self.train_screen.run_dir
        return run_places(self.train_screen.folder or (Path(run_dir) if run_dir else None))

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            return
        if self.screen is self.train_screen:
            self.push_screen(HelpScreen("rocmtui train: keys", TRAIN_KEYS))
        else:
            super().action_help()


def run_train_app(app: TrainApp) -> tuple[int, list[str]]:
    """Run ``app`` with SIGTERM/SIGHUP routed to it; returns the exit code and the lines to leave behind."""
    with stop_on_signals(app.on_signal):
        result = app.run()
    code = result if isinstance(result, int) else (app.return_code or 0)
    return code, app.final_lines()
