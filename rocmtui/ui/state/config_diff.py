"""What differs between compared runs' settings: a train run's options, a tracked script's own params.

Each run's settings are flattened to ``name -> text`` (``rocmtui.run.setting_differences``: a train run's
``TrainConfig``; a script's ``track(config=...)``, with its name); the names whose text is not the same in every
run, in the order the first run has them, then the others'. A name a run lacks shows as ``-``.
"""

from __future__ import annotations

from collections.abc import Sequence

from rocmtui.run.fold import RunFold
from rocmtui.run.setting_differences import MISSING, Difference, differing, script_settings, train_settings

__all__ = ["MISSING", "Difference", "differences", "settings"]


def settings(fold: RunFold) -> dict[str, str]:
    """A run's settings as plain text: its train options, or its script's name and params."""
    if fold.tracked is not None:
        return script_settings(fold.tracked.name, fold.tracked.params)
    if fold.started is not None:
        return train_settings(fold.started.config)
    return {}


def differences(folds: Sequence[RunFold]) -> list[Difference]:
    """The settings whose text differs between ``folds`` (empty with fewer than two runs)."""
    return differing([settings(fold) for fold in folds])
