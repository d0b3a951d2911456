"""The plain lines a finished, stopped or failed run leaves on the terminal."""

from __future__ import annotations

from rocmtui.events import FinishReason, RunFailed, RunFinished
from rocmtui.run.outcome import result_lines


def finished(reason: FinishReason, epochs: int, best: float | None, tta: float | None = None) -> RunFinished:
    return RunFinished(
        reason,
        epochs,
        best,
        best,
        total_s=1.834,
        images_per_s=1.0,
        peak_memory_bytes=None,
        run_dir="runs/r",
        tta_test_acc=tta,
    )


def test_a_finished_run_names_its_epochs_accuracies_and_folder() -> None:
    lines = result_lines(finished("completed", 8, 0.9332, tta=0.9430), "runs/r")
    assert lines == [
        "rocmtui: completed: 8 epoch(s), best test accuracy 93.32% (94.30% with test-time augmentation), "
        "1.8s of training",
        "run folder: runs/r",
    ]


def test_a_run_stopped_before_its_first_epoch_says_so() -> None:
    [head, _] = result_lines(finished("stopped", 0, None), "runs/r")
    assert head == "rocmtui: stopped: no epoch completed, 1.8s of training"


def test_a_failure_and_a_missing_result_are_one_line_each() -> None:
    assert result_lines(RunFailed("out of GPU memory", "oom"), None) == ["rocmtui: failed (oom): out of GPU memory"]
    assert result_lines(None, "runs/r") == ["rocmtui: the run ended without a result", "run folder: runs/r"]
