"""Scalars as scripts log them: Python numbers and 0-d tensors, converted only when a window is flushed.

Tensors are duck-typed (``.detach()``, ``.item()``); torch is never imported here, only taken from
``sys.modules`` to convert the tensors a script gave. Converting a GPU tensor is a sync, so ``Window`` keeps
every value as it came and converts the whole window at once, a few times a second: one stack and one host
copy per device.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import chain
from typing import Any, Protocol, Union, runtime_checkable

from rocmtui.base.float_bytes import as_run, pack_floats
from rocmtui.codec import encode_json
from rocmtui.run.format import MAX_LINE_BYTES


@runtime_checkable
class Tensorish(Protocol):
    """A 0-d tensor or array: anything with ``item()`` (torch, numpy, jax)."""

    def item(self) -> float | int | bool: ...


Scalar = Union[float, int, Tensorish]  # noqa: UP007 (a runtime alias: the | form fails on a Protocol in 3.10)


REAL = "a real number (int, float, bool, or a numpy or 0-d torch scalar)"
FLOAT_MAX = sys.float_info.max
"""An int beyond this has no float: refused at ``log``, where it would otherwise fail the whole window at the flush."""


def check_scalar(name: str, value: object) -> object:
    """The value to keep until the flush (a tensor detached from its graph); a TypeError naming ``name``
    for anything that is not a real number: a string, a complex, a numpy string, a tensor of several values,
    a tensor with no data (on the ``meta`` device); a ValueError for an int no float can hold."""
    if type(value) is float:
        return value
    if isinstance(value, int):
        if not -FLOAT_MAX <= value <= FLOAT_MAX:
            raise ValueError(f"{name}: {_short(value)} is beyond the range of a float (about 1.8e308)")
        return value
    if isinstance(value, float):
        return value
    item = getattr(value, "item", None)
    if item is None or not callable(item):
        raise TypeError(f"{name}: expected {REAL}, got {type(value).__name__}")
    if getattr(value, "ndim", 0) != 0:
        raise TypeError(f"{name}: expected a 0-d tensor, got one of shape {tuple(getattr(value, 'shape', ()))}")
    if not _real_dtype(getattr(value, "dtype", None)):
        raise TypeError(f"{name}: expected {REAL}, got {type(value).__name__} of dtype {getattr(value, 'dtype', '?')}")
    if getattr(value, "is_meta", False) is True:
        raise TypeError(f"{name}: a tensor on the 'meta' device holds no value; log a tensor on a real device")
    detach = getattr(value, "detach", None)
    return detach() if callable(detach) else value  # keeps no autograd graph alive until the flush


def _short(value: int) -> str:
    return f"an int of about {value.bit_length() * 30103 // 100000 + 1} digits"


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
LINE_BUDGET = MAX_LINE_BYTES - (16 << 10)
"""The most a window's line may take (the reader's bound, less room for the event's own fields)."""
VALUE_BYTES = 48
"""The most one value may add to a window's line: its float as text (up to 24 bytes) and its step in
``logged_at`` (up to 21), or, packed, fewer."""
CALL_BYTES = 24
"""The most one call adds besides its values: its step in ``steps``."""


def name_bytes(name: str) -> int:
    """The most one name may add to a window's line: it appears, JSON-escaped, in ``values`` (with a float),
    in ``logged`` or ``packed``, and in ``logged_at``."""
    return 3 * (len(encode_json(name)) + 2) + 32


def call_bytes(scalars: Mapping[str, object], known: Mapping[str, object] = {}) -> int:
    """The most one call of ``scalars`` adds to a window that already holds the names in ``known`` (a bound
    quick to count: a call that seems not to fit a line alone is measured, ``alone_bytes``)."""
    cost = CALL_BYTES + len(scalars) * VALUE_BYTES
    if known.keys() >= scalars.keys():  # the usual call: every name already in the window (a check in C)
        return cost
    return cost + sum(name_bytes(name) for name in scalars if name not in known)


WIDEST = -2.2250738585072014e-308
"""A float whose shortest text is as long as any (24 characters)."""


def alone_bytes(scalars: Mapping[str, object]) -> int:
    """The most a window of this one call may take written out: its names as ``values`` and ``logged`` hold
    them (a one-call window has no ``logged_at``), each value as wide as a float may be."""
    widest = (WIDEST,)  # one shared tuple: only its encoding is counted
    return len(encode_json({"values": dict.fromkeys(scalars, WIDEST), "logged": dict.fromkeys(scalars, widest)}))


