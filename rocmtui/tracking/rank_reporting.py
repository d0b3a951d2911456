"""``track()`` in a script of several ranks (torchrun, Lightning or Accelerate DDP): every rank reports.

Rank 0 holds the run folder as a single script does; every rank, rank 0 included, appends its step and
speed to ``ranks/rank-N.jsonl`` in that folder. The ranks learn the folder from ``track(run_dir=...)``,
from ``$ROCMTUI_RUN_DIR``, or from rank 0 through the script's own process group (``track()`` is then a
collective: every rank calls it). Torch is never imported here: the script has loaded it already.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from rocmtui.base.errors import UsageError
from rocmtui.events import RunControl, TrainEvent
from rocmtui.run.rank_place import gpu_ids, rank_place, started_here
from rocmtui.run.rank_streams import BEAT_S, RankProgress, RankWriter
from rocmtui.run.status import read_status

STATUS_EVERY_S = 0.5
"""How often a rank other than 0 reads the run's status, to hear that a viewer stopped the run."""


def place(rank: int | None, world_size: int | None, env: Mapping[str, str] = os.environ) -> tuple[int, int]:
    """(rank, world size): as given, else as the launcher set them (torchrun's ``RANK``/``WORLD_SIZE``, Slurm's
    ``SLURM_PROCID``/``SLURM_NTASKS``), else (0, 1)."""
    found = rank_place(env)
    return (found.rank if rank is None else rank), (found.world if world_size is None else world_size)


def shared_folder(rank: int, folder: Path | None) -> Path:
    """Rank 0's run folder on every rank: rank 0 gives it, the others receive it through the script's process
    group. UsageError for a rank other than 0 with no group to ask (give ``run_dir=`` or ``$ROCMTUI_RUN_DIR``)."""
    dist = sys.modules.get("torch.distributed")
    if dist is None or not dist.is_available() or not dist.is_initialized():
        if folder is not None:
            return folder
        raise UsageError(
            f"rank {rank}: track() needs rank 0's run folder: call it after init_process_group, "
            "or give run_dir= (or set ROCMTUI_RUN_DIR)"
        )
    box = [str(folder) if folder is not None else None]
    dist.broadcast_object_list(box, src=0)
    return Path(str(box[0]))


def _device() -> tuple[str, str, str | None, str | None]:
    """(device, name, UUID, PCI bus id) of the GPU this rank uses, when the script uses one."""
    torch = sys.modules.get("torch")
    cuda = getattr(torch, "cuda", None)
    if cuda is None or not cuda.is_available() or not cuda.is_initialized():
        return "cpu", "", None, None
    index = cuda.current_device()
    props = cuda.get_device_properties(index)
    uuid, pci = gpu_ids(props)
    return f"cuda:{index}", str(props.name), uuid, pci


class RankReporter:
    """One rank's line in ``ranks/``: where it runs, then its step and step time at each of the run's flushes, and
    a heartbeat while it reports nothing else (``RankWriter``)."""

    def __init__(self, run_dir: Path, rank: int, world_size: int) -> None:
        self.rank = rank
        self._writer = RankWriter(run_dir, rank, beat_s=BEAT_S)
        device, name, uuid, pci = _device()
        self._writer.write(started_here(rank, world_size, device, name, uuid=uuid, pci=pci))
        self._last = (time.perf_counter(), 0)

    def progress(self, epoch: int, step: int, elapsed_s: float) -> None:
        now, before = time.perf_counter(), self._last
        steps, seconds = step - before[1], now - before[0]
        rate = steps / seconds if seconds > 0 else 0.0
        self._last = (now, step)
        step_s = seconds / steps if steps > 0 else 0.0
        self._writer.write(
            RankProgress(self.rank, epoch, step, 0.0, elapsed_s, steps_per_s=rate, step_s=step_s, wall=time.time())
        )

    def close(self) -> None:
        self._writer.close()


class RankSink:
    """The sink of a rank other than 0: its events stay in the script (rank 0 reports the run); a stop
    asked by a viewer reaches it through the run's status."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.control = RunControl()
        self._checked = 0.0

    def emit(self, event: TrainEvent) -> None:
        now = time.monotonic()
        if now - self._checked >= STATUS_EVERY_S:
            self._checked = now
            status = read_status(self.run_dir)
            if status is not None and status.state in ("stopping", "stopped"):
                self.control.request_stop()

    def end(self, event: TrainEvent) -> None:
        """Nothing to close: rank 0 ends the run."""
