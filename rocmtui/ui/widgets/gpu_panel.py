"""The GPU panel shared by the training screen and ``rocmtui monitor``: one card per GPU, the host,
and a plain "No GPU found" note with each backend's reason when there is no GPU to show."""

from __future__ import annotations

from collections.abc import Sequence

from textual.app import ComposeResult
from textual.containers import Container, Vertical
from textual.widgets import Static

from rocmtui.gpu.history import GpuHistory
from rocmtui.gpu.sample import BackendStatus, SampleSet
from rocmtui.ui.widgets.gpu_card import GpuCard
from rocmtui.ui.widgets.gpu_graph_card import GpuGraphCard, GraphView
from rocmtui.ui.widgets.host_card import HostCard

HISTORY_WINDOW = 300
"""Samples looked at for the history bars (wider than any card)."""


def no_gpu_text(sample_set: SampleSet) -> str:
    """The note shown without a GPU: what was tried and why each backend is unavailable."""
    lines = ["No GPU found: showing the host's CPU and RAM."]
    for status in sample_set.statuses:
        if not status.available:
            lines.append(f"  {status.name}: {status.reason or 'unavailable'}")
    return "\n".join(lines)


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

    def __init__(self, *, id: str | None = None, graphs: bool = False) -> None:
        super().__init__(id=id, classes="gpu-panel")
        self.graphs = graphs
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

    def compose(self) -> ComposeResult:
        yield self.note
        yield self.cards
        yield self.host

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

    def show_graphs(self) -> None:
        if self.last is None:
            return
        for card, gpu in zip(self.card_list, self.last.gpus, strict=False):
            if isinstance(card, GpuGraphCard):
                card.show_graph(gpu, self.store, self.view)

    def show(self, sample_set: SampleSet, history: Sequence[SampleSet]) -> None:
        """Attributes down: hand each card its sample and its slice of history."""
        self.last = sample_set
        if self.graphs:
            self.record(sample_set, history)
        has_gpus = bool(sample_set.gpus)
        self.set_class(not has_gpus, "-no-gpu")
        self.note.display = not has_gpus
        self.cards.display = has_gpus
        if not has_gpus and sample_set.statuses != self.statuses:
            self.statuses = sample_set.statuses
            self.note.update(no_gpu_text(sample_set))
        indexes = tuple(gpu.index for gpu in sample_set.gpus)
        if indexes != self.gpu_indexes:
            self._rebuild_cards(indexes)
        if self.graphs:
            self.show_graphs()
        else:
            for card, gpu in zip(self.card_list, sample_set.gpus, strict=False):
                if isinstance(card, GpuCard):
                    card.show(gpu, util_history(history, gpu.index))
        cpu = [s.host.cpu_pct for s in history[-HISTORY_WINDOW:]]
        self.host.show(sample_set.host, cpu)

    def _rebuild_cards(self, indexes: tuple[int, ...]) -> None:
        self.gpu_indexes = indexes
        self.cards.remove_children()
        self.card_list = [GpuGraphCard(index) if self.graphs else GpuCard(index) for index in indexes]
        for card in self.card_list:
            card.set_compact(self.compact)
        self.cards.mount_all(self.card_list)
        self.set_class(len(indexes) > 1, "-multi")
