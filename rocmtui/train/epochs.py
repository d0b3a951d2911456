"""The step loop of a built run: epochs of steps, a test pass and checkpoints at each epoch's end, the ending.

The clock counts training seconds only: pauses and test passes are left out (``rocmtui.base.clock``).
"""

from __future__ import annotations

import time
from typing import Any

import torch

from rocmtui.base.clock import RunClock
from rocmtui.events import Emit, LogMessage, RunControl, RunFinished
from rocmtui.run.ranks import RankWriter
from rocmtui.train import fused, models
from rocmtui.train.boundary import Boundary
from rocmtui.train.checkpoints import LAST
from rocmtui.train.distributed import shard, sum_all
from rocmtui.train.engine import Engine
from rocmtui.train.evaluate import EvalResult, evaluate
from rocmtui.train.gpudata import batch_rows, permutation
from rocmtui.train.learning_rates import freeze_spent, set_lr
from rocmtui.train.report import EpochFigures, Reporter
from rocmtui.train.saving import Saver
from rocmtui.train.state import Progress, position
from rocmtui.train.summary import RunSummary


class EpochLoop:
    """Trains ``engine`` from ``progress`` to the last epoch or a stop; its clock starts when it is made."""

    def __init__(
        self,
        engine: Engine,
        progress: Progress,
        *,
        control: RunControl,
        send: Emit,
        saver: Saver,
        rank_log: RankWriter | None,
    ) -> None:
        self.engine, self.progress, self.control, self.saver = engine, progress, control, saver
        self.clock = RunClock(progress.elapsed_s)
        self.reporter = Reporter(send, engine, progress, self.clock, rank_log)
        self.boundary = Boundary(control, self.reporter, self._save_last)
        self.per_class: tuple[tuple[str, float], ...] = ()

    def run(self) -> RunSummary:
        engine, p = self.engine, self.progress
        drawn = self._draw() if p.epoch < engine.config.epochs else None
        while drawn is not None:
            epoch_start, seen_before, images, labels = drawn  # seen_before > 0 when resumed mid-epoch
            if not self._steps(images, labels):
                return self._finish("stopped")
            del drawn, images, labels
            taken = self.saver.take(engine)  # while the GPU still runs the epoch's last steps
            self.reporter.flush()
            ended, at = self._end_epoch(epoch_start, p.seen - seen_before)
            # the next epoch's draw is queued before the checkpoint is handed on and the events are sent: the
            # GPU need not wait for them
            drawn = self._draw() if p.epoch < engine.config.epochs else None
            self.saver.after_epoch(engine, taken, at, is_best=ended[-1])
            self.reporter.epoch_completed(*ended)
            self.reporter.mark()
        return self._finish("completed")

    def _draw(self) -> tuple[float, int, torch.Tensor, torch.Tensor]:
        """The epoch's start on the clock, the images it had seen before, and its images and labels in its order
        (drawn now, on the device, unless a resume in its middle restored the order)."""
        engine, p = self.engine, self.progress
        epoch_start, seen_before = self.clock.now(), p.seen
        if p.perm is None:
            p.epoch_rng = engine.batching.gen.get_state()
            p.perm = permutation(int(engine.data.train_y.shape[0]), engine.batching.gen)
            engine.stats.reset_epoch()
        order = shard(p.perm, engine.ranks)  # the whole order is drawn (and saved) alike on every rank
        images = engine.augmenter.epoch(engine.data.train_x, order, p.epoch)
        return epoch_start, seen_before, images, engine.data.train_y[order]

    def _steps(self, images: torch.Tensor, labels: torch.Tensor) -> bool:
        """The rest of this epoch's steps over its ``images`` and ``labels`` (in its order, augmented);
        False when a stop came first."""
        engine, cfg, p = self.engine, self.engine.config, self.progress
        batching, optimisation, stats = engine.batching, engine.optimisation, engine.stats
        world, alone, scheduled = engine.ranks.world, not engine.ranks.several, engine.scheduled
        freezes = scheduled and engine.freezes_spent
        while p.epoch_step < batching.steps_per_epoch:
            if not self.boundary.go_on(p.epoch_step):
                return False
            x = batch_rows(images, p.epoch_step, cfg.batch_size, batching.full_batches)
            y = batch_rows(labels, p.epoch_step, cfg.batch_size, batching.full_batches)
            if scheduled:
                set_lr(optimisation.optimizer, cfg, p.global_step, engine.total_steps)
            if freezes:
                freeze_spent(optimisation.optimizer, p.global_step)
            optimisation.step(x, y, stats)
            size = batching.size_at(p.epoch_step)
            p.epoch_step, p.global_step, p.seen, p.images = (
                p.epoch_step + 1,
                p.global_step + 1,
                p.seen + size,
                p.images + size * world,
            )
            if stats.full or (alone and self.reporter.due()):
                self.reporter.flush()
        return True

    def _end_epoch(
        self, epoch_start: float, trained_now: int
    ) -> tuple[tuple[EpochFigures, EvalResult, float, bool], dict[str, Any]]:
        """The epoch's figures and test pass, and the run moved to the next epoch: what
        ``Reporter.epoch_completed`` sends of it, and the run's position for its checkpoint."""
        engine, p = self.engine, self.progress
        figures = self._figures(self._synced_now() - epoch_start, trained_now, time.time())
        result, eval_s = self.clock.set_aside(lambda: evaluate(engine))
        self.per_class = result.per_class
        is_best = p.best_acc is None or result.acc > p.best_acc
        p.best_acc = result.acc if is_best else p.best_acc
        p.final_acc = result.acc
        p.epoch, p.epoch_step, p.seen, p.perm, p.epoch_rng = p.epoch + 1, 0, 0, None, None
        engine.stats.reset_epoch()
        return (figures, result, eval_s, is_best), position(engine, p, self.clock.now())

    def _figures(self, seconds: float, trained_now: int, wall: float) -> EpochFigures:
        """This epoch's training figures, over every rank's shard."""
        engine, ranks = self.engine, self.engine.ranks
        loss_sum, correct, seen = engine.stats.loss_sum, int(engine.stats.correct.item()), self.progress.seen
        if ranks.several:
            loss_sum, correct_all, seen_all = sum_all([loss_sum, correct, seen], engine.device)
            correct, seen, trained_now = int(correct_all), int(seen_all), trained_now * ranks.world
        return EpochFigures(loss_sum / max(seen, 1), correct / max(seen, 1), trained_now, seconds, wall)

    def _synced_now(self) -> float:
        """The run's clock once the queued steps have run: they belong to the training time."""
        if self.engine.device.type == "cuda":
            torch.cuda.synchronize(self.engine.device)
        return self.clock.now()

    def _save_last(self) -> None:
        self.saver.last_now(self.engine, self.progress, self.clock.now())

    def _finish(self, reason: str) -> RunSummary:
        engine, p, run_dir = self.engine, self.progress, self.saver.run_dir
        self.reporter.flush()
        total = self._synced_now()  # the training ends with its last step; saving it is part of the exit
        if reason == "stopped" or not engine.config.checkpoint_every_epoch:
            self._save_last()
        self.saver.wait()
        tta = self._tta_acc() if reason == "completed" else None
        peak = torch.cuda.max_memory_allocated(engine.device) if engine.device.type == "cuda" else None
        finished = RunFinished(
            reason="stopped" if reason == "stopped" else "completed",
            epochs_completed=p.epoch,
            best_test_acc=p.best_acc,
            final_test_acc=p.final_acc,
            total_s=total,
            images_per_s=p.images / total if total > 0 else 0.0,
            peak_memory_bytes=peak,
            run_dir=str(run_dir),
            per_class_acc=self.per_class,
            checkpoint=str(run_dir / LAST),
            tta_test_acc=tta,
            eval_s=self.clock.set_aside_s,
        )
        self.reporter.send(finished)  # the leader's session writes it to the stream and summary.json
        if self.saver.leader:
            fused.build_later(engine.fused)  # for later runs, in a process of its own
        return RunSummary(finished, run_dir)

    def _tta_acc(self) -> float | None:
        """A completed run's final test pass with test-time augmentation, where its model has one."""
        wanted = models.has_tta(self.engine.config.model) and self.progress.final_acc is not None
        if not wanted or self.control.stop.is_set():
            return None
        self.reporter.send(LogMessage("Final test pass with test-time augmentation (mirrors and shifts)"))
        result: EvalResult = self.clock.set_aside(lambda: evaluate(self.engine, tta=True))[0]
        return result.acc
