"""``rocmtui monitor``: every GPU as a card (or one line each when small), the host, the processes."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Input, Static

from rocmtui.config import MonitorConfig
from rocmtui.gpu.history import TIMEBASES_S, timebase_label
from rocmtui.gpu.sample import SampleSet
from rocmtui.ui.cropped_update import crop_updates
from rocmtui.ui.look.safe_text import safe_text
from rocmtui.ui.state.process_rows import HOST_SORTS, NUMERIC_FIRST_DESCENDING, SORTS, ProcessQuery, sort_shown
from rocmtui.ui.state.settings import MonitorSettings
from rocmtui.ui.widgets.gpu_panel import GpuPanel
from rocmtui.ui.widgets.graph_view import GRAPHS
from rocmtui.ui.widgets.key_bar import KeyBar

if TYPE_CHECKING:
    from textual.widgets import DataTable

    from rocmtui.ui.widgets.process_table import ProcessTable

CARD_HEIGHT = 10
"""Least rows of one full GPU card (border, five lines of text, a graph of two rows and its time axis)."""
PROCESS_ROWS = 5
"""Least rows of the process table under full cards (its rule, header and three processes)."""
COMPACT_PROCESS_ROWS = 7
"""Least rows of the process table under one-line cards (its rule, header and five processes): the selected
GPU's graph gets what is left."""
FOCUS_ROWS = (4, 10)
"""Least and most rows of the selected GPU's graph under one-line cards (its title rule, plot and time axis)."""
WIDE = 120
"""From this width, cards go two to a row."""
STEPS = (0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)
"""The intervals that + and - step through."""


def next_interval(current: float, faster: bool) -> float:
    """The next step of ``STEPS`` from ``current``, clamped to the allowed range."""
    if faster:
        smaller = [s for s in STEPS if s < current - 1e-9]
        value = smaller[-1] if smaller else STEPS[0]
    else:
        larger = [s for s in STEPS if s > current + 1e-9]
        value = larger[0] if larger else STEPS[-1]
    return min(MonitorConfig.MAX_INTERVAL_S, max(MonitorConfig.MIN_INTERVAL_S, value))


def recording_words(first: float, last: float) -> str:
    """``recording of 2026-12-01 10:15 to 10:47``, in local time: the date again only when the day changed, the
    seconds only when both ends fall in the same minute."""
    start, end = time.localtime(first), time.localtime(last)
    clock = "%H:%M:%S" if time.strftime("%Y%m%d%H%M", start) == time.strftime("%Y%m%d%H%M", end) else "%H:%M"
    same_day = start[:3] == end[:3]
    until = time.strftime(clock if same_day else f"%Y-%m-%d {clock}", end)
    return f"recording of {time.strftime(f'%Y-%m-%d {clock}', start)} to {until}"


def layout_for(width: int, height: int, gpus: int) -> tuple[bool, int]:
    """(compact, columns): full cards when they all fit above the host and process rows."""
    columns = 2 if width >= WIDE and gpus > 1 else 1
    rows = math.ceil(max(1, gpus) / columns)
    needed = rows * CARD_HEIGHT + 1 + 1 + 1 + PROCESS_ROWS  # host line, status, footer, processes
    return (width < 80 or height < needed or (gpus > 2 and width < WIDE)), columns


