"""What differs between compared runs' settings: a train run's options, a tracked script's own params.

Each run's settings are flattened to ``name -> text`` (a train run's ``TrainConfig``; a script's
``track(config=...)``, with its name); the names whose text is not the same in every run, in the order the
first run has them, then the others'. A name a run lacks shows as ``-``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rocmtui.base.text import one_line
from rocmtui.run.fold import RunFold

MISSING = "-"
VALUE_WIDTH = 40
"""A value is cut to this many characters (params come from the script: untrusted, any length)."""

LEFT_OUT = frozenset({"runs_dir", "shared_runs_dir", "data_dir", "resume", "given"})
"""Options that name places on disk or how the command was typed, not how the run trains."""


@dataclass(frozen=True)
class Difference:
    name: str
    values: tuple[str, ...]
    """One text a run, in the order of the runs."""


def settings(fold: RunFold) -> dict[str, str]:
    """A run's settings as plain text: its train options, or its script's name and params."""
    if fold.tracked is not None:
        params = {"name": fold.tracked.name, **fold.tracked.params}
        return {one_line(str(key), limit=VALUE_WIDTH): _text(value) for key, value in params.items()}
    if fold.started is not None:
        options = fold.started.config.to_dict()
        return {key: _text(value) for key, value in options.items() if key not in LEFT_OUT}
    return {}


def differences(folds: Sequence[RunFold]) -> list[Difference]:
    """The settings whose text differs between ``folds`` (empty with fewer than two runs)."""
    if len(folds) < 2:
        return []
    each = [settings(fold) for fold in folds]
    names = list(dict.fromkeys(name for run in each for name in run))
    rows = [Difference(name, tuple(run.get(name, MISSING) for run in each)) for name in names]
    return [row for row in rows if len(set(row.values)) > 1]


def _text(value: object) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return one_line("null" if value is None else str(value), limit=VALUE_WIDTH)
