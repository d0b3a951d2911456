"""A resumed run's best accuracy counts the epochs before the resume, wherever it is read from."""

from __future__ import annotations

from pathlib import Path

from rocmtui.config import TrainConfig
from rocmtui.events import EpochCompleted, RunControl, RunFinished, RunStarted
from rocmtui.run.fold import RunFold
from rocmtui.run.listing import list_runs, listing_cells
from rocmtui.run.session import RunSession
from rocmtui.run.stream import read_events


def started(start_epoch: int, best: float | None) -> RunStarted:
    config = TrainConfig(epochs=4)
    return RunStarted(
        config, "runs/a", "cpu", "CPU", "CPU", "2.5", "cifar10", 100, 10, ("a", "b"), 2, start_epoch, "sample",
        best_acc=best,
    )  # fmt: skip


def epoch(n: int, acc: float) -> EpochCompleted:
    return EpochCompleted(n, 4, 1.0, 0.5, 1.0, acc, 0.1, 1.0, 100.0, False)


def finished(best: float) -> RunFinished:
    return RunFinished("completed", 4, best, 0.4117, 9.0, 100.0, None, "runs/a")


def test_the_status_and_the_listing_count_the_epochs_before_a_resume(tmp_path: Path) -> None:
    run_dir = tmp_path / "20261206-055054-cifar10-simplecnn"
    run_dir.mkdir()
    first = RunSession(run_dir, RunControl(), name="cifar10 simplecnn")
    first.emit(started(0, None))
    first.emit(epoch(0, 0.4012))
    first.emit(epoch(1, 0.4367))
    first.emit(RunFinished("stopped", 2, 0.4367, 0.4367, 4.0, 100.0, None, str(run_dir)))
    first.close()
    resumed = RunSession(run_dir, RunControl(), name="cifar10 simplecnn")  # --resume RUN: the same folder
    resumed.emit(started(2, 0.4367))
    resumed.emit(epoch(2, 0.3990))
    resumed.emit(epoch(3, 0.4117))
    resumed.emit(finished(0.4367))
    resumed.close()
    (info,) = list_runs(tmp_path)
    assert info.best_acc == 0.4367
    assert "best 43.67%" in listing_cells(info, 80)
    whole = RunFold()  # a viewer reading the whole stream agrees
    for event in read_events(run_dir):
        whole.apply(event)
    assert whole.best_acc == 0.4367


def test_a_branched_run_keeps_its_checkpoints_best_until_beaten() -> None:
    fold = RunFold()
    fold.apply(started(2, 0.4367))
    fold.apply(epoch(2, 0.40))
    assert fold.best_acc == 0.4367
    fold.apply(epoch(2, 0.41))  # the epoch trained again after a second resume
    assert fold.best_acc == 0.4367
    fold.apply(epoch(3, 0.45))
    assert fold.best_acc == 0.45
