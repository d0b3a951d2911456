"""One GPU in the monitor: its readout above a history graph of two of its readings at a chosen timebase."""

from __future__ import annotations

import math
from functools import partial

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.markup import escape

from rocmtui.gpu.history import GpuHistory, age_label, timebase_label
from rocmtui.gpu.sample import GpuSample
from rocmtui.ui.widgets.gpu_card import GpuReadout
from rocmtui.ui.widgets.graph_view import GRAPHS, GraphView
from rocmtui.ui.widgets.history_graph import HistoryGraph, Track

__all__ = ["GRAPHS", "GpuGraphCard", "GraphView", "gpu_tracks", "time_labels"]
NAMES = {"util": "util", "vram": "VRAM", "power": "power", "temp": "temp"}
GIB = 1024**3


def scale_of(metric: str, gpu: GpuSample) -> float:
    """The top of a reading's axis: the card's own limit where it has one."""
    if metric == "util":
        return 100.0
    if metric == "vram":
        return float(gpu.memory_total_bytes or GIB)
    if metric == "power":
        return gpu.power_cap_w or max(100.0, 1.25 * (gpu.power_w or 0.0))
    return gpu.temp_emergency_c or gpu.temp_crit_c or 100.0


def label_of(metric: str, value: float) -> str:
    """An axis label of at most 5 cells: ``100%``, ``141G``, ``700W``, ``95°C``."""
    if metric == "util":
        return f"{value:.0f}%"
    if metric == "vram":
        gib = value / GIB
        return f"{gib:.0f}G" if gib >= 10 or gib == 0 else f"{gib:.1f}G"
    if metric == "power":
        return f"{value:.0f}W"
    return f"{value:.0f}°C"


def gpu_tracks(history: GpuHistory, gpu: GpuSample, view: GraphView, points: int) -> list[Track]:
    """The tracks of one GPU's graph: ``points`` columns of each reading over the timebase up to now, from
    the left edge while the history is younger than the timebase."""
    tracks: list[Track] = []
    end_t = history.latest_t or gpu.timestamp
    start_t = history.first_t if history.filling(view.span_s) else None
    max_gap = math.ceil(2 * view.interval_s / (view.span_s / points)) if points else 0
    for metric in view.metrics:
        series = history.get(gpu.index, metric)
        values = series.columns(view.span_s, end_t, points, max_gap, start_t) if series and points else []
        unit = GIB if metric == "vram" else 1.0
        tracks.append(Track(NAMES[metric], values, scale_of(metric, gpu), partial(label_of, metric), unit))
    return tracks


def time_labels(history: GpuHistory, view: GraphView) -> tuple[str, str]:
    """The time axis's ends: ``-10m`` and ``now`` once the timebase is full; while it fills, how far back
    the left edge is and the timebase the graph is filling (``-42s`` and ``window 1m``)."""
    if history.filling(view.span_s):
        return f"-{age_label(history.age())}", f"window {timebase_label(view.span_s)}"
    return f"-{timebase_label(view.span_s)}", "now"


class GpuGraphCard(Vertical):
    """A bordered card: the GPU's numbers, then its history graph (hidden when compact)."""

    def __init__(self, index: int) -> None:
        super().__init__(classes="gpu-card -graphs")
        self.index = index
        self.readout = GpuReadout()
        self.graph = HistoryGraph(classes="gpu-graph")

    def compose(self) -> ComposeResult:
        yield self.readout
        yield self.graph

    def set_compact(self, compact: bool) -> None:
        """One line (no border, no graph) for small terminals."""
        self.set_class(compact, "-compact")
        self.readout.set_class(compact, "-compact")
        self.readout.refresh(layout=True)

    def show_graph(self, gpu: GpuSample, history: GpuHistory, view: GraphView) -> None:
        """Attributes down: the newest reading, and the store the graph draws from."""
        title = f"GPU {gpu.index} · {gpu.name}"
        if escape(title) != self.border_title:
            self.border_title = escape(title)
        self.set_class(gpu.error is not None, "-error")
        self.readout.set_reading(gpu)
        if not self.has_class("-compact"):
            self.graph.show(lambda points: gpu_tracks(history, gpu, view, points), time_labels(history, view))
