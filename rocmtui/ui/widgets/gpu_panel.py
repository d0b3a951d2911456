"""The GPU panel shared by the training screen and ``rocmtui monitor``: one card per GPU, the host,
and a plain "No GPU found" note with each backend's reason when there is no GPU to show.

When the cards are one line each (many GPUs, small terminal), the monitor shows the history graph of one
selected GPU under the lines, so that the graphs are never lost entirely; ``select`` moves the selection.
The card and graph modules are imported with the first GPU sample: the first frame does not draw them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Container, Vertical
from textual.markup import escape
from textual.widgets import Static

from rocmtui.gpu.history import GpuHistory
from rocmtui.gpu.sample import BackendStatus, SampleSet
from rocmtui.ui.look.safe_text import safe_text
from rocmtui.ui.widgets.gpu_strip import NO_SAMPLES
from rocmtui.ui.widgets.graph_view import GraphView
from rocmtui.ui.widgets.host_card import HostCard

if TYPE_CHECKING:
    from rocmtui.ui.widgets.gpu_card import GpuCard
    from rocmtui.ui.widgets.gpu_graph_card import GpuGraphCard
    from rocmtui.ui.widgets.history_graph import HistoryGraph

HISTORY_WINDOW = 300
"""Samples looked at for the history bars (wider than any card)."""


def no_gpu_text(sample_set: SampleSet, reasons_key: str | None = None) -> str:
    """The note shown without a GPU: what was tried, and why each backend is unavailable (or, with
    ``reasons_key``, one line naming the key that shows why)."""
    tried = ", ".join(status.name for status in sample_set.statuses if not status.available)
    if reasons_key is not None:
        found = f"No GPU found ({tried})" if tried else "No GPU found"
        return f"{found}: showing the host's CPU and RAM · {reasons_key}: why"
    lines = ["No GPU found: showing the host's CPU and RAM."]
    for status in sample_set.statuses:
        if not status.available:
            lines.append(f"  {status.name}: {status.reason or 'unavailable'}")
    return "\n".join(lines)


def no_gpu_reasons(sample_set: SampleSet) -> tuple[tuple[str, str], ...]:
    """Each backend tried and why it is unavailable."""
    return tuple((s.name, s.reason or "unavailable") for s in sample_set.statuses if not s.available)


def util_history(history: Sequence[SampleSet], gpu_index: int) -> list[float | None]:
    """Utilization of one GPU (by its index) across the recent SampleSets."""
    values: list[float | None] = []
    for sample_set in history[-HISTORY_WINDOW:]:
        value = None
        for gpu in sample_set.gpus:
            if gpu.index == gpu_index:
                value = gpu.utilization_pct
                break
        values.append(value)
    return values


class GpuPanel(Vertical):
    """Cards for every GPU plus the host; ``show`` updates them from the newest SampleSet.

    With ``graphs`` (the monitor) each card draws a history graph from the panel's bucket store at the
    timebase of ``view``; without (the training screen) a strip of recent utilisation bars.
    """

    DEFAULT_CSS = """
    GpuPanel .gpu-focus-graph { border-top: solid $accent; border-title-color: $text; padding: 0 1; }
    GpuPanel .gpu-card.-compact.-selected { background: $boost; text-style: bold; }
    """

    def __init__(self, *, id: str | None = None, graphs: bool = False, reasons_key: str | None = None) -> None:
        super().__init__(id=id, classes="gpu-panel")
        self.graphs = graphs
        self.reasons_key = reasons_key
        """The key that shows why no GPU was found: the note is then one line that names it."""
        self.store = GpuHistory()
        self.view = GraphView()
        self.last: SampleSet | None = None
        self.note = Static("waiting for the first sample…", classes="no-gpu")
        self.cards = Container(classes="gpu-cards")
        self.host = HostCard()
        self.compact = False
        self.gpu_indexes: tuple[int, ...] = ()
        self.card_list: list[GpuCard | GpuGraphCard] = []
        self.statuses: tuple[BackendStatus, ...] | None = None
        self.selected = 0
        """Position (in card order) of the GPU whose graph is shown when the cards are one line each."""
        self.focus_graph: HistoryGraph | None = None
        """Mounted the first time it is shown."""
        self.focus_rows = 0
        """Rows the monitor gives the selected GPU's graph (0: none)."""

    def say_no_samples(self) -> None:
        """The run ended before any sample came: say so instead of waiting for one."""
        if self.last is None and not self.note.has_class("-ended"):
            self.note.add_class("-ended")
            self.note.update(Text(NO_SAMPLES))

    def compose(self) -> ComposeResult:
        yield self.note  # the cards' row and the host come with the first sample: the first frame shows neither

    def set_focus_rows(self, rows: int) -> None:
        """Show the selected GPU's graph in ``rows`` rows under one-line cards (0 hides it)."""
        self.focus_rows = rows
        shown = rows > 0 and self.graphs and self.compact and bool(self.card_list)
        if shown and self.focus_graph is None:
            from rocmtui.ui.widgets.history_graph import HistoryGraph

            self.focus_graph = HistoryGraph(classes="gpu-focus-graph")
            self.mount(self.focus_graph, before=self.host)
        if self.focus_graph is not None:
            self.focus_graph.display = shown
            if shown:
                self.focus_graph.styles.height = rows
        self._mark_selected()
        self.show_graphs()

    def select(self, step: int) -> None:
        """Select the next (``step`` 1) or previous (-1) GPU, wrapping around."""
        if self.card_list:
            self.selected = (self.selected + step) % len(self.card_list)
            self._mark_selected()
            self.show_graphs()

    def on_click(self, event: events.Click) -> None:
        """A click on a GPU's card or line selects it (its graph shows under one-line cards)."""
        node = event.widget
        while node is not None and node is not self:
            if node in self.card_list:
                self.selected = self.card_list.index(node)
                self._mark_selected()
                self.show_graphs()
                return
            node = node.parent  # type: ignore[assignment]

    def _mark_selected(self) -> None:
        for position, card in enumerate(self.card_list):
            card.set_class(position == self.selected and self.focus_shown, "-selected")

    @property
    def focus_shown(self) -> bool:
        """True while the selected GPU's graph is on screen."""
        return self.focus_graph is not None and bool(self.focus_graph.display)

    def set_compact(self, compact: bool) -> None:
        """One line per GPU and for the host (small terminals)."""
        self.compact = compact
        self.set_class(compact, "-compact")
        for card in self.card_list:
            card.set_compact(compact)
        self.host.set_compact(compact)

    def set_view(self, view: GraphView) -> None:
        """Another timebase or pair of readings: the graphs redraw at once."""
        self.view = view
        self.show_graphs()

    def record(self, sample_set: SampleSet, history: Sequence[SampleSet]) -> None:
        """Add to the store every sample not yet in it (a hidden panel catches up from the source's history)."""
        latest = self.store.latest_t
        for earlier in history:
            if latest is None or earlier.timestamp > latest:
                self.store.add(earlier)
        if self.store.latest_t is None or sample_set.timestamp > self.store.latest_t:
            self.store.add(sample_set)

    def shown_view(self) -> GraphView:
        """The view with the timebase the graphs show now (the history's age picks it unless fixed)."""
        return self.view.shown(self.store.age())

    def show_graphs(self) -> None:
        if self.last is None or not self.graphs:
            return
        from rocmtui.ui.widgets.gpu_graph_card import GpuGraphCard, gpu_tracks, time_labels

        store, view = self.store, self.shown_view()
        for card, gpu in zip(self.card_list, self.last.gpus, strict=False):
            if isinstance(card, GpuGraphCard):
                card.show_graph(gpu, store, view)
        if self.focus_graph is not None and self.focus_shown and self.selected < len(self.last.gpus):
            gpu = self.last.gpus[self.selected]
            title = f"GPU {gpu.index} · {gpu.name}"
            if self.focus_graph.border_title != escape(title):
                self.focus_graph.border_title = escape(title)
            store, view = self.store, self.view
            self.focus_graph.show(lambda points: gpu_tracks(store, gpu, view, points), time_labels(store, view))

    def show(self, sample_set: SampleSet, history: Sequence[SampleSet]) -> None:
        """Attributes down: hand each card its sample and its slice of history."""
        self.last = sample_set
        if not self.host.is_attached:
            self.mount_all([self.cards, self.host])
        if self.graphs:
            self.record(sample_set, history)
        has_gpus = bool(sample_set.gpus)
        self.set_class(not has_gpus, "-no-gpu")
        self.note.display = not has_gpus
        self.cards.display = has_gpus
        if not has_gpus and sample_set.statuses != self.statuses:
            self.statuses = sample_set.statuses
            self.note.update(safe_text(no_gpu_text(sample_set, self.reasons_key), lines=True))
        indexes = tuple(gpu.index for gpu in sample_set.gpus)
        if indexes != self.gpu_indexes:
            self._rebuild_cards(indexes)
        if self.graphs:
            self.show_graphs()
        else:
            from rocmtui.ui.widgets.gpu_card import GpuCard

            for card, gpu in zip(self.card_list, sample_set.gpus, strict=False):
                if isinstance(card, GpuCard):
                    card.show(gpu, util_history(history, gpu.index))
        cpu = [s.host.cpu_pct for s in history[-HISTORY_WINDOW:]]
        self.host.show(sample_set.host, cpu)

    def _rebuild_cards(self, indexes: tuple[int, ...]) -> None:
        self.gpu_indexes = indexes
        self.cards.remove_children()
        from rocmtui.ui.widgets.gpu_card import GpuCard
        from rocmtui.ui.widgets.gpu_graph_card import GpuGraphCard

        self.card_list = [GpuGraphCard(index) if self.graphs else GpuCard(index) for index in indexes]
        for card in self.card_list:
            card.set_compact(self.compact)
        self.cards.mount_all(self.card_list)
        self.set_class(len(indexes) > 1, "-multi")
        self.selected = min(self.selected, max(0, len(indexes) - 1))
        self._mark_selected()
