"""Scalars as scripts log them: Python numbers and 0-d tensors, converted only when a window is flushed.

Tensors are duck-typed (``.detach()``, ``.item()``), never imported. Converting one is a GPU sync, so
``Window`` keeps them as they came and converts the whole window at once, a few times a second.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Protocol, Union, runtime_checkable


@runtime_checkable
class Tensorish(Protocol):
    """A 0-d tensor or array: anything with ``item()`` (torch, numpy, jax)."""

    def item(self) -> float | int | bool: ...


Scalar = Union[float, int, Tensorish]  # noqa: UP007 (a runtime alias: the | form fails on a Protocol in 3.10)


REAL = "a real number (int, float, bool, or a numpy or 0-d torch scalar)"


def check_scalar(name: str, value: object) -> object:
    """The value to keep until the flush (a tensor detached from its graph); a TypeError naming ``name``
    for anything that is not a real number: a string, a complex, a numpy string, a tensor of several values."""
    if isinstance(value, int | float):
        return value
    item = getattr(value, "item", None)
    if item is None or not callable(item):
        raise TypeError(f"{name}: expected {REAL}, got {type(value).__name__}")
    if getattr(value, "ndim", 0) != 0:
        raise TypeError(f"{name}: expected a 0-d tensor, got one of shape {tuple(getattr(value, 'shape', ()))}")
    if not _real_dtype(getattr(value, "dtype", None)):
        raise TypeError(f"{name}: expected {REAL}, got {type(value).__name__} of dtype {getattr(value, 'dtype', '?')}")
    detach = getattr(value, "detach", None)
    return detach() if callable(detach) else value  # keeps no autograd graph alive until the flush


def _real_dtype(dtype: object) -> bool:
    """Booleans, integers and floats: numpy's (and jax's) dtype by its kind, torch's by its flags (read from the
    dtype, never by ``.item()``: that would wait for the GPU at every ``log``)."""
    kind = getattr(dtype, "kind", None)
    if isinstance(kind, str):
        return kind in "biuf"
    is_complex = getattr(dtype, "is_complex", None)
    return isinstance(is_complex, bool) and not is_complex


def check_scalars(scalars: Mapping[str, object]) -> dict[str, object]:
    """Every value checked (``check_scalar``) before any is kept: a bad one leaves the window as it was."""
    return {name: check_scalar(name, value) for name, value in scalars.items()}


def to_float(value: object) -> float:
    """A kept value as a float: ``.item()`` for a tensor (a sync point on a GPU)."""
    if isinstance(value, int | float):
        return float(value)
    item = getattr(value, "item", None)
    if callable(item):
        return float(item())
    raise TypeError(f"expected a number or a 0-d tensor, got {type(value).__name__}")


def _mean(values: list[float]) -> float:
    """The mean; a value logged unchanged (a constant learning rate) stays exactly itself."""
    first = values[0]
    return first if all(v == first for v in values) else math.fsum(values) / len(values)


class Window:
    """The values logged since the last flush, per name, unconverted."""

    def __init__(self) -> None:
        self.values: dict[str, list[object]] = {}
        self.count = 0

    def add(self, scalars: Mapping[str, object]) -> None:
        """Keep values already checked (``check_scalars``)."""
        for name, kept in scalars.items():
            bucket = self.values.get(name)
            if bucket is None:
                self.values[name] = [kept]
            else:
                bucket.append(kept)
        self.count += 1

    def drain(self) -> tuple[dict[str, float], int]:
        """The mean of each name over the window, and the calls it covers; the window starts empty."""
        means = {name: _mean([to_float(v) for v in kept]) for name, kept in self.values.items()}
        count = self.count
        self.values, self.count = {}, 0
        return means, count

    def drain_unconverted(self) -> None:
        """Forget the window without converting it (its values may be what failed)."""
        self.values, self.count = {}, 0