class Window:
    """Every value logged since the last flush, per name, at its step, unconverted (tensors stay tensors)."""

    def __init__(self) -> None:
        self.steps: list[int] = []
        """The step of each ``log`` call."""
        self.values: dict[str, list[object]] = {}
        self.at: dict[str, list[int]] = {}
        """Each name's steps: the same as ``steps`` unless the name was left out of some calls."""
        self.bytes = 0
        """The most the window's line may take (``call_bytes`` of each call): kept under ``LINE_BUDGET``."""

    @property
    def count(self) -> int:
        return len(self.steps)

    def add_alone(self, step: int, scalars: Mapping[str, object]) -> None:
        """Keep one call measured by ``alone_bytes`` in this empty window, and no other: the next call flushes it."""
        self.add(step, scalars, LINE_BUDGET)

    def add(self, step: int, scalars: Mapping[str, object], cost: int) -> None:
        """Keep the values of one call at ``step``, already checked (``check_scalars``); ``cost`` is its
        ``call_bytes`` against this window."""
        self.bytes += cost
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
        self.steps, self.values, self.at, self.bytes = [], {}, {}, 0
        floats = to_floats(values)
        logged = {name: tuple(floats[name]) for name in values}
        logged_at = {name: tuple(s) for name, s in at.items() if len(s) != len(steps) or tuple(s) != steps}
        return Drained(steps, logged, logged_at)

    def drain_unconverted(self) -> None:
        """Forget the window without converting it (its values may be what failed)."""
        self.steps, self.values, self.at, self.bytes = [], {}, {}, 0


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
        readable), packed from ``PACK_FROM`` calls on (format 5: a viewer opens millions of them in one copy), and
        packed whatever its length when it holds an infinity, which JSON cannot write (as text it would come back
        as NaN; packed, every value comes back bit for bit)."""
        if len(self.steps) < PACK_FROM and not any(map(math.isinf, chain.from_iterable(self.logged.values()))):
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


NOTE_CHARS = LINE_BUDGET // 6
"""Characters of a note a line holds for sure (JSON writes a control character in 6 bytes, others in 4 or fewer)."""


def note_parts(message: str) -> list[str]:
    """``message`` in parts that each fit a line of the stream, in order (one part for any usual note)."""
    text = str(message)
    return [text[i : i + NOTE_CHARS] for i in range(0, len(text), NOTE_CHARS)] or [text]


INT64 = 1 << 63


def check_total_steps(value: object) -> int | None:
    """``total_steps`` as given to ``track()`` or set on a run: None, or a whole number of steps, 1 or more."""
    if value is None:
        return None
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"total_steps: expected a whole number of steps or None, got {type(value).__name__}")
    steps = value.__index__()
    if not 0 < steps < INT64:
        raise ValueError(f"total_steps: {steps} is out of range; give 1 or more (below 2**63), or None")
    return int(steps)


def check_params(params: Mapping[str, object]) -> dict[str, Any]:
    """``track(config=...)`` as it will be written, refused (ValueError naming the key) where it would not fit
    one line of the stream with room to spare, or holds an int JSON readers cannot take."""
    used = 0
    for key, value in params.items():
        if isinstance(value, int) and not isinstance(value, bool) and not -INT64 <= value < INT64:
            raise ValueError(f"config[{key[:40]!r}]: an int beyond 64 bits; give it as a string or a float")
        used += len(encode_json(key)) + len(encode_json(value)) + 2
        if used > LINE_BUDGET // 2:
            raise ValueError(
                f"config[{key[:40]!r}]: the config takes more than {LINE_BUDGET // 2:,} bytes written out; give "
                "fewer or shorter values (a long text as a note, a file as its path)"
            )
    return dict(params)


MAX_NAME_CHARS = 1000
"""A run's name is shown in one line and becomes part of its folder's name: longer is refused."""


def check_name(name: object) -> str:
    if not isinstance(name, str):
        raise TypeError(f"name: expected a string, got {type(name).__name__}")
    if len(name) > MAX_NAME_CHARS:
        raise ValueError(f"name: {len(name):,} characters; give at most {MAX_NAME_CHARS}")
    return name
