"""``train(config, emit, control)``: the one training loop behind the TUI, ``--headless`` and ``bench``.

Sync points: the loop reads GPU values (``.tolist()``/``.item()``) only when it emits StepsCompleted
(at most every ``emit_interval_s``), at epoch ends, and when it saves a checkpoint.
"""

from __future__ import annotations

import contextlib
import math
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from rocmtui.config import MonitorConfig, TrainConfig
from rocmtui.errors import CheckpointError, DataError, UsageError, first_line
from rocmtui.events import (
    Emit,
    EpochCompleted,
    FailureKind,
    LogMessage,
    RunControl,
    RunFailed,
    RunFinished,
    RunStarted,
    StepsCompleted,
    TrainEvent,
    event_to_dict,
)
from rocmtui.run.files import is_disk_full, write_json
from rocmtui.run.layout import create_run_dir, run_name
from rocmtui.run.ranks import RankProgress, RankStarted, RankWriter
from rocmtui.run.session import RunSession
from rocmtui.train import fused, models, runs
from rocmtui.train.data import Arrays, DataSource, load_arrays, resolve_source
from rocmtui.train.distributed import (
    SINGLE,
    Ranks,
    agree,
    gpu_identity,
    join_group,
    leave_group,
    rank_device,
    shard,
    sum_all,
)
from rocmtui.train.engine import Engine, build_engine, capture_graph, describe_device, fit_to_device, resolve_device
from rocmtui.train.evaluate import EvalResult, evaluate
from rocmtui.train.gpu_record import GpuRecorder
from rocmtui.train.gpudata import batch_indices, permutation
from rocmtui.train.optim import lr_at, set_lr
from rocmtui.train.resume import prepare_resume
from rocmtui.train.state import Progress, restore, snapshot

SYNC_STEPS_GPU = 10
"""Steps between the ranks' agreements on a GPU (each one syncs the host with the device)."""
PAUSE_POLL_S = 0.2


@dataclass(frozen=True)
class RunSummary:
    """How a run ended: its last event, and the run folder if one was made."""

    event: RunFinished | RunFailed
    run_dir: Path | None

    @property
    def ok(self) -> bool:
        return isinstance(self.event, RunFinished)


class NonFiniteLoss(Exception):
    def __init__(self, step: int) -> None:
        super().__init__(f"the loss became NaN or infinite at step {step}; try a lower --lr")
        self.step = step


class _Clock:
    """Training seconds: wall time minus pauses and test passes."""

    def __init__(self, before_s: float) -> None:
        self.start = time.perf_counter() - before_s
        self.paused_s = 0.0
        self.eval_s = 0.0

    def now(self) -> float:
        return time.perf_counter() - self.start - self.paused_s - self.eval_s

    def evaluated(self, engine: Engine, tta: bool = False) -> tuple[EvalResult, float]:
        """The test pass and its seconds, kept apart from the training time (it ends with a sync: the wall
        time is its own)."""
        start = time.perf_counter()
        result = evaluate(engine, tta)
        seconds = time.perf_counter() - start
        self.eval_s += seconds
        return result, seconds


