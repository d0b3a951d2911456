"""Where two versions of a line differ, as runs of cells to repaint: what a widget marks dirty so that only the
changed cells go to the terminal (with ``rocmtui.ui.cropped_update``, which writes a dirty span from its start)."""

from __future__ import annotations

from collections.abc import Iterable

from textual.geometry import Region

SPAN_BYTES = 16
"""About what a separate run of changed cells costs the terminal: a cursor move (8 bytes) and, as often as not, a
change of colour (``rocmtui.ui.cropped_update``). Measured on the replayed H200 at 80x24: 181 bytes/s at 8, 183
at 12 to 24, 206 at 32 (the 27 bytes of a power bar's track between its tip and its value written again)."""


def changed_runs(before: str, after: str) -> list[tuple[int, int]]:
    """(first, end) of each run of cells where two lines differ, oldest first; runs apart by fewer bytes of
    unchanged text than ``SPAN_BYTES`` are one run (the text between is cheaper to write again than to skip)."""
    shorter = min(len(before), len(after))
    runs: list[tuple[int, int]] = []
    for i in range(max(len(before), len(after))):
        if i < shorter and before[i] == after[i]:
            continue
        if runs and len(after[runs[-1][1] : i].encode()) < SPAN_BYTES:
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
    return runs


def run_regions(runs: Iterable[tuple[int, int]], y: int, width: int) -> list[Region]:
    """Line ``y``'s runs of cells (``changed_runs``) as regions to mark dirty, cut at ``width`` cells (a change past
    the right edge shows nothing)."""
    return [Region(first, y, min(width, end) - first, 1) for first, end in runs if first < min(width, end)]
