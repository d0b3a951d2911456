"""What the grid of every series shows: which series (a filter typed by the user), in pages of cells, which one
is selected, enlarged, or drawn on a log axis. Plain Python, no widgets.

A series is named by its key in ``Scalars``: a per-step series by its name, a per-epoch one as ``epoch:NAME``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from rocmtui.base.text import plain
from rocmtui.ui.state.run_state import EMA_BETA
from rocmtui.ui.state.scalars import EPOCH, Scalars
from rocmtui.ui.state.zoom import WINDOWS, Zoom

CELL_MIN_WIDTH = 36
"""Columns a cell needs at least: the y ticks, a plot of about 30 columns and its frame."""
CELL_MIN_HEIGHT = 9
"""Rows a cell needs at least: its frame, about six rows of plot and the x ticks."""
MAX_SHAPE = (6, 6)
"""Columns and rows of cells at most, however large the terminal: a cell stays big enough to read."""
FILTER_LIMIT = 200
"""Characters of a filter at most (it is the user's own text, bounded like any other)."""


def series_keys(scalars: Scalars) -> list[str]:
    """Every series of the run: the loss plot's first, the other per-step ones, then the per-epoch ones, each in
    the order it first appeared."""
    loss = scalars.loss_name
    steps = [name for name in scalars.steps if name != loss]
    return ([loss] if loss is not None else []) + steps + [EPOCH + name for name in scalars.epochs]


def compared_keys(runs: Sequence[Scalars]) -> list[str]:
    """Every series of runs compared: the first run's (``series_keys``), then those only another run has."""
    keys: dict[str, None] = {}
    for scalars in runs:
        keys.update(dict.fromkeys(series_keys(scalars)))
    return list(keys)


def key_label(key: str) -> str:
    """The name a cell shows for ``key``: the series' own name, per-epoch ones marked so."""
    name = plain(key.removeprefix(EPOCH))
    return f"{name} per epoch" if key.startswith(EPOCH) else name


@dataclass
class NameFilter:
    """The user's filter: a case-insensitive regular expression searched in each name; text that is not a
    valid expression is searched as it is, and ``error`` says why in one line."""

    text: str = ""
    error: str | None = None
    pattern: re.Pattern[str] | None = None

    @classmethod
    def of(cls, text: str) -> NameFilter:
        text = text[:FILTER_LIMIT]
        try:
            return cls(text, None, re.compile(text, re.IGNORECASE))
        except re.error as err:
            return cls(text, f"not a regular expression ({err.msg}): matched as text", None)

    def matches(self, label: str) -> bool:
        if self.pattern is not None:
            return self.pattern.search(label) is not None
        return self.text.lower() in label.lower()


@dataclass
class GridState:
    """The grid's view of a run's series: filter, pages, selection, the log axes and the enlarged cell."""

    name_filter: NameFilter = field(default_factory=NameFilter)
    shape: tuple[int, int] = (2, 2)
    """Columns and rows of cells on a page."""
    selected: str | None = None
    """The key of the selected series, kept by key: a series appearing later does not move the selection."""
    enlarged: bool = False
    """One cell, the selected series, takes the whole grid."""
    log_keys: set[str] = field(default_factory=set)
    """Series drawn on a log axis."""
    zoom: Zoom = WINDOWS[0]
    """The part of x every cell shows (``z``)."""
    smoothing: float = EMA_BETA
    """The EMA's weight over every per-step series (``[`` and ``]``)."""

    def fit(self, width: int, height: int) -> None:
        """As many cells as ``width`` x ``height`` holds at ``CELL_MIN_WIDTH`` x ``CELL_MIN_HEIGHT`` each."""
        columns = max(1, min(MAX_SHAPE[0], width // CELL_MIN_WIDTH))
        rows = max(1, min(MAX_SHAPE[1], height // CELL_MIN_HEIGHT))
        self.shape = (columns, rows)

    @property
    def per_page(self) -> int:
        return 1 if self.enlarged else self.shape[0] * self.shape[1]

    def shown(self, keys: list[str]) -> list[str]:
        """The keys that pass the filter, in order."""
        if not self.name_filter.text:
            return keys
        return [key for key in keys if self.name_filter.matches(key_label(key))]

    def position(self, shown: list[str]) -> int:
        """Where the selection is among ``shown`` (the first when it is filtered out or not chosen yet)."""
        return shown.index(self.selected) if self.selected in shown else 0

    def page(self, shown: list[str]) -> list[str]:
        """The keys of the page that holds the selection."""
        start = self.position(shown) // self.per_page * self.per_page
        return shown[start : start + self.per_page]

    def page_number(self, shown: list[str]) -> tuple[int, int]:
        """The selection's page and the number of pages, from 1."""
        pages = max(1, -(-len(shown) // self.per_page))
        return self.position(shown) // self.per_page + 1, pages

    def move(self, shown: list[str], dx: int, dy: int) -> None:
        """Select the cell ``dx`` columns and ``dy`` rows away (rows past the page's edge turn the page)."""
        if not shown:
            return
        step = dx + dy * (1 if self.enlarged else self.shape[0])
        self.selected = shown[max(0, min(len(shown) - 1, self.position(shown) + step))]

    def turn_page(self, shown: list[str], pages: int) -> None:
        """The selection ``pages`` pages on (or back), at the same place on its page."""
        self.move(shown, pages * self.per_page, 0)

    def set_filter(self, text: str) -> None:
        self.name_filter = NameFilter.of(text)

    def toggle_log(self, shown: list[str]) -> None:
        """The selected series on a log axis, or back on a linear one."""
        if shown:
            key = shown[self.position(shown)]
            self.log_keys ^= {key}
