"""Two series as braille dots on a grid of cells: the picture of a history graph, without Textual.

Each cell is 2 dots wide and 4 high, so a graph of ``w`` cells shows ``2 w`` points. A point is drawn as the
vertical run of dots from its min to its max (joined to the previous point's mean, so a line stays a line):
over a long timebase a bucket's spread is visible, not hidden behind its mean. Each cell belongs to the
series with dots in it (the second series wins a shared cell), which the widget colours.
"""

from __future__ import annotations

from collections.abc import Sequence

from rocmtui.gpu.history import Point

BLANK, FIRST, SECOND = 0, 1, 2
"""Cell owners: nothing drawn, the first series, the second series."""
_LEFT = (0x40, 0x04, 0x02, 0x01)
"""Dot bits of the left column, bottom row first (braille numbering 7, 3, 2, 1)."""
_RIGHT = (0x80, 0x20, 0x10, 0x08)


def dot_level(value: float, scale: float, levels: int) -> int:
    """``value`` on 0..scale as a dot row, 0 (bottom) to ``levels - 1`` (top), clamped."""
    if scale <= 0:
        return 0
    return max(0, min(levels - 1, round(value / scale * (levels - 1))))


def _runs(points: Sequence[Point | None], scale: float, levels: int) -> list[tuple[int, int] | None]:
    """The (low, high) dot rows each point covers, joined to the previous point's mean."""
    runs: list[tuple[int, int] | None] = []
    previous: int | None = None
    for point in points:
        if point is None:
            runs.append(None)
            previous = None
            continue
        low = dot_level(point.low, scale, levels)
        high = dot_level(point.high, scale, levels)
        if previous is not None:
            low, high = min(low, previous), max(high, previous)
        runs.append((low, high))
        previous = dot_level(point.mean, scale, levels)
    return runs


def picture(
    series: Sequence[tuple[Sequence[Point | None], float]], width: int, height: int
) -> list[tuple[str, tuple[int, ...]]]:
    """``height`` rows (top first) of ``width`` braille cells; each row is (text, owner of each cell).

    ``series``: up to two (points, scale) pairs; points are ``2 * width`` columns, oldest first.
    """
    if width <= 0 or height <= 0:
        return [("", ())] * max(0, height)
    levels = 4 * height
    bits = [[0] * width for _ in range(height)]
    owner = [[BLANK] * width for _ in range(height)]
    for number, (points, scale) in enumerate(series[:2], start=FIRST):
        recent = list(points)[-2 * width :]
        offset = 2 * width - len(recent)
        for column, run in enumerate(_runs(recent, scale, levels), start=offset):
            if run is None:
                continue
            cell, side = divmod(column, 2)
            masks = _RIGHT if side else _LEFT
            for level in range(run[0], run[1] + 1):
                row = height - 1 - level // 4
                bits[row][cell] |= masks[level % 4]
                owner[row][cell] = number
    return [
        ("".join(chr(0x2800 + b) if b else " " for b in row_bits), tuple(row_owner))
        for row_bits, row_owner in zip(bits, owner, strict=True)
    ]
