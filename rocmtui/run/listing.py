"""``rocmtui runs``: what each run folder holds, read from its small files only (never the whole stream)."""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rocmtui.base.errors import UsageError
from rocmtui.base.text import plain
from rocmtui.base.units import fmt_acc, fmt_span
from rocmtui.config import TrainConfig
from rocmtui.events import RunFailed, RunFinished
from rocmtui.run.format import read_config, read_summary
from rocmtui.run.layout import is_run_dir, run_dirs
from rocmtui.run.status import LIVE_STATES, StatusUnreadable, effective, load_status


@dataclass(frozen=True)
class RunListing:
    """One line of ``rocmtui runs``."""

    folder: str
    state: str
    """running, paused, stopping, finished, stopped, failed, lost, unknown (no status file), or
    unreadable (a status file this version cannot read: ``problem`` says why)."""
    name: str
    epoch: int
    epochs: int
    best_acc: float | None
    elapsed_s: float
    device_name: str
    started_at: float | None
    pid: int | None
    problem: str = ""
    """Why the run's files could not be read, when they could not."""
    step: int = 0
    metric: str = ""
    metric_value: float | None = None
    kind: str = "train"
    """``train`` (a ``rocmtui train`` run: its folder has a ``config.json``) or ``script`` (``rocmtui.track()``)."""

    @property
    def live(self) -> bool:
        return self.state in LIVE_STATES

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_info(run_dir: Path) -> RunListing:
    """The run's line, from its small files; a file that cannot be read makes it ``unreadable``, never fatal."""
    return run_info_and_config(run_dir)[0]


def run_info_and_config(run_dir: Path) -> tuple[RunListing, TrainConfig | None]:
    """The run's line and its settings (None for a tracked script's run, or a config that cannot be read), each
    small file read once."""
    kind = "train"
    try:
        config = read_config(run_dir)
    except UsageError:  # a config.json that is bad, a link or a FIFO: the status still tells
        config = None
    else:
        kind = "train" if config is not None else "script"
    name = f"{config.dataset} {config.model}" if config is not None else ""
    epochs = config.epochs if config is not None else 0
    try:
        status = load_status(run_dir)
    except StatusUnreadable as err:
        unreadable = RunListing(
            str(run_dir), "unreadable", name, 0, epochs, None, 0.0, "", None, None, str(err), kind=kind
        )  # fmt: skip
        return unreadable, config
    if status is None:  # a folder from before status files, or one whose writer never got that far
        summary = read_summary(run_dir)
        state = "unknown"
        if isinstance(summary, RunFinished):
            state = "finished" if summary.reason == "completed" else "stopped"
            ended = RunListing(
                str(run_dir), state, name, summary.epochs_completed, epochs, summary.best_test_acc,
                summary.total_s, "", None, None, kind=kind,
            )  # fmt: skip
            return ended, config
        if isinstance(summary, RunFailed):
            state = "failed"
        return RunListing(str(run_dir), state, name, 0, epochs, None, 0.0, "", None, None, kind=kind), config
    status = effective(run_dir, status)
    listing = RunListing(
        str(run_dir), status.state, status.name or name, status.epoch, status.epochs, status.best_acc,
        status.elapsed_s, status.device_name, status.started_at, status.pid, "", status.step, status.metric,
        status.metric_value, kind,
    )  # fmt: skip
    return listing, config


def listing_cells(info: RunListing, limit: int) -> tuple[str, ...]:
    """The run's line as ``rocmtui runs`` shows it: state, started, what, progress, result, time, device,
    folder, each read from the run's folder and made plain text of at most ``limit`` characters."""
    started = time.strftime("%Y-%m-%d %H:%M", time.localtime(info.started_at)) if info.started_at else "-"
    progress = f"{info.epoch}/{info.epochs} epochs" if info.epochs else _steps(info) if info.step else "-"
    if info.best_acc is not None:
        result = f"best {fmt_acc(info.best_acc)}"
    elif info.metric and info.metric_value is not None:
        result = f"{info.metric} {info.metric_value:.4g}"
    else:
        result = "-"
    if info.kind == "script" and not info.step and not info.epochs:  # a script that has logged nothing (yet)
        progress = "no step yet" if info.live else "no step logged"
        result = "nothing logged" if result == "-" else result
    span = fmt_span(info.elapsed_s)
    cells = info.state, started, info.name or "-", progress, result, span, info.device_name or "-", info.folder
    return tuple(plain(cell, limit=limit) for cell in cells)


def _steps(info: RunListing) -> str:
    """A tracked run's step and its rate over the run's clock (pauses left out): ``step 1,200 (100/s)``."""
    if info.elapsed_s <= 0:
        return f"step {info.step:,}"
    rate = info.step / info.elapsed_s
    return f"step {info.step:,} ({rate:,.0f}/s)" if rate >= 10 else f"step {info.step:,} ({rate:.2g}/s)"


def list_runs(runs_dir: Path) -> list[RunListing]:
    """Every run under ``runs_dir``, newest first."""
    return [run_info(path) for path in run_dirs(runs_dir)]


def is_mine(run_dir: Path) -> bool:
    """True when this user owns the run folder (a folder another user made, or planted, is never picked for
    them: only named)."""
    try:
        return os.lstat(run_dir).st_uid == os.geteuid()
    except OSError:
        return False


def my_runs(runs_dir: Path) -> list[RunListing]:
    """The runs under ``runs_dir`` that this user owns, newest first."""
    return [run_info(path) for path in run_dirs(runs_dir) if is_mine(path)]


def find_run(spec: str | None, runs_dir: Path, *, live_only: bool = False) -> Path:
    """A run folder from what the user typed: a path, a folder name under ``runs_dir``, or (None) this user's
    newest live run, else (unless ``live_only``) their newest run. UsageError in one line when there is none."""
    if spec is not None:
        for candidate in (Path(spec).expanduser(), runs_dir / spec):
            if is_run_dir(candidate):
                return candidate
        raise UsageError(f"{spec!r} is not a run folder (nor a run under {runs_dir}); see 'rocmtui runs'")
    runs = my_runs(runs_dir)
    for info in runs:
        if info.live:
            return Path(info.folder)
    if runs and not live_only:
        return Path(runs[0].folder)
    what = "live run" if live_only else "run"
    raise UsageError(f"no {what} of yours under {runs_dir}; give a run folder, or --runs-dir")
