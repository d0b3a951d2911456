"""The best and the last value of each series of a run: the runs table's metric columns.

Best is the lowest for a loss, an error or a perplexity (``lower_is_better``), the highest for anything else; the
run card's best result follows the same rule. Values that are not finite are left out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from rocmtui.events import TrainEvent
from rocmtui.run.series_csv import Row, rows

LOWER_WORDS = ("loss", "err", "perplexity", "ppl")


def lower_is_better(name: str) -> bool:
    """Whether the lowest value of series ``name`` is its best (a loss, an error, a perplexity)."""
    lowered = name.lower()
    return any(word in lowered for word in LOWER_WORDS)


@dataclass(frozen=True)
class MetricEnds:
    best: float
    last: float


def metric_ends(events: Iterable[TrainEvent]) -> dict[str, MetricEnds]:
    """Each series' best and last finite value, in the order the series first appear."""
    return ends_of(rows(events))


def ends_of(series: Iterable[Row]) -> dict[str, MetricEnds]:
    """Each name's best and last finite value over (step, time, name, value) rows: a run's, or a TensorBoard
    log's."""
    best: dict[str, float] = {}
    last: dict[str, float] = {}
    lower: dict[str, bool] = {}
    for _step, _time, name, value in series:
        if not math.isfinite(value):
            continue
        last[name] = value
        if name not in best:
            best[name], lower[name] = value, lower_is_better(name)
        elif value < best[name] if lower[name] else value > best[name]:
            best[name] = value
    return {name: MetricEnds(best[name], last[name]) for name in best}
