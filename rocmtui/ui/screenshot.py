"""The screen as an SVG picture (the ``S`` key): Textual's own screenshot, written whole into a sensible folder.

A run's pictures go into its folder (``screens/``), the monitor's into the current folder; where that cannot
be written, the next place is tried (the current folder, then the user's data folder). Under ``rocmtui serve``
the file is written on the server, where the app runs, and the notice says so.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path

from rocmtui.base.files import atomic_write
from rocmtui.run.format import SCREENS

MAX_SAME_SECOND = 100
"""Pictures taken within one second get ``-2``, ``-3``... up to this many."""


def run_places(run_dir: Path | None) -> list[Path]:
    """Where a run's picture goes: its folder's ``screens/``, else the current folder, else the data folder."""
    places = [run_dir / SCREENS] if run_dir is not None and run_dir.is_dir() else []
    return [*places, *monitor_places()]


def monitor_places() -> list[Path]:
    import platformdirs  # a dependency of textual

    return [Path.cwd(), Path(platformdirs.user_data_dir("rocmtui")) / SCREENS]


def free_name(folder: Path, now: float) -> Path:
    """``screen-20261203-011502.svg`` in ``folder``, with a number when that name is taken."""
    stem = time.strftime("screen-%Y%m%d-%H%M%S", time.localtime(now))
    for count in range(1, MAX_SAME_SECOND + 1):
        path = folder / (f"{stem}.svg" if count == 1 else f"{stem}-{count}.svg")
        if not path.exists() and not path.is_symlink():
            return path
    raise FileExistsError(f"{folder} already holds {MAX_SAME_SECOND} pictures of this second")


def write_picture(svg: str, places: Iterable[Path], now: float | None = None) -> Path:
    """Write ``svg`` whole into the first place that takes it; returns its path. OSError (the last place's) when
    none does. A place that is a symbolic link is passed over: nothing is written through a planted link."""
    error: OSError = FileNotFoundError("nowhere to write the picture")
    for folder in places:
        try:
            if folder.is_symlink():
                raise IsADirectoryError(f"{folder} is a symbolic link")
            folder.mkdir(parents=True, exist_ok=True)
            path = free_name(folder, time.time() if now is None else now)
            atomic_write(path, svg.encode("utf-8"))
        except OSError as err:
            error = err
            continue
        return path
    raise error
