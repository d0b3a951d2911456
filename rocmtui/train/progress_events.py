"""The events a training sends as it goes: its start, its steps (the loop's one sync), its epochs.

Sync points: GPU values are read (``.tolist()``/``.item()``) only when the steps are flushed (at most every
``emit_interval_s``), at epoch ends, and when a checkpoint is taken.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from rocmtui.base.clock import RunClock
from rocmtui.config import TrainConfig
from rocmtui.events import Emit, EpochCompleted, LogMessage, RunStarted, StepsCompleted
from rocmtui.run.rank_place import started_here
from rocmtui.run.rank_streams import RankProgress, RankStarted, RankWriter
from rocmtui.train.data import DataSource
from rocmtui.train.device import describe_device
from rocmtui.train.distributed import gpu_identity
from rocmtui.train.engine import Engine
from rocmtui.train.evaluate import EvalResult
from rocmtui.train.failures import NonFiniteLoss
from rocmtui.train.learning_rates import lr_at
from rocmtui.train.state import Progress


def send_started(
    send: Emit, engine: Engine, progress: Progress, *, source: DataSource, run_dir: Path, rank_log: RankWriter | None
) -> None:
    """RunStarted (and a rank's RankStarted), the data's notice, and where a resumed run picks up."""
    cfg, device, ranks = engine.config, engine.device, engine.ranks
    name, backend = describe_device(device)
    send(
        RunStarted(
            config=cfg,
            run_dir=str(run_dir),
            device=str(device),
            device_name=name,
            backend=backend,
            # a plain str: a TorchVersion would load torch wherever the event is unpickled
            torch_version=str(torch.__version__),
            dataset=cfg.dataset,
            train_size=int(engine.data.train_y.shape[0]),
            test_size=int(engine.data.test_y.shape[0]),
            classes=engine.data.classes,
            steps_per_epoch=engine.batching.steps_per_epoch,
            start_epoch=progress.epoch,
            data_source=source.description,
            notice=source.notice,
            started_at=time.time(),
            world_size=ranks.world,
            best_acc=progress.best_acc if progress.epoch else None,
        )
    )
    if rank_log is not None:
        rank_log.write(rank_started(ranks.rank, ranks.world, device, name))
    if source.notice:
        send(LogMessage(source.notice, "warning"))
    few = few_steps_notice(cfg.batch_size, engine.batching.train_count, engine.batching.steps_per_epoch, cfg)
    if few:
        send(LogMessage(few, "warning"))
    if engine.fused.notice:
        send(LogMessage(engine.fused.notice))
    if progress.global_step:
        send(LogMessage(f"Resumed at epoch {progress.epoch + 1}, step {progress.global_step}"))


def rank_started(rank: int, world: int, device: torch.device, device_name: str) -> RankStarted:
    """Where this rank runs: its host, process and GPU, and its node's place in the job as the launcher set it."""
    uuid, bus = gpu_identity(device)
    return started_here(rank, world, str(device), device_name, uuid=uuid, pci=bus)


FEW_STEPS = 10
"""Fewer optimizer steps an epoch than this (batches nearly as large as the data) learn little an epoch: said."""
STEPS_WANTED = 30


def few_steps_notice(batch_size: int, images: int, steps: int, config: TrainConfig) -> str | None:
    """One line when an epoch is only a few steps (``--recipe fast``'s batches of 2,000 on the 1,900-image sample:
    one step an epoch), with what to do; None otherwise, or when the steps were capped on purpose."""
    if steps >= FEW_STEPS or config.max_steps_per_epoch is not None or config.epoch_share < 1.0:
        return None
    suggested = max(16, 2 ** max(0, math.floor(math.log2(max(1, images // STEPS_WANTED)))))
    return (
        f"{steps} step{'s' if steps != 1 else ''} an epoch: batches of {batch_size:,} over {images:,} training "
        f"images learn little per epoch; train on the full dataset (--download or --data-dir), or pass "
        f"--batch-size {suggested} ({math.ceil(images / suggested)} steps an epoch)"
    )


@dataclass(frozen=True)
class EpochFigures:
    """An epoch's training figures over every rank's shard, and its training seconds."""

    loss: float
    acc: float
    images: int
    """Images trained on in this epoch by this (re)start, over every rank."""
    seconds: float
    wall: float = 0.0
    """time.time() when its last step had run."""
    lr: float = 0.0
    """The learning rate of its last step."""
    elapsed_s: float = 0.0
    """The run's clock at its end."""


class Reporter:
    """Sends the steps since the last flush and each epoch's figures, timed by the run's clock."""

    def __init__(
        self, send: Emit, engine: Engine, progress: Progress, clock: RunClock, rank_log: RankWriter | None
    ) -> None:
        self.send, self.engine, self.progress, self.clock, self.rank_log = send, engine, progress, clock, rank_log
        self.last_s = clock.now()
        self.last_images = progress.images

    def due(self) -> bool:
        """Whether ``emit_interval_s`` has passed since the last flush."""
        return self.clock.now() - self.last_s >= self.engine.config.emit_interval_s

    def mark(self) -> None:
        """Time the next rate from now (after a pause, a test pass)."""
        self.last_s = self.clock.now()

    def flush(self) -> None:
        """Emit the steps since the last flush: the one sync of the step loop; NonFiniteLoss at a bad loss."""
        steps = self.collect()
        if steps is not None:
            self.send(steps)

    def collect(self) -> StepsCompleted | None:
        """The steps since the last flush, drained (the sync) into the event ``flush`` sends, or None when there
        were none; NonFiniteLoss at a bad loss. A rank's progress is written at once."""
        engine, p = self.engine, self.progress
        count = engine.stats.count
        if count == 0:
            return None
        losses = engine.stats.drain()
        first = p.global_step - count + 1
        for offset, value in enumerate(losses):
            if not math.isfinite(value):
                raise NonFiniteLoss(first + offset)
        now = self.clock.now()
        images = p.images - self.last_images
        seconds = now - self.last_s
        rate = images / seconds if seconds > 0 else 0.0
        self.last_s, self.last_images = now, p.images
        ranks = engine.ranks
        waited = engine.waits.take()
        if self.rank_log is not None:
            step_s = seconds / count if seconds > 0 else 0.0
            busy_s = max(step_s - waited / count, 1e-9) if waited else 0.0
            self.rank_log.write(
                RankProgress(
                    ranks.rank,
                    p.epoch,
                    p.global_step,
                    rate / ranks.world,
                    now,
                    step_s=step_s,
                    busy_s=busy_s,
                    wall=time.time(),
                )
            )
        return StepsCompleted(
            epoch=p.epoch,
            step=p.global_step,
            epoch_step=p.epoch_step,
            steps_per_epoch=engine.batching.steps_per_epoch,
            losses=tuple(losses),
            images_per_s=rate,
            lr=self.lr(),
            elapsed_s=now,
            wall=time.time(),
        )

    def lr(self) -> float:
        """The learning rate of the last step taken."""
        return lr_at(self.engine.config, max(self.progress.global_step - 1, 0), self.engine.total_steps)

    def epoch_completed(self, figures: EpochFigures, result: EvalResult, eval_s: float, is_best: bool) -> None:
        """EpochCompleted for the epoch just ended (``progress`` already counts it)."""
        self.send(
            EpochCompleted(
                epoch=self.progress.epoch - 1,
                epochs=self.engine.config.epochs,
                train_loss=figures.loss,
                train_acc=figures.acc,
                test_loss=result.loss,
                test_acc=result.acc,
                lr=figures.lr,
                seconds=figures.seconds,
                images_per_s=(figures.images / figures.seconds) if figures.seconds > 0 else 0.0,
                is_best=is_best,
                eval_s=eval_s,
                elapsed_s=figures.elapsed_s,
                wall=figures.wall,
            )
        )
