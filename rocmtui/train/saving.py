"""The checkpoints a training takes: at epoch ends while the next epoch trains, and at once when asked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rocmtui.events import Emit, LogMessage
from rocmtui.train.checkpoints import BEST, LAST, CheckpointWriter, HostCopy
from rocmtui.train.engine import Engine
from rocmtui.train.state import Progress, device_state, snapshot


class Saver:
    """Rank 0 writes the checkpoints (the ranks' models are the same), one save at a time on a thread."""

    def __init__(self, run_dir: Path, leader: bool, send: Emit) -> None:
        self.run_dir, self.leader, self.send = run_dir, leader, send
        self.writer = CheckpointWriter()

    def prepare(self, engine: Engine) -> None:
        """One copy of the state to the host before the run's clock starts: its pinned buffers are then cached,
        where the first epoch end would allocate them (about 8 ms of GPU idle on an H200)."""
        if self.leader and engine.device.type == "cuda":
            HostCopy(device_state(engine)).state()

    def take(self, engine: Engine) -> HostCopy | None:
        """The epoch end's model, optimizer and generators, taken (on rank 0) once its last step is queued and
        before the loop waits for it: the host's share of the copy overlaps the steps the GPU has still to run,
        where after the epoch's test pass the GPU would wait for it (1.8 ms an epoch of fastnet on an H200)."""
        return HostCopy(device_state(engine)) if self.leader else None

    def after_epoch(self, engine: Engine, taken: HostCopy | None, at: dict[str, Any], is_best: bool) -> None:
        """``checkpoint-last.pt`` (with ``checkpoint_every_epoch``) and ``checkpoint-best.pt`` (a new best): the
        state ``taken`` at the epoch's end (None on the other ranks) at the run's position ``at``
        (``state.position``, read before the next epoch drew); copied, serialised and written while the next
        epoch trains."""
        names = [LAST] if engine.config.checkpoint_every_epoch else []
        names += [BEST] if is_best else []
        if names and taken is not None:
            self.writer.submit(taken.completed(at), [self.run_dir / name for name in names])

    def last_now(self, engine: Engine, progress: Progress, elapsed_s: float) -> None:
        """``checkpoint-last.pt`` now, reported once on disk (explicit saves and stops)."""
        if not self.leader:
            return
        path = self.run_dir / LAST
        self.writer.submit(HostCopy(snapshot(engine, progress, elapsed_s)), [path])
        self.writer.wait()
        self.send(LogMessage(f"Checkpoint saved: {path}"))

    def wait(self) -> None:
        """Until the pending save is on disk; its error, if it had one."""
        self.writer.wait()
