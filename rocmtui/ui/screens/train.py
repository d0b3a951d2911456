"""The training screen: curves, GPU panel, progress, epochs and log; folds events into RunState."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Container
from textual.events import Resize
from textual.markup import escape
from textual.screen import Screen
from textual.widget import Widget

from rocmtui.config import TrainConfig
from rocmtui.events import (
    EpochCompleted,
    EpochMetrics,
    LogMessage,
    MetricsLogged,
    RunControl,
    RunFailed,
    RunFinished,
    RunStarted,
    TrackStarted,
    TrainEvent,
)
from rocmtui.gpu.sample import SampleSet
from rocmtui.run.format import RANKS
from rocmtui.ui.look.meters import fmt_acc
from rocmtui.ui.screens.config_diff_screen import ConfigDiffScreen
from rocmtui.ui.screens.cursor_actions import CURSOR_BINDINGS, CursorActions
from rocmtui.ui.state.compare import ComparedRun
from rocmtui.ui.state.cursor import PlotView
from rocmtui.ui.state.grid import GridState
from rocmtui.ui.state.run_state import RunState
from rocmtui.ui.widgets.accuracy_plot import AccuracyPlot
from rocmtui.ui.widgets.epoch_table import EpochTable
from rocmtui.ui.widgets.gpu_panel import GpuPanel
from rocmtui.ui.widgets.key_bar import KeyBar
from rocmtui.ui.widgets.log_panel import LogPanel
from rocmtui.ui.widgets.loss_plot import LossPlot
from rocmtui.ui.widgets.plot_cursor import CursorKeys
from rocmtui.ui.widgets.rank_table import RankTable
from rocmtui.ui.widgets.run_info import RunInfo
from rocmtui.ui.widgets.run_progress import RunProgress
from rocmtui.ui.widgets.throttled_plot import PLOT_PERIOD_S, ThrottledPlot

FRAME_PERIOD_S = 1.0
"""Seconds between frames of the training screen. Events and samples only change state; each frame
paints what changed since the last one (progress, epochs, log, GPU readings, and the plots when
``plot_period_s`` has passed) in one compositor pass. A timer per widget would cost a pass each: the
compositor is most of the UI's CPU time while training."""
ANSWER_S = 5.0
"""Seconds a key's answer (``s``) stays in its note: at least three, whatever the log does meanwhile."""
COMPACT_WIDTH = 110
COMPACT_HEIGHT = 34
COMPACT_TABLE_ROWS = 4
"""Compact: the epoch table's header and its three newest rows (it scrolls)."""
COMPACT_LOG_ROWS = 2
"""Compact: a rule and the newest log line."""
COMPACT_CARD_ROWS = 8
"""Compact, once the run ended: the summary card's rule and its first seven lines."""


