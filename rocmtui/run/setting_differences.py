"""A run's settings as plain text, and which of them differ between runs: the ``d`` key of a comparison and the
runs table's columns alike.

A train run's settings are its ``TrainConfig`` (the options that name places on disk or how the command was typed
left out); a tracked script's, its name and its ``track(config=...)`` params. Every value is outside text once
it comes from a script: one line, bounded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from rocmtui.base.text import one_line
from rocmtui.config import TrainConfig

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


def train_settings(config: TrainConfig) -> dict[str, str]:
    """A train run's options as text."""
    return {key: setting_text(value) for key, value in config.to_dict().items() if key not in LEFT_OUT}


def script_settings(name: str, params: Mapping[str, object]) -> dict[str, str]:
    """A tracked script's name and params as text (keys and values are the script's: one line, bounded)."""
    merged = {"name": name, **params}
    return {one_line(str(key), limit=VALUE_WIDTH): setting_text(value) for key, value in merged.items()}


def differing(each: Sequence[Mapping[str, str]]) -> list[Difference]:
    """The settings whose text differs between the runs (empty with fewer than two), in the order the first run
    has them, then the others'; a run that lacks one shows ``MISSING``."""
    if len(each) < 2:
        return []
    names = list(dict.fromkeys(name for run in each for name in run))
    rows = [Difference(name, tuple(run.get(name, MISSING) for run in each)) for name in names]
    return [row for row in rows if len(set(row.values)) > 1]


def setting_text(value: object) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, bool | int):  # a number's text needs no cleaning
        return str(value)
    return one_line("null" if value is None else str(value), limit=VALUE_WIDTH)
