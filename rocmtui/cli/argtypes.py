"""argparse type functions whose errors name the bad value and what is allowed, in one line."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from rocmtui.config import NEWTON_SCHULZ_RANGE, MonitorConfig

N = TypeVar("N", int, float)
INT_LIMIT = 2**63
"""Whole numbers must fit an int64 (torch's seeds and counters)."""


def _number(text: str, convert: Callable[[str], N], rule: str, ok: Callable[[N], bool]) -> N:
    """Parse ``text`` with ``convert`` and check it with ``ok``; ``rule`` says what is allowed."""
    try:
        value = convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number; {rule}") from None
    if not ok(value):
        raise argparse.ArgumentTypeError(f"{text!r} is out of range; {rule}")
    return value


def positive_int(text: str) -> int:
    try:
        int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number; give a positive integer") from None
    return _number(text, int, "it must be a positive integer (1 or more)", lambda v: 0 < v < INT_LIMIT)


def non_negative_int(text: str) -> int:
    return _number(text, int, "give a whole number, 0 or more (below 2**63)", lambda v: 0 <= v < INT_LIMIT)


def positive_float(text: str) -> float:
    return _number(text, float, "give a positive finite number, such as 1e-3", lambda v: math.isfinite(v) and v > 0)


def non_negative_float(text: str) -> float:
    return _number(text, float, "give a finite number, 0 or more", lambda v: math.isfinite(v) and v >= 0)


def fraction(text: str) -> float:
    return _number(text, float, "it must be at least 0 and below 1", lambda v: 0.0 <= v < 1.0)


def share(text: str) -> float:
    return _number(text, float, "give a share above 0 and at most 1, such as 0.25", lambda v: 0.0 < v <= 1.0)


def newton_schulz_steps(text: str) -> int:
    low, high = NEWTON_SCHULZ_RANGE
    return _number(text, int, f"give a whole number of iterations, {low} to {high}", lambda v: low <= v <= high)


CROP_RANGE = (9, 4096)
"""A crop's side in pixels: fastnet's three halvings after its 2x2 stem need at least 9."""


def crop_sizes(text: str) -> tuple[int, ...]:
    """``24,28`` -> (24, 28): one crop side per epoch, from the first."""
    low, high = CROP_RANGE
    rule = f"give sides of {low} to {high} px separated by commas, one an epoch from the first, such as 24,28"
    parts = [part.strip() for part in text.split(",")]
    if not all(part.isdigit() for part in parts):
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of whole numbers; {rule}")
    sides = tuple(int(part) for part in parts)
    if not all(low <= side <= high for side in sides) or len(sides) > high:
        raise argparse.ArgumentTypeError(f"{text!r} is out of range; {rule}")
    return sides


def interval(text: str) -> float:
    low, high = MonitorConfig.MIN_INTERVAL_S, MonitorConfig.MAX_INTERVAL_S
    return _number(text, float, f"give {low:g} to {high:g} seconds", lambda v: low <= v <= high)


def existing_dir(text: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; give a data folder")
    path = Path(text).expanduser()
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"data folder {text!r} does not exist or is not a folder")
    return path


def data_dir(text: str) -> Path:
    """A data folder: it may not exist yet (``--download`` makes it; without, the command refuses it)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; give a data folder")
    path = Path(text).expanduser()
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"data folder {text!r} is not a folder")
    return path


def existing_path(text: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; give a run folder or a checkpoint-*.pt file")
    path = Path(text).expanduser()
    if not path.exists():
        raise argparse.ArgumentTypeError(f"{text!r} does not exist; give a run folder or a checkpoint-*.pt file")
    return path


def device(text: str) -> str:
    value = text.strip().lower()
    if value in ("auto", "cpu", "cuda") or (value.startswith("cuda:") and value[5:].isdigit()):
        return value
    raise argparse.ArgumentTypeError(f"{text!r} is not a device; use auto, cpu, cuda or cuda:N (ROCm uses cuda too)")


def choice(options: Sequence[str], what: str) -> Callable[[str], str]:
    """A type function that accepts one of ``options`` (any case) and names them all in its error."""

    def parse(text: str) -> str:
        value = text.strip().lower()
        if value not in options:
            raise argparse.ArgumentTypeError(f"unknown {what} {text!r}; choose from {', '.join(options)}")
        return value

    parse.__name__ = what
    return parse


def output_dir(text: str) -> Path:
    """A folder to write into: it may not exist yet, but it must not be a file."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; give a folder")
    path = Path(text).expanduser()
    for folder in (path, *path.parents):  # the nearest part that exists must be a folder
        if folder.exists():
            if not folder.is_dir():
                raise argparse.ArgumentTypeError(f"{str(folder)!r} is a file, not a folder")
            break
    return path
