"""The runs table's data: a row a run folder (train runs and tracked scripts alike), the values its filter and its
sort read, the settings that differ between the runs listed, and deleting a run that is not live.

A row is read from the folder's small files (status, config, summary, notes) and the first lines of its stream
(a script's params), so that thousands of runs list at once; each series' best and last value needs the whole
stream, and is folded in afterwards (``fold_metrics``), on a worker. Torch-free, Textual-free.
"""

from __future__ import annotations

import math
import shutil
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rocmtui.base.errors import UsageError
from rocmtui.events import TrackStarted
from rocmtui.run.format import RunNotes, read_notes
from rocmtui.run.layout import is_run_dir, run_dirs
from rocmtui.run.listing import RunListing, run_info, run_info_and_config
from rocmtui.run.lock import RunBusyError, RunLock
from rocmtui.run.metric_ends import MetricEnds, ends_of, metric_ends
from rocmtui.run.run_filter import RunFilter, Value
from rocmtui.run.setting_differences import script_settings, train_settings
from rocmtui.run.stream import opening_start, read_events

ACCURACY = "test_acc"
"""A train run's headline series: its test accuracy (0..1), best from its status before any fold."""
FIELDS = ("state", "name", "kind", "folder", "start", "duration", "progress", "epoch", "step", "device", "tags")
"""The keys every row has for the filter and the sort, besides its settings and its series."""


@dataclass
class RunRow:
    """One run of the table."""

    folder: Path
    info: RunListing
    settings: dict[str, str]
    """As text (``rocmtui.run.setting_differences``): a train run's options, or a script's name and params."""
    notes: RunNotes = field(default_factory=RunNotes)
    metrics: dict[str, MetricEnds] | None = None
    """Each series' best and last value, once folded from the stream (None until then)."""

    @property
    def live(self) -> bool:
        return self.info.live

    @property
    def name(self) -> str:
        return self.info.name or self.folder.name

    def ends(self, series: str) -> tuple[float | None, float | None]:
        """The best and last value of ``series``: folded, or what the small files say before that (a train run's
        best test accuracy, a script's headline value)."""
        if self.metrics is not None:
            found = self.metrics.get(series)
            return (found.best, found.last) if found is not None else (None, None)
        info = self.info
        if series == ACCURACY and info.best_acc is not None:
            return info.best_acc, None
        if series == info.metric and info.metric_value is not None and math.isfinite(info.metric_value):
            return None, info.metric_value
        return None, None

    def progress(self) -> float | None:
        """Epochs done over epochs planned; a script's steps (it may not know its total)."""
        if self.info.epochs:
            return self.info.epoch / self.info.epochs
        return float(self.info.step) if self.info.step else None

    def values(self) -> dict[str, Value]:
        """What the filter and the sort read: the fixed fields, the settings, each series' ``best.NAME`` and
        ``last.NAME`` (and ``NAME``: its last value, unless a setting has that name)."""
        info = self.info
        values: dict[str, Value] = dict(self.settings)
        for series, ends in (self.metrics or {}).items():
            values[f"best.{series}"], values[f"last.{series}"] = ends.best, ends.last
            values.setdefault(series, ends.last)
        if self.metrics is None:
            best, last = self.ends(ACCURACY if info.kind == "train" else info.metric)
            series = ACCURACY if info.kind == "train" else info.metric
            if series:
                values[f"best.{series}"], values[f"last.{series}"] = best, last
                values.setdefault(series, last)
        values.update(
            state=info.state,
            name=self.name,
            kind=info.kind,
            folder=self.folder.name,
            start=_local_time(info.started_at),
            duration=info.elapsed_s,
            progress=self.progress(),
            epoch=info.epoch,
            step=info.step,
            device=info.device_name,
            tags=list(self.notes.tags),
            note=self.notes.note,
        )
        return values


def load_row(run_dir: Path) -> RunRow:
    """A run's row from its small files and its stream's first lines (never fatal: an unreadable file leaves its
    part empty, as ``rocmtui runs`` lists it)."""
    info, config = run_info_and_config(run_dir)
    settings: dict[str, str] = {}
    if config is not None:
        settings = train_settings(config)
    elif info.kind == "script":
        start = opening_start(run_dir)
        if isinstance(start, TrackStarted):
            settings = script_settings(start.name, start.params)
    return RunRow(run_dir, info, settings, read_notes(run_dir))


def load_rows(runs_dir: Path, folders: Iterable[Path] | None = None) -> list[RunRow]:
    """Every run under ``runs_dir`` (or ``folders``), newest first."""
    return [load_row(path) for path in (run_dirs(runs_dir) if folders is None else folders)]


