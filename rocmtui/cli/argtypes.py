"""argparse type functions whose errors name the bad value and what is allowed, in one line."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from rocmtui.base.ranges import RANGES
from rocmtui.config import MonitorConfig

N = TypeVar("N", int, float)


def _number(text: str, convert: Callable[[str], N], rule: str, ok: Callable[[N], bool]) -> N:
    """Parse ``text`` with ``convert`` and check it with ``ok``; ``rule`` says what is allowed."""
    try:
        value = convert(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number; {rule}") from None
    if not ok(value):
        raise argparse.ArgumentTypeError(f"{text!r} is out of range; {rule}")
    return value


def _ranged(kind: str, convert: Callable[[str], N], text: str) -> N:
    """``text`` as a number of ``kind``, checked against ``config.RANGES`` (the same check as a settings file's)."""
    ok, rule = RANGES[kind]
    value: N = _number(text, convert, rule, ok)
    return value


def positive_int(text: str) -> int:
    try:
        int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number; give a positive integer") from None
    return _ranged("positive_int", int, text)


def non_negative_int(text: str) -> int:
    return _ranged("non_negative_int", int, text)


def positive_float(text: str) -> float:
    return _ranged("positive_float", float, text)


def non_negative_float(text: str) -> float:
    return _ranged("non_negative_float", float, text)


def fraction(text: str) -> float:
    return _ranged("fraction", float, text)


def share(text: str) -> float:
    return _ranged("share", float, text)


def newton_schulz_steps(text: str) -> int:
    return _ranged("newton_schulz_steps", int, text)


def crop_sizes(text: str) -> tuple[int, ...]:
    """``24,28`` -> (24, 28): one crop side per epoch, from the first."""
    ok, rule = RANGES["crop_sizes"]
    parts = [part.strip() for part in text.split(",")]
    if not all(part.isdigit() for part in parts):
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of whole numbers; {rule}")
    sides = tuple(int(part) for part in parts)
    if not ok(sides):
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


def endpoint(text: str) -> str:
    """``--rdzv-endpoint HOST:PORT``."""
    rule, why = RANGES["endpoint"]
    if not rule(text):
        raise argparse.ArgumentTypeError(f"{text[:80]!r} is not HOST:PORT; {why}")
    return text


def job_id(text: str) -> str:
    """``--rdzv-id ID``: it names the job's run folder."""
    rule, why = RANGES["job_id"]
    if not rule(text):
        raise argparse.ArgumentTypeError(f"{text[:80]!r} cannot name a job; {why}")
    return text
