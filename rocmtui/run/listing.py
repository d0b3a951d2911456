"""``rocmtui runs``: what each run folder holds, read from its small files only (never the whole stream)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rocmtui.errors import UsageError
from rocmtui.run.layout import CONFIG, SUMMARY, is_run_dir, run_dirs
from rocmtui.run.status import LIVE_STATES, effective, read_status


@dataclass(frozen=True)
class RunInfo:
    """One line of ``rocmtui runs``."""

    folder: str
    state: str
    """running, paused, stopping, finished, stopped, failed, lost, or unknown (no status file)."""
    name: str
    epoch: int
    epochs: int
    best_acc: float | None
    elapsed_s: float
    device_name: str
    started_at: float | None
    pid: int | None

    @property
    def live(self) -> bool:
        return self.state in LIVE_STATES

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def run_info(run_dir: Path) -> RunInfo:
    config, summary = _json(run_dir / CONFIG), _json(run_dir / SUMMARY)
    name = " ".join(str(config[k]) for k in ("dataset", "model") if k in config)
    status = read_status(run_dir)
    if status is None:  # a folder from before status files, or one whose writer never got that far
        state = "unknown"
        if summary.get("event") == "RunFinished":
            state = "finished" if summary.get("reason") == "completed" else "stopped"
        elif summary.get("event") == "RunFailed":
            state = "failed"
        return RunInfo(
            str(run_dir), state, name, int(summary.get("epochs_completed") or 0), int(config.get("epochs") or 0),
            summary.get("best_test_acc"), float(summary.get("total_s") or 0.0), "", None, None,
        )  # fmt: skip
    status = effective(run_dir, status)
    return RunInfo(
        str(run_dir), status.state, status.name or name, status.epoch, status.epochs, status.best_acc,
        status.elapsed_s, status.device_name, status.started_at, status.pid,
    )  # fmt: skip


def list_runs(runs_dir: Path) -> list[RunInfo]:
    """Every run under ``runs_dir``, newest first."""
    return [run_info(path) for path in run_dirs(runs_dir)]


def find_run(spec: str | None, runs_dir: Path, *, live_only: bool = False) -> Path:
    """A run folder from what the user typed: a path, a folder name under ``runs_dir``, or (None) the
    newest live run, else (unless ``live_only``) the newest run. UsageError in one line when there is none."""
    if spec is not None:
        for candidate in (Path(spec).expanduser(), runs_dir / spec):
            if is_run_dir(candidate):
                return candidate
        raise UsageError(f"{spec!r} is not a run folder (nor a run under {runs_dir}); see 'rocmtui runs'")
    runs = list_runs(runs_dir)
    for info in runs:
        if info.live:
            return Path(info.folder)
    if runs and not live_only:
        return Path(runs[0].folder)
    what = "live run" if live_only else "run"
    raise UsageError(f"no {what} under {runs_dir}; give a run folder, or --runs-dir")
