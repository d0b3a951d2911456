"""Every series of a run as CSV rows (``rocmtui runs RUN --csv``): step, time, name, value.

``time`` is the run's own clock (training time, pauses and test passes left out) when the value was reported:
for a tracked script, the flush that wrote it (values of one window share it). A ``train`` run gives each
step's loss, the learning rate and throughput of each report, and each epoch's losses, accuracies (0..1) and
seconds at the epoch's last step; a tracked script gives every value it logged. Rows follow the stream: steps
trained again after a resume from an earlier checkpoint come again, later. A name that starts like a spreadsheet
formula is written with a ``'`` before it (``neutral``).
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Iterator
from typing import TextIO

from rocmtui.base.text import plain
from rocmtui.events import EpochCompleted, EpochMetrics, MetricsLogged, StepsCompleted, TrainEvent

Row = tuple[int, float, str, float]
HEADER = ("step", "time_s", "name", "value")


def rows(events: Iterable[TrainEvent]) -> Iterator[Row]:
    """The rows of ``events``, in stream order."""
    step, spe = 0, 1
    for event in events:
        if isinstance(event, StepsCompleted):
            step, spe = event.step, max(1, event.steps_per_epoch)
            first = event.step - len(event.losses) + 1
            for offset, loss in enumerate(event.losses):
                yield first + offset, event.elapsed_s, "loss", loss
            yield event.step, event.elapsed_s, "lr", event.lr
            yield event.step, event.elapsed_s, "images_per_s", event.images_per_s
        elif isinstance(event, EpochCompleted):
            at = step or (event.epoch + 1) * spe  # the epoch's last step reported
            for name in ("train_loss", "train_acc", "test_loss", "test_acc", "seconds"):
                yield at, event.elapsed_s, f"epoch_{name}" if name == "seconds" else name, getattr(event, name)
        elif isinstance(event, MetricsLogged):
            step = event.step
            for name, (steps, values) in event.points().items():
                for at, value in zip(steps, values, strict=True):
                    yield at, event.elapsed_s, name, value
        elif isinstance(event, EpochMetrics):
            at = event.step if event.step is not None else step
            for name, value in event.values.items():
                yield at, event.elapsed_s, name, value


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet may read as the start of a formula: a name cell starting so is prefixed with ``'``
(OWASP's advice for CSV injection), so ``=HYPERLINK(...)`` stays text."""
SHOWN_NAME_LIMIT = 10_000


def neutral(name: str) -> str:
    """A text cell that no spreadsheet takes for a formula."""
    return "'" + name if name.startswith(FORMULA_STARTS) else name


def write_csv(out: TextIO, events: Iterable[TrainEvent], *, terminal: bool = False) -> int:
    """Write the header and every row of ``events``; returns the rows written (``write_rows``)."""
    return write_rows(out, rows(events), terminal=terminal)


def write_rows(out: TextIO, series: Iterable[Row], *, terminal: bool = False) -> int:
    """Write the header and every row (a run's, or a TensorBoard log's); returns the rows written. Non-finite
    values as ``nan``, ``inf`` and ``-inf``; names that start like a formula are neutralised (``neutral``).
    ``terminal``: the rows go to stdout, so names cross the text boundary too (escapes and control characters made
    visible)."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(HEADER)
    count = 0
    for step, time_s, name, value in series:
        cell = neutral(plain(name, limit=SHOWN_NAME_LIMIT) if terminal else name)
        writer.writerow((step, f"{time_s:.6g}", cell, repr(value)))  # nan, inf and -inf as Python writes them
        count += 1
    return count