def fold_metrics(row: RunRow) -> RunRow:
    """The row with each series' best and last value, read from the whole stream (a TensorBoard run's: from
    its event files)."""
    try:
        if row.info.kind == "tensorboard":
            from rocmtui.run.tensorboard_log import csv_rows

            row.metrics = ends_of(csv_rows(row.folder))
        else:
            row.metrics = metric_ends(read_events(row.folder))
    except (OSError, UsageError):
        row.metrics = {}
    return row


def series_names(rows: Sequence[RunRow]) -> list[str]:
    """Every series the rows know of, most common first, a train run's test accuracy first of equals (before the
    folds: the train runs' test accuracy and the scripts' headline series)."""
    counts: dict[str, int] = {}
    for row in rows:
        headline = ACCURACY if row.info.kind == "train" else row.info.metric
        names = list(row.metrics) if row.metrics is not None else [headline]
        for name in names:
            if name:
                counts[name] = counts.get(name, 0) + 1
    return sorted(counts, key=lambda name: (-counts[name], name != ACCURACY))


def names_series(keys: Iterable[str], rows: Sequence[RunRow]) -> bool:
    """Whether any of ``keys`` (a filter's, a sort's) is a series' value rather than a field or a setting: then the
    rows' series must be folded from their streams before the filter or the sort can be right."""
    known = {*FIELDS, "note", *(name for row in rows for name in row.settings)}
    return any(key not in known for key in keys)


def differing_settings(rows: Sequence[RunRow]) -> list[str]:
    """The settings that take more than one value among the rows that have them (the table's setting columns):
    those most rows have first (a train run's option and a script's param of one name are one column), a setting
    one kind of run lacks is not a difference by itself."""
    seen: dict[str, set[str]] = {}
    having: dict[str, int] = {}
    for row in rows:
        for name, value in row.settings.items():
            seen.setdefault(name, set()).add(value)
            having[name] = having.get(name, 0) + 1
    names = [name for name, values in seen.items() if len(values) > 1]
    return sorted(names, key=lambda name: -having[name])


def select(rows: Sequence[RunRow], run_filter: RunFilter) -> list[RunRow]:
    return [row for row in rows if run_filter.matches(row.values())]


def sort_rows(rows: Sequence[RunRow], key: str, *, descending: bool = False) -> list[RunRow]:
    """``rows`` ordered by ``key`` (a field, a setting or a series' ``best.``/``last.`` value): numbers as numbers,
    text without regard to case, rows without it last whichever the direction."""
    present = [(sort_value(row.values().get(key)), row) for row in rows]
    having = [pair for pair in present if pair[0] is not None]
    missing = [row for value, row in present if value is None]
    having.sort(key=lambda pair: pair[0], reverse=descending)  # type: ignore[arg-type,return-value]
    return [row for _, row in having] + missing


def sort_value(value: Value) -> tuple[int, float, str] | None:
    """A value's place in a sort: numbers (numeric text too) before text; None when there is none."""
    if value is None or (isinstance(value, str | list | tuple) and not value):
        return None
    if not isinstance(value, str | bool | int | float):  # the tags
        return (1, 0.0, ",".join(value).lower())
    if isinstance(value, bool | int | float):
        number = float(value)
        return None if math.isnan(number) else (0, number, "")
    try:
        number = float(value)
    except ValueError:
        return (1, 0.0, value.lower())
    return (0, number, "") if math.isfinite(number) else (1, 0.0, value.lower())


def delete_run(run_dir: Path, *, remove: Callable[[Path], None] = shutil.rmtree) -> None:
    """Remove a run folder that nobody writes. UsageError (one line) for a live run, a run whose status says live
    on another machine, or a path that is not a run folder; its lock is held while it goes, so that no resume
    starts writing it meanwhile."""
    if run_dir.is_symlink() or not is_run_dir(run_dir):
        raise UsageError(f"{run_dir} is not a run folder")
    info = run_info(run_dir)
    if info.live:
        raise UsageError(f"{run_dir} is live ({info.state}): stop it first ('rocmtui stop {run_dir}')")
    try:
        lock = RunLock.acquire(run_dir)
    except RunBusyError as err:
        raise UsageError(f"{run_dir} is live: {err}") from None
    except UsageError as err:  # a planted run.lock (a link, a FIFO): refused, not followed
        raise UsageError(f"{run_dir} cannot be deleted: {err}") from None
    try:
        remove(run_dir)
    finally:
        lock.release()


def _local_time(at: float | None) -> str | None:
    """A start time as local ``YYYY-MM-DDTHH:MM:SS``: text that sorts in time order and that a filter compares
    with a date or a time as typed (``start>2026-12-01``, ``start>=2026-12-01T09:30``)."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(at)) if at else None
