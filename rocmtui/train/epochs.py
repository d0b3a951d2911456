"""The step loop of a built run: epochs of steps, a test pass and checkpoints at each epoch's end, the ending.

The clock counts training seconds only: pauses and test passes are left out (``rocmtui.base.clock``).
"""

from __future__ import annotations

import dataclasses
import functools
import time
from dataclasses import dataclass
from typing import Any

import torch

from rocmtui.base.clock import RunClock
from rocmtui.events import Emit, LogMessage, RunControl, RunFinished, StepsCompleted
from rocmtui.run.rank_streams import RankWriter
from rocmtui.train import fused, models
from rocmtui.train.checkpoints import LAST, HostCopy
from rocmtui.train.distributed import shard, sum_all
from rocmtui.train.engine import Engine
from rocmtui.train.evaluate import EvalResult, evaluate
from rocmtui.train.gpudata import batch_rows, permutation
from rocmtui.train.learning_rates import freeze_spent, set_lr
from rocmtui.train.progress_events import EpochFigures, Reporter
from rocmtui.train.saving import Saver
from rocmtui.train.state import Progress, position
from rocmtui.train.step_boundary import Boundary
from rocmtui.train.summary import RunSummary

_Ended = tuple[EpochFigures, EvalResult, float, bool]
"""An ended epoch's training figures, its test pass and that pass's seconds, and whether it was the best:
``Reporter.epoch_completed``'s arguments."""


@dataclass(frozen=True)
class _Drawn:
    """An epoch's images and labels in its order, drawn on the device, and where its clock starts."""

    start: float
    seen_before: int
    """Images it had trained on before (a resume in its middle)."""
    perm: torch.Tensor
    rng: torch.Tensor | None
    """The data generator's state before its order was drawn (``Progress.epoch_rng``)."""
    images: torch.Tensor
    labels: torch.Tensor


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
        engine, p, epochs = self.engine, self.progress, self.engine.config.epochs
        drawn = self._draw_current() if p.epoch < epochs else None
        while drawn is not None:
            if not self._steps(drawn):
                return self._finish("stopped")
            taken = self.saver.take(engine)  # while the GPU still runs the epoch's last steps
            start, seen_before = drawn.start, drawn.seen_before
            del drawn  # its images' memory serves the next epoch's (the allocator orders the reuse on the stream)
            # the next epoch drawn behind them: its launches overlap their tail, and its GPU time is the run's
            upcoming = self._draw(p.epoch + 1, None) if p.epoch + 1 < epochs else None
            steps = self.reporter.collect()  # waits for them
            ended, at, epoch_end = self._end_epoch(start, seen_before)
            if upcoming is not None:  # the checkpoint's position ``at`` is the epoch boundary's, read before
                p.perm, p.epoch_rng = upcoming.perm, upcoming.rng
                upcoming = dataclasses.replace(upcoming, start=epoch_end)
            # sent once the next epoch's first step is queued, or before the boundary acts on a request
            self.boundary.pending = functools.partial(self._report, steps, ended, taken, at)
            drawn = upcoming
        self.boundary.settle()
        return self._finish("completed")

    def _draw_current(self) -> _Drawn:
        """This epoch's images: drawn now, or (a resume in its middle) in the order the checkpoint restored."""
        engine, p = self.engine, self.progress
        if p.perm is not None:
            return dataclasses.replace(self._draw(p.epoch, p.perm), rng=p.epoch_rng, seen_before=p.seen)
        drawn = self._draw(p.epoch, None)
        p.perm, p.epoch_rng = drawn.perm, drawn.rng
        engine.stats.reset_epoch()
        return drawn

    def _draw(self, epoch: int, perm: torch.Tensor | None) -> _Drawn:
        """Epoch ``epoch``'s images and labels in its order ``perm`` (None: drawn now on the data generator),
        augmented, on the device; nothing waits for the GPU."""
        engine = self.engine
        start, rng = self.clock.now(), None
        if perm is None:
            rng = engine.batching.gen.get_state()
            perm = permutation(int(engine.data.train_y.shape[0]), engine.batching.gen)
        order = shard(perm, engine.ranks)  # the whole order is drawn (and saved) alike on every rank
        images = engine.augmenter.epoch(engine.data.train_x, order, epoch)
        return _Drawn(start, 0, perm, rng, images, engine.data.train_y[order])

    def _steps(self, drawn: _Drawn) -> bool:
        """The rest of this epoch's steps over its ``drawn`` images (in its order, augmented); False when a stop
        came first. The work the boundary holds (the last epoch's events and checkpoint) is done once the first
        step is queued, so that the GPU runs it meanwhile (before, if the boundary acts on a request)."""
        engine, cfg, p = self.engine, self.engine.config, self.progress
        batching, optimisation, stats = engine.batching, engine.optimisation, engine.stats
        world, alone, scheduled = engine.ranks.world, not engine.ranks.several, engine.scheduled
        freezes = scheduled and engine.freezes_spent
        images, labels = drawn.images, drawn.labels
        try:
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
                self.boundary.settle()
                if stats.full or (alone and self.reporter.due()):
                    self.reporter.flush()
        finally:  # a stop, or a failed first step: the last epoch is still sent and its checkpoint written
            self.boundary.settle()
        return True

    def _end_epoch(self, start: float, seen_before: int) -> tuple[_Ended, dict[str, Any], float]:
        """The epoch's figures and test pass, and the run moved to the next epoch: what ``_report`` sends of
        it, the run's position for its checkpoint, and the clock at its last step."""
        engine, p = self.engine, self.progress
        epoch_end = self._synced_now()
        figures = self._figures(epoch_end - start, p.seen - seen_before, epoch_end)
        result, eval_s = self.clock.set_aside(lambda: evaluate(engine))
        self.per_class = result.per_class
        is_best = p.best_acc is None or result.acc > p.best_acc
        p.best_acc = result.acc if is_best else p.best_acc
        p.final_acc = result.acc
        p.epoch, p.epoch_step, p.seen, p.perm, p.epoch_rng = p.epoch + 1, 0, 0, None, None
        engine.stats.reset_epoch()
        self.reporter.mark()
        return (figures, result, eval_s, is_best), position(engine, p, self.clock.now()), epoch_end

    def _report(self, steps: StepsCompleted | None, ended: _Ended, taken: HostCopy | None, at: dict[str, Any]) -> None:
        """An ended epoch's last steps and its figures sent, its checkpoint handed to the writer."""
        if steps is not None:
            self.reporter.send(steps)
        self.saver.after_epoch(self.engine, taken, at, is_best=ended[-1])
        self.reporter.epoch_completed(*ended)

    def _figures(self, seconds: float, trained_now: int, end: float) -> EpochFigures:
        """This epoch's training figures, over every rank's shard, at its ``end`` on the run's clock."""
        engine, ranks = self.engine, self.engine.ranks
        wall = time.time()
        loss_sum, correct, seen = engine.stats.loss_sum, int(engine.stats.correct.item()), self.progress.seen
        if ranks.several:
            loss_sum, correct_all, seen_all = sum_all([loss_sum, correct, seen], engine.device)
            correct, seen, trained_now = int(correct_all), int(seen_all), trained_now * ranks.world
        lr = self.reporter.lr()
        return EpochFigures(loss_sum / max(seen, 1), correct / max(seen, 1), trained_now, seconds, wall, lr, end)

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
