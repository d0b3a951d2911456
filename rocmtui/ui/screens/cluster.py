"""The cluster screen (``rocmtui monitor --hosts``/``--prometheus``): a summary line, then every GPU grouped by
host, sorted and filtered; Enter opens a host in the monitor's own GPU panel."""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Input, Static

from rocmtui.gpu.cluster.cluster_summary import HostFigures, totals, totals_line
from rocmtui.gpu.cluster.reading import ClusterRound
from rocmtui.gpu.sample import GpuSample
from rocmtui.ui.cropped_update import crop_updates
from rocmtui.ui.look.safe_text import safe_text
from rocmtui.ui.screens.monitor import MonitorScreen
from rocmtui.ui.state.cluster_rows import FILTERS, HEADER, SORTS, ClusterQuery, GroupMemo, UtilHistory, lines
from rocmtui.ui.widgets.cluster_list import ClusterList
from rocmtui.ui.widgets.key_bar import KeyBar


class ClusterScreen(Screen[None]):
    """Shows each round the app hands it; keys sort, filter and open a host."""

    DEFAULT_CSS = """
    ClusterScreen #cluster-summary { height: 1; padding: 0 1; background: $boost; text-style: bold; }
    ClusterScreen #cluster-header { height: 1; color: $text-muted; text-style: bold; }
    ClusterScreen #cluster-filter { height: 1; border: none; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("plus,equals_sign", "app.change_interval(False)", "Interval", key_display="+/-"),
        Binding("minus", "app.change_interval(True)", "Faster", show=False, key_display="-"),
        Binding("s", "sort", "Sort"),
        Binding("r", "reverse_sort", "Reverse", show=False),
        Binding("i", "idle", "Idle"),
        Binding("slash", "find", "Find", key_display="/"),
        Binding("c", "app.next_theme", "Colours", show=False),
    ]
    AUTO_FOCUS = "#cluster-list"

    def __init__(self, interval_s: float) -> None:
        super().__init__(id="cluster")
        crop_updates(self)
        self.interval_s = interval_s
        self.query_state = ClusterQuery()
        self.history = UtilHistory()
        self.last: ClusterRound | None = None
        self._summary = ""
        self._groups = GroupMemo()
        self._figures: dict[str, tuple[tuple[GpuSample, ...], HostFigures]] = {}
        """What the last round's lines and totals were made of, by host (see ``lines`` and ``totals``)."""
        self.summary = Static("rocmtui cluster · waiting for the first round…", id="cluster-summary")
        self.list = ClusterList(id="cluster-list")
        self.find_input = Input(
            placeholder="find: host or GPU name (enter keeps it, escape clears)", id="cluster-filter"
        )

    def compose(self) -> ComposeResult:
        yield self.summary
        yield Static(Text(HEADER), id="cluster-header")
        yield self.list
        yield KeyBar()

    def show_round(self, cluster: ClusterRound) -> None:
        """A new round, as read: history, summary (numbers) and lines (which clean what they show when drawn)."""
        self.history.add(cluster)
        self.last = cluster
        self.redraw()

    def redraw(self) -> None:
        if self.last is None:
            return
        head = f"{totals_line(totals(self.last, self._figures))} · every {self.interval_s:.3g} s"
        summary = f"{head} · {self.query_state.describe()}"
        if summary != self._summary:  # the same line (most rounds when exporters sample every 30 s): not drawn again
            self._summary = summary
            self.summary.update(safe_text(summary), layout=False)  # one line high whatever it says: no layout pass
        self.list.set_lines(lines(self.last, self.query_state, self.history, self._groups))

    def action_sort(self) -> None:
        position = SORTS.index(self.query_state.sort_by)
        self.query_state = replace(self.query_state, sort_by=SORTS[(position + 1) % len(SORTS)], reverse=False)
        self.redraw()

    def action_reverse_sort(self) -> None:
        self.query_state = replace(self.query_state, reverse=not self.query_state.reverse)
        self.redraw()

    def action_idle(self) -> None:
        position = FILTERS.index(self.query_state.show)
        self.query_state = replace(self.query_state, show=FILTERS[(position + 1) % len(FILTERS)])
        self.redraw()

    async def action_find(self) -> None:
        if not self.find_input.is_attached:
            await self.mount(self.find_input, before=self.list)
        self.find_input.display = True
        self.set_focus(self.find_input)

    def on_input_changed(self, event: Input.Changed) -> None:
        self.query_state = replace(self.query_state, text=event.value)
        self.redraw()

    def on_input_submitted(self, _: Input.Submitted) -> None:
        self.find_input.display = bool(self.find_input.value)
        self.set_focus(self.list)

    def key_escape(self) -> None:
        if self.find_input.has_focus or self.find_input.value:
            self.find_input.value = ""
            self.find_input.display = False
            self.set_focus(self.list)


class HostScreen(MonitorScreen):
    """One host of the cluster in the monitor's own GPU panel; m or escape goes back to the cluster."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("m", "back_to_train", "Cluster")]

    def __init__(self, target: str) -> None:
        super().__init__(in_train=True, readonly=True)
        self.target = target

    def key_escape(self) -> None:
        if self.filter_input.has_focus or self.filter_input.value:
            super().key_escape()
        else:
            self.app.pop_screen()
