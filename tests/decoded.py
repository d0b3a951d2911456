"""What a fuzz test checks once a decoder accepted its input: the value decoded says what the input said.

A decoder that raises nothing but ``CodecError`` may still read a field wrong (a number lost, a NaN as 0.0, a
list cut short). ``agrees`` compares the decoded value, written back as plain JSON, with the JSON that went
in, at every key that went in: the decoder may add defaults, never change what it was given.
"""

from __future__ import annotations

import math
from typing import Any


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _finite_or_none(value: Any) -> Any:
    """A number as a finite float, else None (NaN, infinities, an int past float's range); anything else as is."""
    if not _number(value):
        return value
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def agrees(decoded: Any, given: Any, where: str = "$") -> None:
    """Fail, naming the path, where ``decoded`` (plain JSON read back) differs from ``given`` (plain JSON that
    went in). Non-finite numbers and ``null`` are one (the run folder's NaN policy); numbers compare as floats
    (an int given for a float field); a dict given is compared at its own keys only (unknown keys are ignored
    by design, absent ones take defaults)."""
    given, decoded = _finite_or_none(given), _finite_or_none(decoded)
    if isinstance(given, dict):
        assert isinstance(decoded, dict), f"{where}: {decoded!r} for the object given"
        for key, value in given.items():
            if key in decoded:
                agrees(decoded[key], value, f"{where}.{key}")
    elif isinstance(given, list | tuple):
        assert isinstance(decoded, list | tuple), f"{where}: {decoded!r} for the list given"
        assert len(decoded) == len(given), f"{where}: {len(decoded)} items read from {len(given)}"
        for index, (read, sent) in enumerate(zip(decoded, given, strict=True)):
            agrees(read, sent, f"{where}[{index}]")
    else:
        assert decoded == given, f"{where}: {decoded!r} read from {given!r}"
