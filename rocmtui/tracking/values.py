"""Scalars as scripts log them: Python numbers and 0-d tensors, converted only when a window is flushed.

Tensors are duck-typed (``.detach()``, ``.item()``); torch is never imported here, only taken from
``sys.modules`` to convert the tensors a script gave. Converting a GPU tensor is a sync, so ``Window`` keeps
every value as it came and converts the whole window at once, a few times a second: one stack and one host
copy per device.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, Union, runtime_checkable

from rocmtui.base.float_bytes import as_run, pack_floats


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


PACK_FROM = 64
"""Calls in a window from which its values are written as float64 bytes and its steps as a run."""


class Window:
    """Every value logged since the last flush, per name, at its step, unconverted (tensors stay tensors)."""

    def __init__(self) -> None:
        self.steps: list[int] = []
        """The step of each ``log`` call."""
        self.values: dict[str, list[object]] = {}
        self.at: dict[str, list[int]] = {}
        """Each name's steps: the same as ``steps`` unless the name was left out of some calls."""

    @property
    def count(self) -> int:
        return len(self.steps)

    def add(self, step: int, scalars: Mapping[str, object]) -> None:
        """Keep the values of one call at ``step``, already checked (``check_scalars``)."""
        self.steps.append(step)
        for name, value in scalars.items():
            bucket = self.values.get(name)
            if bucket is None:
                self.values[name], self.at[name] = [value], [step]
            else:
                bucket.append(value)
                self.at[name].append(step)

    def drain(self) -> Drained:
        """Every value as a float, converted in bulk (one host copy per device for tensors); then empty."""
        steps, values, at = tuple(self.steps), self.values, self.at
        self.steps, self.values, self.at = [], {}, {}
        floats = to_floats(values)
        logged = {name: tuple(floats[name]) for name in values}
        logged_at = {name: tuple(s) for name, s in at.items() if len(s) != len(steps) or tuple(s) != steps}
        return Drained(steps, logged, logged_at)

    def drain_unconverted(self) -> None:
        """Forget the window without converting it (its values may be what failed)."""
        self.steps, self.values, self.at = [], {}, {}


@dataclass(frozen=True)
class Drained:
    """A window's values, converted: the calls' steps, each name's values, the steps of names not in every call."""

    steps: tuple[int, ...]
    logged: dict[str, tuple[float, ...]]
    logged_at: dict[str, tuple[int, ...]]

    @property
    def last(self) -> dict[str, float]:
        """Each name's newest value."""
        return {name: values[-1] for name, values in self.logged.items()}

    def written(self) -> dict[str, Any]:
        """The window's fields of its ``MetricsLogged``: as lists for a short window (a slow script's lines stay
        readable), packed from ``PACK_FROM`` calls on (format 5: a viewer opens millions of them in one copy)."""
        if len(self.steps) < PACK_FROM:
            return {"steps": self.steps, "logged": self.logged, "logged_at": self.logged_at}
        run = as_run(self.steps)
        return {
            "steps": () if run else self.steps,
            "step_run": run,
            "packed": {name: pack_floats(values) for name, values in self.logged.items()},
            "logged_at": self.logged_at,
        }


def to_floats(values: Mapping[str, list[object]]) -> dict[str, list[float]]:
    """Every kept value as a float. Plain numbers as they are; tensors of one device stacked and copied to the
    host at once (one sync per device a flush, not one per value); anything else through ``.item()``."""
    out = {name: [0.0] * len(kept) for name, kept in values.items()}
    tensors: dict[object, list[tuple[str, int, object]]] = {}
    for name, kept in values.items():
        row = out[name]
        for i, value in enumerate(kept):
            if type(value) is float or type(value) is int or type(value) is bool:
                row[i] = float(value)
            elif _is_torch(value):
                tensors.setdefault(getattr(value, "device", None), []).append((name, i, value))
            else:
                row[i] = to_float(value)
    for group in tensors.values():
        for (name, i, _), number in zip(group, _stacked(group), strict=True):
            out[name][i] = number
    return out


def _is_torch(value: object) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "device") and "torch" in sys.modules


def _stacked(group: list[tuple[str, int, object]]) -> list[float]:
    """One device's 0-d tensors as floats, through one stack and one copy to the host (a single sync).

    torch is the script's own, already loaded (its tensors are here): taken from ``sys.modules``, never
    imported by tracking."""
    torch: Any = sys.modules["torch"]
    tensors: list[Any] = [value for _, _, value in group]
    stacked = torch.stack([t.reshape(()).to(torch.float64) for t in tensors])
    return [float(x) for x in stacked.cpu().tolist()]
