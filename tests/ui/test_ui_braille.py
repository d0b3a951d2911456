"""The braille picture as drawn a dot at a time: ``picture`` sets a cell row at a time from a table, for speed; this
holds it to the plain rule, point by point and dot by dot, over random series."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from rocmtui.gpu.history import Point
from rocmtui.ui.look.braille import BLANK, FIRST, dot_level, picture

LEFT = (0x40, 0x04, 0x02, 0x01)
RIGHT = (0x80, 0x20, 0x10, 0x08)
"""Braille dot bits, bottom row first: the left column's dots 7, 3, 2, 1 and the right column's 8, 6, 5, 4."""


def dot_at_a_time(
    series: Sequence[tuple[Sequence[Point | None], float]], width: int, height: int
) -> list[tuple[str, tuple[int, ...]]]:
    """Each point the run of dot rows from its min to its max, joined to the previous point's mean; each dot set
    on its own; a cell owned by the last series with a dot in it."""
    levels = 4 * height
    bits = [[0] * width for _ in range(height)]
    owner = [[BLANK] * width for _ in range(height)]
    for number, (points, scale) in enumerate(series[:2], start=FIRST):
        recent = list(points)[-2 * width :]
        previous: int | None = None
        for column, point in enumerate(recent, start=2 * width - len(recent)):
            if point is None:
                previous = None
                continue
            low, high = dot_level(point.low, scale, levels), dot_level(point.high, scale, levels)
            if previous is not None:
                low, high = min(low, previous), max(high, previous)
            previous = dot_level(point.mean, scale, levels)
            for level in range(low, high + 1):
                row, cell = height - 1 - level // 4, column // 2
                bits[row][cell] |= (RIGHT if column % 2 else LEFT)[level % 4]
                owner[row][cell] = number
    return [
        ("".join(chr(0x2800 + b) if b else " " for b in row), tuple(owners))
        for row, owners in zip(bits, owner, strict=True)
    ]


values = st.floats(min_value=-50.0, max_value=250.0, allow_nan=False)
points = st.one_of(
    st.none(),
    st.tuples(values, values, values).map(lambda v: Point(min(v), sorted(v)[1], max(v))),
    st.tuples(values, values, values).map(lambda v: Point(*v)),  # in any order: a low above its high draws no run
)


@settings(max_examples=300, deadline=None)
@given(
    width=st.integers(min_value=1, max_value=12),
    height=st.integers(min_value=1, max_value=5),
    series=st.lists(
        st.tuples(st.lists(points, max_size=30), st.sampled_from([0.0, -1.0, 1.0, 7.5, 100.0, 141.0])),
        max_size=3,
    ),
)
def test_the_picture_is_the_one_drawn_a_dot_at_a_time(
    width: int, height: int, series: list[tuple[list[Point | None], float]]
) -> None:
    assert picture(series, width, height) == dot_at_a_time(series, width, height)


def test_a_run_across_cell_rows_sets_each_row_from_its_first_to_its_last_dot() -> None:
    # 3 to 9 of 0..11 on three rows: the bottom row's top dot, the middle row whole, the top row's bottom two dots.
    rows = picture([([Point(3 / 11 * 100, 5 / 11 * 100, 9 / 11 * 100), None], 100.0)], width=1, height=3)
    assert [ord(text) - 0x2800 for text, _ in rows] == [0x40 | 0x04, 0x40 | 0x04 | 0x02 | 0x01, 0x01]