class TrainScreen(CursorActions, Screen[None]):
    """Receives events from the app (``apply``) and the newest samples (``show_samples``)."""

    CSS_PATH = str(Path(__file__).resolve().parent.parent / "train.tcss")
    bottom_rows = 12
    """Rows under the curves, when not compact: the epoch table's border, header and nine rows."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("p", "toggle_pause", "Pause"),
        Binding("s", "save_now", "Save"),
        Binding("l", "toggle_log", "Log scale"),
        Binding("z", "zoom", "Zoom"),
        Binding("a", "full_range", "All epochs", show=False),
        Binding("g", "grid", "All series"),
        Binding("right_square_bracket", "smoothing(1)", "Smooth", key_display="]"),
        Binding("left_square_bracket", "smoothing(-1)", "Less smooth", key_display="[", show=False),
        Binding("m", "app.toggle_monitor", "Monitor"),
        Binding("n", "next_series", "Next series", show=False),
        Binding("r", "next_run", "Next run"),
        Binding("d", "differences", "Differences"),
        *CURSOR_BINDINGS,
    ]

    def __init__(
        self,
        config: TrainConfig,
        control: RunControl,
        *,
        plot_period_s: float = PLOT_PERIOD_S,
        clock: Callable[[], float] = time.monotonic,
        labels: Sequence[str] = (),
    ) -> None:
        """``labels``: to compare runs, each run's legend name, the main run's first."""
        super().__init__(id="train")
        self.state = state = RunState(clock=clock)
        """The run as this screen shows it: only ``apply`` and this screen's keys change it."""
        self.runs = [ComparedRun(labels[0] if labels else "", state)]
        self.runs += [ComparedRun(label, RunState(clock=clock)) for label in labels[1:]]
        """Every run shown, the main one first (more than one: the plots compare them)."""
        self.table_run = 0
        """Index in ``runs`` of the run whose epochs the table shows (``r`` switches)."""
        self.control = control
        self.info = RunInfo(config, id="run-info")
        self.progress = RunProgress(state, id="progress")
        self.loss_plot = LossPlot(state, id="loss-plot", runs=self.runs)
        self.accuracy_plot = AccuracyPlot(state, id="accuracy-plot", runs=self.runs)
        self.cursor = CursorKeys(PlotView(), self.loss_plot, (self.loss_plot, self.accuracy_plot))
        """The cursor and the x axis, one for both plots (``rocmtui.ui.widgets.plot_cursor``)."""
        self.gpu_panel = GpuPanel(id="train-gpu")
        self.rank_table = RankTable(id="ranks")
        """Shown for a run of several ranks (``--nproc``, torchrun): each rank's GPU, step and speed."""
        self.folder: Path | None = None
        """The run folder followed, where it is now (a copied folder's events name where it was written)."""
        self.table = EpochTable(id="epochs")
        self.table.border_title = escape(self.table_title())
        self.table.caption = self.table_caption()
        self.log_view = LogPanel(id="log")
        self.log_view.border_title = "Log"
        self.progress_seen = -1
        """RunState.version last painted by the progress lines."""
        self.plot_period_s = plot_period_s
        self.plotted_at = time.monotonic()
        self.pending_samples: tuple[SampleSet, Sequence[SampleSet]] | None = None
        """The newest GPU readings and history, painted by the next frame."""
        self.grid_state = GridState()
        """The grid of every series (``g``): its filter, selection and log axes, kept between visits."""

    def compose(self) -> ComposeResult:
        yield self.info
        yield self.progress
        yield self.rank_table
        with Container(id="train-top"):  # a grid: its shape changes with the terminal size (train.tcss)
            yield from self.top_panels()
        with Container(id="train-bottom"):  # side by side; stacked when compact (train.tcss)
            yield from self.bottom_panels()
        yield KeyBar()

    def top_panels(self) -> list[Widget]:
        """The curves and the GPU panel."""
        return [self.loss_plot, self.accuracy_plot, self.gpu_panel]

    def bottom_panels(self) -> list[Widget]:
        """Under the curves, left to right: each panel as wide as its content, the log the rest."""
        return [self.table, self.log_view]

    def on_resize(self, event: Resize) -> None:
        compact = event.size.width < COMPACT_WIDTH or event.size.height < COMPACT_HEIGHT
        self.set_class(compact, "-compact")
        self.gpu_panel.set_compact(compact)
        self.table.caption = self.table_caption()
        self.relayout()

    def relayout(self) -> None:
        """Rows under the curves. Compact: the GPU panel gets one row per GPU plus the host, under the plots,
        and the plots every row the table, the log and a card leave."""
        top, bottom = self.query_one("#train-top"), self.query_one("#train-bottom")
        if self.has_class("-compact"):
            rows = max(2, len(self.gpu_panel.gpu_indexes) + 1)
            top.styles.grid_rows = f"1fr {rows}"
            card = self.has_class("-card") and not self.has_class("-table")
            bottom.styles.height = COMPACT_CARD_ROWS if card else COMPACT_TABLE_ROWS + COMPACT_LOG_ROWS
            heights = {self.table: COMPACT_TABLE_ROWS, self.log_view: COMPACT_LOG_ROWS}
            if self.has_class("-no-epochs"):  # a script without epochs: its log takes the table's rows
                heights = {self.log_view: COMPACT_TABLE_ROWS + COMPACT_LOG_ROWS}
        else:
            top.styles.grid_rows = "1fr"
            bottom.styles.height = self.bottom_rows
            heights = {}
        for panel in bottom.children:  # stacked panels their own rows; side by side, the whole height
            panel.styles.height = heights.get(panel, "100%")

    def apply(self, event: TrainEvent) -> None:
        """Fold one event into the state and update the cheap text widgets; plots only get dirty."""
        self.state.apply(event)
        if isinstance(event, RunStarted | TrackStarted) and event.run_dir:
            folder = self.folder or Path(event.run_dir)
            self.follow_ranks(folder, isinstance(event, RunStarted) and event.world_size > 1)
        if isinstance(event, RunStarted | RunFinished | RunFailed):
            self.rank_table.set_live(isinstance(event, RunStarted))
        if isinstance(event, RunStarted):
            self.info.show(event)
            self.note(f"started on {event.device_name}; data: {event.data_source}")
        elif isinstance(event, EpochCompleted):
            self.accuracy_plot.mark_dirty()
            best = " (best)" if event.is_best else ""
            self.note(f"epoch {event.epoch + 1}: test acc {fmt_acc(event.test_acc)}{best}")
        elif isinstance(event, LogMessage):
            self.note(event.message, event.level)
        elif isinstance(event, RunFinished):
            self.note(f"run {event.reason}; checkpoint: {event.checkpoint or 'none'}")
        elif isinstance(event, RunFailed):
            self.note(f"{event.kind}: {event.message}", "error")
        elif isinstance(event, TrackStarted):
            self.info.show_tracked(event)
            self.note(f"{event.name}: {' '.join(f'{k}={v}' for k, v in event.params.items()) or 'started'}")
        elif isinstance(event, MetricsLogged | EpochMetrics) or self.accuracy_plot.shows_steps:
            self.accuracy_plot.mark_dirty()  # a view of per-report series (lr, images/s) changes at each report
        self.loss_plot.mark_dirty()  # plots and progress repaint on their own timers, not here

    @property
    def comparing(self) -> bool:
        return len(self.runs) > 1

    def apply_other(self, index: int, event: TrainEvent) -> None:
        """Fold an event of another run (``runs[index]``) into its state; the plots get dirty."""
        self.runs[index].state.apply(event)
        if isinstance(event, EpochCompleted):
            self.accuracy_plot.mark_dirty()
        self.loss_plot.mark_dirty()

    def table_title(self) -> str:
        if not self.comparing:
            return "Epochs"
        return f"Epochs: {self.runs[self.table_run].label} ({self.table_run + 1}/{len(self.runs)}, r: next)"

    def table_caption(self) -> str:
        """Whose epochs the table shows, when runs are compared and the table has no border (compact)."""
        if not self.comparing or not self.has_class("-compact"):
            return ""
        return f"{self.runs[self.table_run].label} ({self.table_run + 1}/{len(self.runs)})"

    def action_next_run(self) -> None:
        """The epoch table shows the next run's epochs; a finished run's summary card is one step of the round."""
        if not self.comparing:
            return
        if self.has_class("-card") and not self.has_class("-table"):
            self.add_class("-table")  # the card steps aside for the table, at the main run
            self.table_run = 0
        elif self.has_class("-card") and self.table_run == len(self.runs) - 1:
            self.remove_class("-table")  # round again: the summary card
        else:
            self.table_run = (self.table_run + 1) % len(self.runs)
        self.table.border_title = escape(self.table_title())
        self.table.caption = self.table_caption()
        self.relayout()
        self.flush_text()

    def action_differences(self) -> None:
        self.app.push_screen(ConfigDiffScreen(self.runs))  # the settings that differ between the compared runs

    def note(self, message: str, level: str = "info") -> None:
        self.log_view.add(message, level, self.state.elapsed_s)

    def set_phase_note(self, message: str) -> None:
        """A line in the log and a fresh progress line after pause, resume or stop."""
        self.note(message)
        self.progress.refresh()

    @property
    def run_dir(self) -> str | None:
        """The run folder, once the run has said where it is."""
        for event in (self.state.finished, self.state.failed, self.state.started):
            if event is not None and event.run_dir:
                return event.run_dir
        return None

    def action_toggle_pause(self) -> None:
        """The engine logs "Paused"/"Resumed" when it acts on this; the progress line shows it now."""
        if not self.state.running or self.state.phase == "stopping":
            return
        if self.control.paused:
            self.control.resume()
            self.state.resume()
        else:
            self.control.pause()
            self.state.pause()
        self.progress.refresh()

    def action_save_now(self) -> None:
        if not self.state.running:
            return
        tracked = self.state.tracked
        if tracked is not None and not tracked.saves:
            self.answer("this script cannot save on request (track(on_save=...) lets it)", warning=True)
            self.app.bell()
            return
        self.control.request_save()
        if tracked is not None:
            self.answer("save asked: the script saves at its next log()")
        else:
            self.answer("checkpoint requested: saved at the next step")

    def answer(self, message: str, *, warning: bool = False) -> None:
        """A key's one-line answer: in the log, and for ``ANSWER_S`` in a note over the screen, which a script's
        next lines of output cannot scroll away."""
        self.set_phase_note(message)
        self.app.notify(message, severity="warning" if warning else "information", timeout=ANSWER_S, markup=False)

    def set_stopping(self) -> None:
        self.state.phase = "stopping"
        if self.state.is_script:
            self.set_phase_note("asked the script to stop (rocmtui.track's should_stop)…")
        else:
            self.set_phase_note("stopping at the next step; saving a checkpoint…")

    def expect_script(self, name: str) -> None:
        """The run is a script's (``rocmtui run``, or a folder without a ``config.json``): show it as one from the
        first frame, before its first event arrives."""
        self.state.script = name
        self.info.show_script(name, self.folder)
        self.set_class(True, "-no-epochs")

    def show_samples(self, sample_set: SampleSet, history: Sequence[SampleSet]) -> None:
        """Keep the newest readings for the next frame."""
        self.pending_samples = (sample_set, history)

    def follow_ranks(self, run_dir: Path, several: bool) -> None:
        """Show the rank table for a run of several ranks (a tracked script's: when it wrote ``ranks/``)."""
        if several or (run_dir / RANKS).is_dir():
            self.rank_table.follow(run_dir)

    def flush_samples(self) -> None:
        if self.pending_samples is None:
            return
        sample_set, history = self.pending_samples
        self.pending_samples = None
        self.rank_table.set_gpus(sample_set.gpus)
        if self.loss_plot.gpu_track.record((*history, sample_set)):
            self.loss_plot.mark_dirty()  # the strip under the curves
        count = len(self.gpu_panel.gpu_indexes)
        self.gpu_panel.show(sample_set, history)
        if len(self.gpu_panel.gpu_indexes) != count:
            self.relayout()

    def action_next_series(self) -> None:
        """The second plot shows the run's next series (``rocmtui.ui.state.scalars``: any run, trained or tracked)."""
        self.accuracy_plot.next_series()

    def action_grid(self) -> None:
        """Every series of the run (of each run compared) in a grid of small plots (``ui.screens.grid_screen``)."""
        from rocmtui.ui.screens.grid_screen import GridScreen

        grid = GridScreen(self.state, self.grid_state, plot_period_s=self.plot_period_s, runs=self.runs)
        self.app.push_screen(grid)

    @property
    def plots(self) -> tuple[ThrottledPlot, ...]:
        """Every plot of the screen: the view keys (log, smoothing, zoom, range) act on all of them."""
        return (self.loss_plot, self.accuracy_plot)

    def action_toggle_log(self) -> None:
        for plot in self.plots:
            plot.toggle_log()

    def action_smoothing(self, steps: int) -> None:
        """``]`` smooths more, ``[`` less: the next EMA weight, drawn at once."""
        for plot in self.plots:
            plot.step_smoothing(steps)

    def action_zoom(self) -> None:
        for plot in self.plots:
            plot.next_window()

    def action_full_range(self) -> None:
        """The epoch axis over every epoch planned, or (again) over what has been trained."""
        for plot in self.plots:
            plot.toggle_full_range()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Pause and save are not offered once the run has ended (the footer drops them)."""
        if action in ("next_run", "differences"):
            return self.comparing
        return self.state.running or action not in ("toggle_pause", "save_now")

    def show_card(self, card: Widget, *, keep_log: bool = True) -> None:
        """The run's ending (summary, or a demo's closing line) in place of the epoch table: the curves stay.

        ``keep_log``: the card takes the table's place only; otherwise the log's as well.
        """
        bottom = self.query_one("#train-bottom")
        if not bottom.is_attached:  # a run that ends before its screen has mounted (a demo's replay at speed)
            self.call_after_refresh(self.show_card, card, keep_log=keep_log)
            return
        self.add_class("-card")  # train.tcss hides the table (and the log) and places the card
        self.set_class(not keep_log, "-card-wide")
        bottom.mount(card, before=self.log_view)
        self.relayout()
        self.refresh_bindings()

    def on_screen_resume(self) -> None:
        """Back from the monitor or a dialog: draw what changed meanwhile without waiting for a frame."""
        self.flush_samples()
        for plot in (self.loss_plot, self.accuracy_plot):
            if plot.dirty and plot.is_mounted:
                plot.replot()

    def on_mount(self) -> None:
        self.set_interval(FRAME_PERIOD_S, self.frame)

    def frame(self) -> None:
        """Paint everything that changed since the last frame, at once."""
        with self.app.batch_update():
            self.flush_text()
            self.rank_table.refresh_ranks()
            now = time.monotonic()
            if now - self.plotted_at >= self.plot_period_s - FRAME_PERIOD_S / 2:  # timers drift a little
                self.plotted_at = now
                self.loss_plot.redraw_if_dirty()
                self.accuracy_plot.redraw_if_dirty()

    @property
    def second_plot_wanted(self) -> bool:
        """The second plot has something to show: a train run's accuracy, or a script's series beside its loss."""
        state = self.state
        return not state.is_script or bool(state.scalars.others())

    def flush_text(self) -> None:
        """Progress lines, epoch rows, log lines and GPU readings that changed since the last flush."""
        self.set_class(not self.second_plot_wanted, "-one-plot")
        if self.progress_seen != self.state.version or self.state.phase == "training":
            self.progress_seen = self.state.version  # while training the clock runs: two cheap lines a frame
            self.progress.refresh()
        shown = self.runs[self.table_run].state
        no_epochs = shown.is_script and not shown.scalars.epoch_events  # a script without run.log_epoch
        if no_epochs != self.has_class("-no-epochs"):
            self.set_class(no_epochs, "-no-epochs")
            self.relayout()
        if shown.is_script and shown.scalars.epoch_events:  # a script's run.log_epoch values
            self.table.show_metrics(shown.scalars.epoch_events, key=self.table_run)
        elif not shown.is_script:
            self.table.show(shown.epochs, key=self.table_run)
        self.log_view.flush()
        self.flush_samples()
        if not self.state.running:
            self.gpu_panel.say_no_samples()

    def replot_now(self) -> None:
        """Redraw plots and panels now (end of run, tests, screenshots; timers do it otherwise)."""
        self.flush_text()
        self.loss_plot.replot()
        self.accuracy_plot.replot()
