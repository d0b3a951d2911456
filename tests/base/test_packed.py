"""Float64 bytes for a packed window: every value back bit for bit, and a partial value refused."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rocmtui.base.float_bytes import as_run, pack_floats, unpack_floats


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=300))
def test_values_come_back_bit_for_bit(values: list[float]) -> None:
    raw = pack_floats(values)
    assert raw == struct.pack(f"<{len(values)}d", *values)  # little-endian IEEE 754, whatever the machine
    assert [struct.pack("<d", v) for v in unpack_floats(raw)] == [struct.pack("<d", v) for v in values]


@pytest.mark.parametrize("size", [1, 7, 9, 15])
def test_a_partial_value_is_refused(size: int) -> None:
    with pytest.raises(ValueError, match="whole number"):
        unpack_floats(b"\0" * size)


@given(st.integers(-(10**6), 10**6), st.integers(1, 500))
def test_consecutive_steps_are_a_run(first: int, count: int) -> None:
    steps = tuple(range(first, first + count))
    assert as_run(steps) == (first, count)
    assert as_run((*steps, first + count + 1)) is None
    assert as_run(tuple(reversed(steps))) == ((first, 1) if count == 1 else None)


@given(st.integers(-(10**6), 10**6), st.integers(3, 500), st.data())
def test_steps_with_the_runs_ends_and_length_but_a_gap_inside_are_no_run(first: int, count: int, data) -> None:
    """A gap and a repeat inside keep the first and last step and the count: only every step tells."""
    steps = list(range(first, first + count))
    inside = data.draw(st.integers(1, count - 2), label="inside")
    steps[inside] = data.draw(st.integers(first - 5, first + count + 5).filter(lambda s: s != steps[inside]))
    assert as_run(tuple(steps)) is None
    assert as_run(steps) is None


def test_no_steps_are_no_run() -> None:
    assert as_run(()) is None
