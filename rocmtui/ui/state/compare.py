"""Comparing runs (``rocmtui watch RUN1 RUN2 ...``): the other runs beside the main one.

The first run is the main one: its progress, GPU samples and controls. Each other run is followed by
its own source on its own thread worker (``follow`` over its folder, with a control of its own that
only ever asks it to leave: nothing is sent to those runs), and folded into its own ``RunState``. The
plots overlay every run's curves; the epoch table shows one run at a time.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from textual.message import Message

from rocmtui.base.text import plain
from rocmtui.events import Emit, RunControl, TrainEvent
from rocmtui.ui.state.run_state import RunState

OtherSource = Callable[[Emit, RunControl], object]
"""Follows one other run: emits its events until it ends or ``control.leave`` is set."""

RUN_COLORS = ("cyan+", "orange", "magenta+", "green+")
"""Plotext colour of each run, main first (they repeat after four runs)."""

LABEL_WIDTH = 18
_STAMP = re.compile(r"^\d{8}-(\d{6})-")


def run_color(index: int) -> str:
    return RUN_COLORS[index % len(RUN_COLORS)]


def run_colors(runs: Sequence[ComparedRun]) -> dict[str, str]:
    """Each run's label and plotext colour, main first: the legend of a plot that compares them."""
    return {run.label: run_color(index) for index, run in enumerate(runs)}


def _middle_cut(text: str, width: int) -> str:
    """``text`` in ``width`` columns, cut in the middle (both ends tell runs apart: recipe, ``-2`` suffix)."""
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return f"{text[:head]}…{text[len(text) - (width - 1 - head) :]}"


def run_labels(folders: Sequence[str | Path], width: int = LABEL_WIDTH, *, names: Sequence[str] = ()) -> list[str]:
    """Short legend names: a run's own name where it has one (``names``: a script's ``track(name=...)``, "" for
    none), else its folder's name without the date and time stamp; with the folder's start time when two labels
    would be the same otherwise; cut to ``width``."""
    folder_names = [plain(Path(folder).name or str(folder)) for folder in folders]  # folder names: outside text
    own = [plain(name) for name in names] + [""] * (len(folders) - len(names))
    pairs = list(zip(own, folder_names, strict=True))
    short = [name or _STAMP.sub("", folder) or folder for name, folder in pairs]
    if len(set(short)) < len(short):
        short = [_with_time(name, folder) for name, folder in pairs]
    if len(set(short)) < len(short):
        short = [f"{name} {folder}" if name else folder for name, folder in pairs]
    return [_middle_cut(label, width) for label in short]


def _with_time(name: str, folder: str) -> str:
    """``mlp 055054`` for a named run, ``055054-mlp`` for a folder: the start time tells two apart."""
    stamp = _STAMP.match(folder)
    if not name:
        return re.sub(r"^\d{8}-", "", folder)
    return f"{name} {stamp[1]}" if stamp else f"{name} {folder}"


@dataclass
class ComparedRun:
    """One run of the comparison, as the screen shows it."""

    label: str
    state: RunState


class OtherRunEvent(Message):
    """An event of the ``index``-th other run (1: the first after the main one)."""

    def __init__(self, index: int, event: TrainEvent) -> None:
        super().__init__()
        self.index = index
        self.event = event
