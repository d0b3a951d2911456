"""Data-parallel runs (``--nproc``): two real processes joined by gloo on the CPU, through torch.distributed's
elastic launcher, writing one run folder that ``runs``, ``stop`` and ``--resume`` treat as any other."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from waiting import wait_for

from rocmtui.events import EpochCompleted, RunFinished, RunStarted, StepsCompleted
from rocmtui.run.rank_streams import RankProgress, RankStarted, RankTail
from rocmtui.run.status import read_status
from rocmtui.run.stream import read_events

pytestmark = pytest.mark.slow  # functional tier: three real processes per run

REPO = Path(__file__).resolve().parents[2]
SAMPLE_TRAIN = 1900  # images in the bundled CIFAR-10 sample's training split


def rocmtui(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    return subprocess.Popen(
        [sys.executable, "-m", "rocmtui", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env,
    )  # fmt: skip


def train(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    runs = str(tmp_path / "runs")
    return rocmtui(tmp_path, "train", "cifar", "--headless", "--device", "cpu", "--runs-dir", runs, *args)


def only_run(tmp_path: Path) -> Path:
    (run,) = (tmp_path / "runs").iterdir()
    return run


def rank_views(run: Path):
    tail = RankTail(run)
    tail.poll()
    tail.close()
    return tail.views


def test_two_gloo_ranks_train_one_run_then_resume_it_in_place(tmp_path: Path) -> None:
    proc = train(tmp_path, "--nproc", "2", "--epochs", "2", "--batch-size", "128")
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    run = only_run(tmp_path)
    events = read_events(run)
    started = next(e for e in events if isinstance(e, RunStarted))
    assert started.world_size == 2 and started.config.nproc == 2
    # each rank trains on its half of the data: ceil(ceil(1900 / 2) / 128) steps an epoch
    assert started.steps_per_epoch == math.ceil(math.ceil(SAMPLE_TRAIN / 2) / 128) == 8
    epochs = [e for e in events if isinstance(e, EpochCompleted)]
    assert [e.epoch for e in epochs] == [0, 1] and epochs[-1].train_loss < epochs[0].train_loss
    steps = [e for e in events if isinstance(e, StepsCompleted)]
    assert steps[-1].step == 16  # optimizer steps taken together by both ranks
    assert isinstance(events[-1], RunFinished) and events[-1].reason == "completed"
    assert "completed: 2 epoch(s)" in out
    assert (
        (run / "checkpoint-last.pt").is_file()
        and (status := read_status(run)) is not None
        and status.state == "finished"
    )

    views = rank_views(run)
    assert sorted(views) == [0, 1]
    for rank, view in views.items():
        assert isinstance(view.started, RankStarted) and view.started.world_size == 2 and view.started.rank == rank
        assert isinstance(view.progress, RankProgress) and view.progress.step == 16 and view.progress.images_per_s > 0
    assert views[0].started.pid != views[1].started.pid  # two processes, not one

    resumed = train(tmp_path, "--resume", str(run), "--epochs", "3")  # no --nproc: the run keeps its 2
    out, err = resumed.communicate(timeout=240)
    assert resumed.returncode == 0, err
    assert "epoch 3/3" in out and "epoch 1/" not in out  # the folder's earlier epochs are not printed again
    assert only_run(tmp_path) == run  # continued in its own folder
    events = read_events(run)
    assert [e.epoch for e in events if isinstance(e, EpochCompleted)] == [0, 1, 2]
    assert [e.world_size for e in events if isinstance(e, RunStarted)] == [2, 2]
    assert rank_views(run)[1].progress.step == 24
    assert json.loads((run / "summary.json").read_text())["epochs_completed"] == 3


def test_stop_reaches_every_rank_through_the_folder_and_leaves_no_process(tmp_path: Path) -> None:
    proc = train(tmp_path, "--nproc", "2", "--epochs", "500")
    wait_for(lambda: (tmp_path / "runs").is_dir() and any((tmp_path / "runs").iterdir()), 120, "the run folder")
    run = only_run(tmp_path)
    wait_for(lambda: any(v.progress for v in rank_views(run).values()), 180, "the ranks to train")
    pids = [v.started.pid for v in rank_views(run).values() if v.started]
    stop = rocmtui(tmp_path, "stop", str(run))
    _, stop_err = stop.communicate(timeout=120)
    assert stop.returncode == 0, stop_err
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert "stopped:" in out and (status := read_status(run)) is not None and status.state == "stopped"
    assert (run / "checkpoint-last.pt").is_file()
    for pid in pids:  # the ranks are gone
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_ctrl_c_stops_the_ranks_with_a_checkpoint(tmp_path: Path) -> None:
    proc = train(tmp_path, "--nproc", "2", "--epochs", "500")
    wait_for(lambda: (tmp_path / "runs").is_dir() and any((tmp_path / "runs").iterdir()), 120, "the run folder")
    run = only_run(tmp_path)
    wait_for(lambda: any(v.progress for v in rank_views(run).values()), 180, "the ranks to train")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGINT, err
    assert (
        (status := read_status(run)) is not None
        and status.state == "stopped"
        and (run / "checkpoint-last.pt").is_file()
    )


def test_bad_input_with_nproc_fails_in_one_line_before_any_rank_starts(tmp_path: Path) -> None:
    proc = train(tmp_path, "--nproc", "2", "--cuda-graph")
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2
    assert err.strip().count("\n") == 0 and "Traceback" not in err
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