class MonitorScreen(Screen[None]):
    """Shows whatever the app hands it; +/- change the sampling interval of the source."""

    class Changed(Message):
        """A setting worth keeping changed (timebase, graphs, sort): the app saves the settings."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("m", "back_to_train", "Training"),  # first: the way back is the key a narrow bar keeps longest
        # one entry for both interval keys in the bar, so that the GPU keys fit at 80 columns
        Binding("plus,equals_sign", "app.change_interval(False)", "Interval", key_display="+/-"),
        Binding("minus", "app.change_interval(True)", "Faster", show=False, key_display="-"),
        Binding("t", "timebase", "Time"),
        Binding("g", "graph", "Graph"),
        Binding("s", "sort", "Sort"),
        Binding("r", "reverse_sort", "Reverse", show=False),
        Binding("slash", "filter", "Find", key_display="/"),
        Binding("k", "signal('TERM')", "Kill"),
        Binding("w", "why_no_gpu", "Why"),
        Binding("K", "signal('KILL')", "SIGKILL", show=False),
        Binding("c", "app.next_theme", "Colours", show=False),
        Binding("right_square_bracket", "select_gpu(1)", "GPU", key_display="]"),
        Binding("left_square_bracket", "select_gpu(-1)", "Previous GPU", show=False, key_display="["),
    ]

    AUTO_FOCUS = "#processes"

    def __init__(self, *, in_train: bool = False, replaying: bool = False, readonly: bool = False) -> None:
        super().__init__(id="monitor")
        crop_updates(self)
        self.in_train = in_train
        self.replaying = replaying
        self.readonly = readonly
        """``--readonly`` (nvitop's flag): no kill keys, shown or acting."""
        """Showing a recording: its PIDs are not this machine's, so nothing may be signalled."""
        self.status = Static("rocmtui monitor · waiting for the first sample…", id="monitor-status")
        self.panel = GpuPanel(id="monitor-gpu", graphs=True, reasons_key="w")
        self.process_query = ProcessQuery()
        """The process table's order and filter, kept before the table exists."""
        self.processes: ProcessTable | None = None
        """Made, mounted and focused with the first sample that has a GPU (or, where there is none, the host's
        busiest processes)."""
        self.filter_input = Input(
            placeholder="filter: PID, user or command (enter keeps it, escape clears)", id="process-filter"
        )
        self.last: SampleSet | None = None
        self.status_text = ""
        self.interval_s = 1.0
        self.recorded_span: Callable[[], tuple[float, float] | None] | None = None
        """Set when what is shown is a recording (a replay, a finished run's samples): the times it covers, which
        the status line says in place of the live interval."""

    def compose(self) -> ComposeResult:
        # The process table comes with the first sample that has a GPU or host processes, the filter above it
        # when first asked for (/): the first frame has neither (a DataTable is the dearest widget to set up).
        yield self.status
        yield self.panel
        yield KeyBar()

    @property
    def host_processes(self) -> bool:
        """The table lists the host's busiest processes (there is no GPU here)."""
        return self.processes is not None and self.processes.host

    def action_sort(self) -> None:
        """Sort the processes by the next column (of those the table shows)."""
        sorts = HOST_SORTS if self.host_processes else SORTS
        sort_by = sort_shown(self.process_query, self.host_processes)[0]
        following = sorts[(sorts.index(sort_by) + 1) % len(sorts)] if sort_by in sorts else sorts[0]
        self.sort_processes(following, following in NUMERIC_FIRST_DESCENDING)
        self.post_message(self.Changed())

    def action_reverse_sort(self) -> None:
        sort_by, reverse = sort_shown(self.process_query, self.host_processes)
        self.sort_processes(sort_by, not reverse)
        self.post_message(self.Changed())

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        """A click on a process table header sorts by it (a second click reverses), kept like the s key's sort."""
        label = str(event.column_key.value)
        sort_by, sort_reverse = sort_shown(self.process_query, self.host_processes)
        reverse = not sort_reverse if label == sort_by else label in NUMERIC_FIRST_DESCENDING
        self.sort_processes(label, reverse)
        self.post_message(self.Changed())

    def sort_processes(self, sort: str, reverse: bool) -> None:
        self.process_query.sort_by, self.process_query.sort_reverse = sort, reverse
        if self.processes is not None:
            self.processes.requery(sort_changed=True)

    def apply_settings(self, settings: MonitorSettings) -> None:
        """Timebase, graphs and sort as saved (unknown values keep the defaults)."""
        fixed = settings.timebase_fixed and settings.timebase_s in TIMEBASES_S
        span = settings.timebase_s if fixed else self.panel.view.span_s
        metrics = GRAPHS[1] if settings.graph == "power" else GRAPHS[0]
        self.panel.view = replace(self.panel.view, span_s=span, metrics=metrics, fixed=fixed)
        if settings.sort_by in SORTS:
            self.sort_processes(settings.sort_by, settings.sort_reverse)

    def settings(self, base: MonitorSettings) -> MonitorSettings:
        """``base`` with this screen's timebase, graphs and sort."""
        return replace(
            base,
            timebase_s=self.panel.view.span_s,
            timebase_fixed=self.panel.view.fixed,
            graph="power" if self.panel.view.metrics == GRAPHS[1] else "util",
            sort_by=self.process_query.sort_by,
            sort_reverse=self.process_query.sort_reverse,
        )

    async def action_filter(self) -> None:
        if not self.filter_input.is_attached:
            await self.mount(self.filter_input, after=self.panel)
        self.filter_input.display = True
        self.set_focus(self.filter_input)  # now, not later: the keys typed right after / are the filter's

    def on_input_changed(self, event: Input.Changed) -> None:
        self.process_query.filter_text = event.value
        if self.processes is not None:
            self.processes.requery(sort_changed=False)

    def on_input_submitted(self, _: Input.Submitted) -> None:
        self.filter_input.display = bool(self.filter_input.value)
        self.focus_table()

    def key_escape(self) -> None:
        if self.filter_input.has_focus or self.filter_input.value:
            self.filter_input.value = ""
            self.filter_input.display = False
            self.focus_table()

    def focus_table(self) -> None:
        """The keys go back to the table at once (before it exists, no GPU sample yet: to the screen)."""
        self.set_focus(self.processes)

    def action_signal(self, name: str) -> None:
        """Ask, then send SIGTERM or SIGKILL to the selected process, if it is the user's own."""
        proc = self.processes.selected if self.processes is not None else None
        if proc is None:
            self.notify("select a process first (arrow keys in the table)")
            return
        if self.replaying:
            self.notify("a replay: its processes are not on this machine, nothing to signal", severity="warning")
            return
        # loaded at the first signal: the first frame does not need psutil or the dialog (BENCHMARKS.md)
        from rocmtui.gpu.kill import refusal, send
        from rocmtui.ui.screens.signal_confirm import SignalConfirm

        reason = refusal(proc)
        if reason is not None:
            self.notify(reason, severity="warning", markup=False)
            return

        def answered(yes: bool | None) -> None:
            if yes:
                self.notify(send(proc, name), markup=False)

        self.app.push_screen(SignalConfirm(proc, name), answered)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``m`` (back to the curves) only exists when the monitor was opened from training; ``[`` and ``]``
        only with more than one GPU; ``k`` and ``K`` not at all under ``--readonly``."""
        if action == "signal":
            return not self.readonly
        if action == "back_to_train":
            return self.in_train
        if action == "select_gpu":
            return self.last is not None and len(self.last.gpus) > 1
        if action == "why_no_gpu":
            return self.last is not None and not self.last.gpus
        return True

    def action_why_no_gpu(self) -> None:
        """Why each GPU backend is unavailable, in a dialog."""
        from rocmtui.ui.screens.help import HelpScreen
        from rocmtui.ui.widgets.gpu_panel import no_gpu_reasons

        if self.last is not None:
            self.app.push_screen(HelpScreen("No GPU found: why each backend is unavailable", no_gpu_reasons(self.last)))

    def action_select_gpu(self, step: int) -> None:
        """Graph the next or previous GPU (shown when the cards are one line each)."""
        self.panel.select(step)

    def action_back_to_train(self) -> None:
        self.app.pop_screen()

    def action_timebase(self) -> None:
        """Step through auto (the timebase grows with the history), then 1 min, 10 min, 1 h and 24 h fixed."""
        view, spans = self.panel.view, TIMEBASES_S
        if not view.fixed:
            following = replace(view, span_s=spans[0], fixed=True)
        elif view.span_s == spans[-1] or view.span_s not in spans:
            following = replace(view, fixed=False)
        else:
            following = replace(view, span_s=spans[spans.index(view.span_s) + 1])
        self.panel.set_view(following)
        self.show_status()
        self.post_message(self.Changed())

    def action_graph(self) -> None:
        """Graph utilisation and VRAM, or power and temperature."""
        metrics = self.panel.view.metrics
        following = GRAPHS[(GRAPHS.index(metrics) + 1) % len(GRAPHS)] if metrics in GRAPHS else GRAPHS[0]
        self.panel.set_view(replace(self.panel.view, metrics=following))
        self.post_message(self.Changed())

    def on_resize(self) -> None:
        self.relayout()

    def relayout(self) -> None:
        gpus = len(self.last.gpus) if self.last else 0
        compact, columns = layout_for(self.size.width, self.size.height, gpus)
        self.set_class(compact, "-compact")
        self.panel.set_compact(compact)
        if gpus:
            self.panel.host.set_compact(True)  # the GPUs get the room; the host keeps one line
        self.panel.cards.styles.grid_size_columns = 1 if compact else columns
        rows = math.ceil(max(1, gpus) / columns)
        available = self.size.height - 2  # status line and footer
        if compact or not gpus:
            self.panel.styles.height = "auto"
            self.panel.cards.styles.height = "auto"
            spare = available - gpus - 1 - COMPACT_PROCESS_ROWS  # one line per GPU and the host's
            self.panel.set_focus_rows(min(spare, FOCUS_ROWS[1]) if gpus and spare >= FOCUS_ROWS[0] else 0)
        else:
            processes = max(PROCESS_ROWS, min(available // 3, available - rows * CARD_HEIGHT - 1))
            self.panel.styles.height = max(0, available - processes)
            self.panel.cards.styles.height = "1fr"
            self.panel.cards.styles.grid_size_rows = rows
            self.panel.set_focus_rows(0)

    def show_samples(self, sample_set: SampleSet, history: Sequence[SampleSet]) -> None:
        relayout = self.last is None or len(self.last.gpus) != len(sample_set.gpus)
        self.last = sample_set
        if relayout:
            self.refresh_bindings()  # the GPU keys come and go with the number of GPUs
        if self.panel.view.interval_s != self.interval_s:  # gaps in the graphs are judged by the interval
            self.panel.view = replace(self.panel.view, interval_s=self.interval_s)
        self.panel.show(sample_set, history)
        listed = sample_set.processes if sample_set.gpus else sample_set.host_processes
        if (sample_set.gpus or listed) and self.processes is None:
            from rocmtui.ui.widgets.process_table import ProcessTable

            self.processes = ProcessTable(self.process_query, id="processes")
            self.mount(self.processes, after=self.filter_input if self.filter_input.is_attached else self.panel)
            if self.focused is None:
                self.processes.focus()
        if self.processes is not None:
            self.processes.display = bool(sample_set.gpus or listed)
            self.processes.show(listed, sample_set.timestamp, host=not sample_set.gpus)
        self.show_status()
        if relayout:
            self.relayout()

    def show_status(self) -> None:
        gpus = len(self.last.gpus) if self.last else 0
        backend = self.last.backend if self.last else "…"
        plural = "s" if gpus != 1 else ""
        view = self.panel.shown_view()
        history = timebase_label(view.span_s) + ("" if view.fixed else " auto")
        text = f"rocmtui monitor · {backend} · {gpus} GPU{plural} · {self.pace()} · history {history}"
        if text != self.status_text:  # an update re-lays out the screen: only when the words change
            self.status_text = text
            self.status.update(safe_text(text))

    def pace(self) -> str:
        """``every 0.5 s`` live; a recording says so, and what times it covers."""
        if self.recorded_span is None:
            return f"every {self.interval_s:.3g} s"
        span = self.recorded_span()
        return "a recording" if span is None else recording_words(*span)