def train(
    config: TrainConfig,
    emit: Emit,
    control: RunControl,
    *,
    telemetry: MonitorConfig | None = None,
    on_folder: Callable[[Path], None] | None = None,
    ranks: Ranks = SINGLE,
    run_dir: Path | None = None,
) -> RunSummary:
    """Run training to the end, a stop or a failure; never raises for training failures.

    The run folder is held by a RunSession for the whole run: one writer, whole lines, a status with a
    heartbeat and a control channel. ``telemetry``: also sample the GPUs into the folder; ``on_folder``
    hears the folder's path once it is held, before the first event.

    With several ``ranks`` (one process each, started by ``rocmtui.train.ranks_launch``) every rank calls
    this with the same ``run_dir``: rank 0 holds the folder as above; each rank writes its own progress
    to ``ranks/rank-N.jsonl``.
    """
    try:
        plan = prepare_resume(config)
        config, state, resume_path = plan.config, plan.state, plan.checkpoint
        device = resolve_device(config)
        config = fit_to_device(config, device)
        device = rank_device(device, ranks)
        source = resolve_source(config)
        arrays = load_arrays(source)
        plan.check_data(arrays)  # before any folder is made or touched
        run_dir = run_dir or plan.run_dir or new_run_dir(config)
        name = f"{config.dataset} {config.model}"
        session = RunSession(run_dir, control, name=name) if ranks.leader else None
    except Exception as err:  # bad input, a busy folder, a full disk: an event, not an exception
        failed = setup_failure(err)
        emit(failed)
        return RunSummary(failed, None)

    def send(event: TrainEvent) -> None:
        try:
            if session is not None:
                session.emit(event)
        finally:  # the caller hears of the event even when the disk could not take it
            emit(event)

    recorder = GpuRecorder(run_dir, telemetry) if telemetry is not None and ranks.leader else None
    try:
        if on_folder is not None and ranks.leader:
            on_folder(run_dir)
        return _Run(config, device, send, control, run_dir, ranks).run(arrays, source, state, resume_path)
    finally:
        if recorder is not None:
            recorder.close()
        if session is not None:
            session.close()
        if ranks.several:
            leave_group()


def new_run_dir(config: TrainConfig) -> Path:
    """``runs/<YYYYmmdd-HHMMSS>-<dataset>-<model>/``, made atomically (a suffix when the name is taken)."""
    return create_run_dir(config.runs_dir, run_name(config.dataset, config.model))


def setup_failure(err: Exception) -> RunFailed:
    if is_disk_full(err):
        return RunFailed(_disk_full_message(err), "disk")
    return RunFailed(str(err), _usage_kind(err)) if isinstance(err, UsageError) else _error(err)


def _disk_full_message(err: BaseException) -> str:
    where = getattr(err, "filename", None)
    return f"disk full{f' writing {where}' if where else ''}: free some space; everything already written is kept"


