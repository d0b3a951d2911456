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


def _span_masks(masks: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """``[low][high]``: the bits of one cell side's dot rows ``low`` to ``high`` (0 bottom, 3 top)."""
    return tuple(tuple(sum(masks[low : high + 1]) for high in range(4)) for low in range(4))


_SPANS = (_span_masks(_LEFT), _span_masks(_RIGHT))
_CHARS = tuple(chr(0x2800 + bits) if bits else " " for bits in range(256))
"""A cell's character by its dot bits (no dot: a blank)."""


def picture(
    series: Sequence[tuple[Sequence[Point | None], float]], width: int, height: int
) -> list[tuple[str, tuple[int, ...]]]:
    """``height`` rows (top first) of ``width`` braille cells; each row is (text, owner of each cell).

    ``series``: up to two (points, scale) pairs; points are ``2 * width`` columns, oldest first.

    Drawn for every graph at every sample, so written for speed: a point's dot rows are worked out inline (as
    ``dot_level`` does) and set a cell row at a time (the bits of the rows it covers in that cell, from a table),
    not a dot at a time (1.0 ms to 0.47 ms for two series of 132 points on 6 rows, on the 2-core CPU box)."""
    if width <= 0 or height <= 0:
        return [("", ())] * max(0, height)
    top = 4 * height - 1
    bits = [[0] * width for _ in range(height)]
    owner = [[BLANK] * width for _ in range(height)]
    for number, (points, scale) in enumerate(series[:2], start=FIRST):
        recent = list(points)[-2 * width :]
        column = 2 * width - len(recent) - 1
        previous = -1
        for point in recent:
            column += 1
            if point is None:
                previous = -1
                continue
            if scale <= 0:
                low = high = mean = 0
            else:  # as dot_level, clamped by comparisons (min and max are calls: 0.25 µs each on the CPU box)
                low = round(point.low / scale * top)
                high = round(point.high / scale * top)
                mean = round(point.mean / scale * top)
                low = 0 if low < 0 else top if low > top else low
                high = 0 if high < 0 else top if high > top else high
                mean = 0 if mean < 0 else top if mean > top else mean
            if previous >= 0:  # joined to the previous point's mean
                low = previous if previous < low else low
                high = previous if previous > high else high
            previous = mean
            if low > high:
                continue
            cell = column >> 1
            spans = _SPANS[column & 1]
            first_row, last_row = low >> 2, high >> 2
            for level_row in range(first_row, last_row + 1):
                row = height - 1 - level_row
                bits[row][cell] |= spans[low & 3 if level_row == first_row else 0][
                    high & 3 if level_row == last_row else 3
                ]
                owner[row][cell] = number
    return [
        ("".join(map(_CHARS.__getitem__, row_bits)), tuple(row_owner))
        for row_bits, row_owner in zip(bits, owner, strict=True)
    ]
