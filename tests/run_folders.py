"""Run folders of both kinds for the runs table's tests and its benchmark: train runs and tracked scripts, written
through the real writer (``RunSession``), then given fixed start times so that a snapshot does not depend on the
clock. A live run is one whose lock a test holds (``hold_live``)."""

from __future__ import annotations

import socket
from collections.abc import Sequence
from pathlib import Path

import msgspec

from rocmtui.config import TrainConfig
from rocmtui.events import (
    EpochCompleted,
    MetricsLogged,
    RunControl,
    RunFinished,
    RunStarted,
    StepsCompleted,
    TrackStarted,
)
from rocmtui.run.format import write_config
from rocmtui.run.lock import RunLock
from rocmtui.run.session import RunSession
from rocmtui.run.status import read_status, write_status

T0 = 1_796_000_000.0
"""A fixed start time (2026-11-30 00:53 UTC): the table's start column is the same on every run of the tests."""


def fix_times(run_dir: Path, started_at: float, elapsed_s: float) -> None:
    status = read_status(run_dir)
    assert status is not None
    write_status(
        run_dir,
        msgspec.structs.replace(status, started_at=started_at, heartbeat=started_at, elapsed_s=elapsed_s),
        durable=False,
    )


def train_run(runs_dir: Path, name: str, *, lr: float, accs: Sequence[float], started_at: float = T0) -> Path:
    """A finished ``train`` run with one epoch a test accuracy of ``accs``."""
    run_dir = runs_dir / name
    run_dir.mkdir(parents=True)
    config = TrainConfig(lr=lr, epochs=len(accs), device="cpu")
    write_config(run_dir, config)
    session = RunSession(run_dir, RunControl(), name="cifar10 simplecnn")
    session.emit(
        RunStarted(config, str(run_dir), "cpu", "CPU", "CPU", "2.5", "cifar10", 1900, 100, ("a", "b"), 10, 0, "sample")
    )
    for epoch, acc in enumerate(accs):
        losses = tuple(2.0 - acc - 0.01 * n for n in range(10))
        session.emit(StepsCompleted(epoch, (epoch + 1) * 10, 10, 10, losses, 1000.0, lr, 1.0 + epoch))
        session.emit(EpochCompleted(epoch, len(accs), 1.5 - acc, acc, 1.6 - acc, acc, lr, 1.0, 1000.0, True))
    best = max(accs)
    session.emit(RunFinished("completed", len(accs), best, accs[-1], 2.0 * len(accs), 1000.0, None, str(run_dir)))
    session.close()
    fix_times(run_dir, started_at, 2.0 * len(accs))
    return run_dir


def script_run(
    runs_dir: Path, name: str, *, params: dict[str, float | int | str], losses: Sequence[float], started_at: float = T0
) -> Path:
    """A finished tracked script that logged ``loss`` at each step and ``acc`` at its last."""
    run_dir = runs_dir / name
    run_dir.mkdir(parents=True)
    track_name = str(params.get("name", "script"))
    session = RunSession(run_dir, RunControl(), name=track_name)
    session.emit(TrackStarted(track_name, str(run_dir), {k: v for k, v in params.items() if k != "name"}))
    steps = tuple(range(1, len(losses) + 1))
    logged = {"loss": tuple(losses), "acc": tuple(1.0 - loss / 3 for loss in losses)}
    session.emit(MetricsLogged(len(losses), {k: v[-1] for k, v in logged.items()}, 3.0, steps=steps, logged=logged))
    session.emit(RunFinished("completed", 0, None, None, 3.0, 0.0, None, str(run_dir)))
    session.close()
    fix_times(run_dir, started_at, 3.0)
    return run_dir


def hold_live(run_dir: Path, *, started_at: float = T0) -> RunLock:
    """Make ``run_dir`` a live run of this machine: its lock held (by this process) and its status running."""
    lock = RunLock.acquire(run_dir)
    status = read_status(run_dir)
    assert status is not None
    live = msgspec.structs.replace(
        status, state="running", host=socket.gethostname(), started_at=started_at, heartbeat=started_at
    )
    write_status(run_dir, live, durable=False)
    return lock


def both_kinds(runs_dir: Path) -> dict[str, Path]:
    """Four runs: two train runs (lr 1e-3 and 1e-2) and two scripts (one named mlp, one wide-mlp)."""
    hour = 3600.0
    return {
        "small-lr": train_run(runs_dir, "20261201-090000-cifar10-simplecnn", lr=0.001, accs=[0.31, 0.42, 0.40]),
        "big-lr": train_run(
            runs_dir, "20261201-100000-cifar10-simplecnn", lr=0.01, accs=[0.35, 0.47], started_at=T0 + hour
        ),
        "mlp": script_run(
            runs_dir,
            "20261201-110000-mlp",
            params={"name": "mlp", "width": 64, "lr": 0.003},
            losses=[2.0, 1.5, 1.2, 1.3],
            started_at=T0 + 2 * hour,
        ),
        "wide": script_run(
            runs_dir,
            "20261201-120000-wide-mlp",
            params={"name": "wide-mlp", "width": 512, "lr": 0.0003},
            losses=[2.2, 1.4, 0.9],
            started_at=T0 + 3 * hour,
        ),
    }
