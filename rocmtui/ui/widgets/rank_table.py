"""The ranks of a data-parallel run, a line each: its GPU, step and speed; a straggler or a failure stands out.

It reads the run folder's per-rank streams (``ranks/rank-N.jsonl``) when the screen paints a frame, and
names each rank's GPU by matching the UUID or PCI bus id the rank reported against the GPU samples,
never by index: ``CUDA_VISIBLE_DEVICES`` or ``ROCR_VISIBLE_DEVICES`` renumber the GPUs a rank sees.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Sequence
from pathlib import Path

from rich.text import Text
from textual.widgets import Static

from rocmtui.base.text import plain
from rocmtui.gpu.sample import GpuSample
from rocmtui.run.rank_health import HealthRules, rank_rows, table_lines
from rocmtui.run.rank_streams import RankStarted, RankTail, RankView

SLOW = "bold yellow"
FAILED = "bold red"
"""The log panel's warning and error colours."""
RULES = HealthRules()
_PCI = re.compile(r"(?:([0-9a-fA-F]+):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-7])")


def _uuid_key(uuid: str | None) -> str | None:
    if not uuid:
        return None
    text = uuid.strip().lower()
    return text.removeprefix("gpu-") or None


def _pci_key(bus_id: str | None) -> tuple[int, int, int, int] | None:
    """``00000000:1B:00.0`` (NVML), ``0000:1b:00.0`` (sysfs, amd-smi) and ``1b:00.0`` are the same device."""
    match = _PCI.fullmatch(bus_id.strip()) if bus_id else None
    if match is None:
        return None
    domain, bus, device, function = match.groups()
    return int(domain or "0", 16), int(bus, 16), int(device, 16), int(function)


def gpu_of(started: RankStarted, gpus: Sequence[GpuSample]) -> GpuSample | None:
    """The sampled GPU a rank trains on: the same UUID, else the same PCI address; None when neither matches."""
    uuid, pci = _uuid_key(started.uuid), _pci_key(started.pci_bus_id)
    for gpu in gpus:
        if uuid is not None and _uuid_key(gpu.uuid) == uuid:
            return gpu
    for gpu in gpus:
        if pci is not None and _pci_key(gpu.pci_bus_id) == pci:
            return gpu
    return None


def rank_lines(
    views: Sequence[RankView], gpus: Sequence[GpuSample], *, now: float, live: bool, rules: HealthRules = RULES
) -> Text:
    """The job at a glance, then one line per rank grouped by node (a node's host heading its ranks when there are
    several nodes): GPU, step, step time median/worst, speed, heartbeat age, a strip of recent step times, and the
    straggler, stalled or failed rank marked."""
    rows = rank_rows(views, now, rules, live=live)
    several_nodes = len({r.node for r in rows}) > 1
    out = Text(no_wrap=True, overflow="ellipsis")
    lines = table_lines(views, rows, rules.window, lambda view: _where(view, gpus), heads=several_nodes)
    for n, (kind, line) in enumerate(lines):
        out.append(("\n" if n else "") + line, style=_STYLES.get(kind, ""))
    return out


_STYLES = {
    "summary": "bold",
    "header": "dim",
    "node": "dim",
    "straggler": SLOW,
    "stalled": FAILED,
    "failed": FAILED,
    "starting": "dim",
}
REDRAW_S = 1.0
"""How often the table is drawn again with nothing new read: the heartbeat ages move on, a silent rank shows."""


def _where(view: RankView, gpus: Sequence[GpuSample]) -> str:
    started = view.started
    if started is None:
        return ""
    if not started.device.startswith("cuda"):
        return plain(started.device, limit=20)
    gpu = gpu_of(started, gpus)
    return f"GPU {gpu.index}" if gpu is not None else plain(started.device, limit=20)


class RankTable(Static):
    """Shown once a run reports several ranks; ``refresh_ranks`` reads their new lines."""

    DEFAULT_CSS = """
    RankTable {
        height: auto; max-height: 9; border-top: solid $primary; padding: 0 1; display: none;
        text-wrap: nowrap; text-overflow: ellipsis;
    }
    """

    def __init__(self, *, id: str | None = None, rules: HealthRules = RULES) -> None:
        super().__init__(id=id)
        self.border_title = "Ranks"
        self.rules = rules
        self.live = True
        """Whether the run still trains: a finished run's ranks are quiet, not stalled."""
        self.more_folders: list[Path] = []
        """The folders of the job's other nodes, where each node keeps its own (``watch RUN NODE_FOLDER...``)."""
        self._tail: RankTail | None = None
        self._gpus: Sequence[GpuSample] = ()
        self._drawn_at = -math.inf

    def follow(self, run_dir: Path) -> None:
        """Start reading the ranks of the run in ``run_dir`` (a run of several ranks has begun)."""
        if self._tail is not None:
            self._tail.close()
        self._tail = RankTail(run_dir, *self.more_folders)
        self.display = True
        self.refresh_ranks()

    def set_gpus(self, gpus: Sequence[GpuSample]) -> None:
        """The newest GPU samples, to name each rank's GPU (drawn with the next change)."""
        if [g.uuid for g in gpus] != [g.uuid for g in self._gpus]:
            self._drawn_at = -math.inf
        self._gpus = gpus

    def set_live(self, live: bool) -> None:
        if live != self.live:
            self.live, self._drawn_at = live, -math.inf
            self.refresh_ranks()

    def refresh_ranks(self) -> None:
        if self._tail is None:
            return
        now = time.monotonic()
        if self._tail.poll() or now - self._drawn_at >= REDRAW_S:
            views = list(self._tail.views.values())
            self.update(rank_lines(views, self._gpus, now=time.time(), live=self.live, rules=self.rules))
            self._drawn_at = now

    def on_unmount(self) -> None:
        if self._tail is not None:
            self._tail.close()
