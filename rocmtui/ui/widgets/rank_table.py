"""The ranks of a data-parallel run, a line each: its GPU, step and speed; a straggler or a failure stands out.

It reads the run folder's per-rank streams (``ranks/rank-N.jsonl``) when the screen paints a frame, and
names each rank's GPU by matching the UUID or PCI bus id the rank reported against the GPU samples,
never by index: ``CUDA_VISIBLE_DEVICES`` or ``ROCR_VISIBLE_DEVICES`` renumber the GPUs a rank sees.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from rich.text import Text
from textual.widgets import Static

from rocmtui.base.text import plain
from rocmtui.gpu.sample import GpuSample
from rocmtui.run.rank_streams import RankStarted, RankTail, RankView, stragglers

SLOW = "bold yellow"
FAILED = "bold red"
"""The log panel's warning and error colours."""
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


def rank_lines(views: Sequence[RankView], gpus: Sequence[GpuSample]) -> Text:
    """One line per rank: ``rank 1  GPU 1  step 1,240  5,120 img/s``, with a straggler or a failure marked."""
    slow = stragglers(list(views))
    out = Text(no_wrap=True, overflow="ellipsis")
    for n, view in enumerate(sorted(views, key=lambda v: v.rank)):
        if n:
            out.append("\n")
        out.append(f"rank {view.rank:<2} ", style="bold")
        out.append(f"{_where(view, gpus):<8} ")
        progress = view.progress
        if view.failed is not None:
            out.append(f"failed: {plain(view.failed.message)}", style=FAILED)  # read from the rank's file
        elif progress is None:
            out.append("starting", style="dim")
        else:
            out.append(f"step {progress.step:>7,}  ")
            speed = (
                f"{progress.images_per_s:>9,.0f} img/s"
                if progress.images_per_s
                else f"{progress.steps_per_s:>7,.1f} it/s"
            )
            out.append(speed, style=SLOW if view.rank in slow else "")
            if view.rank in slow:
                out.append("  slow", style=SLOW)
    return out


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
    RankTable { height: auto; max-height: 9; border-top: solid $primary; padding: 0 1; display: none; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.border_title = "Ranks"
        self._tail: RankTail | None = None
        self._gpus: Sequence[GpuSample] = ()
        self._drawn = False

    def follow(self, run_dir: Path) -> None:
        """Start reading the ranks of the run in ``run_dir`` (a run of several ranks has begun)."""
        if self._tail is not None:
            self._tail.close()
        self._tail = RankTail(run_dir)
        self.display = True
        self.refresh_ranks()

    def set_gpus(self, gpus: Sequence[GpuSample]) -> None:
        """The newest GPU samples, to name each rank's GPU (drawn with the next change)."""
        if [g.uuid for g in gpus] != [g.uuid for g in self._gpus]:
            self._drawn = False
        self._gpus = gpus

    def refresh_ranks(self) -> None:
        if self._tail is None:
            return
        if self._tail.poll() or not self._drawn:
            self.update(rank_lines(list(self._tail.views.values()), self._gpus))
            self._drawn = True

    def on_unmount(self) -> None:
        if self._tail is not None:
            self._tail.close()
