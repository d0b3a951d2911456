"""Where run folders are, and how a new one is made without racing another process (file names: ``format``)."""

from __future__ import annotations

import os
import secrets
import stat
import time
from pathlib import Path

from rocmtui.base.errors import UsageError
from rocmtui.base.private_dir import make_dirs, runs_dir_problem
from rocmtui.run.format import CONFIG, EVENTS

RUNS_DIR_MODE = 0o755
RUN_MODE = 0o700
SHARED_RUN_MODE = 0o750
"""A run folder in a team runs folder: its group reads it, nobody but its writer writes it."""
SHARED_ENV = "ROCMTUI_SHARED_RUNS_DIR"
SUFFIX_BYTES = 4
"""Random bytes after a run's readable name (8 hex digits): another user cannot make its folder first."""
MAX_TRIES = 16
RUNS_DIR_ENV = "ROCMTUI_RUNS_DIR"
"""Where runs are made and looked for when no ``--runs-dir`` is given: every command, and ``track()``."""


def default_runs_dir() -> Path:
    """``$ROCMTUI_RUNS_DIR``, else ``runs`` (in the current folder)."""
    return Path(os.environ.get(RUNS_DIR_ENV) or "runs")


def run_name(*parts: str) -> str:
    """``YYYYmmdd-HHMMSS-part-part``: sorts by start time."""
    return "-".join([time.strftime("%Y%m%d-%H%M%S"), *parts])


def shared_by_default() -> bool:
    """``$ROCMTUI_SHARED_RUNS_DIR`` set to 1 (or yes, true): a team runs folder accepted on purpose."""
    return os.environ.get(SHARED_ENV, "").strip().lower() in ("1", "yes", "true")


def create_run_dir(runs_dir: Path, name: str, *, shared: bool | None = None) -> Path:
    """Make ``runs_dir/name-XXXXXXXX`` (a random suffix) atomically: ``mkdir`` decides, never a check first. The
    suffix is drawn, not counted, so that no one can take a run's folder before it is made.

    The runs folder is made 0755 where missing; one another user owns, or others can write without the sticky
    bit, is refused in one line unless ``shared`` (None: ``$ROCMTUI_SHARED_RUNS_DIR``). The run folder is made
    0700 (0750 when shared), whatever the umask. The path returned is absolute: a script's later ``chdir``
    cannot redirect its files."""
    shared = shared_by_default() if shared is None else shared
    runs_dir = _checked_runs_dir(runs_dir, shared)
    mode = SHARED_RUN_MODE if shared else RUN_MODE
    for _ in range(MAX_TRIES):
        path = runs_dir / f"{name}-{secrets.token_hex(SUFFIX_BYTES)}"
        try:
            path.mkdir(mode)
        except FileExistsError:
            continue
        path.chmod(mode)  # whatever the umask
        return path
    raise UsageError(f"{runs_dir}: {MAX_TRIES} random names for {name} were all taken; is something making folders?")


def _checked_runs_dir(runs_dir: Path, shared: bool) -> Path:
    """The runs folder as an absolute path, made 0755 where missing; UsageError for one that is not a folder, or
    that another user owns or others can write (unless ``shared``)."""
    runs_dir = Path(os.path.abspath(runs_dir))
    try:
        make_dirs(runs_dir, RUNS_DIR_MODE)
    except FileExistsError:
        raise UsageError(f"--runs-dir {runs_dir} is a file, not a folder") from None
    if not runs_dir.is_dir():
        raise UsageError(f"--runs-dir {runs_dir} is not a folder")
    problem = runs_dir_problem(runs_dir, shared=shared)
    if problem:
        raise UsageError(problem)
    return runs_dir


def job_run_dir(runs_dir: Path, job_id: str, *, shared: bool | None = None) -> Path:
    """``runs_dir/job-<job_id>``: the one folder of a job of several nodes, which every node's launcher makes or
    opens (the first ``mkdir`` wins; the others find it). One that is a link, is not a folder, belongs to another
    user or others can write is refused in one line: every node trusts what it finds there."""
    shared = shared_by_default() if shared is None else shared
    runs_dir = _checked_runs_dir(runs_dir, shared)
    path = runs_dir / f"job-{job_id}"
    mode = SHARED_RUN_MODE if shared else RUN_MODE
    try:
        path.mkdir(mode)
        path.chmod(mode)  # whatever the umask
        return path
    except FileExistsError:
        pass
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.geteuid() or info.st_mode & 0o022:
        raise UsageError(
            f"{path} is not a private folder of yours (a link, a file, another user's or writable by others); "
            "give the job another --rdzv-id"
        )
    return path


def is_run_dir(path: Path) -> bool:
    return path.is_dir() and ((path / EVENTS).is_file() or (path / CONFIG).is_file())


def run_dirs(runs_dir: Path) -> list[Path]:
    """The run folders directly under ``runs_dir``, newest first (their names begin with the start time)."""
    if not runs_dir.is_dir():
        return []
    return sorted((p for p in runs_dir.iterdir() if is_run_dir(p)), key=lambda p: p.name, reverse=True)
