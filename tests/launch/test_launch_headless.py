"""``rocmtui train --headless`` as a user runs it: its lines, its exit codes, signals, bad input."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from rocmtui.events import EpochCompleted, LogMessage, RunFailed, RunFinished, StepsCompleted
from rocmtui.launch.headless import LinePrinter
from rocmtui.train import checkpoints

REPO = Path(__file__).resolve().parents[2]


def rocmtui(*args: str, tmp_path: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "rocmtui", "train", "cifar", "--headless", "--device", "cpu",
         "--runs-dir", str(tmp_path / "runs"), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env,
    )  # fmt: skip


@pytest.mark.slow
def test_a_finished_run_prints_epochs_and_the_summary(tmp_path: Path) -> None:
    proc = rocmtui("--epochs", "1", "--batch-size", "128", tmp_path=tmp_path)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("rocmtui: training simplecnn on cifar10 (1,900 train / 600 test images) on cpu")
    assert lines[1].startswith("warning: Offline: training on the bundled 1,900-image CIFAR-10 sample")
    assert lines[2].startswith("epoch 1/1  train loss ") and " test loss " in lines[2] and "img/s" in lines[2]
    assert lines[3].startswith("completed: 1 epoch(s), test acc ")
    assert lines[4].startswith("time to accuracy: ") and "% at " in lines[4]
    folder = Path(lines[5].removeprefix("run folder: "))
    assert (folder / checkpoints.LAST).is_file() and (folder / "summary.json").is_file()
    assert err == ""


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130), (signal.SIGHUP, 129)])
def test_a_signal_stops_cleanly_with_a_checkpoint(tmp_path: Path, sig: signal.Signals, code: int) -> None:
    proc = rocmtui("--epochs", "500", "--batch-size", "256", tmp_path=tmp_path)
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:  # wait for a finished epoch: a checkpoint exists, training goes on
        seen.append(line)
        if line.startswith("epoch 1/500"):
            break
    proc.send_signal(sig)
    rest, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert "stopped: " in rest and "run folder: " in rest
    folder = Path(rest.strip().splitlines()[-1].removeprefix("run folder: "))
    state = checkpoints.load_checkpoint(folder / checkpoints.LAST)
    assert state["epoch"] >= 1
    assert "Traceback" not in err


@pytest.mark.slow
def test_a_failed_run_exits_1(tmp_path: Path) -> None:
    proc = rocmtui("--epochs", "3", "--optimizer", "sgd", "--lr", "1e10", tmp_path=tmp_path)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1
    # failures go to stderr, so that `--headless > train.log` still shows them at the terminal
    assert "failed (nan): the loss became NaN or infinite at step " in err and "failed (nan)" not in out


@pytest.mark.slow
def test_a_corrupt_checkpoint_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "checkpoint-last.pt"
    bad.write_bytes(b"\x00" * 64)
    proc = rocmtui("--resume", str(bad), tmp_path=tmp_path)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2 and out == ""
    assert err.strip().count("\n") == 0 and "corrupt or not a checkpoint" in err


@pytest.mark.slow
def test_missing_mnist_data_is_exit_2(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc = subprocess.run(
        [sys.executable, "-m", "rocmtui", "train", "mnist", "--headless", "--runs-dir", str(tmp_path)],
        capture_output=True, text=True, cwd=REPO, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 2 and "--download" in proc.stderr and "Traceback" not in proc.stderr


def test_progress_lines_are_throttled() -> None:
    out = io.StringIO()
    printer = LinePrinter(out, every_s=3600)
    printer.format(EpochCompleted(0, 2, 1.0, 0.5, 1.1, 0.4, 1e-3, 2.0, 100.0, True))
    step = StepsCompleted(0, 5, 5, 10, (1.0, 2.0), 1000.0, 1e-3, 1.0)
    printer(step)
    assert out.getvalue() == ""
    printer.every_s = 0.0
    printer(step)
    assert out.getvalue() == "  epoch 1/2  step 5/10  loss 1.5000  1,000 img/s  1.0s\n"


def test_log_failure_and_finish_lines() -> None:
    printer = LinePrinter(io.StringIO())
    assert printer.format(LogMessage("Paused")) == "info: Paused"
    failed = RunFailed("out of GPU memory; try a smaller --batch-size", "oom", 3, 0, "runs/x")
    assert printer.format(failed) == "failed (oom): out of GPU memory; try a smaller --batch-size\nrun folder: runs/x"
    done = RunFinished("completed", 5, 0.61, 0.6, 5.5, 43000.0, 860_000_000, "runs/x")
    assert printer.format(done) == (
        "completed: 5 epoch(s), test acc 60.00% (best 61.00%), 5.50s of training, 43,000 img/s, "
        "peak memory 820.2 MiB\nrun folder: runs/x"
    )


def test_the_finish_line_gives_the_test_time_augmented_accuracy_and_the_time_to_accuracy() -> None:
    printer = LinePrinter(io.StringIO())
    printer.format(EpochCompleted(0, 2, 1.0, 0.5, 1.1, 0.931, 1e-3, 0.9, 1e5, True, eval_s=0.05, elapsed_s=0.9))
    printer.format(EpochCompleted(1, 2, 1.0, 0.5, 1.1, 0.937, 1e-3, 0.9, 1e5, True, eval_s=0.05, elapsed_s=1.8))
    done = RunFinished("completed", 2, 0.937, 0.937, 1.8, 1e5, None, "runs/x", tta_test_acc=0.9421, eval_s=0.3)
    assert printer.format(done) == (
        "completed: 2 epoch(s), test acc 93.70% (best 93.70%), 94.21% with test-time augmentation, "
        "1.80s of training (and 0.30s of test passes), 100,000 img/s\n"
        "time to accuracy: 93% at 0.90s, 94% at 1.80s\nrun folder: runs/x"
    )


def test_a_closed_output_stops_printing_not_training() -> None:
    class Closed(io.StringIO):
        def write(self, _text: str) -> int:
            raise BrokenPipeError("reader went away")

    printer = LinePrinter(Closed())
    printer(LogMessage("Paused"))
    assert printer.closed
    printer(LogMessage("Resumed"))  # silently dropped