class _Run:
    """One run's state between steps; split out so that ``train`` reads as setup, loop, ending."""

    def __init__(  # noqa: PLR0917 - the run's parts, each its own argument
        self, config: TrainConfig, device: torch.device, send: Emit, control: RunControl, run_dir: Path, ranks: Ranks
    ) -> None:
        self.config, self.device, self.send, self.control, self.run_dir = config, device, send, control, run_dir
        self.ranks = ranks
        self.rank_log: RankWriter | None = None
        self.sync_steps = 1 if device.type != "cuda" else SYNC_STEPS_GPU
        self.progress = Progress()
        self.clock = _Clock(0.0)
        self.engine: Engine | None = None
        self.last_emit_s = 0.0
        self.last_emit_images = 0
        self.writer = runs.CheckpointWriter()
        self.per_class: tuple[tuple[str, float], ...] = ()

    def run(
        self, arrays: Arrays, source: DataSource, state: dict[str, Any] | None, resume_path: Path | None
    ) -> RunSummary:
        try:
            return self._run(arrays, source, state, resume_path)
        finally:
            if self.rank_log is not None:
                self.rank_log.close()

    def _run(
        self, arrays: Arrays, source: DataSource, state: dict[str, Any] | None, resume_path: Path | None
    ) -> RunSummary:
        try:
            if self.ranks.several:
                join_group(self.ranks, self.device)
                self.rank_log = RankWriter(self.run_dir, self.ranks.rank)
            engine = self.engine = build_engine(self.config, arrays, self.device, self.ranks)
            if state is not None and resume_path is not None:
                self.progress = restore(engine, state, resume_path)
            if self.config.cuda_graph:
                capture_graph(engine)
            if self.ranks.leader:
                write_json(self.run_dir / "config.json", self.config.to_dict())
            self._started(source)
            return self._loop()
        except NonFiniteLoss as err:
            return self._failed(RunFailed(str(err), "nan", step=err.step, epoch=self.progress.epoch))
        except torch.cuda.OutOfMemoryError:
            message = "out of GPU memory; try a smaller --batch-size or --amp bf16"
            return self._failed(RunFailed(message, "oom", step=self.progress.global_step, epoch=self.progress.epoch))
        except UsageError as err:
            return self._failed(RunFailed(str(err), _usage_kind(err)))
        except Exception as err:  # the contract: a failed run is an event, never an exception out of train()
            step, epoch = self.progress.global_step, self.progress.epoch
            if is_disk_full(err):
                return self._failed(RunFailed(_disk_full_message(err), "disk", step, epoch))
            return self._failed(RunFailed(_error(err).message, "error", step, epoch))

    def _started(self, source: DataSource) -> None:
        assert self.engine is not None
        engine, cfg = self.engine, self.config
        name, backend = describe_device(self.device)
        self.send(
            RunStarted(
                config=cfg,
                run_dir=str(self.run_dir),
                device=str(self.device),
                device_name=name,
                backend=backend,
                # a plain str: a TorchVersion would load torch wherever the event is unpickled
                torch_version=str(torch.__version__),
                dataset=cfg.dataset,
                train_size=int(engine.data.train_y.shape[0]),
                test_size=int(engine.data.test_y.shape[0]),
                classes=engine.data.classes,
                steps_per_epoch=engine.steps_per_epoch,
                start_epoch=self.progress.epoch,
                data_source=source.description,
                notice=source.notice,
                started_at=time.time(),
                world_size=self.ranks.world,
            )
        )
        if self.rank_log is not None:
            uuid, bus = gpu_identity(self.device)
            self.rank_log.write(
                RankStarted(
                    self.ranks.rank, self.ranks.world, os.getpid(), socket.gethostname(), str(self.device),
                    name, uuid, bus,
                )
            )  # fmt: skip
        if source.notice:
            self.send(LogMessage(source.notice, "warning"))
        if engine.fused.notice:
            self.send(LogMessage(engine.fused.notice))
        if self.progress.global_step:
            self.send(LogMessage(f"Resumed at epoch {self.progress.epoch + 1}, step {self.progress.global_step}"))
        self.clock = _Clock(self.progress.elapsed_s)
        self.last_emit_s = self.clock.now()
        self.last_emit_images = self.progress.images

    def _loop(self) -> RunSummary:
        assert self.engine is not None
        engine, cfg, p = self.engine, self.config, self.progress
        n, world = int(engine.data.train_y.shape[0]), self.ranks.world
        scheduled = engine.scheduled
        while p.epoch < cfg.epochs:
            if p.perm is None:
                p.perm = permutation(n, engine.gen)
                engine.stats.reset_epoch()
            order = shard(p.perm, self.ranks)  # the whole order is drawn (and saved) alike on every rank
            epoch_start, seen_before = self.clock.now(), p.seen  # seen_before > 0 when resumed mid-epoch
            while p.epoch_step < engine.steps_per_epoch:
                if not self._boundary():
                    return self._finish("stopped")
                idx = batch_indices(order, p.epoch_step, cfg.batch_size, engine.full_batches)
                x, y = engine.data.train_x[idx], engine.data.train_y[idx]
                if cfg.augment:
                    x = engine.augmented(x, idx, p.epoch)
                if scheduled:
                    set_lr(engine.optimizer, cfg, p.global_step, engine.total_steps)
                engine.step(x, y, engine.stats)
                size = engine.batch_size_at(p.epoch_step)
                p.epoch_step, p.global_step, p.seen, p.images = (
                    p.epoch_step + 1,
                    p.global_step + 1,
                    p.seen + size,
                    p.images + size * world,
                )
                if engine.stats.full or (not self.ranks.several and self._emit_due()):
                    self._flush()
            self._flush()
            self._end_epoch(epoch_start, p.seen - seen_before)
        return self._finish("completed")

    def _emit_due(self) -> bool:
        return self.clock.now() - self.last_emit_s >= self.config.emit_interval_s

    def _boundary(self) -> bool:
        """Handle stop, pause and save requests between steps; False means stop now."""
        if self.ranks.several:
            return self._agreed_boundary()
        control = self.control
        if control.stop.is_set():
            return False
        if control.paused:
            self._flush()
            self.send(LogMessage("Paused"))
            paused_at = time.perf_counter()
            while control.paused and not control.stop.is_set():
                control.wait_while_paused()
            self.clock.paused_s += time.perf_counter() - paused_at
            self.last_emit_s = self.clock.now()
            if control.stop.is_set():
                return False
            self.send(LogMessage("Resumed"))
        if control.take_save_request():
            self._flush()
            self._save(runs.LAST, "Checkpoint saved")
        return True

    def _agreed_boundary(self) -> bool:
        """The ranks' boundary: every ``sync_steps`` steps they agree on stop, pause, save and reporting.

        Rank 0 hears the viewers' commands; any rank may ask to stop (a signal); all act at the same step.
        """
        assert self.engine is not None
        if self.progress.epoch_step % self.sync_steps:
            return True
        control = self.control
        stop, pause, save, report = agree(
            [control.stop.is_set(), control.paused, control.take_save_request(), self._emit_due()], self.device
        )
        if report:
            self._flush()
        if stop:
            return False
        if pause:
            self._flush()
            self.send(LogMessage("Paused"))
            paused_at = time.perf_counter()
            while pause and not stop:
                time.sleep(PAUSE_POLL_S)
                stop, pause = agree([control.stop.is_set(), control.paused], self.device)
            self.clock.paused_s += time.perf_counter() - paused_at
            self.last_emit_s = self.clock.now()
            if stop:
                return False
            self.send(LogMessage("Resumed"))
        if save:
            self._flush()
            self._save(runs.LAST, "Checkpoint saved")
        return True

    def _flush(self) -> None:
        """Emit the steps since the last flush: the one sync of the step loop."""
        assert self.engine is not None
        engine, p = self.engine, self.progress
        count = engine.stats.count
        if count == 0:
            return
        losses = engine.stats.drain()
        first = p.global_step - count + 1
        for offset, value in enumerate(losses):
            if not math.isfinite(value):
                raise NonFiniteLoss(first + offset)
        now = self.clock.now()
        images = p.images - self.last_emit_images
        rate = images / (now - self.last_emit_s) if now > self.last_emit_s else 0.0
        self.last_emit_s, self.last_emit_images = now, p.images
        if self.rank_log is not None:
            self.rank_log.write(RankProgress(self.ranks.rank, p.epoch, p.global_step, rate / self.ranks.world, now))
        self.send(
            StepsCompleted(
                epoch=p.epoch,
                step=p.global_step,
                epoch_step=p.epoch_step,
                steps_per_epoch=engine.steps_per_epoch,
                losses=tuple(losses),
                images_per_s=rate,
                lr=self._lr(),
                elapsed_s=now,
            )
        )

    def _lr(self) -> float:
        assert self.engine is not None
        return lr_at(self.config, max(self.progress.global_step - 1, 0), self.engine.total_steps)

    def _end_epoch(self, epoch_start: float, trained_now: int) -> None:
        assert self.engine is not None
        engine, p = self.engine, self.progress
        train_time = self._synced_now() - epoch_start
        loss_sum, correct, seen = engine.stats.loss_sum, int(engine.stats.correct.item()), p.seen
        if self.ranks.several:  # the epoch's training figures over every rank's shard
            loss_sum, correct_all, seen_all = sum_all([loss_sum, correct, seen], self.device)
            correct, seen, trained_now = int(correct_all), int(seen_all), trained_now * self.ranks.world
        train_loss = loss_sum / max(seen, 1)
        train_acc = correct / max(seen, 1)
        result, eval_s = self.clock.evaluated(engine)
        self.per_class = result.per_class
        is_best = p.best_acc is None or result.acc > p.best_acc
        p.best_acc = result.acc if is_best else p.best_acc
        p.final_acc = result.acc
        p.epoch, p.epoch_step, p.seen, p.perm = p.epoch + 1, 0, 0, None
        engine.stats.reset_epoch()
        event = EpochCompleted(
            epoch=p.epoch - 1,
            epochs=self.config.epochs,
            train_loss=train_loss,
            train_acc=train_acc,
            test_loss=result.loss,
            test_acc=result.acc,
            lr=self._lr(),
            seconds=train_time,
            images_per_s=(trained_now / train_time) if train_time > 0 else 0.0,
            is_best=is_best,
            eval_s=eval_s,
            elapsed_s=self.clock.now(),
        )
        self.send(event)
        names = [runs.LAST] if self.config.checkpoint_every_epoch else []
        names += [runs.BEST] if is_best else []
        if names and self.ranks.leader:  # taken now; copied, serialised and written while the next epoch trains
            copy = runs.HostCopy(snapshot(engine, p, self.clock.now()))
            self.writer.submit(copy, [self.run_dir / name for name in names])
        self.last_emit_s = self.clock.now()

    def _synced_now(self) -> float:
        """The run's clock once the queued steps have run: they belong to the training time."""
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        return self.clock.now()

    def _save(self, name: str, message: str | None) -> None:
        """Save now and wait for the file (explicit saves and stops are reported once on disk)."""
        assert self.engine is not None
        if not self.ranks.leader:  # rank 0 writes the checkpoints (the ranks' models are the same)
            return
        path = self.run_dir / name
        self.writer.submit(runs.HostCopy(snapshot(self.engine, self.progress, self.clock.now())), [path])
        self.writer.wait()
        if message:
            self.send(LogMessage(f"{message}: {path}"))

    def _finish(self, reason: str) -> RunSummary:
        assert self.engine is not None
        p = self.progress
        self._flush()
        total = self._synced_now()  # the training ends with its last step; saving it is part of the exit
        if reason == "stopped" or not self.config.checkpoint_every_epoch:
            self._save(runs.LAST, "Checkpoint saved")
        self.writer.wait()
        tta = None
        wanted = reason == "completed" and models.has_tta(self.config.model) and p.final_acc is not None
        if wanted and not self.control.stop.is_set():
            self.send(LogMessage("Final test pass with test-time augmentation (mirrors and shifts)"))
            tta = self.clock.evaluated(self.engine, tta=True)[0].acc
        peak = torch.cuda.max_memory_allocated(self.device) if self.device.type == "cuda" else None
        finished = RunFinished(
            reason="stopped" if reason == "stopped" else "completed",
            epochs_completed=p.epoch,
            best_test_acc=p.best_acc,
            final_test_acc=p.final_acc,
            total_s=total,
            images_per_s=p.images / total if total > 0 else 0.0,
            peak_memory_bytes=peak,
            run_dir=str(self.run_dir),
            per_class_acc=self.per_class,
            checkpoint=str(self.run_dir / runs.LAST),
            tta_test_acc=tta,
            eval_s=self.clock.eval_s,
        )
        self.send(finished)
        if self.ranks.leader:
            write_json(self.run_dir / "summary.json", event_to_dict(finished))
            fused.build_later(self.engine.fused)  # for later runs, in a process of its own
        return RunSummary(finished, self.run_dir)

    def _failed(self, failed: RunFailed) -> RunSummary:
        with contextlib.suppress(Exception):  # let a pending save land; its own error is secondary
            self.writer.wait()
        failed = RunFailed(failed.message, failed.kind, failed.step, failed.epoch, str(self.run_dir))
        with contextlib.suppress(OSError):  # a full disk: the caller still hears of it; nothing written is lost
            self.send(failed)
            if self.ranks.leader:
                write_json(self.run_dir / "summary.json", event_to_dict(failed))
        return RunSummary(failed, self.run_dir)


def _usage_kind(err: UsageError) -> FailureKind:
    """Bad data or a checkpoint that does not fit is input the user must fix ("data", exit 2 headless)."""
    return "data" if isinstance(err, DataError | CheckpointError) else "error"


def _error(err: BaseException) -> RunFailed:
    """Any other exception as a one-line failure: its type and the first line of its message."""
    return RunFailed(first_line(err, with_type=True), "error")
