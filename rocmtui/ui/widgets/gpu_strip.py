"""The GPU under the curves: utilisation and memory in a row each, on the same x as the plot above.

Each column of the plot's area covers a stretch of its x axis; through the run's ``Timeline`` that stretch is
a stretch of wall time, and the column shows the GPU samples that fell in it (``GpuTrack.columns``). In the
time modes that mapping is exact; against the step it goes through the time of each report, so a slow
epoch or a data stall shows as a stretch of low utilisation under the steps it slowed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from rich.text import Text

from rocmtui.ui.state.gpu_track import GpuTrack

LEVELS = " ▁▂▃▄▅▆▇█"
UTIL_STYLE = "bright_green"
MEMORY_STYLE = "bright_magenta"
NO_SAMPLES = "no GPU samples in this run"


def blocks(values: Sequence[float | None]) -> str:
    """A block per value of 0-100 (a blank where unknown, the lowest block for a reading of 0)."""
    out = []
    for value in values:
        if value is None:
            out.append(" ")
        else:
            out.append(LEVELS[max(1, min(8, round(value / 100 * 8)))])
    return "".join(out)


def strip_lines(
    track: GpuTrack,
    wall_at: Callable[[float], float | None],
    *,
    axis: tuple[float, float] | None,
    drawn_to: float,
    left: int,
    width: int,
    rows: int,
) -> list[Text]:
    """``rows`` (1 or 2) lines: utilisation, then memory, in the ``width - left`` columns right of ``left``.

    ``wall_at`` maps the axis to wall time; ``axis`` is the x range shown and ``drawn_to`` the newest x drawn
    (columns past it, the run's future, stay blank).
    """
    cells = width - left
    edges = _edges(wall_at, axis, drawn_to, cells)
    if edges is None or not track or not track.covers(edges[0], edges[-1]):
        return [Text(NO_SAMPLES.rjust(len(NO_SAMPLES) + max(0, left)), style="dim", no_wrap=True, overflow="crop")]
    utils, memory = track.columns(edges)
    pad = cells - len(utils)
    lines = [_row("gpu", utils, pad, left, UTIL_STYLE)]
    if rows >= 2:
        lines.append(_row("mem", memory, pad, left, MEMORY_STYLE))
    return lines


def _edges(
    wall_at: Callable[[float], float | None], axis: tuple[float, float] | None, drawn_to: float, cells: int
) -> list[float] | None:
    """The wall time at each column's left edge, up to the last column with something drawn, and its end."""
    if axis is None or cells <= 0 or not math.isfinite(drawn_to):  # -inf: nothing drawn yet
        return None
    low, high = axis
    span = (high - low) / cells
    if span <= 0:
        return None
    shown = max(1, min(cells, int((drawn_to - low) / span) + 1))
    edges = [wall_at(low + i * span) for i in range(shown + 1)]
    known = [e for e in edges if e is not None]
    return known if len(known) == len(edges) else None


def _row(label: str, values: list[float | None], pad: int, left: int, style: str) -> Text:
    text = Text(no_wrap=True, overflow="crop")
    text.append(f"{label[: max(0, left - 1)]} ".rjust(left)[:left], style="dim")
    text.append(blocks(values), style=style)
    text.append(" " * max(0, pad))
    return text
