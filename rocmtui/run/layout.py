"""Where run folders are, and how a new one is made without racing another process (file names: ``format``)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from rocmtui.errors import UsageError
from rocmtui.run.format import CONFIG, EVENTS

MAX_SUFFIX = 1000
RUNS_DIR_ENV = "ROCMTUI_RUNS_DIR"
"""Where runs are made and looked for when no ``--runs-dir`` is given: every command, and ``track()``."""


def default_runs_dir() -> Path:
    """``$ROCMTUI_RUNS_DIR``, else ``runs`` (in the current folder)."""
    return Path(os.environ.get(RUNS_DIR_ENV) or "runs")


def run_name(*parts: str) -> str:
    """``YYYYmmdd-HHMMSS-part-part``: sorts by start time."""
    return "-".join([time.strftime("%Y%m%d-%H%M%S"), *parts])


def create_run_dir(runs_dir: Path, name: str) -> Path:
    """Make ``runs_dir/name`` (or ``name-2``, ``name-3``...) atomically: ``mkdir`` decides, never a check first.
    The path returned is absolute: a script's later ``chdir`` cannot redirect its files."""
    runs_dir = Path(os.path.abspath(runs_dir))
    try:
        runs_dir.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise UsageError(f"--runs-dir {runs_dir} is a file, not a folder") from None
    if not runs_dir.is_dir():
        raise UsageError(f"--runs-dir {runs_dir} is not a folder")
    for n in range(1, MAX_SUFFIX):
        path = runs_dir / (name if n == 1 else f"{name}-{n}")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return path
    raise UsageError(f"{runs_dir} already holds {MAX_SUFFIX} runs named {name}")


def is_run_dir(path: Path) -> bool:
    return path.is_dir() and ((path / EVENTS).is_file() or (path / CONFIG).is_file())


def run_dirs(runs_dir: Path) -> list[Path]:
    """The run folders directly under ``runs_dir``, newest first (their names begin with the start time)."""
    if not runs_dir.is_dir():
        return []
    return sorted((p for p in runs_dir.iterdir() if is_run_dir(p)), key=lambda p: p.name, reverse=True)
